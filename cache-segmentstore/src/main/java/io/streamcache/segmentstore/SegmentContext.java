package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexEntryPool;

import java.util.function.Consumer;

/**
 * What every segment of one store shares: the cache, the manager's hooks, the store's settings
 * and the lists the manager's passes walk. One object per store (a second one for recovered
 * segments if the store's own appends are not durable at once: a recovered segment's are), which
 * each {@link Segment} references, instead of eight fields and a retiring lambda per segment
 * (heap per segment at hundreds of thousands of them).
 *
 * <p>It is also the one {@link Consumer} that retires index entries for every segment of the
 * store: frees a removed entry's cache entry now, or at its last unpin; and it holds the
 * cache manager's {@link ReadIndexEntryPool} (one per manager, shared by the stores on its
 * cache; its counters are in the manager's stats): an entry retired with no pin goes back to the pool, and
 * {@link #newEntry} takes from it, so a full cache's steady appends make no garbage (see the
 * pool's class comment for why no holder can see a reused entry).
 *
 * <p><b>Threading:</b> immutable after construction; {@link #accept} is called with the
 * entry's segment lock held and touches only the entry, the (thread-safe) cache and the
 * (lock-free) pool.
 */
final class SegmentContext implements Consumer<ReadIndexEntry> {
    final BlockCache cache;
    final ManagerHooks hooks;
    final int maxEntryLength;
    final boolean appendsDurable;
    /** Whether the cache has several tiers: reads then count reads from slower tiers for promotion. */
    final boolean tiered;
    /** The tier {@link Segment#fillLocked} inserts into first. */
    final int fillTier;
    /**
     * The lists the cache manager's passes walk oldest first ({@link SegmentsByGeneration}), or
     * null (segments made outside a table, in tests).
     */
    final SegmentsByGeneration byGeneration;
    /**
     * Dead index entries for reuse: the cache manager's pool, shared by the segments of every
     * store on its cache (both contexts). 4,096 entries (see {@code CacheManager}).
     */
    final ReadIndexEntryPool entries;

    SegmentContext(final BlockCache cache, final ManagerHooks hooks, final int maxEntryLength, final boolean appendsDurable,
                   final int fillTier, final SegmentsByGeneration byGeneration) {
        this.cache = cache;
        this.hooks = hooks;
        this.maxEntryLength = maxEntryLength;
        this.appendsDurable = appendsDurable;
        this.tiered = cache.tierCount() > 1;
        this.fillTier = fillTier;
        this.byGeneration = byGeneration;
        this.entries = hooks.entryPool();
    }

    /** The same settings with appends {@code durable} (this object if they already are). */
    SegmentContext withAppendsDurable(final boolean durable) {
        return durable == appendsDurable ? this : new SegmentContext(this, durable);
    }

    private SegmentContext(final SegmentContext other, final boolean appendsDurable) {
        this.cache = other.cache;
        this.hooks = other.hooks;
        this.maxEntryLength = other.maxEntryLength;
        this.appendsDurable = appendsDurable;
        this.tiered = other.tiered;
        this.fillTier = other.fillTier;
        this.byGeneration = other.byGeneration;
        this.entries = other.entries;
    }

    /** A new index entry (see {@link ReadIndexEntryPool#take}): reused from the pool if it has one. */
    ReadIndexEntry newEntry(final long offset, final int length, final int address, final int generation) {
        return entries.take(offset, length, address, generation);
    }

    /**
     * Retires an index entry its segment removed from its tree: frees its cache entry now and
     * gives the entry back to the pool, or, if a reader pins it, leaves both to the reader's
     * last unpin (the entry is then not reused). The caller must not use the entry afterwards.
     */
    @Override
    public void accept(final ReadIndexEntry entry) {
        if (entry.isCached()) {
            hooks.cachedEntryDropped();
        }
        if (entry.retire()) {
            if (entry.isCached() && !cache.isClosed()) {
                cache.delete(entry.address());
            }
            entries.recycle(entry);
        }
    }
}
