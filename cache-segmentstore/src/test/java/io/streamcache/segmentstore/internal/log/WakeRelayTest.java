package io.streamcache.segmentstore.internal.log;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link WakeRelay}: every owner parked on a pooled request is woken, whoever relays the wake-up.
 * No timing is asserted: a lost wake-up leaves an owner parked and the test runs into its timeout.
 */
@Timeout(120)
class WakeRelayTest {
    /**
     * 16 owners submit requests that a completion thread completes in random bursts (drained
     * when it runs out, as the completer does before it parks), 3,000 rounds each: every owner
     * returns from every wait, and the relay is empty at the end.
     */
    @Test
    void shouldWakeEveryParkedOwnerUnderContention() throws Exception {
        final WakeRelay relay = new WakeRelay();
        final ConcurrentLinkedQueue<LogRequest> submitted = new ConcurrentLinkedQueue<>();
        final int owners = 16;
        final int rounds = 3000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread completer = new Thread(() -> {
            final SplittableRandom random = new SplittableRandom(3);
            long completed = 0;
            while (completed < (long) owners * rounds && failure.get() == null) {
                final LogRequest r = submitted.poll();
                if (r == null) {
                    relay.drain();
                    Thread.onSpinWait();
                    continue;
                }
                if (random.nextInt(8) == 0) {
                    // A pause now and then lets owners park, and lets woken owners find the queue empty.
                    LockSupport.parkNanos(random.nextInt(50_000));
                }
                r.succeed();
                completed++;
            }
            relay.drain();
        }, "completer");
        relay.completionThread(completer);
        final List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < owners; t++) {
            final int owner = t;
            final Thread thread = new Thread(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        final LogRequest r = LogRequest.newPooled();
                        r.reuse(owner, i, Unpooled.wrappedBuffer(new byte[1]), null, LogCommitHandler.NONE, 0, relay);
                        submitted.add(r);
                        r.awaitDone();
                        if (!r.isDone() || r.failureCause() != null) {
                            throw new AssertionError("owner " + owner + " round " + i + ": " + r);
                        }
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "owner-" + t);
            threads.add(thread);
        }
        completer.start();
        for (final Thread thread : threads) {
            thread.start();
        }
        for (final Thread thread : threads) {
            thread.join();
        }
        completer.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, relay.queued(), "nothing left queued");
        assertTrue(relay.helpers() >= 0, "helpers " + relay.helpers());
    }

    /** A thread other than the completion thread never queues: it unparks the owner itself. */
    @Test
    void shouldWakeDirectlyFromAnotherThread() throws Exception {
        final WakeRelay relay = new WakeRelay();
        relay.completionThread(new Thread(() -> { }));
        final LogRequest r = LogRequest.newPooled();
        r.reuse(1, 0, Unpooled.wrappedBuffer(new byte[1]), null, LogCommitHandler.NONE, 0, relay);
        final Thread owner = new Thread(r::awaitDone);
        owner.start();
        while (owner.getState() != Thread.State.WAITING) {
            Thread.onSpinWait();
        }
        r.fail(new IllegalStateException("failed outside the list"));
        owner.join();
        assertEquals(0, relay.queued());
    }
}
