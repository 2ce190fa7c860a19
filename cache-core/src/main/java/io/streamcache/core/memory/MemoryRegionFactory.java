package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;

/**
 * Opens a {@link MemoryRegion} for a cache; implementations are immutable and may be shared
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

    /**
     * Opens a region that can change size while the cache runs: indices for
     * {@code maxBufferCount} buffers, of which the first {@code onlineCount} get memory now.
     * The default supports no resizing: it refuses.
     *
     * @param onlineCount    buffers with memory now, at least one.
     * @param maxBufferCount buffers the region may grow to.
     * @param bufferLength   bytes per buffer.
     * @return the open region.
     * @throws CacheConfigurationException if this kind of region cannot be resized or the memory
     *         cannot be had.
     */
    default ResizableRegion openResizable(final int onlineCount, final int maxBufferCount, final int bufferLength) {
        throw new CacheConfigurationException("this memory region (" + getClass().getName() + ") cannot change size while "
            + "the cache runs: leave the tier's maxCapacity unset, or use a direct-memory or mapped-file region");
    }
}
