package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.eviction.ReadPins;
import java.util.List;

/**
 * An immutable snapshot of a {@link CacheManager}'s state and counters; safe to pass between
 * threads. Counters are read without stopping a pass, so a snapshot taken under load is
 * consistent per field, not across fields.
 *
 * @param generation        the current generation.
 * @param runs              eviction passes run (timer, on demand and full-cache passes).
 * @param evictions         index entries evicted.
 * @param evictedBytes      bytes of those entries.
 * @param utilization       the cache's used data blocks as a fraction of all, in [0, 1].
 * @param targetUtilization the utilization passes evict down to.
 * @param fullHandlerCalls  times the cache called the manager because it was full.
 * @param busySkips         segments a pass skipped because another thread held their lock.
 * @param tiers             per-tier counters, fastest first (one element for a one-tier cache);
 *                          an immutable list.
 * @param admissionThreshold the longest entry the admission policy last let into a slower tier
 *                          ({@link Integer#MAX_VALUE}: no limit; -1: none).
 * @param promotionRequests entries queued for promotion.
 * @param promotionDrops    promotion requests dropped because the queue was full.
 * @param promotionSkips    queued entries not promoted (no room in tier 0, busy segment, or the
 *                          entry no longer qualified: pinned, moved, removed).
 * @param pinnedResults     read results holding pins on entries now: read, not yet released (a
 *                          leaked one for ever). See {@code ReadPins}.
 * @param entryPins         pins those results hold, one per entry per result.
 * @param leakedResults     read results collected unreleased, as Netty's leak detector found them
 *                          (a sample at Netty's default level, every one at {@code paranoid}).
 * @param entryPool         the counters of the pool of dead index entries the stores on this
 *                          manager's cache reuse.
 * @param evictionsByReason why entries left the cache or their tier: to the target, cache full,
 *                          demotion, resize, truncate or delete ({@link EvictionReasons}).
 */
public record CacheManagerStats(
    int generation,
    long runs,
    long evictions,
    long evictedBytes,
    double utilization,
    double targetUtilization,
    long fullHandlerCalls,
    long busySkips,
    List<ManagedTierStats> tiers,
    int admissionThreshold,
    long promotionRequests,
    long promotionDrops,
    long promotionSkips,
    long pinnedResults,
    long entryPins,
    long leakedResults,
    EntryPoolStats entryPool,
    EvictionReasons evictionsByReason) {

    public CacheManagerStats {
        tiers = List.copyOf(tiers);
    }

    /**
     * @return the counters of tier {@code index}.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public ManagedTierStats tier(final int index) {
        return tiers.get(index);
    }
}
