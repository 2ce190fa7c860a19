package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A cache manager's side of filling the cache from the log: which tier a filled range goes to
 * (or none), and the room a pass makes for it below the tier's target. Thread-safe: the tier
 * choice reads the cache's counters and asks the reader-aware policy; making room runs a pass
 * under the manager's pass lock ({@link EvictionPasses#tryLock()}), taken with a bounded wait.
 */
final class FillRoom {
    private final BlockCache cache;
    private final double[] tierTargets;
    /** The policy if it infers readers from the reads, else null. */
    private final ReaderAwarePolicy readerAware;
    /** How long a sequential reader stays live without reading; 0: its unread bytes are not spared. */
    private final long readerIdleNanos;
    private final EvictionPasses passes;
    private final AtomicInteger generation;
    /** Whether the manager is closed. */
    private final BooleanSupplier closed;

    FillRoom(final BlockCache cache, final double[] tierTargets, final ReaderAwarePolicy readerAware, final long readerIdleNanos,
             final EvictionPasses passes, final AtomicInteger generation, final BooleanSupplier closed) {
        this.cache = cache;
        this.tierTargets = tierTargets;
        this.readerAware = readerAware;
        this.readerIdleNanos = readerIdleNanos;
        this.passes = passes;
        this.generation = generation;
        this.closed = closed;
    }

    /** See {@link ManagerHooks#fillTier}: admission of bytes read back from the log. */
    int tier(final String segment, final long offset, final long end, final int tier) {
        if (readerAware == null) {
            return tier;
        }
        final long blocks = Math.max(1, (end - offset + cache.blockLength() - 1) / cache.blockLength());
        if (cache.tierUsedBlocks(tier) + blocks <= (long) Math.floor(tierTargets[tier] * cache.tierBlocks(tier))
            || readerAware.admit(segment, offset, end)) {
            return tier;
        }
        final int last = cache.tierCount() - 1;
        return tier < last ? last : -1;
    }

    /**
     * See {@link ManagerHooks#makeRoomForFill}: a fill from the log takes room below the tier's
     * target, made by a pass that spares the bytes live readers have not read, or is refused.
     * Free blocks above the target are left to appends: a fill that took them would have the
     * next timer pass evict a live reader's unread bytes to trim the cache back (measured: 2.5
     * bytes read from the log per uncached byte instead of 1.06 on a catch-up after a warm
     * reopen).
     * The filling thread holds no lock; it waits at most {@link ManagerFullHandler#PASS_WAIT_NANOS}
     * for a pass another thread runs.
     */
    boolean makeRoom(final int tier, final int length, final boolean full) {
        if (readerIdleNanos == 0) {
            if (full) {
                cache.makeRoom(length, 0L);
            }
            return true;
        }
        final long blocks = Math.max(1, ((long) length + cache.blockLength() - 1) / cache.blockLength());
        final long targetBlocks = (long) Math.floor(tierTargets[tier] * cache.tierBlocks(tier));
        if (!full && cache.tierUsedBlocks(tier) + blocks <= targetBlocks) {
            return true;
        }
        boolean locked = passes.tryLock();
        if (!locked) {
            try {
                passes.awaitRunningPass(ManagerFullHandler.PASS_WAIT_NANOS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            locked = passes.tryLock();
        }
        if (!locked) {
            // Another pass runs: room below the target if it made some; else take free blocks
            // only if the passes have not been sparing a reader's unread bytes lately.
            return cache.tierUsedBlocks(tier) + blocks <= targetBlocks || !passes.lastPassSpared();
        }
        try {
            if (closed.getAsBoolean() || cache.isClosed()) {
                return false;
            }
            generation.incrementAndGet();
            final long used = cache.tierUsedBlocks(tier);
            passes.passLocked(Double.NaN, Math.max(blocks, used + blocks - targetBlocks), true);
            return cache.tierUsedBlocks(tier) + blocks <= targetBlocks || !passes.lastPassSpared();
        } catch (final CacheClosedException e) {
            return false;
        } finally {
            passes.unlock();
        }
    }
}
