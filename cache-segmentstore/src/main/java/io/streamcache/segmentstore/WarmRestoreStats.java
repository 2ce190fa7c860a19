package io.streamcache.segmentstore;

import io.streamcache.core.cache.WarmStart;

import java.util.Map;

/**
 * What a store's warm restart brought back, an immutable snapshot taken when the store was built
 * ({@link SegmentStore#warmRestore()}): whether the cache came back warm, how many catalog
 * entries were indexed again, and how many were discarded, by reason. The reasons are the
 * cache's ({@code REGION_NOT_KEPT}, {@code BUFFER_OFFLINE}, {@code DAMAGED_CHAIN}, {@code CLAIMED_TWICE},
 * {@code DIGEST_MISMATCH}: see {@link io.streamcache.core.cache.WarmStart.Discard}) and the
 * store's ({@code IDENTITY}, {@code SEGMENT_GONE}, {@code TRUNCATED}, {@code NOT_DURABLE},
 * {@code OVERLAP}: see {@code docs/warm-restart.md}).
 *
 * @param enabled         whether the store's cache was built for a warm restart.
 * @param warm            whether a catalog matched the cache and its entries were tried.
 * @param cold            why not, as a reason a program can act on (a damaged catalog,
 *                        {@link io.streamcache.core.cache.WarmStart.Cold#DAMAGED_CATALOG}, is
 *                        told apart from a first start without one,
 *                        {@link io.streamcache.core.cache.WarmStart.Cold#NO_CATALOG}), or null.
 * @param coldReason      why not, for a person (file, position, figures), or null.
 * @param cleanShutdown   whether the catalog was written at a clean close.
 * @param catalogEntries  records in the catalog.
 * @param restoredEntries entries indexed again: cached, durable, served without reading the log.
 * @param restoredBytes   their bytes.
 * @param discarded       records discarded, by reason name (only reasons that occurred).
 * @param cacheMillis     time the cache took to adopt (catalog, chains, digests, free lists).
 * @param attachMillis    time the store took to index the entries.
 */
public record WarmRestoreStats(boolean enabled, boolean warm, WarmStart.Cold cold, String coldReason, boolean cleanShutdown,
                               long catalogEntries, long restoredEntries, long restoredBytes, Map<String, Long> discarded, long cacheMillis,
                               long attachMillis) {
    /** The stats of a store whose cache was not built for a warm restart. */
    public static final WarmRestoreStats DISABLED = new WarmRestoreStats(false, false, WarmStart.Cold.NOT_CONFIGURED,
        "warm restart not configured", false, 0,
        0, 0, Map.of(), 0, 0);

    public WarmRestoreStats {
        discarded = Map.copyOf(discarded);
    }

    /**
     * @return records discarded for any reason.
     */
    public long discardedTotal() {
        return discarded.values().stream().mapToLong(Long::longValue).sum();
    }
}
