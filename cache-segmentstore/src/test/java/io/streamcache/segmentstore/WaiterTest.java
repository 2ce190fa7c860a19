package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A waiting read on its own: the order of a segment's queue of waiters (by offset, then by
 * arrival) and the cancellation of its timeout. What its timeout does ({@link Waiter#run()} hands
 * the waiter to the segment's timeout) is the segment's and is tested with it (WaitingReadTest).
 */
class WaiterTest {
    private static Waiter waiter(final long offset, final long sequence) {
        return new Waiter(null, offset, 100, sequence);
    }

    @Test
    void ordersByOffsetThenByArrival() {
        assertTrue(Waiter.ORDER.compare(waiter(10, 5), waiter(20, 1)) < 0, "a lower offset first, whatever its arrival");
        assertTrue(Waiter.ORDER.compare(waiter(20, 1), waiter(10, 5)) > 0);
        assertTrue(Waiter.ORDER.compare(waiter(10, 1), waiter(10, 2)) < 0, "same offset: the earlier arrival first");
        assertTrue(Waiter.ORDER.compare(waiter(10, 2), waiter(10, 1)) > 0);
        assertEquals(0, Waiter.ORDER.compare(waiter(10, 1), waiter(10, 1)));
        assertTrue(Waiter.ORDER.compare(waiter(Long.MIN_VALUE, 0), waiter(Long.MAX_VALUE, 0)) < 0, "no overflow at the extremes");
        assertTrue(Waiter.ORDER.compare(waiter(0, Long.MAX_VALUE), waiter(0, Long.MIN_VALUE)) > 0);
    }

    @Test
    void aQueueHandsWaitersOutInOffsetThenArrivalOrder() {
        final PriorityQueue<Waiter> queue = new PriorityQueue<>(Waiter.ORDER);
        final Waiter a = waiter(300, 0);
        final Waiter b = waiter(100, 1);
        final Waiter c = waiter(300, 2);
        final Waiter d = waiter(100, 3);
        final Waiter e = waiter(200, 4);
        queue.add(a);
        queue.add(b);
        queue.add(c);
        queue.add(d);
        queue.add(e);
        final List<Waiter> out = new ArrayList<>();
        while (!queue.isEmpty()) {
            out.add(queue.poll());
        }
        assertEquals(List.of(b, d, e, a, c), out);
    }

    @Test
    void keepsWhatTheReadAskedFor() {
        final Waiter w = new Waiter(null, 4096, 512, 9);
        assertEquals(4096, w.offset);
        assertEquals(512, w.maxLength);
        assertEquals(9, w.sequence);
        assertFalse(w.future.isDone());
    }

    @Test
    void shouldHandItselfToItsTimeoutWhenRunAndNothingElse() {
        final List<Waiter> timedOut = new ArrayList<>();
        final Waiter w = new Waiter(timedOut::add, 64, 10, 0);
        w.run();
        assertEquals(List.of(w), timedOut);
        assertFalse(w.future.isDone(), "the owner of the queue completes it, not the waiter");
    }

    @Test
    void cancellingWithoutATimeoutTaskDoesNothing() {
        final Waiter w = waiter(0, 0);
        w.cancelTimeout();
        assertFalse(w.future.isDone(), "cancelling the timeout does not complete the read");
    }

    @Test
    void cancellingTheTimeoutCancelsItsTaskAndNotTheRead() {
        final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            final Waiter w = waiter(0, 0);
            final ScheduledFuture<?> task = scheduler.schedule(w, 1, TimeUnit.HOURS);
            w.timeoutTask = task;
            w.cancelTimeout();
            assertTrue(task.isCancelled());
            assertFalse(w.future.isDone());
            w.cancelTimeout();
            assertSame(task, w.timeoutTask);
        } finally {
            scheduler.shutdownNow();
        }
    }
}
