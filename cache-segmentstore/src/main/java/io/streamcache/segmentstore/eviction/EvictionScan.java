package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.index.ReadIndexEntry;

/**
 * One walk of a {@link EvictionSource}'s evictable entries, driven by the {@link CacheManager}:
 * called on the scanning thread only, with the lock of the entry's segment held.
 */
public interface EvictionScan {
    /**
     * Offers an entry that may be evicted now: cached, durable, unpinned, not being appended to.
     * Must not block or call into the source.
     *
     * @param segment name of the entry's segment.
     * @param entry   the entry; its fields must not be changed.
     * @return {@code true} to have the source evict it now (free its cache entry and set its
     *         address to {@link ReadIndexEntry#NULL_ADDRESS}).
     */
    boolean select(String segment, ReadIndexEntry entry);

    /**
     * @return whether the scan has what it needs: the source stops offering entries.
     */
    boolean isDone();
}
