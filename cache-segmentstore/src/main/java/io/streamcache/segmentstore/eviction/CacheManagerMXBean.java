package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.eviction.ReadPins;
/**
 * JMX view of a {@link CacheManager}, registered as
 * {@code io.streamcache:type=CacheManager,name=<manager name>}: callable from any thread;
 * attributes read a fresh {@link CacheManagerStats}; the operations act on the calling thread.
 */
public interface CacheManagerMXBean {
    String getName();

    String getPolicy();

    int getGeneration();

    long getRuns();

    long getEvictions();

    long getEvictedBytes();

    double getUtilization();

    double getTargetUtilization();

    long getFullHandlerCalls();

    long getBusySkips();

    /** @return entries evicted by passes to the target utilization ({@link EvictionReasons#toTarget()}). */
    long getEvictionsToTarget();

    /** @return entries evicted by full-cache passes ({@link EvictionReasons#cacheFull()}). */
    long getEvictionsCacheFull();

    /** @return entries demoted to a slower tier ({@link EvictionReasons#demoted()}). */
    long getEvictionsDemoted();

    /** @return entries moved or dropped by tier shrinks ({@link EvictionReasons#resized()}). */
    long getEvictionsResized();

    /** @return cached entries dropped by truncates and deletes ({@link EvictionReasons#truncatedOrDeleted()}). */
    long getEvictionsTruncatedOrDeleted();

    int getSourceCount();

    /** @return each tier's target utilization, fastest first. */
    double[] getTierTargetUtilizations();

    /** @return entries demoted out of each tier. */
    long[] getTierDemotions();

    /** @return entries promoted into each tier. */
    long[] getTierPromotions();

    /** @return entries evicted out of each tier. */
    long[] getTierEvictions();

    /** @return entries of each tier the admission policy kept out of the next tier. */
    long[] getTierAdmissionRejections();

    /** @return the admission policy's current threshold in bytes ({@link Integer#MAX_VALUE}: none). */
    int getAdmissionThreshold();

    long getPromotionRequests();

    long getPromotionDrops();

    /** @return queued entries not promoted (no room in the target tier, busy segment, or gone meanwhile). */
    long getPromotionSkips();

    /** @return read results holding pins on entries now (read, not yet released; see {@code ReadPins}). */
    long getPinnedResults();

    /** @return pins those results hold, one per entry per result. */
    long getEntryPins();

    /** @return read results collected unreleased, as Netty's leak detector found them. */
    long getLeakedResults();

    /** @return index entries reused from the entry pool ({@link EntryPoolStats#taken()}). */
    long getEntryPoolTaken();

    /** @return index entries made new because the entry pool was empty ({@link EntryPoolStats#made()}). */
    long getEntryPoolMade();

    /** @return dead index entries given back to the entry pool and kept ({@link EntryPoolStats#recycled()}). */
    long getEntryPoolRecycled();

    /** @return dead index entries the full entry pool left to the garbage collector ({@link EntryPoolStats#dropped()}). */
    long getEntryPoolDropped();

    /** @return index entries in the entry pool now. */
    int getEntryPoolSize();

    /**
     * Advances the generation.
     *
     * @return the new generation.
     */
    int advanceGeneration();

    /**
     * Runs one pass now (see {@link CacheManager#evictNow()}).
     *
     * @return cache blocks freed.
     */
    long evictNow();

    /** @return each tier's capacity in bytes now. */
    long[] getTierCapacities();

    /** @return each tier's maximum capacity in bytes (its capacity, if it cannot change size). */
    long[] getTierMaxCapacities();

    /** @return resizes that grew a tier ({@link ResizeStats#grows()}). */
    long getResizeGrows();

    /** @return shrinks that reached the capacity asked. */
    long getResizeShrinks();

    /** @return shrinks that stopped at their timeout above the capacity asked. */
    long getResizePartialShrinks();

    /** @return entries moved out of draining buffers by shrinks. */
    long getResizeRelocatedEntries();

    /** @return durable entries shrinks evicted for want of room. */
    long getResizeEvictedEntries();

    /**
     * Sets a tier's capacity, moving entries out of the buffers a shrink gives back
     * ({@link CacheManager#resizeTier(int, long)}).
     *
     * @return the tier's capacity after the call.
     */
    long resizeTier(int tier, long capacity);
}
