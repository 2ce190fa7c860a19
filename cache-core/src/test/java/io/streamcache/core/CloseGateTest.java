package io.streamcache.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CloseGate}: a close waits for the operation in flight and refuses new ones; under
 * contention (more threads than cores, entering and exiting while one closes) no operation is
 * ever admitted after the close returned.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CloseGateTest {
    @Test
    void shouldWaitForAnOperationInFlightBeforeFreeing() throws Exception {
        final CloseGate gate = new CloseGate();
        assertTrue(gate.enter());
        final CountDownLatch closed = new CountDownLatch(1);
        final Thread closer = new Thread(() -> {
            gate.closeAndAwait(TimeUnit.SECONDS.toNanos(30));
            closed.countDown();
        });
        closer.start();
        while (!gate.isClosing()) {
            Thread.onSpinWait();
        }
        assertTrue(!gate.enter(), "a new operation is refused once closing");
        assertTrue(!closed.await(200, TimeUnit.MILLISECONDS), "the close returned with an operation in flight");
        gate.exit();
        assertTrue(closed.await(30, TimeUnit.SECONDS));
        closer.join();
        assertEquals(0, gate.inFlight());
    }

    @Test
    void shouldAdmitNoOperationOnceTheCloseReturned() throws Exception {
        for (int round = 0; round < 50; round++) {
            final CloseGate gate = new CloseGate();
            final AtomicBoolean closed = new AtomicBoolean();
            final AtomicLong admittedAfterClose = new AtomicLong();
            final AtomicLong admitted = new AtomicLong();
            final CountDownLatch started = new CountDownLatch(4);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                final Thread thread = new Thread(() -> {
                    started.countDown();
                    while (true) {
                        if (!gate.enter()) {
                            return;
                        }
                        if (closed.get()) {
                            admittedAfterClose.incrementAndGet();
                        }
                        admitted.incrementAndGet();
                        gate.exit();
                    }
                });
                threads.add(thread);
                thread.start();
            }
            started.await();
            assertTrue(gate.closeAndAwait(TimeUnit.SECONDS.toNanos(30)));
            closed.set(true);
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(30));
                assertFalse(thread.isAlive());
            }
            assertEquals(0, admittedAfterClose.get(), "an operation ran after the close returned");
            assertEquals(0, gate.inFlight());
        }
    }
}
