package io.streamcache.segmentstore;

import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * A segment's lock, as the segment's own fields: reentrant and non-fair, as
 * {@link java.util.concurrent.locks.ReentrantLock} is, with the operations the store uses
 * ({@link #lock}, {@link #tryLock}, {@link #unlock}, {@link #hasQueuedThreads}). The segment
 * <em>is</em> the synchronizer ({@code Segment extends SegmentLock}), so a segment pays 16 bytes
 * of fields for its lock (owner, state, queue head and tail) instead of a {@code ReentrantLock}
 * and its {@code Sync} (48 bytes and a reference). The queue of waiting threads is made only
 * when the lock is contended, by {@link AbstractQueuedSynchronizer}.
 *
 * <p>No conditions and no timed acquisition: nothing in the store waits on a segment's lock
 * other than to enter its critical section. The state is the hold count.
 *
 * <p><b>Threading:</b> thread-safe; it is the lock.
 */
abstract class SegmentLock extends AbstractQueuedSynchronizer {
    private static final long serialVersionUID = 1L;

    /** Takes the lock, waiting as long as it takes; reentrant. */
    final void lock() {
        if (!tryAcquire(1)) {
            acquire(1);
        }
    }

    /**
     * Takes the lock if it is free or already held by this thread; never waits.
     *
     * @return whether this thread now holds it.
     */
    final boolean tryLock() {
        return tryAcquire(1);
    }

    /**
     * Releases one hold of the lock.
     *
     * @throws IllegalMonitorStateException if this thread does not hold it.
     */
    final void unlock() {
        release(1);
    }

    /** @return whether this thread holds the lock (for assertions and tests). */
    final boolean isHeldByCurrentThread() {
        return getExclusiveOwnerThread() == Thread.currentThread();
    }

    @Override
    protected final boolean tryAcquire(final int acquires) {
        final Thread current = Thread.currentThread();
        final int c = getState();
        if (c == 0) {
            if (compareAndSetState(0, acquires)) {
                setExclusiveOwnerThread(current);
                return true;
            }
        } else if (getExclusiveOwnerThread() == current) {
            final int next = c + acquires;
            if (next < 0) {
                throw new Error("Maximum lock count exceeded");
            }
            setState(next);
            return true;
        }
        return false;
    }

    @Override
    protected final boolean tryRelease(final int releases) {
        if (getExclusiveOwnerThread() != Thread.currentThread()) {
            throw new IllegalMonitorStateException();
        }
        final int c = getState() - releases;
        final boolean free = c == 0;
        if (free) {
            setExclusiveOwnerThread(null);
        }
        setState(c);
        return free;
    }

    @Override
    protected final boolean isHeldExclusively() {
        return getExclusiveOwnerThread() == Thread.currentThread();
    }
}
