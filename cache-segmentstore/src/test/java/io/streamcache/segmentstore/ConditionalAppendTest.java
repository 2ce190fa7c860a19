package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentLengthMismatchException;
import io.streamcache.segmentstore.SegmentSealedException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conditional append: it lands only at the offset the caller expects, the check and the
 * offset's reservation being one step, with a log and without.
 */
class ConditionalAppendTest {
    private static final int THREADS = 8;
    private static final int OFFSETS = 300;
    private static final int LENGTH = 100;

    @TempDir
    Path directory;

    private SegmentStore store(final BlockCache cache, final boolean logged) {
        final SegmentStore.Builder builder = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache));
        if (logged) {
            builder.log(TestLogs.small(directory).build());
        }
        return builder.build();
    }

    @ParameterizedTest(name = "logged={0}")
    @ValueSource(booleans = {false, true})
    void shouldAppendOnlyAtTheExpectedOffsetAndChangeNothingOtherwise(final boolean logged) throws Exception {
        try (BlockCache cache = TestSegments.cache(4 << 20); SegmentStore store = store(cache, logged)) {
            store.create("s");
            assertEquals(0, store.append("s", 0, TestSegments.buffer(1, 0, 10)));
            final SegmentLengthMismatchException behind = assertThrows(SegmentLengthMismatchException.class,
                () -> store.append("s", 0, TestSegments.buffer(1, 0, 10)));
            assertEquals(0, behind.expectedOffset());
            assertEquals(10, behind.length());
            assertTrue(behind.getMessage().contains("length=10") && behind.getMessage().contains("expectedOffset=0"), behind.getMessage());
            assertThrows(SegmentLengthMismatchException.class, () -> store.append("s", 11, TestSegments.buffer(1, 10, 10)));
            final ExecutionException async = assertThrows(ExecutionException.class,
                () -> store.appendAsync("s", 20, TestSegments.buffer(1, 10, 10)).get(10, TimeUnit.SECONDS));
            assertInstanceOf(SegmentLengthMismatchException.class, async.getCause());
            assertThrows(SegmentLengthMismatchException.class, () -> store.append("s", 5, ByteBuffer.allocate(0)), "empty too");
            assertEquals(10, store.info("s").length(), "nothing appended");
            assertEquals(10, store.appendAsync("s", 10, ByteBuffer.wrap(TestSegments.pattern(1, 10, 10))).get(10, TimeUnit.SECONDS));
            assertEquals(20, store.append("s", 20, ByteBuffer.wrap(TestSegments.pattern(1, 20, 10))));
            assertThrows(IllegalArgumentException.class, () -> store.append("s", -1, TestSegments.buffer(1, 30, 10)));
            assertThrows(IllegalArgumentException.class, () -> store.appendAsync("s", -2, TestSegments.buffer(1, 30, 10)));
            store.seal("s");
            final ExecutionException sealed = assertThrows(ExecutionException.class,
                () -> store.appendAsync("s", 3, TestSegments.buffer(1, 30, 10)).get(10, TimeUnit.SECONDS));
            assertInstanceOf(SegmentSealedException.class, sealed.getCause());
            try (ReadResult result = store.read("s", 0, 100)) {
                assertArrayEquals(TestSegments.pattern(1, 0, 30), TestSegments.bytes(result));
            }
        }
    }

    @org.junit.jupiter.api.Test
    void shouldCompareWithTheReservedLengthSoAnAppendNotYetDurableCounts() throws Exception {
        try (BlockCache cache = TestSegments.cache(4 << 20); SegmentStore store = store(cache, true)) {
            store.create("s");
            final List<CompletableFuture<Long>> appends = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                appends.add(store.appendAsync("s", i * 10L, TestSegments.buffer(2, i * 10L, 10)));
            }
            for (int i = 0; i < 50; i++) {
                assertEquals(i * 10L, appends.get(i).get(10, TimeUnit.SECONDS));
            }
            assertEquals(500, store.info("s").length());
        }
        try (BlockCache cache = TestSegments.cache(4 << 20); SegmentStore reopened = store(cache, true)) {
            assertThrows(SegmentLengthMismatchException.class, () -> reopened.append("s", 490, TestSegments.buffer(2, 490, 10)));
            assertEquals(500, reopened.append("s", 500, TestSegments.buffer(2, 500, 10)), "after a reopen: the recovered length");
        }
    }

    @ParameterizedTest(name = "logged={0}")
    @ValueSource(booleans = {false, true})
    @Timeout(120)
    void shouldLetExactlyOneOfManyRacingAppendsWinEachOffset(final boolean logged) throws Exception {
        final AtomicIntegerArray winners = new AtomicIntegerArray(OFFSETS);
        for (int k = 0; k < OFFSETS; k++) {
            winners.set(k, -1);
        }
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        try (BlockCache cache = TestSegments.cache(16 << 20); SegmentStore store = store(cache, logged)) {
            store.create("s");
            final CountDownLatch start = new CountDownLatch(1);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int thread = t;
                threads.add(new Thread(() -> {
                    try {
                        start.await();
                        // Each thread tries every offset in turn: the one that finds the length there wins it.
                        for (int k = 0; k < OFFSETS; k++) {
                            final long offset = (long) k * LENGTH;
                            final ByteBuf data = TestSegments.buffer(thread, offset, LENGTH);
                            try {
                                final long landed = (thread & 1) == 0 ? store.append("s", offset, data)
                                    : store.appendAsync("s", offset, data).join();
                                assertEquals(offset, landed);
                                if (!winners.compareAndSet(k, -1, thread)) {
                                    errors.add(new AssertionError("offset " + offset + " won twice"));
                                }
                            } catch (final SegmentLengthMismatchException | java.util.concurrent.CompletionException e) {
                                final Throwable cause = e instanceof SegmentLengthMismatchException ? e : e.getCause();
                                if (!(cause instanceof SegmentLengthMismatchException mismatch) || mismatch.length() <= offset) {
                                    errors.add(cause);
                                }
                            }
                        }
                    } catch (final Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            threads.forEach(Thread::start);
            start.countDown();
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), errors);
            assertEquals((long) OFFSETS * LENGTH, store.info("s").length());
            try (ReadResult result = store.read("s", 0, OFFSETS * LENGTH)) {
                final byte[] bytes = TestSegments.bytes(result);
                assertEquals(OFFSETS * LENGTH, bytes.length);
                for (int k = 0; k < OFFSETS; k++) {
                    final int winner = winners.get(k);
                    assertTrue(winner >= 0, "offset " + k * LENGTH + " has a winner");
                    assertArrayEquals(TestSegments.pattern(winner, (long) k * LENGTH, LENGTH),
                        java.util.Arrays.copyOfRange(bytes, k * LENGTH, (k + 1) * LENGTH), "the winner's bytes at " + k * LENGTH);
                }
            }
        }
    }
}
