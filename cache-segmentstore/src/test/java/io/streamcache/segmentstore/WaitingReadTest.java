package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static io.streamcache.segmentstore.TestSegments.waiterCount;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WaitingReadTest {
    private static final long SEED = 11;
    private static final Duration LONG = Duration.ofMinutes(5);

    private BlockCache cache;
    private SegmentStore store;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        store = TestSegments.store(cache, 1000);
        store.create("s");
    }

    @AfterEach
    void tearDown() {
        store.close();
        cache.close();
    }

    private static ReadResult get(final CompletableFuture<ReadResult> future) throws Exception {
        return future.get(20, TimeUnit.SECONDS);
    }

    @Test
    void shouldCompleteAtOnceWhenBytesAreThere() throws Exception {
        store.append("s", buffer(SEED, 0, 100));
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 40, 1000, LONG);
        assertTrue(future.isDone());
        try (ReadResult result = get(future)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status());
            assertArrayEquals(pattern(SEED, 40, 60), bytes(result));
        }
        assertEquals(0, waiterCount(store, "s"));
    }

    @Test
    void shouldBeCompletedByTheAppendThatBringsTheBytes() throws Exception {
        store.append("s", buffer(SEED, 0, 100));
        final CompletableFuture<ReadResult> atEnd = store.readOrWait("s", 100, 1000, LONG);
        final CompletableFuture<ReadResult> further = store.readOrWait("s", 150, 20, LONG);
        assertFalse(atEnd.isDone());
        assertEquals(2, waiterCount(store, "s"));

        store.append("s", buffer(SEED, 100, 50));
        assertTrue(atEnd.isDone(), "completed by the append, before it returned");
        assertFalse(further.isDone(), "offset 150 is not reached by bytes up to 150");
        try (ReadResult result = get(atEnd)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status());
            assertArrayEquals(pattern(SEED, 100, 50), bytes(result));
        }

        store.append("s", buffer(SEED, 150, 1000));
        try (ReadResult result = get(further)) {
            assertEquals(ReadStatus.MAX_LENGTH, result.status());
            assertArrayEquals(pattern(SEED, 150, 20), bytes(result));
        }
        assertEquals(0, waiterCount(store, "s"));
    }

    @Test
    void shouldWakeWaitersInOffsetOrder() throws Exception {
        final List<Long> offsets = new ArrayList<>();
        for (long offset = 0; offset < 40; offset += 2) {
            offsets.add(offset);
            offsets.add(offset);
        }
        Collections.shuffle(offsets, new Random(5));
        final List<Long> completed = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<ReadResult>> futures = new ArrayList<>();
        for (final long offset : offsets) {
            final CompletableFuture<ReadResult> future = store.readOrWait("s", offset, 5, LONG);
            futures.add(future);
            future.thenAccept(result -> completed.add(result.offset()));
        }
        store.append("s", buffer(SEED, 0, 25));
        final List<Long> firstWave = new ArrayList<>(completed);
        assertEquals(26, firstWave.size(), "offsets 0, 2, ..., 24 twice");
        store.append("s", buffer(SEED, 25, 100));
        assertEquals(40, completed.size());
        final List<Long> sorted = new ArrayList<>(completed);
        Collections.sort(sorted);
        assertEquals(sorted, completed, "each append completes its waiters in offset order");
        for (final CompletableFuture<ReadResult> future : futures) {
            try (ReadResult result = get(future)) {
                assertTrue(result.length() > 0, "woken by bytes at its offset");
                assertArrayEquals(pattern(SEED, result.offset(), result.length()), bytes(result));
            }
        }
    }

    @Test
    void shouldBeCompletedBySeal() throws Exception {
        store.append("s", buffer(SEED, 0, 10));
        final CompletableFuture<ReadResult> atEnd = store.readOrWait("s", 10, 100, LONG);
        final CompletableFuture<ReadResult> past = store.readOrWait("s", 20, 100, LONG);
        store.seal("s");
        for (final CompletableFuture<ReadResult> future : List.of(atEnd, past)) {
            try (ReadResult result = get(future)) {
                assertEquals(ReadStatus.SEALED_END, result.status());
                assertEquals(0, result.length());
            }
        }
        final CompletableFuture<ReadResult> afterSeal = store.readOrWait("s", 10, 100, LONG);
        assertTrue(afterSeal.isDone(), "a sealed segment completes at once");
        assertEquals(ReadStatus.SEALED_END, get(afterSeal).status());
    }

    @Test
    void shouldTimeOutWithAStatus() throws Exception {
        store.append("s", buffer(SEED, 0, 10));
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 10, 100, Duration.ofMillis(20));
        try (ReadResult result = get(future)) {
            assertEquals(ReadStatus.TIMED_OUT, result.status());
            assertEquals(0, result.length());
            assertEquals(10, result.nextOffset());
        }
        assertEquals(0, waiterCount(store, "s"), "the timeout removed the waiter");
        store.append("s", buffer(SEED, 10, 10));
    }

    @Test
    void shouldReadAtOnceWithAZeroTimeout() throws Exception {
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 0, 100, Duration.ZERO);
        assertTrue(future.isDone());
        assertEquals(ReadStatus.END_OF_DATA, get(future).status());
        assertEquals(0, waiterCount(store, "s"));
    }

    @Test
    void shouldFailWhenTheSegmentIsDeleted() {
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 0, 100, LONG);
        store.delete("s");
        final ExecutionException e = assertThrows(ExecutionException.class, () -> get(future));
        final SegmentNotFoundException cause = assertInstanceOf(SegmentNotFoundException.class, e.getCause());
        assertEquals("segment=s was deleted while a read waited at offset=0", cause.getMessage());
    }

    @Test
    void shouldFailWhenTheStoreCloses() {
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 0, 100, LONG);
        store.close();
        final ExecutionException e = assertThrows(ExecutionException.class, () -> get(future));
        assertInstanceOf(CacheClosedException.class, e.getCause());
    }

    @Test
    void shouldReleaseTheResultOfACancelledWait() {
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 0, 100, LONG);
        assertTrue(future.cancel(false));
        store.append("s", buffer(SEED, 0, 100));
        assertEquals(0, TestSegments.entries(store, "s").get(0).pins(), "nobody holds the result, so it was released");
        assertEquals(0, waiterCount(store, "s"));
    }

    @Test
    void shouldCompleteOnTheAppendingThread() throws Exception {
        final CompletableFuture<ReadResult> future = store.readOrWait("s", 0, 100, LONG);
        final CompletableFuture<Thread> completer = future.thenApply(result -> {
            result.release();
            return Thread.currentThread();
        });
        final Thread appender = new Thread(() -> store.append("s", buffer(SEED, 0, 1)), "appender");
        appender.start();
        appender.join();
        assertSame(appender, completer.get(20, TimeUnit.SECONDS));
    }

    @Test
    void shouldWakeTailReadersWaitingOnAnotherThread() throws Exception {
        final int readers = 4;
        final int appends = 200;
        final CountDownLatch done = new CountDownLatch(readers);
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        for (int r = 0; r < readers; r++) {
            readFrom(0, appends * 10L, done, failures);
        }
        for (int i = 0; i < appends; i++) {
            store.append("s", buffer(SEED, i * 10L, 10));
        }
        assertTrue(done.await(20, TimeUnit.SECONDS));
        assertEquals(List.of(), failures);
    }

    /** A tail reader as a chain of futures: no thread waits. */
    private void readFrom(final long offset, final long end, final CountDownLatch done, final List<Throwable> failures) {
        store.readOrWait("s", offset, 64, LONG).whenComplete((result, failure) -> {
            if (failure != null) {
                failures.add(failure);
                done.countDown();
                return;
            }
            try (result) {
                if (!java.util.Arrays.equals(pattern(SEED, offset, result.length()), bytes(result))) {
                    failures.add(new AssertionError("wrong bytes at offset=" + offset));
                }
            }
            if (result.nextOffset() >= end) {
                done.countDown();
            } else {
                readFrom(result.nextOffset(), end, done, failures);
            }
        });
    }
}
