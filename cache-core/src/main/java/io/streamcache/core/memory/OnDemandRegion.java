package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * A thread-safe region of fixed size whose buffers get their memory one at a time, when the
 * cache first needs each, lowest first; until then a buffer holds no memory at all. Any thread
 * may call {@link #allocate}, and the getters; {@link #close()} is called once by the owner.
 *
 * <p>A cache over such a region starts with no buffer allocated and allocates the next when
 * every allocated one is full ({@code BlockCache}'s tiers do this), so its memory grows with
 * what it holds, up to its capacity, and never shrinks until it is closed (Pravega's
 * {@code DirectMemoryCache} allocates its buffers the same way).
 */
public interface OnDemandRegion extends MemoryRegion {
    /**
     * Gives buffer {@code index} its memory. Called once per buffer, in ascending order
     * ({@code index == allocatedCount()}), by the cache.
     *
     * @return a buffer of {@link #bufferLength()} bytes over the buffer's memory, or
     *         {@code null} if the memory cannot be had now (the JVM's direct-memory limit is
     *         reached) or the region is closed; nothing changes then and the call may be retried.
     * @throws IllegalStateException if {@code index} is not the next buffer to allocate.
     */
    ByteBuffer allocate(int index);

    /**
     * @return how many buffers have memory now, the lowest ones: {@link #buffer(int)} answers for these.
     */
    int allocatedCount();
}
