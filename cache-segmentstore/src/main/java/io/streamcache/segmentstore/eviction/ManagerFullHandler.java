package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.CacheFullHandler;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link CacheManager}'s hook in its cache: an allocation that finds no free block calls
 * {@link #onCacheFull} on the allocating thread, which runs a pass there (freeing at least the
 * blocks it needs) before the cache gives up with a {@code CacheFullException}. Also lets a
 * second manager see that the cache has one ({@link #manager()}).
 *
 * <h2>Never waiting for a lock</h2>
 * The allocating thread may hold its segment's lock, and another appender may hold another
 * segment's lock and be in the same situation, so nothing on this path blocks on a lock another
 * thread could hold while waiting for blocks: the pass lock is taken with {@code tryLock} (when
 * busy, the handler waits up to {@link #PASS_WAIT_NANOS} for the running pass, which is freeing
 * blocks, then asks the cache to retry), and sources take segment locks with {@code tryLock}
 * and skip busy segments (see {@code EvictionSource}). The handler asks for a retry when its
 * pass freed blocks or skipped busy segments (whose owners may free their own), and lets the
 * cache fail at once when nothing could be freed.
 *
 * <h2>Threading</h2>
 * Thread-safe: any allocating thread, several at once (one runs the pass, the others wait for
 * it). Counts its calls (a {@link LongAdder}); logs nothing (it runs on the data path).
 */
final class ManagerFullHandler implements CacheFullHandler {
    /** Longest wait of a full handler for another thread's pass before it lets the cache retry. */
    static final long PASS_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final CacheManager manager;
    private final EvictionPasses passes;
    private final AtomicInteger generation;
    private final LongAdder calls = new LongAdder();

    /**
     * @param manager    the manager (its closed state; its name for the one-manager check).
     * @param passes     the manager's passes.
     * @param generation the manager's generation counter, advanced by every pass run here.
     */
    ManagerFullHandler(final CacheManager manager, final EvictionPasses passes, final AtomicInteger generation) {
        this.manager = manager;
        this.passes = passes;
        this.generation = generation;
    }

    /**
     * Runs on the allocating thread, which may hold its segment's lock. Never waits for a lock
     * longer than {@link #PASS_WAIT_NANOS} (see the class documentation).
     *
     * @return whether the cache should retry the allocation.
     */
    @Override
    public boolean onCacheFull(final int blockCount) {
        calls.increment();
        if (manager.isClosed()) {
            return false;
        }
        if (!passes.tryLock()) {
            awaitRunningPass();
            return true;
        }
        try {
            generation.incrementAndGet();
            final long busyBefore = passes.busySkips();
            final long freed = passes.passLocked(Double.NaN, blockCount);
            return freed > 0 || passes.busySkips() != busyBefore;
        } catch (final CacheClosedException e) {
            return false;
        } finally {
            passes.unlock();
        }
    }

    /**
     * Waits (at most {@link #PASS_WAIT_NANOS}) for the pass another thread is running, so that an
     * allocation on a full cache sleeps until that pass has freed blocks instead of spinning
     * against it for a core (on a 2-core machine the pass is what it would be spinning against).
     * A timed wait cannot deadlock: the pass never waits for a lock the caller may hold (it takes
     * segment locks with {@code tryLock}), and the wait ends on its own.
     */
    private void awaitRunningPass() {
        try {
            passes.awaitRunningPass(PASS_WAIT_NANOS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the manager that installed this handler. */
    CacheManager manager() {
        return manager;
    }

    /** @return times the cache called this handler (any thread). */
    long calls() {
        return calls.sum();
    }
}
