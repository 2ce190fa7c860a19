package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexEntryPool;

/**
 * The side of a {@link CacheManager} that only the segment store uses: the sources it scans,
 * the uses and tier reads the data path records, the read pins. A store takes it once from
 * {@link CacheManager#hooks()} when it is built and hands it to its parts; this package is not
 * exported, so a broker cannot call these (a wrong call would corrupt the manager's view). It
 * names no class of the exported packages, so it closes no circle with the manager.
 *
 * <p><b>Threading:</b> as the manager's methods of the same names: {@link #recordUse} and
 * {@link #recordTierRead} are for the data path under the entry's segment lock and allocate
 * nothing; the rest may be called from any thread.
 */
public interface ManagerHooks {
    /** @param source a source whose entries the manager's passes scan from now on. */
    void register(EvictionSource source);

    /** @param source a source no longer scanned (no-op if it was not registered). */
    void unregister(EvictionSource source);

    /** @return the manager's current generation. */
    int generation();

    /**
     * Records a use of an entry through the manager's policy.
     *
     * @param segment the entry's segment.
     * @param entry   the entry used.
     */
    void recordUse(String segment, ReadIndexEntry entry);

    /**
     * Records a read of {@code [offset, end)} of a segment, for a policy that infers readers from
     * the reads ({@link io.streamcache.segmentstore.eviction.ReaderAwarePolicy#observeRead}); a
     * no-op for other policies. Data path, under the segment's lock; allocates nothing once the
     * policy knows the segment.
     *
     * @param segment the segment read.
     * @param offset  the read's first byte.
     * @param end     the byte after the last one returned ({@code offset} if none).
     */
    void recordRead(String segment, long offset, long end);

    /**
     * Where a fill of bytes read back from the log (a read-through or historical read) goes:
     * {@code tier} (the store's fill tier) while that tier has room below its target or the
     * policy keeps the range ({@link io.streamcache.segmentstore.eviction.ReaderAwarePolicy#admit});
     * else the slowest tier if the cache has a slower one (staged there), else nowhere. Policies
     * other than the reader-aware one keep everything. Data path, under the segment's lock;
     * allocates nothing.
     *
     * @param segment the segment filled.
     * @param offset  the range's first byte.
     * @param end     the byte after its last.
     * @param tier    the store's fill tier.
     * @return the tier to fill into, or -1 to serve the bytes without caching them.
     */
    int fillTier(String segment, long offset, long end, int tier);

    /**
     * Makes room for a piece of a fill from the log in {@code tier}, on the filling thread, which
     * holds no lock: the piece may take free blocks below the tier's target; above it (or when
     * {@code full}: the cache had no free block for it), one pass that spares the bytes live
     * readers have not read yet ({@link CacheManager.Builder#readerIdleTimeout(java.time.Duration)}) runs first, and
     * the piece is refused if that left no room below the target because of such bytes. With the
     * sparing off, a full cache runs an ordinary pass ({@code BlockCache.makeRoom}) and every
     * piece is admitted. Waits at most 1 ms for a pass another thread runs; allocates nothing.
     *
     * @param tier   the tier the piece goes into.
     * @param length the piece's bytes.
     * @param full   whether the cache just had no free block for it.
     * @return whether to insert the piece (into free blocks); false: serve it without caching.
     */
    boolean makeRoomForFill(int tier, int length, boolean full);

    /**
     * Counts a cached entry its segment dropped because it was truncated past it or deleted
     * ({@link io.streamcache.segmentstore.eviction.EvictionReasons#truncatedOrDeleted()}). Any
     * thread; allocates nothing.
     */
    void cachedEntryDropped();

    /**
     * Tells the policy a segment was deleted (its readers and history go). Any thread.
     *
     * @param segment the deleted segment.
     */
    void segmentDeleted(String segment);

    /**
     * Records a read of an entry cached in a slower tier (a promotion candidate).
     *
     * @param owner the entry's segment.
     * @param entry the entry read.
     */
    void recordTierRead(PromotionTarget owner, ReadIndexEntry entry);

    /** @return the manager's read pins (counts and leak tracking). */
    ReadPins readPins();

    /**
     * @return the pool of dead index entries the stores on the manager's cache share (one per
     *         manager; its counters are in the manager's stats and MBean). Lock-free, any thread.
     */
    ReadIndexEntryPool entryPool();
}
