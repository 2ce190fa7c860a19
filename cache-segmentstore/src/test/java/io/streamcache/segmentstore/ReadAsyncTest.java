package io.streamcache.segmentstore;

import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.netty.buffer.ByteBufUtil;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentNotFoundException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.SegmentTruncatedException;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentStore#readAsync}: one call that reads from the cache, else from the log, else
 * waits for the tail.
 */
@Timeout(60)
class ReadAsyncTest {
    private static final int APPEND = 3000;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private SegmentStore store() {
        final BlockCache cache = TestSegments.cache(4 << 20);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).fileLength(256 * 1024).build())
            .readThroughRangeLength(16 * 1024)
            .build();
        closer.add(store);
        return store;
    }

    private static void append(final SegmentStore store, final String name, final int count) {
        final long from = store.info(name).length();
        for (int i = 0; i < count; i++) {
            store.append(name, TestSegments.buffer(7, from + (long) i * APPEND, APPEND));
        }
    }

    private static void evict(final SegmentStore store) {
        for (int i = 0; i < 4; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
    }

    /** Reads [offset, end) through the one call only, and returns the bytes. */
    private static byte[] readAll(final SegmentStore store, final String name, final long offset, final long end) {
        final byte[] out = new byte[(int) (end - offset)];
        long at = offset;
        while (at < end) {
            try (ReadResult result = store.readAsync(name, at, (int) (end - at), Duration.ofSeconds(5)).join()) {
                assertTrue(result.length() > 0, "every call makes progress: " + result);
                result.data().getBytes(0, out, (int) (at - offset), result.length());
                at = result.nextOffset();
            }
        }
        return out;
    }

    @Test
    void shouldServeCachedBytesAtOnce() {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 3);
        final CompletableFuture<ReadResult> future = store.readAsync("s", 100, 5000, Duration.ofSeconds(5));
        assertTrue(future.isDone(), "cached: completed at once");
        try (ReadResult result = future.join()) {
            assertEquals(5000, result.length());
            assertArrayEquals(TestSegments.pattern(7, 100, 5000), ByteBufUtil.getBytes(result.data()));
        }
        assertEquals(0, store.historicalReader().stats().fileReads(), "nothing read from the log");
    }

    @Test
    void shouldReadEvictedBytesFromTheLog() {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 20);
        evict(store);
        assertArrayEquals(TestSegments.pattern(7, 0, 20 * APPEND), readAll(store, "s", 0, 20L * APPEND));
        assertTrue(store.historicalReader().stats().fileReads() > 0);
    }

    @Test
    void shouldReadEverythingAfterAReopen() {
        SegmentStore store = store();
        store.create("s");
        append(store, "s", 20);
        store.close();
        store = store();
        assertArrayEquals(TestSegments.pattern(7, 0, 20 * APPEND), readAll(store, "s", 0, 20L * APPEND));
    }

    @Test
    void shouldWaitAtTheTailAndCompleteWithTheNextAppend() {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 1);
        final CompletableFuture<ReadResult> waiting = store.readAsync("s", APPEND, 10_000, Duration.ofSeconds(30));
        assertFalse(waiting.isDone());
        append(store, "s", 1);
        try (ReadResult result = waiting.join()) {
            assertEquals(APPEND, result.offset());
            assertEquals(APPEND, result.length());
            assertArrayEquals(TestSegments.pattern(7, APPEND, APPEND), ByteBufUtil.getBytes(result.data()));
        }
    }

    @Test
    void shouldTimeOutAndEndAtASeal() {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 1);
        try (ReadResult result = store.readAsync("s", APPEND, 100, Duration.ofMillis(20)).join()) {
            assertEquals(ReadStatus.TIMED_OUT, result.status());
            assertEquals(0, result.length());
        }
        final CompletableFuture<ReadResult> waiting = store.readAsync("s", APPEND, 100, Duration.ofSeconds(30));
        store.seal("s");
        try (ReadResult result = waiting.join()) {
            assertEquals(ReadStatus.SEALED_END, result.status());
        }
    }

    @Test
    void shouldFailForAMissingOrTruncatedSegmentOrAClosedStore() {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 4);
        store.truncate("s", 2L * APPEND);
        assertInstanceOf(SegmentTruncatedException.class, cause(store.readAsync("s", 0, 10, Duration.ofSeconds(1))));
        assertInstanceOf(SegmentNotFoundException.class, cause(store.readAsync("nope", 0, 10, Duration.ofSeconds(1))));
        final CompletableFuture<ReadResult> waiting = store.readAsync("s", 4L * APPEND, 10, Duration.ofSeconds(30));
        store.delete("s");
        assertInstanceOf(SegmentNotFoundException.class, cause(waiting));
        store.close();
        assertInstanceOf(CacheClosedException.class, cause(store.readAsync("s", 0, 10, Duration.ofSeconds(1))));
        assertThrows(IllegalArgumentException.class, () -> store.readAsync("s", -1, 10, Duration.ofSeconds(1)));
    }

    private static Throwable cause(final CompletableFuture<ReadResult> future) {
        final CompletionException e = assertThrows(CompletionException.class, future::join);
        return e.getCause();
    }

    @Test
    void shouldServeConcurrentReadersOfEvictedAndTailBytes() throws Exception {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 30);
        evict(store);
        final int readers = 4;
        final ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            final CountDownLatch start = new CountDownLatch(1);
            final List<Future<byte[]>> results = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                results.add(pool.submit(() -> {
                    start.await();
                    return readAll(store, "s", 0, 40L * APPEND);
                }));
            }
            start.countDown();
            append(store, "s", 10);   // the readers reach the tail and wait for these
            for (final Future<byte[]> result : results) {
                assertArrayEquals(TestSegments.pattern(7, 0, 40 * APPEND), result.get(30, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldMatchAReferenceUnderRandomAppendsEvictionsAndReads() {
        final SegmentStore store = store();
        final Random random = new Random(11);
        final String[] names = {"a", "b", "c"};
        final byte[][] reference = new byte[names.length][];
        for (int n = 0; n < names.length; n++) {
            store.create(names[n]);
            reference[n] = new byte[0];
        }
        for (int step = 0; step < 400; step++) {
            final int n = random.nextInt(names.length);
            final int op = random.nextInt(10);
            if (op < 5) {
                final byte[] data = new byte[1 + random.nextInt(6000)];
                random.nextBytes(data);
                store.append(names[n], io.netty.buffer.Unpooled.wrappedBuffer(data));
                final byte[] grown = Arrays.copyOf(reference[n], reference[n].length + data.length);
                System.arraycopy(data, 0, grown, reference[n].length, data.length);
                reference[n] = grown;
            } else if (op < 6) {
                evict(store);
            } else if (reference[n].length > 0) {
                final int from = random.nextInt(reference[n].length);
                final int length = 1 + random.nextInt(reference[n].length - from);
                try (ReadResult result = store.readAsync(names[n], from, length, Duration.ofSeconds(5)).join()) {
                    assertTrue(result.length() > 0 && result.length() <= length, result.toString());
                    assertArrayEquals(Arrays.copyOfRange(reference[n], from, from + result.length()),
                        ByteBufUtil.getBytes(result.data()), "step=" + step + " segment=" + names[n] + " from=" + from);
                }
            }
        }
    }

    /**
     * A miss computes its load's read-ahead on the calling thread, from state the segment's
     * other misses share: the call must not wait for another thread in the middle of that
     * (a monitor held by a preempted reader made it wait before).
     */
    @Test
    void shouldReturnAMissWhileAnotherThreadHoldsTheSegmentsReadAheadState() throws Exception {
        final SegmentStore store = store();
        store.create("s");
        append(store, "s", 40);
        evict(store);
        // A first miss makes the segment's read-ahead state.
        readAll(store, "s", 0, APPEND);
        evict(store);
        final SequentialReadAhead readAhead = store.segmentOrNull("s").readAhead(0, 0);
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicBoolean letGo = new java.util.concurrent.atomic.AtomicBoolean();
        final Thread holder = new Thread(() -> {
            synchronized (readAhead) {
                held.countDown();
                try {
                    // Bounded, so that a call that does wait returns (and fails below) rather than hang.
                    release.await(20, TimeUnit.SECONDS);
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    letGo.set(true);
                }
            }
        }, "read-ahead-holder");
        holder.setDaemon(true);
        holder.start();
        assertTrue(held.await(30, TimeUnit.SECONDS));
        final CompletableFuture<ReadResult> future;
        try {
            future = store.readAsync("s", 20L * APPEND, APPEND, Duration.ofSeconds(5));
            assertFalse(letGo.get(), "the call returned while the other thread still held the state");
        } finally {
            release.countDown();
        }
        try (ReadResult result = future.get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(7, 20L * APPEND, APPEND), ByteBufUtil.getBytes(result.data()));
        }
        holder.join(30_000);
    }
}
