package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

/**
 * One walk of a {@link EvictionSource}'s evictable entries, driven by the {@link CacheManager}:
 * called on the scanning thread only, with the lock of the entry's segment held.
 */
public interface EvictionScan {
    /** {@link #action}: leave the entry where it is. */
    int KEEP = -1;
    /** {@link #action}: evict the entry (free its cache entry, set its address to 0). */
    int EVICT = -2;

    /**
     * Offers an entry that may be evicted now: cached, durable, unpinned, not being appended to
     * (or, to a scan that {@link #offersUndurable()}, cached and not yet durable).
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

    /**
     * In a walk oldest first ({@link EvictionSource#scanOldestFirst}): called before the source
     * offers the entries of the segments listed at {@code generation}, when every entry of a
     * generation before it has been offered (busy segments excepted). The default goes on.
     *
     * @param generation the listing generation of the segments offered next.
     * @return {@code false} to end the walk here.
     */
    default boolean beforeGeneration(final int generation) {
        return true;
    }

    /**
     * Decides what to do with an entry that may be evicted or moved now; the source acts on the
     * answer under the segment's lock. Must not block or call into the source. The default
     * evicts what {@link #select} selects.
     *
     * @param segment name of the entry's segment.
     * @param entry   the entry; its fields must not be changed.
     * @return {@link #KEEP}, {@link #EVICT}, or a tier index {@code >= 0}: relocate the entry's
     *         cache entry into that tier of a tiered cache ({@code BlockCache.relocate}) and
     *         update its address; then {@link #relocated} or {@link #relocationFailed} is called.
     */
    default int action(final String segment, final ReadIndexEntry entry) {
        return select(segment, entry) ? EVICT : KEEP;
    }

    /**
     * Called after the source relocated an entry as {@link #action} asked, under the segment's lock.
     *
     * @param fromTier the tier of the entry's last block before the move.
     */
    default void relocated(final String segment, final ReadIndexEntry entry, final int fromTier) {
    }

    /**
     * Called under the segment's lock right before the source evicts an entry as {@link #action}
     * or {@link #relocationFailed} asked. The default does nothing.
     */
    default void evicting(final String segment, final ReadIndexEntry entry) {
    }

    /**
     * @return whether the source also offers entries that are not durable yet (cached,
     *         unpinned, not being appended to), to be relocated only: the source never evicts
     *         one, whatever {@link #action} answers. A shrink of the cache moves them out of the
     *         buffers it releases. The default offers only evictable entries.
     */
    default boolean offersUndurable() {
        return false;
    }

    /**
     * Whether the source passes over the entries that hold bytes a live sequential reader of
     * their segment has not read yet (the reader's unread tail, or a catch-up reader's bytes
     * ahead): such an entry is not offered at all, as a pinned one is not, so that a pass that
     * spares them ranks and evicts only bytes no live reader still needs. The default spares
     * nothing.
     *
     * @return nanoseconds a reader may go without reading and still count as live, or 0 to
     *         offer every entry.
     */
    default long readerIdleNanos() {
        return 0;
    }

    /**
     * Called under the segment's lock when the source passed over {@code first} and every later
     * entry of the segment because a live reader has not read them (see
     * {@link #readerIdleNanos()}): once per segment a scan visits. The default does nothing.
     */
    default void spared(final String segment, final ReadIndexEntry first) {
    }

    /**
     * Called when a relocation {@link #action} asked for failed because the target tier had no
     * room; the entry is unchanged.
     *
     * @return {@link #EVICT} to evict the entry instead (not done for an entry that is not
     *         durable), {@link #KEEP}, or another tier index to try next.
     */
    default int relocationFailed(final String segment, final ReadIndexEntry entry, final int targetTier) {
        return KEEP;
    }
}
