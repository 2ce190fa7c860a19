package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The waiting reads on their own, over one real segment (no store): the timeout thread comes
 * from the {@link StreamcacheThreads} given, woken waiters get fresh reads in offset order, the
 * waiters of a deleted segment fail, and nothing waits once the timeouts are shut down.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WaitingReadsTest {
    private static final long SEED = 5;
    private static final long LONG = TimeUnit.MINUTES.toNanos(5);

    /** A role and owner asked for, and the thread made for them. */
    private record Made(StreamcacheThreads.Role role, String owner, Thread thread) {
    }

    private final List<Made> made = new CopyOnWriteArrayList<>();
    private final StreamcacheThreads recording = (role, owner, task) -> {
        final Thread thread = new Thread(task, "test-" + role.label() + "-" + owner);
        thread.setDaemon(true);
        made.add(new Made(role, owner, thread));
        return thread;
    };

    private BlockCache cache;
    private CacheManager manager;
    private Segment segment;
    private WaitingReads waiting;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        manager = TestSegments.manualManager(cache).build();
        segment = new Segment(1, "s", cache, manager, 1000, true, 0);
        waiting = new WaitingReads("waits", recording);
    }

    @AfterEach
    void tearDown() {
        waiting.shutdown();
        segment.lock();
        try {
            segment.deleteLocked(true);
        } finally {
            segment.unlock();
        }
        manager.close();
        cache.close();
    }

    private void append(final long from, final int length) {
        segment.lock();
        try {
            segment.appendLocked(buffer(SEED, from, length));
        } finally {
            segment.unlock();
        }
    }

    private Waiter take(final long end) {
        segment.lock();
        try {
            return segment.takeWaiters(end);
        } finally {
            segment.unlock();
        }
    }

    private Waiter delete() {
        segment.lock();
        try {
            return segment.deleteLocked(false);
        } finally {
            segment.unlock();
        }
    }

    @Test
    void shouldMakeItsTimeoutThreadThroughTheThreadsItWasGivenOnTheFirstWait() throws Exception {
        assertTrue(made.isEmpty(), "no thread before a read waits");
        final CompletableFuture<ReadResult> future = waiting.readOrWait(segment, 0, 10, TimeUnit.MILLISECONDS.toNanos(20));
        assertEquals(1, made.size());
        assertEquals(StreamcacheThreads.Role.READ_TIMEOUTS, made.get(0).role());
        assertEquals("waits", made.get(0).owner());
        try (ReadResult result = future.get(20, TimeUnit.SECONDS)) {
            assertEquals(ReadStatus.TIMED_OUT, result.status());
        }
        waiting.readOrWait(segment, 0, 10, LONG);
        assertEquals(1, made.size(), "one timeout thread, however many reads wait");
    }

    @Test
    void shouldReadAtOnceWithoutAThreadWhenBytesAreThere() throws Exception {
        append(0, 100);
        final CompletableFuture<ReadResult> future = waiting.readOrWait(segment, 10, 50, LONG);
        assertTrue(future.isDone());
        try (ReadResult result = future.get()) {
            assertArrayEquals(pattern(SEED, 10, 50), bytes(result));
        }
        assertTrue(made.isEmpty());
    }

    @Test
    void shouldCompleteWokenWaitersWithFreshReadsInOffsetOrder() throws Exception {
        final CompletableFuture<ReadResult> later = waiting.readOrWait(segment, 60, 1000, LONG);
        final CompletableFuture<ReadResult> first = waiting.readOrWait(segment, 0, 1000, LONG);
        final List<String> order = new CopyOnWriteArrayList<>();
        later.thenRun(() -> order.add("60"));
        first.thenRun(() -> order.add("0"));
        append(0, 100);
        final Waiter woken = take(100);
        assertFalse(first.isDone(), "taking waiters out of the queue completes nothing");
        waiting.complete(segment, woken);
        assertEquals(List.of("0", "60"), order);
        try (ReadResult a = first.get(); ReadResult b = later.get()) {
            assertArrayEquals(pattern(SEED, 0, 100), bytes(a));
            assertArrayEquals(pattern(SEED, 60, 40), bytes(b));
        }
    }

    @Test
    void shouldFailTheWaitersOfADeletedSegment() {
        final CompletableFuture<ReadResult> deleted = waiting.readOrWait(segment, 0, 10, LONG);
        waiting.fail(segment, delete(), false);
        final ExecutionException notFound = assertThrows(ExecutionException.class, deleted::get);
        assertInstanceOf(SegmentNotFoundException.class, notFound.getCause());
        assertTrue(notFound.getCause().getMessage().contains("offset=0"), notFound.getCause().getMessage());
    }

    @Test
    void shouldFailTheWaitersWithClosedWhenTheStoreCloses() {
        final CompletableFuture<ReadResult> closing = waiting.readOrWait(segment, 0, 10, LONG);
        final Waiter woken = take(Long.MAX_VALUE);
        waiting.fail(segment, woken, true);
        final ExecutionException closed = assertThrows(ExecutionException.class, closing::get);
        assertInstanceOf(CacheClosedException.class, closed.getCause());
    }

    @Test
    void shouldRefuseToWaitOnceShutDown() {
        waiting.shutdown();
        final CompletableFuture<ReadResult> refused = waiting.readOrWait(segment, 0, 10, LONG);
        final ExecutionException closed = assertThrows(ExecutionException.class, refused::get);
        assertInstanceOf(CacheClosedException.class, closed.getCause());
        assertTrue(closed.getCause().getMessage().contains("waits"), closed.getCause().getMessage());
    }
}
