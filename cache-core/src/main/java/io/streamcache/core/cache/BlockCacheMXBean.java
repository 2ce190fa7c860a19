package io.streamcache.core.cache;

/**
 * A thread-safe JMX view of a {@link BlockCache}, registered as
 * {@code io.streamcache:type=BlockCache,name=<cache name>}. Every attribute reads a fresh
 * {@link CacheStats} snapshot; callable from any thread.
 */
public interface BlockCacheMXBean {
    String getName();

    String getRegion();

    long getCapacity();

    int getBufferCount();

    int getBlockLength();

    long getBlockCount();

    long getUsedBlockCount();

    long getFreeBlockCount();

    long getUsedBytes();

    long getStoredBytes();

    long getEntryCount();

    double getUtilization();

    long getFullHandlerCalls();

    long getFullFailures();

    /** @return the tiers' names, fastest first (one for a cache built without tiers). */
    String[] getTierNames();

    /** @return each tier's capacity in bytes, in the order of {@link #getTierNames()}. */
    long[] getTierCapacities();

    /** @return each tier's maximum capacity in bytes (its capacity, if it cannot change size). */
    long[] getTierMaxCapacities();

    /**
     * Sets a tier's capacity ({@link BlockCache#resize}): grows at once, or shrinks by what is
     * free now (use the cache manager's operation on a segment store, which moves entries out).
     *
     * @return the tier's capacity after the call.
     */
    long resizeTier(int tier, long capacity);

    /** @return each tier's used data blocks. */
    long[] getTierUsedBlockCounts();

    /** @return each tier's stored bytes (entries counted in the tier of their last block). */
    long[] getTierStoredBytes();

    /** @return each tier's entries (counted in the tier of their last block). */
    long[] getTierEntryCounts();

    /** @return each tier's read hits (views and copies). */
    long[] getTierHits();

    /** @return entries relocated out of each tier into a slower one. */
    long[] getTierDemotions();

    /** @return entries relocated into each tier from a slower one. */
    long[] getTierPromotions();
}
