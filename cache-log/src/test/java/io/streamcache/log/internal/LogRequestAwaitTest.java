package io.streamcache.log.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link LogRequest#awaitDone()}: returns once the request is done, however and whenever it completes. */
@Timeout(60)
class LogRequestAwaitTest {
    private static LogRequest request(final long offset) {
        return new LogRequest(LogRecordDescriptor.TYPE_DATA, 1, offset, null, null, null, 0);
    }

    @Test
    void shouldReturnAtOnceWhenDone() {
        final LogRequest done = request(5);
        done.complete(5L);
        done.awaitDone();
        assertEquals(5L, done.join());
    }

    /** Completion races the waiter's arrival, from another thread, many times: no wait is lost. */
    @Test
    void shouldWakeTheWaiterWhateverTheInterleaving() throws Exception {
        for (int i = 0; i < 5_000; i++) {
            final LogRequest r = request(i);
            final int kind = i % 3;
            final int offset = i;
            final Thread completer = new Thread(() -> {
                if ((offset & 4) != 0) {
                    Thread.onSpinWait();
                }
                switch (kind) {
                    case 0 -> r.complete((long) offset);
                    case 1 -> r.completeExceptionally(new IOException("disk"));
                    default -> r.cancel(false);
                }
            });
            completer.start();
            r.awaitDone();
            assertTrue(r.isDone());
            completer.join();
        }
    }

    @Test
    void shouldKeepWaitingThroughAnInterruptAndKeepTheStatus() throws Exception {
        final LogRequest r = request(1);
        final AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        final CountDownLatch parked = new CountDownLatch(1);
        final Thread waiter = new Thread(() -> {
            parked.countDown();
            r.awaitDone();
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        waiter.start();
        parked.await();
        while (waiter.getState() != Thread.State.WAITING) {
            LockSupport.parkNanos(100_000);
        }
        waiter.interrupt();
        LockSupport.parkNanos(20_000_000);
        assertTrue(waiter.isAlive(), "an interrupt does not end the wait");
        assertFalse(r.isDone());
        r.complete(1L);
        waiter.join();
        assertEquals(Boolean.TRUE, interruptedAfter.get());
    }
}
