package io.streamcache.segmentstore;

import io.streamcache.core.CacheFullException;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;

/**
 * A segment as the cache manager sees it: the scan that evicts or relocates its entries, the
 * coalescing of the placeholders eviction leaves, its listing for the passes that walk segments
 * oldest first ({@link SegmentsByGeneration}), and promotion. Split out of {@link Segment} (its
 * class comment names the concerns); the state is the segment's.
 *
 * <p><b>Threading:</b> every method but {@link #promote} expects the caller to hold the
 * segment's lock; {@link #promote} takes it with {@code tryLock}.
 */
final class SegmentEviction {
    private SegmentEviction() {
    }

    /**
     * Offers the evictable entries in offset order, from the first at or after {@code from}, and
     * evicts or relocates them as the scan says. The caller holds the lock (taken with
     * {@code tryLock}); {@link Segment#writing} is set only while this thread is inside a cache call on
     * that entry, that is when the scan runs in the cache's full handler on the appending thread.
     * Stops after a relocation when another thread waits for the lock: relocations copy bytes
     * under the lock, and a reader should not wait for a whole segment's worth of them.
     *
     * @return the offset a later scan may resume at (the caller releases the lock and leaves
     *         the segment to the waiting thread for this pass, counting it busy: it never spins
     *         or yields to take the lock back), or -1 if the scan of this segment is complete.
     */
    static long scan(final Segment s, final EvictionScan scan, final long from) {
        if (s.deleted) {
            return -1;
        }
        final long idle = scan.readerIdleNanos();
        // Entries ending past the slowest live reader hold bytes it has not read: a scan that
        // spares them stops there (entries come in offset order, so every later one is spared too).
        final long spareFrom = idle > 0 && s.readerMarks != null ? s.readerMarks.slowestLive(System.nanoTime(), idle) : Long.MAX_VALUE;
        for (ReadIndexEntry entry = ReadIndexTree.ceiling(s.indexRoot, from); entry != null && !scan.isDone();
             entry = ReadIndexTree.next(s.indexRoot, entry)) {
            if (!entry.isCached() || entry == s.writing || entry.isPinned()) {
                continue;
            }
            // Not yet durable: never evicted (the cache holds its only copy); offered only to a
            // scan that moves entries (a shrink of the cache), never dropped.
            final boolean durable = entry.endOffset() <= s.durableLength;
            if (!durable && !scan.offersUndurable()) {
                continue;
            }
            if (entry.endOffset() > spareFrom) {
                scan.spared(s.name, entry);
                return -1;
            }
            int action = scan.action(s.name, entry);
            boolean moved = false;
            while (action >= 0) {
                final int fromTier = s.context.cache.tierOf(entry.address());
                try {
                    entry.address(s.context.cache.relocate(entry.address(), action));
                    entry.resetTierReads();
                    scan.relocated(s.name, entry, fromTier);
                    moved = true;
                    break;
                } catch (final CacheFullException e) {
                    action = scan.relocationFailed(s.name, entry, action);
                }
            }
            if (moved) {
                if (s.hasQueuedThreads() && entry.endOffset() > entry.offset()) {
                    return entry.endOffset();
                }
                continue;
            }
            if (action == EvictionScan.EVICT && durable) {
                scan.evicting(s.name, entry);
                s.context.cache.delete(entry.address());
                entry.address(ReadIndexEntry.NULL_ADDRESS);
                // The loop goes on from the placeholder that now covers the entry's bytes: its
                // successor is the entry after the coalesced run, as the evicted entry's was.
                entry = coalesce(s, entry);
            }
        }
        return -1;
    }

    /**
     * Lists this segment for the cache manager's passes when it gains a cached entry and is not
     * listed: one flag test under the segment's lock, and at the transition one push on a
     * lock-free stack (no allocation).
     *
     * @param cached the entry just cached; its generation is the listing's lower bound.
     */
    static void list(final Segment s, final ReadIndexEntry cached) {
        if (!s.listed && s.context.byGeneration != null) {
            s.listed = true;
            s.listedGeneration = cached.generation();
            s.context.byGeneration.push(s);
        }
    }

    /**
     * @param current the manager's current generation.
     * @return the generation of this segment's oldest cached entry (compared by their
     *         differences from {@code current}), or {@link Segment#NO_CACHED_ENTRY} if it has no cached
     *         entry or is deleted.
     */
    static long oldestCachedGeneration(final Segment s, final int current) {
        if (s.deleted) {
            return Segment.NO_CACHED_ENTRY;
        }
        boolean found = false;
        int oldestAge = 0;
        int oldest = 0;
        for (ReadIndexEntry entry = ReadIndexTree.ceiling(s.indexRoot, 0); entry != null; entry = ReadIndexTree.next(s.indexRoot, entry)) {
            // An entry may be younger than current (the generation moved on): a negative age.
            if (entry.isCached() && (!found || current - entry.generation() > oldestAge)) {
                found = true;
                oldest = entry.generation();
                oldestAge = current - oldest;
            }
        }
        return found ? oldest : Segment.NO_CACHED_ENTRY;
    }

    /**
     * Merges a placeholder with the placeholders right before and after it, where their
     * combined length fits {@link Segment#MAX_PLACEHOLDER_LENGTH}: the earlier entry grows in place and
     * the later one leaves the index, so no key moves and the tree's order holds (the later
     * entry is removed before the earlier one grows over its range, so entries never overlap).
     * Allocates nothing. The removed entries are retired (they hold no cache entry and no pin,
     * so that frees nothing) and go back to the store's entry pool for reuse: the steady state
     * of a full cache, where every new entry is matched by one coalesced away, allocates none.
     * A promotion request still queued on one finds it gone from this tree at its offset.
     *
     * <p>The surviving placeholder keeps its own generation (and tier-read count and promotion
     * tick): nothing reads those of a placeholder. The policies see only cached entries (the
     * scan skips placeholders before asking, and {@code recordUse} is called on cached entries
     * only), promotion skips entries not cached, and {@link SegmentFill#fill} gives each piece it
     * caches the current generation; so no merge rule would change a decision, and keeping the
     * survivor's costs no write.
     *
     * @param placeholder an entry of the index that is not cached.
     * @return the placeholder now covering {@code placeholder}'s bytes: it, or the one before.
     */
    private static ReadIndexEntry coalesce(final Segment s, final ReadIndexEntry placeholder) {
        ReadIndexEntry survivor = placeholder;
        final ReadIndexEntry previous = ReadIndexTree.lower(s.indexRoot, placeholder.offset());
        if (previous != null && mergeable(previous, placeholder)) {
            s.indexRoot = ReadIndexTree.remove(s.indexRoot, placeholder);
            previous.length(previous.length() + placeholder.length());
            s.context.accept(placeholder);
            survivor = previous;
        }
        final ReadIndexEntry next = ReadIndexTree.higher(s.indexRoot, survivor.offset());
        if (next != null && mergeable(survivor, next)) {
            s.indexRoot = ReadIndexTree.remove(s.indexRoot, next);
            survivor.length(survivor.length() + next.length());
            s.context.accept(next);
        }
        return survivor;
    }

    /**
     * @return whether {@code second} is a placeholder right after the placeholder {@code first}
     *         and both fit in one.
     */
    private static boolean mergeable(final ReadIndexEntry first, final ReadIndexEntry second) {
        return !first.isCached() && !second.isCached() && first.endOffset() == second.offset()
            && (long) first.length() + second.length() <= Segment.MAX_PLACEHOLDER_LENGTH;
    }

    /**
     * Promotes an entry the cache manager queued (see {@link PromotionTarget}): called on the
     * thread draining the promotion queue, holding no lock; takes the segment's lock with
     * {@code tryLock}. The entry may have left this segment and been reused since it was queued
     * ({@code ReadIndexEntryPool}): nothing of it is read before the tree is found to hold it at
     * {@code offset} (a walk of this segment's own nodes, exact under its lock).
     */
    static long promote(final Segment s, final ReadIndexEntry entry, final long offset, final int targetTier, final long maxBlocks) {
        if (!s.tryLock()) {
            return 0;
        }
        try {
            if (s.deleted || ReadIndexTree.get(s.indexRoot, offset) != entry || !entry.isCached() || entry.isPinned() || entry == s.writing
                || s.context.cache.isClosed()
                || s.context.cache.tierOf(entry.address()) <= targetTier) {
                return 0;
            }
            final long blocks = entry.length() == 0 ? 1 : (entry.length() - 1L) / s.context.cache.blockLength() + 1;
            if (blocks > maxBlocks) {
                return 0;
            }
            entry.address(s.context.cache.relocate(entry.address(), targetTier));
            entry.resetTierReads();
            return blocks;
        } catch (final CacheFullException e) {
            return 0;
        } finally {
            s.unlock();
        }
    }
}
