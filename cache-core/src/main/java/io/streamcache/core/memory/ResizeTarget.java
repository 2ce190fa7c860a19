package io.streamcache.core.memory;

/**
 * What a {@link MemoryMonitor} resizes, from its own thread, so implementations are
 * thread-safe: one tier of a cache, through the cache
 * ({@code BlockCache.resizeTarget(tier)}, which shrinks only what is free) or through a segment
 * store's cache manager ({@code CacheManager.resizeTarget(tier)}, which moves entries out).
 *
 * <p><b>Threading:</b> implementations must be thread-safe; the monitor calls them from its
 * thread.
 */
public interface ResizeTarget {
    /**
     * @return bytes of memory the target holds now.
     */
    long capacity();

    /**
     * @return bytes the target may grow to.
     */
    long maxCapacity();

    /**
     * @return the unit of a resize in bytes (a buffer): capacities are whole multiples of it.
     */
    long granularity();

    /**
     * Sets the capacity, as far as it can.
     *
     * @param capacity bytes, a whole number of {@link #granularity()} units within the bounds.
     * @return the capacity reached (a shrink may stop above the one asked).
     */
    long resize(long capacity);

    /**
     * @return a name for logs.
     */
    String name();
}
