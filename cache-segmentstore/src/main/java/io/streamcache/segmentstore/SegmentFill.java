package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;

/**
 * A segment's fill and warm-restart adoption paths: both put cache entries into the read index
 * where placeholders were, cutting a placeholder into the part before, the cached piece and the
 * part after ({@link #place}). Split out of {@link Segment} (its class comment names the
 * concerns); the state is the segment's.
 *
 * <p><b>Threading:</b> every method expects the caller to hold the segment's lock.
 */
final class SegmentFill {
    private SegmentFill() {
    }

    /**
     * Caches the bytes of {@code data}, which are the segment's bytes from {@code offset}, where
     * the index holds none: a placeholder is split into the parts the data covers (now cached
     * entries of at most {@code maxEntryLength} bytes each: a coalesced placeholder may be much
     * longer) and placeholders before and after them; a range no entry covers gets new entries.
     * Bytes already cached and bytes before the start offset are skipped. Each piece replaces
     * index state only once its bytes are in the cache, so a failure (a full cache) leaves every
     * entry consistent, with the pieces done so far cached. The placeholder keeps its offset and
     * becomes the part before the first piece (shortened in place); the part after a piece is a
     * new placeholder, which the next piece splits again.
     *
     * @param tier the tier to insert into first.
     * @return bytes newly cached.
     */
    static long fill(final Segment s, final long offset, final ByteBuf data, final int tier) {
        checkFill(s, offset, data);
        final long dataEnd = offset + data.readableBytes();
        long position = Math.max(offset, s.startOffset);
        long filled = 0;
        while ((position = nextMissing(s, position, dataEnd)) < dataEnd) {
            final ReadIndexEntry entry = ReadIndexTree.floorContaining(s.indexRoot, position);
            final long pieceEnd = pieceEnd(s, position, dataEnd);
            final int n = (int) (pieceEnd - position);
            final int address = s.context.cache.insert(data.slice(data.readerIndex() + (int) (position - offset), n), tier);
            ReadIndexEntry holder = null;
            if (entry != null) {
                // A full cache ran an eviction pass inside the insert, on this thread, and the
                // pass takes this lock again (reentrant): it may have coalesced the placeholder
                // into an entry it evicted before it. Eviction never caches bytes and coalescing
                // only grows placeholders, so one placeholder still covers the piece: find it.
                holder = ReadIndexTree.floorContaining(s.indexRoot, position);
                if (holder == null || holder.isCached() || holder.endOffset() < pieceEnd) {
                    s.context.cache.delete(address);
                    throw new IllegalStateException("placeholder of [" + position + ", " + pieceEnd + ") lost during a fill of segment="
                        + s.name + ": " + holder);
                }
            }
            place(s, holder, position, pieceEnd, address, s.context.hooks.generation(), false);
            filled += n;
            position = pieceEnd;
        }
        return filled;
    }

    /**
     * Under the segment's lock: a fill of a live segment whose data ends within its length.
     *
     * @throws IllegalArgumentException if the data ends past the segment's length.
     */
    private static void checkFill(final Segment s, final long offset, final ByteBuf data) {
        s.checkLive();
        if (offset > s.length - data.readableBytes()) {
            throw new IllegalArgumentException("offset=" + offset + " length=" + data.readableBytes() + " ends past length=" + s.length
                + " of segment=" + s.name);
        }
    }

    /**
     * Under the segment's lock: the first offset in {@code [position, dataEnd)} the cache does
     * not hold (a placeholder or no entry), skipping cached entries, or {@code dataEnd}.
     */
    private static long nextMissing(final Segment s, final long position, final long dataEnd) {
        long at = position;
        while (at < dataEnd) {
            final ReadIndexEntry entry = ReadIndexTree.floorContaining(s.indexRoot, at);
            if (entry == null || !entry.isCached()) {
                return at;
            }
            at = entry.endOffset();
        }
        return dataEnd;
    }

    /**
     * Under the segment's lock: where the piece that starts at the missing {@code position} ends:
     * at the end of its placeholder (or at the next entry, where no entry covers it), at
     * {@code dataEnd}, or after {@code maxEntryLength} bytes, whichever comes first.
     */
    private static long pieceEnd(final Segment s, final long position, final long dataEnd) {
        final ReadIndexEntry entry = ReadIndexTree.floorContaining(s.indexRoot, position);
        final long limit;
        if (entry != null) {
            limit = entry.endOffset();
        } else {
            final ReadIndexEntry next = ReadIndexTree.higher(s.indexRoot, position);
            limit = next == null ? Long.MAX_VALUE : next.offset();
        }
        return Math.min(Math.min(limit, dataEnd), position + s.context.maxEntryLength);
    }

    /**
     * As {@link #fill}, but with the segment's lock held only twice, briefly, never while the
     * cache allocates, evicts or copies: the caller holds no lock. Under the lock once, the
     * pieces the cache does not hold are found; with no lock, each is copied into new blocks
     * ({@link BlockCache#tryInsert}: only blocks free now); under the lock once more, every
     * copied piece whose placeholder still covers it is indexed (an eviction pass may have
     * coalesced it meanwhile, which only grows it; another fill may have cached the bytes, and a
     * truncation or delete removed them: then the copy is freed). With {@code spareReaders}, a
     * piece takes room only below the cache's target, made if need be with no lock held by one
     * eviction pass on this thread that spares the bytes live readers have not read yet
     * ({@code ManagerHooks.makeRoomForFill}). A piece that finds no free blocks makes room once
     * more with no lock held and tries again; if there is still none, or (with
     * {@code spareReaders}) only by evicting a live reader's unread bytes, the fill stops there,
     * having cached the pieces before it. An append, the log's completion thread and other
     * readers of the segment therefore never wait for a fill's memory.
     *
     * @param tier        the tier to insert into first.
     * @param failWhenFull whether a fill the cache cannot take throws {@link CacheFullException}
     *                    (else it returns what it cached, and counts the refusal).
     * @param spareReaders whether the fill takes only room that spares live readers' unread bytes
     *                    (a read-through's fill from the log), or makes room as an append does
     *                    (a caller's own {@code SegmentStore.fill}).
     * @return bytes newly cached.
     * @throws IllegalArgumentException if the data ends past the segment's length.
     */
    static long fillOutsideLock(final Segment s, final long offset, final ByteBuf data, final int tier, final boolean failWhenFull,
                                final boolean spareReaders, final IsolationCounters counters) {
        final long[] pieces;
        s.lock();
        try {
            checkFill(s, offset, data);
            pieces = missingPieces(s, offset, offset + data.readableBytes());
        } finally {
            s.unlock();
        }
        return copyAndPublish(s, offset, data, pieces, tier, failWhenFull, spareReaders, counters);
    }

    /** Decides, under the segment's lock, where a fill from the log goes. */
    @FunctionalInterface
    interface Admission {
        /**
         * @return the tier to fill the segment's bytes {@code [offset, end)} into first, or -1
         *         to serve them and not cache them.
         */
        int tier(long offset, long end);
    }

    /**
     * A range read from the log going back into the cache: as {@link #fillOutsideLock}, with
     * the data clipped to the segment's length (the location index learns of a record just
     * before its append is committed), nothing done for a deleted segment, and {@code admission}
     * asked in the same lock that finds the missing pieces; then, with no lock held, the fill
     * goes on only if {@code budget} (the store's read budget) has room, charged the range's
     * length while it copies. Never throws for a full cache: what it cannot take is served
     * uncached.
     *
     * @return bytes newly cached.
     */
    static long fillFromLog(final Segment s, final long offset, final ByteBuf data, final Admission admission,
                            final ReadBudget budget, final IsolationCounters counters) {
        final long[] pieces;
        final int tier;
        final long end;
        s.lock();
        try {
            if (s.deleted) {
                return 0;
            }
            end = Math.min(offset + data.readableBytes(), s.length);
            tier = end > offset ? admission.tier(offset, end) : -1;
            if (tier < 0) {
                return 0;
            }
            pieces = missingPieces(s, offset, end);
        } finally {
            s.unlock();
        }
        if (pieces.length == 0) {
            return 0;
        }
        if (!budget.hasRoom()) {
            // Reads hold the store's budget: the range is served but not cached, so that reads
            // never take the room appends need.
            counters.fillRefusedBudget();
            return 0;
        }
        final int length = (int) (end - offset);
        budget.charge(length);
        try {
            return copyAndPublish(s, offset, data.slice(data.readerIndex(), length), pieces, tier, false, true, counters);
        } finally {
            budget.release(length);
        }
    }

    /**
     * Under the segment's lock: the pieces of {@code [offset, dataEnd)} (from the start offset
     * on) the cache does not hold, each within one placeholder (or gap) and at most
     * {@code maxEntryLength} bytes, as {@code [start0, end0, start1, end1, ...]}.
     */
    private static long[] missingPieces(final Segment s, final long offset, final long dataEnd) {
        long[] pieces = new long[8];
        int n = 0;
        long position = Math.max(offset, s.startOffset);
        while ((position = nextMissing(s, position, dataEnd)) < dataEnd) {
            final long pieceEnd = pieceEnd(s, position, dataEnd);
            if (n + 2 > pieces.length) {
                pieces = java.util.Arrays.copyOf(pieces, pieces.length * 2);
            }
            pieces[n++] = position;
            pieces[n++] = pieceEnd;
            position = pieceEnd;
        }
        return java.util.Arrays.copyOf(pieces, n);
    }

    /**
     * With no lock held, copies each of {@code pieces} of {@code data} (the segment's bytes from
     * {@code offset}) into new cache blocks; then, under the segment's lock once, indexes each
     * copy whose bytes are still missing, and frees the others after it.
     */
    private static long copyAndPublish(final Segment s, final long offset, final ByteBuf data, final long[] pieces, final int tier,
                                       final boolean failWhenFull, final boolean spareReaders, final IsolationCounters counters) {
        final int count = pieces.length / 2;
        final int[] addresses = new int[count];
        int copied = 0;
        boolean madeRoom = false;
        CacheFullException full = null;
        for (; copied < count; copied++) {
            final long start = pieces[2 * copied];
            final int n = (int) (pieces[2 * copied + 1] - start);
            final ByteBuf piece = data.slice(data.readerIndex() + (int) (start - offset), n);
            // Room below the target, made if need be by a pass that spares the bytes live readers
            // have not read: a fill never evicts them (the read is served from the range).
            boolean spared = spareReaders && !s.context.hooks.makeRoomForFill(tier, n, false);
            int address = spared ? BlockCache.NULL_ADDRESS : s.context.cache.tryInsert(piece, tier);
            if (address == BlockCache.NULL_ADDRESS && !madeRoom && !spared) {
                madeRoom = true;
                if (spareReaders) {
                    spared = !s.context.hooks.makeRoomForFill(tier, n, true);
                } else {
                    // A caller's own fill keeps its contract (room after an ordinary pass, else
                    // CacheFullException): the pass still evicts live readers' unread bytes last.
                    s.context.cache.makeRoom(n, 0L);
                }
                address = spared ? BlockCache.NULL_ADDRESS : s.context.cache.tryInsert(piece, tier);
            }
            if (address == BlockCache.NULL_ADDRESS) {
                if (counters != null) {
                    if (spared) {
                        counters.fillRefusedUnread();
                    } else {
                        counters.fillRefusedNoRoom();
                    }
                }
                if (failWhenFull) {
                    full = new CacheFullException("cache " + s.context.cache.name() + " has no room to fill length=" + n + " of segment="
                        + s.name + " at offset=" + start, 0);
                }
                break;
            }
            addresses[copied] = address;
        }
        long filled = 0;
        if (copied > 0) {
            s.lock();
            try {
                for (int i = 0; i < copied; i++) {
                    final long start = pieces[2 * i];
                    final long pieceEnd = pieces[2 * i + 1];
                    if (s.deleted || start < s.startOffset || pieceEnd > s.length) {
                        continue;
                    }
                    final ReadIndexEntry holder = ReadIndexTree.floorContaining(s.indexRoot, start);
                    final boolean free;
                    if (holder != null) {
                        free = !holder.isCached() && holder.endOffset() >= pieceEnd;
                    } else {
                        final ReadIndexEntry next = ReadIndexTree.higher(s.indexRoot, start);
                        free = next == null || next.offset() >= pieceEnd;
                    }
                    if (free) {
                        place(s, holder, start, pieceEnd, addresses[i], s.context.hooks.generation(), false);
                        addresses[i] = BlockCache.NULL_ADDRESS;
                        filled += pieceEnd - start;
                        if (counters != null) {
                            counters.fillAdmitted(pieceEnd - start);
                        }
                    }
                }
            } finally {
                s.unlock();
            }
            for (int i = 0; i < copied; i++) {
                if (addresses[i] != BlockCache.NULL_ADDRESS) {
                    // Cached by another fill, truncated or deleted meanwhile: the copy is not needed.
                    s.context.cache.delete(addresses[i]);
                }
            }
        }
        if (full != null) {
            throw full;
        }
        return filled;
    }

    /**
     * Indexes the cache entry at {@code address} as the bytes {@code [position, pieceEnd)}: cut
     * out of the placeholder {@code holder} that covers them (the part before keeps its key, the
     * part after is a new placeholder), or where no entry was if {@code holder} is null; the
     * entry's generation is {@code generation}. A fill is a use for the eviction policy; a warm
     * restart's {@code restored} entry is not (it keeps the age it had).
     */
    private static void place(final Segment s, final ReadIndexEntry holder, final long position, final long pieceEnd, final int address,
                              final int generation, final boolean restored) {
        if (holder != null) {
            final long holderEnd = holder.endOffset();
            final int holderGeneration = holder.generation();
            if (holder.offset() < position) {
                // Keep the placeholder as the part before the piece: shorter, same key.
                holder.length((int) (position - holder.offset()));
            } else {
                // Read nothing of the holder after this: the pool may hand it out again at once.
                s.indexRoot = ReadIndexTree.remove(s.indexRoot, holder);
                s.context.accept(holder);
            }
            if (pieceEnd < holderEnd) {
                s.indexRoot = ReadIndexTree.insert(s.indexRoot,
                    s.context.newEntry(pieceEnd, (int) (holderEnd - pieceEnd), ReadIndexEntry.NULL_ADDRESS, holderGeneration));
            }
        }
        final ReadIndexEntry cached = s.context.newEntry(position, (int) (pieceEnd - position), address, generation);
        s.indexRoot = ReadIndexTree.insert(s.indexRoot, cached);
        if (!restored) {
            s.context.hooks.recordUse(s.name, cached);
        }
        s.listLocked(cached);
        if (ReadIndexTree.last(s.indexRoot) == cached) {
            s.tailOpen = true;
        }
    }

    /**
     * A warm restart's step: indexes a cache entry the cache adopted from its region as the bytes
     * {@code [offset, offset + length)}, if they are durable bytes of segment {@code s} that no cached
     * entry holds (a placeholder of recovery covers them). It is {@code age} generations old, as
     * it was at the checkpoint, so that the cache manager evicts in the order it would have.
     *
     * @return null if indexed, else why not (the caller then deletes the cache entry).
     */
    static WarmRestore.Reason adopt(final Segment s, final long offset, final int n, final int address, final int age) {
        if (s.deleted) {
            return WarmRestore.Reason.SEGMENT_GONE;
        }
        if (n > 0 && offset <= s.startOffset - n) {
            return WarmRestore.Reason.TRUNCATED;
        }
        if (n <= 0 || n > s.context.maxEntryLength || offset > s.durableLength - n) {
            return WarmRestore.Reason.NOT_DURABLE;
        }
        // An entry a truncation cut through starts before the start offset, as it did before:
        // its bytes before the start are never read.
        final long from = Math.max(offset, s.startOffset);
        final ReadIndexEntry holder = ReadIndexTree.floorContaining(s.indexRoot, from);
        if (holder == null || holder.isCached() || holder.endOffset() < offset + n || holder.offset() > from) {
            return WarmRestore.Reason.OVERLAP;
        }
        place(s, holder, offset, offset + n, address, s.context.hooks.generation() - Math.max(0, age), true);
        return null;
    }
}
