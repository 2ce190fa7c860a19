package io.streamcache.segmentstore.eviction;

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
 */
public record CacheManagerStats(
    int generation,
    long runs,
    long evictions,
    long evictedBytes,
    double utilization,
    double targetUtilization,
    long fullHandlerCalls,
    long busySkips) {
}
