package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.CacheManager;
/**
 * Something holding read-index entries whose cache entries the {@link CacheManager} may evict
 * (a segment store): thread-safe; the manager calls {@link #scan} from its own thread and from
 * threads that found the cache full, one scan at a time per manager.
 *
 * <p><b>Deadlock rule:</b> a scan may run on an appending thread that holds one segment's lock
 * and waits for cache blocks. So a scan must never block on a segment lock: it takes each with
 * {@code tryLock} (which succeeds at once for the lock the calling thread already holds) and
 * skips the segments that are busy, and it never offers the entry the calling thread is
 * appending into.
 */
public interface EvictionSource {
    /**
     * Offers the scan every entry that may be evicted now, segment by segment and in offset order
     * within a segment, and acts on each as {@link EvictionScan#action} says (keep, evict, or
     * relocate into another tier and update the entry's address, under the segment's lock),
     * until {@link EvictionScan#isDone()}.
     * An entry may be evicted only if it is cached, durable (wholly below the segment's durable
     * length), unpinned, and not the entry an append on the calling thread is writing into.
     *
     * @param scan the scan to drive.
     * @return how many segments were skipped because another thread held their lock.
     */
    int scan(EvictionScan scan);

    /**
     * @return whether {@link #scanOldestFirst} is supported.
     */
    default boolean walksOldestFirst() {
        return false;
    }

    /**
     * As {@link #scan}, but only over the segments that hold cached entries, in ascending order
     * of a lower bound of their oldest entry's generation (the generation policy's stamp), asking
     * {@link EvictionScan#beforeGeneration} before each generation's segments: once it has been
     * asked about generation {@code g}, every evictable entry older than {@code g} has been
     * offered, except those of busy segments. A pass that needs only the oldest entries thus
     * visits only the segments that hold them, whatever the number of other segments.
     *
     * @param scan    the scan to drive.
     * @param current the manager's current generation.
     * @return how many segments were skipped because another thread held their lock.
     * @throws UnsupportedOperationException if {@link #walksOldestFirst()} is false.
     */
    default int scanOldestFirst(final EvictionScan scan, final int current) {
        throw new UnsupportedOperationException("walksOldestFirst() is false");
    }
}
