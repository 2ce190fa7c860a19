package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.log.Closer;
import io.streamcache.segmentstore.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Isolation of a store with a log: no fill from the log, pinned result or full cache stops the
 * appends of other segments or the log's completion thread. Every test asserts progress (a
 * future completes while the obstacle is still in place), never a time; the futures' timeouts
 * only bound how long a broken build takes to fail.
 */
@Timeout(120)
class StoreIsolationTest {
    private static final int APPEND = 4096;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    /**
     * A cache whose allocations keep trying for a minute: an allocation that waits with a lock
     * held would hold it that long.
     */
    private BlockCache cache(final long capacity) {
        final BlockCache cache = BlockCache.builder()
            .capacity(capacity)
            .blockLength(TestSegments.BLOCK_LENGTH * 16)
            .bufferLength(TestSegments.BUFFER_LENGTH * 16)
            .fullRetryTimeout(Duration.ofSeconds(60))
            .registerMBean(false)
            .build();
        closer.add(cache);
        return cache;
    }

    private SegmentStore store(final BlockCache cache) {
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(16 * 1024)
            .cacheManager(TestSegments.manualManager(cache))
            .log(LogConfig.builder(directory.resolve("log")).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0).preWrite(false)
                .maxDelay(Duration.ofMillis(1)).build())
            .readThroughRangeLength(64 * 1024)
            .build();
        closer.add(store);
        return store;
    }

    private static long freeBlocks(final BlockCache cache) {
        return cache.stats().blockCount() - cache.stats().usedBlockCount();
    }

    /** Appends to {@code name} until the cache has no free block left (at most {@code max} appends). */
    private static long appendUntilFull(final SegmentStore store, final BlockCache cache, final String name, final int max) {
        long at = store.info(name).length();
        for (int i = 0; i < max && freeBlocks(cache) > 0; i++) {
            store.append(name, TestSegments.buffer(name.hashCode(), at, APPEND));
            at += APPEND;
        }
        assertEquals(0, freeBlocks(cache), "the cache is full");
        return at;
    }

    /** Holds a segment's lock on a thread of its own until {@link #release}, like a reader stuck in it. */
    private static final class HeldLock implements AutoCloseable {
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final Thread thread;

        HeldLock(final Segment segment) throws InterruptedException {
            thread = new Thread(() -> {
                segment.lock();
                try {
                    held.countDown();
                    release.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    segment.unlock();
                }
            }, "held-segment-lock");
            thread.setDaemon(true);
            thread.start();
            held.await();
        }

        @Override
        public void close() {
            release.countDown();
            try {
                thread.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void shouldCompleteAppendsOfOneSegmentWhileAFillOfAnotherFindsNoMemory() throws Exception {
        final BlockCache cache = cache(4 << 20);
        final SegmentStore store = store(cache);
        store.create("a");
        store.create("b");
        store.create("c");
        final int bLength = 256 * 1024;
        for (long at = 0; at < bLength; at += APPEND) {
            store.append("b", TestSegments.buffer(2, at, APPEND));
        }
        for (int i = 0; i < 4; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
        // Every cached byte is c's, and c's lock is held: an eviction pass can free nothing and
        // finds a busy segment, so a full cache keeps asking the allocation to retry.
        appendUntilFull(store, cache, "c", 4096);
        final HeldLock held = new HeldLock(store.segmentOrNull("c"));
        try {
            final long callsBefore = cache.stats().fullHandlerCalls();
            final CompletableFuture<ReadResult> fill = store.readThrough("b", 0, 1000);
            // The fill from the log has found the cache full (in the allocation, or done with it).
            while (cache.stats().fullHandlerCalls() == callsBefore && !fill.isDone()) {
                Thread.onSpinWait();
            }
            final CompletableFuture<Long> appendB = store.appendAsync("b", TestSegments.buffer(2, bLength, 100));
            final CompletableFuture<Long> appendA = store.appendAsync("a", TestSegments.buffer(1, 0, 100));
            assertEquals(0L, appendA.get(30, TimeUnit.SECONDS), "a's append completes while b's fill finds no memory");
            assertEquals((long) bLength, appendB.get(30, TimeUnit.SECONDS), "so does b's own append");
            try (ReadResult result = fill.get(30, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, "the read-through is served, cached or not: " + result);
                assertArrayEquals(TestSegments.pattern(2, 0, result.length()), TestSegments.bytes(result));
            }
        } finally {
            held.close();
        }
        try (ReadResult result = store.readThrough("a", 0, 100).get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(1, 0, 100), TestSegments.bytes(result));
        }
    }
}
