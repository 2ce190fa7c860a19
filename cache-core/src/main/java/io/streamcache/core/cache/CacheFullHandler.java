package io.streamcache.core.cache;

/**
 * The thread-safe hook (called on the threads that need blocks, several at once, with no
 * cache lock held) that a {@link BlockCache} calls when it has no free block for an insert, append or
 * replace: the place where an evictor frees memory.
 *
 * <p><b>Threading:</b> called on the thread whose operation needs blocks, possibly on several
 * threads at once, with no cache lock held. It may call any cache operation except on the
 * entry the calling thread is modifying (which the caller serializes). Returning {@code true}
 * makes the cache retry the allocation, until the cache's full-retry timeout runs out;
 * {@code false} fails the operation at once with a {@link io.streamcache.core.CacheFullException}.
 */
@FunctionalInterface
public interface CacheFullHandler {
    /** A handler that frees nothing: a full cache fails at once. */
    CacheFullHandler NONE = blockCount -> false;

    /**
     * @param blockCount how many blocks the waiting operation needs.
     * @return whether the allocation should be retried (blocks were, or may soon be, freed).
     */
    boolean onCacheFull(int blockCount);
}
