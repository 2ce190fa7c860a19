package io.streamcache.segmentstore.eviction;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.TierShrink;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Resizes a tier of a managed cache while the store runs ({@link CacheManager#resizeTier}):
 * grows at once; shrinks by draining buffers ({@link TierShrink}) and moving every read-index
 * entry with a block in one of them, under its segment's lock, through the manager's sources:
 *
 * <pre>
 *  entry touches a draining buffer?
 *    no  -> keep
 *    yes -> relocate into the same tier (other buffers)   -- room?  yes -> moved
 *           else into each slower tier in turn              -- room?  yes -> moved (demoted)
 *           else durable?  yes -> evict (a NOT_CACHED gap; the log has the bytes)
 *                          no  -> keep, retried next round (never dropped)
 *    pinned (a zero-copy read holds it) or being appended to -> not offered, retried next round
 * </pre>
 *
 * Rounds repeat (a scan of the sources, then releasing the buffers that emptied) until every
 * draining buffer is released or the timeout passes; then the buffers not released go back into
 * service and the tier keeps that much more than asked (a partial shrink, counted and logged).
 * Reads, appends and passes go on meanwhile: they take the same segment locks one at a time.
 *
 * <p><b>Threading:</b> thread-safe; one resize at a time (the cache's resize lock, held by the
 * resizing thread). Call it holding no segment lock. Counters are volatile, written under
 * this object's monitor.
 */
final class TierResizing {
    private static final Logger LOG = LoggerFactory.getLogger(TierResizing.class);
    /** Pause between rounds of a shrink waiting for pinned or busy entries. */
    private static final long ROUND_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final String name;
    private final BlockCache cache;
    private final EvictionPasses passes;

    private volatile long grows;
    private volatile long shrinks;
    private volatile long partialShrinks;
    private volatile long relocated;
    private volatile long evicted;
    private volatile long released;

    TierResizing(final String name, final BlockCache cache, final EvictionPasses passes) {
        this.name = name;
        this.cache = cache;
        this.passes = passes;
    }

    /**
     * @return the tier's capacity after the call.
     */
    synchronized long resize(final int tier, final long capacity, final Duration timeout) {
        final long before = cache.tierCapacity(tier);
        final long wanted = capacity / cache.bufferLength() * cache.bufferLength();
        if (wanted >= before || !cache.isResizable(tier)) {
            final long after = cache.resize(tier, capacity);
            if (after > before) {
                grows++;
                LOG.info("cache manager {}: tier {} grown from {} to {} bytes", name, tier, before, after);
            }
            return after;
        }
        final long start = System.nanoTime();
        final long deadline = start + timeout.toNanos();
        final DrainScan scan;
        try (TierShrink shrink = cache.startShrink(tier, capacity)) {
            scan = new DrainScan(shrink, tier, cache.tierCount());
            while (true) {
                passes.scanSources(scan);
                released += shrink.release();
                if (shrink.isComplete() || System.nanoTime() - deadline >= 0) {
                    break;
                }
                LockSupport.parkNanos(this, ROUND_PAUSE_NANOS);
            }
            relocated += scan.relocated;
            evicted += scan.evicted;
        }
        final long after = cache.tierCapacity(tier);
        final Duration took = Duration.ofNanos(System.nanoTime() - start);
        if (after == wanted) {
            shrinks++;
            LOG.info("cache manager {}: tier {} shrunk from {} to {} bytes in {} ms: {} entries moved, {} evicted", name, tier,
                before, after, took.toMillis(), scan.relocated, scan.evicted);
        } else {
            partialShrinks++;
            LOG.warn("cache manager {}: shrink of tier {} from {} to {} bytes stopped at {} bytes after {} ms (timeout={}): "
                + "entries pinned by unreleased reads or not yet durable could not move; {} moved, {} evicted", name, tier,
                before, wanted, after, took.toMillis(), timeout, scan.relocated, scan.evicted);
        }
        return after;
    }

    ResizeStats stats() {
        return new ResizeStats(grows, shrinks, partialShrinks, relocated, evicted, released);
    }

    /**
     * One shrink's scan: offers every cached entry (durable or not) and asks to move those with
     * a block in a draining buffer, trying the tier itself, then each slower tier, then evicting.
     */
    private static final class DrainScan implements EvictionScan {
        private final TierShrink shrink;
        private final int tier;
        private final int tierCount;
        long relocated;
        long evicted;

        DrainScan(final TierShrink shrink, final int tier, final int tierCount) {
            this.shrink = shrink;
            this.tier = tier;
            this.tierCount = tierCount;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            return false;
        }

        @Override
        public int action(final String segment, final ReadIndexEntry entry) {
            return shrink.touches(entry.address()) ? tier : KEEP;
        }

        @Override
        public void relocated(final String segment, final ReadIndexEntry entry, final int fromTier) {
            relocated++;
        }

        @Override
        public int relocationFailed(final String segment, final ReadIndexEntry entry, final int targetTier) {
            return targetTier + 1 < tierCount ? targetTier + 1 : EVICT;
        }

        @Override
        public void evicting(final String segment, final ReadIndexEntry entry) {
            evicted++;
        }

        @Override
        public boolean offersUndurable() {
            return true;
        }

        @Override
        public boolean isDone() {
            return false;
        }
    }
}
