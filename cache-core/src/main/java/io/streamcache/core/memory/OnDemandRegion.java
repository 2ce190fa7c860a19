package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * A thread-safe region of fixed size whose buffers get their memory one at a time, when the
 * cache first needs each, lowest first; until then a buffer holds no memory at all. Any thread
 * may call {@link #allocate}, at once with others (no lock is held while memory is allocated),
 * and the getters; {@link #close()} is called once by the owner.
 *
 * <p>A cache over such a region starts with no buffer allocated and allocates the next when
 * every allocated one is full ({@code BlockCache}'s tiers do this), so its memory grows with
 * what it holds, up to its capacity, and never shrinks until it is closed (Pravega's
 * {@code DirectMemoryCache} allocates its buffers the same way).
 */
public interface OnDemandRegion extends MemoryRegion {
    /**
     * Gives the next buffer without memory its memory, without holding any lock while the memory
     * is allocated: any number of threads may call it at once, and each call that succeeds gets
     * a buffer no other call got. A call first claims one of the buffers without memory (a
     * compare-and-set on the count claimed, so that at most {@link #bufferCount()} are ever
     * claimed: the region's bound is exact), then allocates; the index it returns is assigned
     * when its memory is had, lowest free index first, so a failed call leaves no hole.
     *
     * <p>A call that finds every buffer claimed returns {@code -1} at once, even if some of
     * those claims are still allocating; it does not wait for them (the caller decides whether
     * to wait for a buffer another thread is giving memory; {@code BlockCache} does).
     *
     * @return the index of the buffer given memory ({@link #buffer(int)} answers for it from
     *         then on), or {@code -1} if every buffer is claimed, the memory cannot be had now
     *         (the JVM's direct-memory limit is reached) or the region is closed; nothing
     *         changes then and the call may be retried.
     */
    int allocate();

    /**
     * @return how many of the lowest buffers have memory now: {@link #buffer(int)} answers for
     *         these (and for a higher one whose index {@link #allocate()} returned, which may
     *         have memory before a lower one still being allocated).
     */
    int allocatedCount();
}
