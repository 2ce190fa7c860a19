package io.streamcache.core.cache;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Where allocations that found no free block wait for one, instead of spinning with
 * {@code Thread.yield}: a condition signalled by every free of a chain while some thread waits.
 *
 * <p><b>Threading:</b> thread-safe; any thread may wait and any may signal. The freeing thread
 * pays one volatile read when nobody waits ({@link #signal}); only a waiter takes the lock.
 *
 * <p><b>Design note: no lost signal.</b> A waiter counts itself in {@link #waiters} before it
 * checks its condition under the lock; a freer frees its blocks before it reads the count. Both
 * are sequentially consistent, so either the freer sees the waiter (and signals under the lock,
 * which the waiter holds until it waits) or the waiter sees the freed blocks. The wait has a
 * deadline anyway: a caller never waits longer than it asked.
 */
final class FreeBlockSignal {
    private final AtomicInteger waiters = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();

    /** Wakes every waiter, if there is one; called after blocks were freed. */
    void signal() {
        if (waiters.get() > 0) {
            lock.lock();
            try {
                freed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Waits until {@code ready} holds, a free is signalled, or {@code nanos} pass, whichever is
     * first. The caller holds no lock a freer may need.
     *
     * @return whether {@code ready} held when the wait ended (checked under the lock first).
     */
    boolean await(final BooleanSupplier ready, final long nanos) {
        if (nanos <= 0) {
            return ready.getAsBoolean();
        }
        waiters.incrementAndGet();
        try {
            lock.lock();
            try {
                if (ready.getAsBoolean()) {
                    return true;
                }
                freed.awaitNanos(nanos);
            } finally {
                lock.unlock();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            waiters.decrementAndGet();
        }
        return ready.getAsBoolean();
    }

    /** @return threads waiting now (for tests and stats). */
    int waiters() {
        return waiters.get();
    }

    /** Longest single wait of an allocation between two calls of the full handler. */
    static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
}
