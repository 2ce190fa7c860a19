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
     * index at {@code offset}, cached in a slower tier than the target, unpinned, not being
     * appended to). The entry may have been removed and reused since it was queued, for other
     * bytes or another owner (see {@code ReadIndexEntryPool}): the owner reads none of its fields
     * before it has found this very entry in its own index at {@code offset}.
     * Called on the thread draining the promotion queue, holding no lock.
     *
     * @param entry     the entry queued.
     * @param offset    its offset when it was queued (read under the owner's lock then).
     * @param maxBlocks the most blocks the entry may take in the target tier (the room the
     *                  manager sees below the tier's target).
     * @return the blocks moved; 0 if the owner was busy, the entry no longer qualifies, is
     *         longer than {@code maxBlocks}, or the target tier had no room.
     */
    long promote(ReadIndexEntry entry, long offset, int targetTier, long maxBlocks);
}
