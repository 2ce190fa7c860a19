package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

/**
 * The owner of read-index entries (a segment) as the {@link CacheManager}'s promotion sees it:
 * the data path queues an entry read often from a slower tier together with its owner
 * ({@link ManagerHooks#recordTierRead}), and the manager later asks the owner to move it.
 */
public interface PromotionTarget {
    /**
     * Moves an entry's cache entry into {@code targetTier} if it may be moved now: the owner
     * takes its lock without waiting ({@code tryLock}) and re-validates the entry (still in its
     * index, cached in a slower tier than the target, unpinned, not being appended to).
     * Called on the thread draining the promotion queue, holding no lock.
     *
     * @param maxBlocks the most blocks the entry may take in the target tier (the room the
     *                  manager sees below the tier's target).
     * @return the blocks moved; 0 if the owner was busy, the entry no longer qualifies, is
     *         longer than {@code maxBlocks}, or the target tier had no room.
     */
    long promote(ReadIndexEntry entry, int targetTier, long maxBlocks);
}
