package io.streamcache.log.internal;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Chained wakes of pooled requests ({@link LogRequest#passWakeTo}, and the owner's hand-off as
 * it leaves {@link LogRequest#awaitDone()}; see {@link Completer}): the next waiter is woken by
 * exactly one of the previous request's owner and the completion thread, whatever the
 * interleaving, and never before its own request is done.
 */
@Timeout(120)
class ChainedWakeTest {
    /** A pooled request made pending, as {@link AggregatingWriter#appendPooled} makes it. */
    private static LogRequest pending(final long offset) {
        final LogRequest request = LogRequest.newPooled();
        request.reuse(1, offset, Unpooled.buffer(8).writeLong(offset), null, LogCommitHandler.NONE, 0);
        return request;
    }

    private static Thread waiter(final LogRequest request, final Throwable[] outcome, final int index) {
        final Thread thread = new Thread(() -> {
            request.awaitDone();
            outcome[index] = request.isDone() ? request.failureCause() : new AssertionError("woken before done: " + request);
        }, "waiter-" + index);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void awaitParked(final Thread thread, final LogRequest request) {
        while (!request.hasWaiter() || thread.getState() != Thread.State.WAITING) {
            LockSupport.parkNanos(100_000);
        }
    }

    private static void assertEnds(final Thread thread, final String what) throws InterruptedException {
        thread.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(thread.isAlive(), what);
    }

    @Test
    void shouldHaveTheOwnerWakeTheNextWaiterWhenItLeaves() throws Exception {
        final LogRequest first = pending(0);
        final LogRequest second = pending(8);
        final Throwable[] outcome = new Throwable[2];
        final Thread a = waiter(first, outcome, 0);
        final Thread b = waiter(second, outcome, 1);
        awaitParked(a, first);
        awaitParked(b, second);

        // As the completion thread does: both outcomes written, only the first waiter woken by it.
        first.succeed(false);
        second.fail(new IOException("disk"), false);
        assertTrue(first.passWakeTo(second), "the owner of the first is still waiting: it takes the wake over");
        first.wakeWaiter();

        assertEnds(a, "the first waiter, woken directly");
        assertEnds(b, "the second waiter, woken by the first one's owner (nobody else unparks it)");
        assertNull(outcome[0]);
        assertEquals("disk", outcome[1].getMessage(), "the second's outcome, visible to its waiter");
    }

    @Test
    void shouldRefuseAChainedWakeOnceTheOwnerLeft() throws Exception {
        final LogRequest first = pending(0);
        final LogRequest second = pending(8);
        final Throwable[] outcome = new Throwable[2];
        final Thread a = waiter(first, outcome, 0);
        awaitParked(a, first);
        first.succeed(true);
        assertEnds(a, "the first waiter");
        assertFalse(first.hasWaiter());

        second.succeed(false);
        assertFalse(first.passWakeTo(second), "its owner left: the completion thread must wake the next waiter itself");
    }

    @Test
    void shouldTakeAChainedWakeAgainAfterReuse() throws Exception {
        final LogRequest first = pending(0);
        final Throwable[] outcome = new Throwable[3];
        final Thread a = waiter(first, outcome, 0);
        awaitParked(a, first);
        first.succeed(true);
        assertEnds(a, "the first waiter");
        assertFalse(first.passWakeTo(pending(8)));

        first.released();
        first.reuse(1, 16, Unpooled.buffer(8).writeLong(16), null, LogCommitHandler.NONE, 0);
        final LogRequest next = pending(24);
        final Thread again = waiter(first, outcome, 1);
        final Thread b = waiter(next, outcome, 2);
        awaitParked(again, first);
        awaitParked(b, next);
        first.succeed(false);
        next.succeed(false);
        assertTrue(first.passWakeTo(next), "a reused request takes a chained wake again");
        assertFalse(first.passWakeTo(pending(32)), "one chained wake per use");
        first.wakeWaiter();
        assertEnds(again, "the reused request's waiter");
        assertEnds(b, "the waiter chained to it");
        assertNull(outcome[2]);
    }

    /**
     * The race the CAS and the owner's getAndSet decide, many times with random delays on both
     * sides: the completion thread's rule ({@code hasWaiter} and {@code passWakeTo}, else wake
     * directly) against an owner that arrives late, leaves early or is still parked. Every
     * waiter returns, and only once its request is done; a lost wake leaves a waiter parked
     * forever (no timed park) and fails the join.
     */
    @Test
    void shouldNeverLoseNorAnticipateAWakeWhateverTheInterleaving() throws Exception {
        final SplittableRandom random = new SplittableRandom(20261202L);
        int chained = 0;
        final int rounds = 4_000;
        for (int round = 0; round < rounds; round++) {
            final LogRequest first = pending(0);
            final LogRequest second = pending(8);
            final Throwable[] outcome = new Throwable[2];
            final int delayA = random.nextInt(4) == 0 ? random.nextInt(2_000) : 0;
            final int delayB = random.nextInt(4) == 0 ? random.nextInt(2_000) : 0;
            final Thread a = new Thread(() -> {
                spin(delayA);
                first.awaitDone();
                outcome[0] = first.isDone() ? null : new AssertionError("first woken before done");
            });
            final Thread b = new Thread(() -> {
                spin(delayB);
                second.awaitDone();
                outcome[1] = second.isDone() ? null : new AssertionError("second woken before done");
            });
            a.setDaemon(true);
            b.setDaemon(true);
            a.start();
            b.start();
            spin(random.nextInt(3_000));
            first.succeed(true);
            spin(random.nextInt(3_000));
            second.succeed(false);
            if (first.hasWaiter() && first.passWakeTo(second)) {
                chained++;
            } else {
                second.wakeWaiter();
            }
            a.join(TimeUnit.SECONDS.toMillis(10));
            b.join(TimeUnit.SECONDS.toMillis(10));
            final int at = round;
            assertFalse(a.isAlive() || b.isAlive(), () -> "a waiter never woke, round " + at);
            assertNull(outcome[0]);
            assertNull(outcome[1]);
        }
        // Not asserted (it depends on scheduling): how often the owner took the wake over.
        System.out.printf("chained wakes: %d of %d rounds%n", chained, rounds);
    }

    private static void spin(final int iterations) {
        for (int i = 0; i < iterations; i++) {
            Thread.onSpinWait();
        }
    }
}
