package io.streamcache.segmentstore.eviction;

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

    int getSourceCount();

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
}
