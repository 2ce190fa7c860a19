package io.streamcache.segmentstore.eviction;

/**
 * Why cached index entries left the cache (or their tier), counted since the manager started:
 * an immutable snapshot, safe to pass between threads. Part of {@link CacheManagerStats}.
 *
 * <p>Read together they tell a broker what pushes data out: {@code toTarget} is the steady
 * state (the policy's choice, by age under the generation policy); a rising {@code cacheFull}
 * means appends or fills are outrunning the passes (lower the target or add memory);
 * {@code truncatedOrDeleted} is the application's own retention; {@code resized} follows a tier
 * shrink. Entries are counted, not bytes ({@link CacheManagerStats#evictedBytes()} has the
 * bytes of the first two).
 *
 * @param toTarget           entries evicted by passes the manager's timer or
 *                           {@link CacheManager#evictNow()} ran to bring utilization down to its target
 *                           (what the policy ranks oldest, by generation or age).
 * @param cacheFull          entries evicted by passes the cache's full handler ran: an append,
 *                           insert or fill from the log found no free block.
 * @param demoted            entries moved to a slower tier by passes (tiered caches; the sum of
 *                           {@link ManagedTierStats#demotions()}).
 * @param resized            entries moved out of a shrinking tier's buffers or dropped because no
 *                           tier had room ({@link ResizeStats#relocatedEntries()} plus
 *                           {@link ResizeStats#evictedEntries()}).
 * @param truncatedOrDeleted cached entries dropped because their segment was truncated past them
 *                           or deleted (also by a store's close, unless it keeps them for a warm
 *                           restart).
 */
public record EvictionReasons(long toTarget, long cacheFull, long demoted, long resized, long truncatedOrDeleted) {
}
