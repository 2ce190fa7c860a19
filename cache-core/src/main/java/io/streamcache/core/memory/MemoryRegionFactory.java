package io.streamcache.core.memory;

/**
 * Opens a {@link MemoryRegion} for a cache. Implementations are immutable and may be shared
 * between threads and caches.
 */
@FunctionalInterface
public interface MemoryRegionFactory {
    /**
     * Allocates all the memory of the region now, so that a region that cannot get its memory
     * fails here, never later with an {@link OutOfMemoryError} or a {@code SIGBUS}.
     *
     * @param bufferCount  how many buffers.
     * @param bufferLength bytes per buffer, a power of two.
     * @return the open region.
     * @throws io.streamcache.core.CacheConfigurationException if the memory cannot be had; the
     *         message names the setting to change.
     */
    MemoryRegion open(int bufferCount, int bufferLength);
}
