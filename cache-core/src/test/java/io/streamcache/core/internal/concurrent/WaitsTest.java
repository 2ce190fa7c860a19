package io.streamcache.core.internal.concurrent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Waits}: an interrupted caller still waits for the end, and gets its interrupt back. */
class WaitsTest {
    @Test
    @Timeout(30)
    void shouldJoinThroughInterruptsAndRestoreTheInterrupt() throws Exception {
        final CountDownLatch release = new CountDownLatch(1);
        final Thread worker = new Thread(() -> Waits.awaitUninterruptibly(release));
        worker.start();
        final AtomicBoolean interrupterDone = new AtomicBoolean();
        final Thread interrupter = interruptThenCountDown(Thread.currentThread(), interrupterDone, release);
        Waits.joinUninterruptibly(worker);
        assertFalse(worker.isAlive(), "the join returned only once the thread ended");
        assertTrue(interrupterDone.get(), "interrupts did not cut the wait short");
        assertTrue(Thread.interrupted(), "the interrupt is restored (and cleared here)");
        interrupter.join();
    }

    @Test
    @Timeout(30)
    void shouldAwaitALatchThroughInterruptsAndRestoreTheInterrupt() throws Exception {
        final CountDownLatch latch = new CountDownLatch(1);
        final AtomicBoolean counted = new AtomicBoolean();
        final Thread other = interruptThenCountDown(Thread.currentThread(), counted, latch);
        Waits.awaitUninterruptibly(latch);
        assertTrue(counted.get(), "interrupts did not cut the wait short");
        assertTrue(Thread.interrupted(), "the interrupt is restored (and cleared here)");
        other.join();
        Waits.joinUninterruptibly(new Thread(() -> { }));
        assertFalse(Thread.interrupted(), "a thread never started is joined at once, no interrupt made up");
    }

    /**
     * @return a started thread that interrupts {@code caller} five times, 20 ms apart, then sets
     *         {@code done} and counts {@code latch} down: a wait that returns before the count
     *         was cut short by an interrupt.
     */
    private static Thread interruptThenCountDown(final Thread caller, final AtomicBoolean done, final CountDownLatch latch) {
        final Thread interrupter = new Thread(() -> {
            for (int i = 0; i < 5; i++) {
                caller.interrupt();
                sleep(20);
            }
            done.set(true);
            latch.countDown();
        });
        interrupter.start();
        return interrupter;
    }

    private static void sleep(final long millis) {
        try {
            Thread.sleep(millis);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
