package io.streamcache.bench.cachebench;

import io.streamcache.core.cache.CacheStats;

/**
 * The counters of a finished {@link CacheBench} run: an immutable value, safe to share.
 *
 * @param lookups        lookups run (including the reads of {@code --read-each-op}).
 * @param inserts        inserts run (including failed ones).
 * @param appends        appends run (including those that inserted or rolled).
 * @param deletes        deletes run (including those of absent keys).
 * @param hits           lookups that found an entry.
 * @param misses         lookups of an absent key.
 * @param full           operations failed with a {@link io.streamcache.core.CacheFullException}.
 * @param rolls          appends that replaced an entry grown past the roll length.
 * @param liveEntries    entries the threads hold at the end.
 * @param liveBytes      bytes of those entries, by {@code BlockCache.length}.
 * @param allocatedBytes heap bytes the measuring threads allocated while measuring, -1 if unknown.
 * @param elapsedSeconds wall time of the measured phase(s).
 * @param stats          the cache's statistics at the end, before it closed.
 */
public record CacheBenchResult(
    long lookups,
    long inserts,
    long appends,
    long deletes,
    long hits,
    long misses,
    long full,
    long rolls,
    long liveEntries,
    long liveBytes,
    long allocatedBytes,
    double elapsedSeconds,
    CacheStats stats) {

    /** @return all operations counted. */
    public long ops() {
        return lookups + inserts + appends + deletes;
    }

    /** @return hits over lookups, 0 when there were none. */
    public double hitRatio() {
        return lookups == 0 ? 0.0 : (double) hits / lookups;
    }
}
