package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
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
        s.checkLive();
        if (offset > s.length - data.readableBytes()) {
            throw new IllegalArgumentException("offset=" + offset + " length=" + data.readableBytes() + " ends past length=" + s.length
                + " of segment=" + s.name);
        }
        final long dataEnd = offset + data.readableBytes();
        long position = Math.max(offset, s.startOffset);
        long filled = 0;
        while (position < dataEnd) {
            final ReadIndexEntry entry = ReadIndexTree.floorContaining(s.indexRoot, position);
            if (entry != null && entry.isCached()) {
                position = entry.endOffset();
                continue;
            }
            final long limit;
            if (entry != null) {
                limit = entry.endOffset();
            } else {
                final ReadIndexEntry next = ReadIndexTree.higher(s.indexRoot, position);
                limit = next == null ? Long.MAX_VALUE : next.offset();
            }
            final long pieceEnd = Math.min(Math.min(limit, dataEnd), position + s.context.maxEntryLength);
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
