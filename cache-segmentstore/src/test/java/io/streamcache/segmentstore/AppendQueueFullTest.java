package io.streamcache.segmentstore;

import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogs;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.LogQueueFullException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store whose log writer is stalled (its force blocks until the test releases it) with the
 * writer's queue and overflow full: {@code appendAsync} returns at once with a failed future
 * ({@link LogQueueFullException}) or a pending one, a synchronous append waits with no segment
 * lock held, and the same segment's reads and asynchronous appends go on meanwhile; once the disk
 * returns, every accepted append is acknowledged in order and the refused ones left nothing.
 */
@Timeout(60)
class AppendQueueFullTest {
    private static final int QUEUE_CAPACITY = 4;
    private static final int LENGTH = 100;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private SegmentStore store(final HookedLogFile.Hooks hooks) {
        final BlockCache cache = TestSegments.cache(1 << 20);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).queueCapacity(QUEUE_CAPACITY).fileFactory(hooks).build())
            .build();
        closer.add(store);
        return store;
    }

    private static ByteBuf data(final String segment, final long offset) {
        return TestSegments.buffer(segment.hashCode(), offset, LENGTH);
    }

    @Test
    void shouldNeitherBlockAppendAsyncNorHoldTheSegmentLockWhileTheWriterIsStalled() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final SegmentStore store = store(hooks);
        store.create("a");
        store.create("b");
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch forcing = new CountDownLatch(1);
        hooks.forceHook = () -> {
            forcing.countDown();
            try {
                release.await();
            } catch (final InterruptedException e) {
                throw new IOException(e);
            }
        };
        final List<CompletableFuture<Long>> accepted = new ArrayList<>();
        final AtomicBoolean refused = new AtomicBoolean();
        try {
            accepted.add(store.appendAsync("a", data("a", 0)));
            assertTrue(forcing.await(10, TimeUnit.SECONDS), "the writer is in its stalled force");
            // On another thread: appendAsync until one is refused (the queue and its overflow are
            // full). Before the overflow it spun under the segment's lock and never returned.
            final CompletableFuture<Void> producer = CompletableFuture.runAsync(() -> {
                long offset = LENGTH;
                for (int i = 0; i < 10_000 && !refused.get(); i++) {
                    final CompletableFuture<Long> append = store.appendAsync("a", data("a", offset));
                    if (append.isCompletedExceptionally()) {
                        final ExecutionException e = assertThrows(ExecutionException.class, append::get);
                        assertInstanceOf(LogQueueFullException.class, e.getCause());
                        refused.set(true);
                    } else {
                        accepted.add(append);
                        offset += LENGTH;
                    }
                }
            });
            producer.get(30, TimeUnit.SECONDS);
            assertTrue(refused.get(), "an appendAsync was refused once the queue and the overflow were full");
            assertTrue(accepted.size() >= 2 * QUEUE_CAPACITY, "the overflow took requests: " + accepted.size());
            for (final CompletableFuture<Long> append : accepted) {
                assertFalse(append.isDone(), "nothing is durable while the force is stalled");
            }
            final long reserved = accepted.size() * (long) LENGTH;

            // A synchronous append waits for room, with no lock held.
            final CompletableFuture<Long> synchronous = CompletableFuture.supplyAsync(() -> store.append("a", data("a", reserved)));
            // Meanwhile the same segment's lock is free: reads, info and refused appends return
            // (on this thread; before, each blocked on the lock the appender held).
            for (int i = 0; i < 20; i++) {
                try (ReadResult result = store.read("a", 0, LENGTH)) {
                    assertEquals(0, result.length(), "nothing durable yet");
                }
                assertEquals(new SegmentInfo("a", 0, 0, 0, false), store.info("a"));
                final CompletableFuture<Long> again = store.appendAsync("a", data("a", reserved));
                assertTrue(again.isCompletedExceptionally(), "still full: refused at once");
                assertTrue(store.appendAsync("b", data("b", 0)).isCompletedExceptionally(), "another segment's too");
                Thread.sleep(5);
            }
            assertFalse(synchronous.isDone(), "the synchronous append waits for the writer");

            release.countDown();
            long expected = 0;
            for (final CompletableFuture<Long> append : accepted) {
                assertEquals(expected, append.get(10, TimeUnit.SECONDS), "acknowledged in order");
                expected += LENGTH;
            }
            assertEquals(reserved, synchronous.get(10, TimeUnit.SECONDS), "the synchronous append went after them");
        } finally {
            release.countDown();
            hooks.forceHook = null;
        }
        final long length = (accepted.size() + 1) * (long) LENGTH;
        assertEquals(length, store.info("a").length(), "the refused appends left no offset taken");
        assertEquals(0, store.info("b").length());
        try (ReadResult result = store.read("a", 0, (int) length)) {
            final byte[] bytes = TestSegments.bytes(result);
            for (long offset = 0; offset < result.length(); offset += LENGTH) {
                final byte[] expected = TestSegments.pattern("a".hashCode(), offset, LENGTH);
                final byte[] actual = java.util.Arrays.copyOfRange(bytes, (int) offset, (int) offset + LENGTH);
                assertArrayEquals(expected, actual, "bytes at offset " + offset);
            }
        }
    }
}
