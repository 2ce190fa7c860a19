package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.index.AvlReadIndex;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.log.LogRequest;

import java.util.Arrays;

/**
 * One segment: its bounds, its read index and its waiting reads, all guarded by the segment's
 * lock, which is the segment itself ({@link SegmentLock}: reentrant, taken with
 * {@link SegmentLock#lock lock()} or, by eviction and promotion, {@link SegmentLock#tryLock
 * tryLock()}); every method but the constructor expects the caller to hold it (the methods named
 * {@code ...Locked}, and the scan) except {@link #read(long, int)}, {@link #promote} and a
 * waiter's timeout, which take it.
 *
 * <p>See {@link SegmentStore} for the design; this class holds the per-segment algorithms.
 *
 * <p><b>Placeholders.</b> An index entry that holds no cache entry (address
 * {@link ReadIndexEntry#NULL_ADDRESS}: evicted, or appended as a NOT_CACHED gap) is a
 * <em>placeholder</em>: a read there reports NOT_CACHED. Adjacent placeholders are coalesced into
 * one ({@link #coalesceLocked}, on eviction; {@link #appendGapLocked} grows a trailing one), so a
 * segment's index holds at most one placeholder per gap between cached runs (cached entries + 1)
 * as long as no gap is longer than {@link #MAX_PLACEHOLDER_LENGTH} (a longer one takes one
 * placeholder per 1 to 2 GiB: two neighbours merge only if they fit in one), instead of one per
 * {@code maxEntryLength} bytes ever evicted. A placeholder may therefore be longer than
 * {@code maxEntryLength}: it has no cache entry to bound. Placeholders are never pinned (reads
 * pin only cached entries, and eviction skips pinned ones), never grown by appends, never
 * relocated or promoted; only {@link #fillLocked} turns their bytes back into cached entries, in
 * pieces of at most {@code maxEntryLength}.
 *
 * <p>With a durable log, {@link #length} is the end of the bytes that are durable and in the
 * index (what readers see), {@link #reservedLength} the end of the offsets handed to appends
 * still on their way through the log; {@link #inFlight} counts this segment's log requests not
 * yet completed, all admitted in the writer epoch {@link #inFlightEpoch}.
 *
 * <p><b>Heap per segment.</b> A store may hold hundreds of thousands of segments (issue 14), so
 * a segment holds only its own state: its lock is the object itself ({@link SegmentLock}, no
 * {@code ReentrantLock}), what all segments of the store share is one {@link SegmentContext}
 * (cache, manager hooks, settings, the retiring of removed entries: no lambda per segment), and
 * the waiting reads are a {@link WaiterQueue} made with the first one (it is also the waiters'
 * timeout). 120 bytes with compressed oops, plus the read index.
 *
 * <p><b>Design note: why one class past ~800 lines.</b> Everything here is state guarded by the
 * segment's one lock, or an algorithm over that state: bounds, the read index and its pins, the
 * placeholders, the waiting reads, the listing for eviction passes ({@link SegmentsByGeneration})
 * and the read reports to the policy. Each operation reads and changes several of them in one
 * critical section (an append grows the index, moves the bounds, lists the segment and takes the
 * woken waiters), so a split along them would spread one lock's fields over several classes that
 * must all be called with it held. The waiter queue has moved out ({@link WaiterQueue}). The
 * next split, not yet made: the eviction listing ({@link #listLocked},
 * {@link #oldestCachedGenerationLocked}) and the fill and adoption paths (which share the
 * placeholder splitting) into classes of their own called with the lock held.
 */
final class Segment extends SegmentLock implements PromotionTarget {
    private static final long serialVersionUID = 1L;
    private static final int INITIAL_VIEWS = 4;
    private static final ByteBuf[] NO_VIEWS = new ByteBuf[0];
    private static final ReadIndexEntry[] NO_ENTRIES = new ReadIndexEntry[0];
    /**
     * Longest placeholder (see the class comment): lengths are {@code int}, so a coalesced gap
     * longer than this is held by several placeholders. Widening the length would cost 8 heap
     * bytes per entry (48 to 56), to save one placeholder per 1 to 2 GiB of gap.
     */
    static final int MAX_PLACEHOLDER_LENGTH = Integer.MAX_VALUE;

    final String name;
    /** The id its log records carry. */
    final int id;
    /** What the store's segments share: cache, manager hooks, settings, the retirer. */
    private final SegmentContext context;
    /** How long this segment's loads from the log are; made on the first load. */
    private volatile SequentialReadAhead readAhead;

    // Guarded by the lock.
    final AvlReadIndex index = new AvlReadIndex();
    long startOffset;
    long length;
    long durableLength;
    boolean sealed;
    boolean deleted;
    /** Deleted because the store closed: operations report that instead of "not found". */
    boolean closed;
    /** Whether appends may grow {@code index.last()}; false after a failed append left it longer in the cache than in the index. */
    boolean tailOpen;
    /** The entry a cache call on this thread is changing now: eviction must not touch it. */
    ReadIndexEntry writing;
    /** With a log: the offset the next append gets (length plus the appends in flight). */
    long reservedLength;
    /** With a log: requests of this segment submitted and not completed. */
    int inFlight;
    /** With a log: the writer epoch the in-flight requests were admitted in. */
    long inFlightEpoch;
    /** With a log: the SEAL request in flight, or null; appends are refused while it is set. */
    LogRequest sealRequest;
    /** With a log: a DELETE request is in flight; appends and other changes are refused. */
    boolean deleting;
    /** The waiting reads, made with the first one; null until then. */
    private WaiterQueue waiters;

    /** Guarded by the lock: whether this segment is in {@code context.byGeneration}'s lists. */
    boolean listed;
    /**
     * The generation this segment is listed at: no cached entry of it is older. Written under
     * the lock by the data path when it lists the segment, and by the pass that moves it.
     */
    int listedGeneration;
    /** The next segment in the same list; written by the thread that holds the segment's listing. */
    Segment nextListed;

    Segment(final int id, final String name, final SegmentContext context) {
        this.id = id;
        this.name = name;
        this.context = context;
    }

    /** For tests: a segment of its own, outside a table (not listed for eviction passes). */
    Segment(final int id, final String name, final BlockCache cache, final CacheManager manager, final int maxEntryLength,
            final boolean appendsDurable, final int fillTier) {
        this(id, name, new SegmentContext(cache, manager, maxEntryLength, appendsDurable, fillTier, null));
    }

    // ------------------------------------------------------------------------------------------
    // State checks
    // ------------------------------------------------------------------------------------------

    void checkLive() {
        if (deleted) {
            if (closed) {
                throw new CacheClosedException("segment store is closed (segment=" + name + ")");
            }
            throw new SegmentNotFoundException(name, "was deleted");
        }
    }

    private void checkReadable(final long offset) {
        checkLive();
        if (offset < startOffset) {
            throw new SegmentTruncatedException(name, offset, startOffset);
        }
    }

    SegmentInfo infoLocked() {
        checkLive();
        return new SegmentInfo(name, startOffset, length, durableLength, sealed);
    }

    // ------------------------------------------------------------------------------------------
    // Append
    // ------------------------------------------------------------------------------------------

    /**
     * Appends the readable bytes of {@code data} (its indices are not moved): grows the last
     * entry in place up to the maximum entry length, then starts new entries. All or nothing: on
     * failure the index and the bounds are as they were.
     *
     * @return the offset the data landed at.
     */
    long appendLocked(final ByteBuf data) {
        checkLive();
        if (sealed) {
            throw new SegmentSealedException(name, length);
        }
        final long offset = length;
        final int total = data.readableBytes();
        if (total == 0) {
            return offset;
        }
        if (total > Long.MAX_VALUE - offset) {
            throw new IllegalArgumentException("length=" + total + " would take segment=" + name + " past Long.MAX_VALUE, offset=" + offset);
        }
        int srcIndex = data.readerIndex();
        int remaining = total;
        long position = offset;
        final boolean tailWasOpen = tailOpen;
        ReadIndexEntry grown = null;
        int grownLength = 0;
        long firstNewOffset = -1;
        try {
            final ReadIndexEntry last = index.last();
            if (tailOpen && last != null && last.isCached() && last.endOffset() == position && last.length() < context.maxEntryLength) {
                final int n = Math.min(remaining, context.maxEntryLength - last.length());
                writing = last;
                final int address = context.cache.append(last.address(), n == total ? data : data.slice(srcIndex, n));
                writing = null;
                grown = last;
                grownLength = last.length();
                last.address(address);
                last.length(grownLength + n);
                context.hooks.recordUse(name, last);
                listLocked(last);
                srcIndex += n;
                remaining -= n;
                position += n;
            }
            while (remaining > 0) {
                final int n = Math.min(remaining, context.maxEntryLength);
                final int address = context.cache.insert(n == total ? data : data.slice(srcIndex, n));
                final ReadIndexEntry entry;
                try {
                    entry = new ReadIndexEntry(position, n, address, context.hooks.generation());
                    index.insert(entry);
                } catch (final RuntimeException | Error e) {
                    context.cache.delete(address);
                    throw e;
                }
                if (firstNewOffset < 0) {
                    firstNewOffset = position;
                }
                tailOpen = true;
                context.hooks.recordUse(name, entry);
                listLocked(entry);
                srcIndex += n;
                remaining -= n;
                position += n;
            }
        } catch (final RuntimeException | Error e) {
            writing = null;
            rollBack(grown, grownLength, firstNewOffset, tailWasOpen);
            throw e;
        }
        length = position;
        if (context.appendsDurable) {
            durableLength = position;
        }
        return offset;
    }

    /**
     * Undoes a failed append: removes the entries it inserted (not durable, so never evicted or
     * pinned meanwhile) and shortens the entry it grew. The cache entry of that one keeps the
     * extra bytes (the cache cannot shrink an entry), so it is closed to appends; otherwise the
     * last entry is as open to appends as it was.
     */
    private void rollBack(final ReadIndexEntry grown, final int grownLength, final long firstNewOffset, final boolean tailWasOpen) {
        tailOpen = tailWasOpen;
        if (firstNewOffset >= 0) {
            ReadIndexEntry last = index.last();
            while (last != null && last.offset() >= firstNewOffset) {
                index.remove(last.offset());
                context.accept(last);
                last = index.last();
            }
        }
        if (grown != null) {
            grown.length(grownLength);
            tailOpen = false;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Durable appends (with a log)
    // ------------------------------------------------------------------------------------------

    /**
     * Appends bytes that are durable in the log: into the cache and the index like any append,
     * or, if the cache cannot take them, as a NOT_CACHED gap (the log holds them).
     *
     * @return whether the bytes were cached (false: a gap).
     */
    boolean commitLocked(final ByteBuf data) {
        try {
            appendLocked(data);
            return true;
        } catch (final CacheException e) {
            appendGapLocked(data.readableBytes());
            return false;
        }
    }

    /**
     * Appends {@code length} bytes that are not cached: grows the last entry if it is a
     * placeholder ending at the segment's length (allocating nothing), then adds placeholders of
     * at most {@link #MAX_PLACEHOLDER_LENGTH} bytes (one, unless the gap is longer).
     */
    void appendGapLocked(final long length) {
        long position = this.length;
        long remaining = length;
        final ReadIndexEntry last = index.last();
        if (remaining > 0 && last != null && !last.isCached() && last.endOffset() == position
            && last.length() < MAX_PLACEHOLDER_LENGTH) {
            final int n = (int) Math.min(remaining, MAX_PLACEHOLDER_LENGTH - last.length());
            last.length(last.length() + n);
            position += n;
            remaining -= n;
        }
        final int generation = context.hooks.generation();
        while (remaining > 0) {
            final int n = (int) Math.min(remaining, MAX_PLACEHOLDER_LENGTH);
            index.insert(new ReadIndexEntry(position, n, ReadIndexEntry.NULL_ADDRESS, generation));
            position += n;
            remaining -= n;
        }
        this.length = position;
        if (context.appendsDurable) {
            durableLength = position;
        }
    }

    /**
     * Sets a new segment's state from recovery: bounds and seal, every byte in
     * {@code [startOffset, length)} a NOT_CACHED gap.
     */
    void restoreLocked(final long startOffset, final long length, final boolean sealed) {
        this.startOffset = startOffset;
        this.length = startOffset;
        appendGapLocked(length - startOffset);
        this.durableLength = length;
        this.reservedLength = length;
        this.sealed = sealed;
    }

    // ------------------------------------------------------------------------------------------
    // Fill
    // ------------------------------------------------------------------------------------------

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
     * @return bytes newly cached.
     */
    long fillLocked(final long offset, final ByteBuf data) {
        return fillLocked(offset, data, context.fillTier);
    }

    /** The store's fill tier: where {@link #fillLocked(long, ByteBuf)} inserts first. */
    int fillTier() {
        return context.fillTier;
    }

    /** As {@link #fillLocked(long, ByteBuf)}, inserting into {@code tier} first. */
    long fillLocked(final long offset, final ByteBuf data, final int tier) {
        checkLive();
        if (offset > length - data.readableBytes()) {
            throw new IllegalArgumentException("offset=" + offset + " length=" + data.readableBytes() + " ends past length=" + length
                + " of segment=" + name);
        }
        final long dataEnd = offset + data.readableBytes();
        long position = Math.max(offset, startOffset);
        long filled = 0;
        while (position < dataEnd) {
            final ReadIndexEntry entry = index.floorContaining(position);
            if (entry != null && entry.isCached()) {
                position = entry.endOffset();
                continue;
            }
            final long limit;
            if (entry != null) {
                limit = entry.endOffset();
            } else {
                final ReadIndexEntry next = index.higher(position);
                limit = next == null ? Long.MAX_VALUE : next.offset();
            }
            final long pieceEnd = Math.min(Math.min(limit, dataEnd), position + context.maxEntryLength);
            final int n = (int) (pieceEnd - position);
            final int address = context.cache.insert(data.slice(data.readerIndex() + (int) (position - offset), n), tier);
            ReadIndexEntry holder = null;
            if (entry != null) {
                // A full cache ran an eviction pass inside the insert, on this thread, and the
                // pass takes this lock again (reentrant): it may have coalesced the placeholder
                // into an entry it evicted before it. Eviction never caches bytes and coalescing
                // only grows placeholders, so one placeholder still covers the piece: find it.
                holder = index.floorContaining(position);
                if (holder == null || holder.isCached() || holder.endOffset() < pieceEnd) {
                    context.cache.delete(address);
                    throw new IllegalStateException("placeholder of [" + position + ", " + pieceEnd + ") lost during a fill of segment="
                        + name + ": " + holder);
                }
            }
            placeLocked(holder, position, pieceEnd, address, context.hooks.generation(), false);
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
    private void placeLocked(final ReadIndexEntry holder, final long position, final long pieceEnd, final int address,
                             final int generation, final boolean restored) {
        if (holder != null) {
            final long holderEnd = holder.endOffset();
            if (holder.offset() < position) {
                // Keep the placeholder as the part before the piece: shorter, same key.
                holder.length((int) (position - holder.offset()));
            } else {
                index.remove(holder.offset());
                context.accept(holder);
            }
            if (pieceEnd < holderEnd) {
                index.insert(new ReadIndexEntry(pieceEnd, (int) (holderEnd - pieceEnd), ReadIndexEntry.NULL_ADDRESS,
                    holder.generation()));
            }
        }
        final ReadIndexEntry cached = new ReadIndexEntry(position, (int) (pieceEnd - position), address, generation);
        index.insert(cached);
        if (!restored) {
            context.hooks.recordUse(name, cached);
        }
        listLocked(cached);
        if (index.last() == cached) {
            tailOpen = true;
        }
    }

    /**
     * A warm restart's step: indexes a cache entry the cache adopted from its region as the bytes
     * {@code [offset, offset + length)}, if they are durable bytes of this segment that no cached
     * entry holds (a placeholder of recovery covers them). It is {@code age} generations old, as
     * it was at the checkpoint, so that the cache manager evicts in the order it would have.
     *
     * @return null if indexed, else why not (the caller then deletes the cache entry).
     */
    WarmRestore.Reason adoptLocked(final long offset, final int n, final int address, final int age) {
        if (deleted) {
            return WarmRestore.Reason.SEGMENT_GONE;
        }
        if (n > 0 && offset <= startOffset - n) {
            return WarmRestore.Reason.TRUNCATED;
        }
        if (n <= 0 || n > context.maxEntryLength || offset > durableLength - n) {
            return WarmRestore.Reason.NOT_DURABLE;
        }
        // An entry a truncation cut through starts before the start offset, as it did before:
        // its bytes before the start are never read.
        final long from = Math.max(offset, startOffset);
        final ReadIndexEntry holder = index.floorContaining(from);
        if (holder == null || holder.isCached() || holder.endOffset() < offset + n || holder.offset() > from) {
            return WarmRestore.Reason.OVERLAP;
        }
        placeLocked(holder, offset, offset + n, address, context.hooks.generation() - Math.max(0, age), true);
        return null;
    }

    // ------------------------------------------------------------------------------------------
    // Read
    // ------------------------------------------------------------------------------------------

    /**
     * @return the segment's read-ahead state, made on the first call with these lengths (any thread).
     */
    SequentialReadAhead readAhead(final int base, final int max) {
        SequentialReadAhead state = readAhead;
        if (state == null) {
            synchronized (this) {
                state = readAhead;
                if (state == null) {
                    state = new SequentialReadAhead(base, max);
                    readAhead = state;
                }
            }
        }
        return state;
    }

    /**
     * {@link #readLocked} under the segment's lock, taken and released here.
     */
    ReadResult read(final long offset, final int maxLength) {
        lock();
        try {
            return readLocked(offset, maxLength);
        } finally {
            unlock();
        }
    }

    /**
     * Reads up to {@code maxLength} bytes from {@code offset} as views of the cached entries,
     * pinning each entry covered, until the end of the data, {@code maxLength}, or the first
     * byte not cached.
     */
    ReadResult readLocked(final long offset, final int maxLength) {
        checkReadable(offset);
        if (offset >= length) {
            context.hooks.recordRead(name, offset, offset);
            return ReadResult.empty(name, offset, sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA);
        }
        final long end = offset + Math.min(maxLength, length - offset);
        long position = offset;
        ByteBuf[] views = NO_VIEWS;
        ReadIndexEntry[] pinned = NO_ENTRIES;
        int count = 0;
        ReadStatus status = null;
        try {
            ReadIndexEntry entry = index.floorContaining(position);
            while (position < end) {
                if (entry == null || !entry.contains(position) || !entry.isCached()) {
                    status = ReadStatus.NOT_CACHED;
                    break;
                }
                final int from = (int) (position - entry.offset());
                final int n = (int) Math.min(end - position, entry.length() - from);
                // The result hands it out only inside a LeasedByteBuf, which is read-only itself
                // (and checks the result's count): no read-only wrapper of its own.
                final ByteBuf view = context.cache.view(entry.address(), from, n);
                if (count == views.length) {
                    final int capacity = Math.max(INITIAL_VIEWS, count * 2);
                    views = Arrays.copyOf(views, capacity);
                    pinned = Arrays.copyOf(pinned, capacity);
                }
                entry.pin();
                views[count] = view;
                pinned[count] = entry;
                count++;
                recordRead(entry);
                position += n;
                if (position < end) {
                    entry = index.next(entry);
                }
            }
        } catch (final RuntimeException | Error e) {
            for (int i = 0; i < count; i++) {
                pinned[i].unpin();
            }
            throw e;
        }
        if (status == null) {
            status = endStatus(position);
        }
        context.hooks.recordRead(name, offset, position);
        return count == 0
            ? ReadResult.empty(name, offset, status)
            : new ReadResult(name, offset, (int) (position - offset), status, views, pinned, count, context.cache, context.hooks.readPins());
    }

    /**
     * Copies the bytes {@link #readLocked} would return for {@code maxLength} = the room in the
     * destination: into {@code destination} from its writer index (advanced by the bytes copied),
     * or, if that is null, into {@code nioDestination} from its position (advanced likewise).
     * The caller checked that the destination is writable. No pin: the bytes are copied before
     * the lock is released. Records each entry's use as {@link #readLocked} does. Allocates
     * nothing. On failure the destination's indices are as they were (bytes past them may have
     * been written).
     *
     * @return why the copy stopped where it did.
     */
    ReadStatus copyLocked(final long offset, final ByteBuf destination, final java.nio.ByteBuffer nioDestination) {
        checkReadable(offset);
        if (offset >= length) {
            context.hooks.recordRead(name, offset, offset);
            return sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA;
        }
        final int room = destination != null ? destination.writableBytes() : nioDestination.remaining();
        final int start = destination != null ? destination.writerIndex() : nioDestination.position();
        final int nioLimit = destination != null ? 0 : nioDestination.limit();
        final long end = offset + Math.min(room, length - offset);
        long position = offset;
        ReadStatus status = null;
        try {
            ReadIndexEntry entry = index.floorContaining(position);
            while (position < end) {
                if (entry == null || !entry.contains(position) || !entry.isCached()) {
                    status = ReadStatus.NOT_CACHED;
                    break;
                }
                final int from = (int) (position - entry.offset());
                final int n = (int) Math.min(end - position, entry.length() - from);
                final int at = start + (int) (position - offset);
                if (destination != null) {
                    context.cache.copyTo(entry.address(), from, destination, at, n);
                } else {
                    // The cache copies remaining() bytes: bound them by the limit (restored below).
                    nioDestination.limit(at + n);
                    context.cache.copyTo(entry.address(), from, nioDestination);
                }
                recordRead(entry);
                position += n;
                if (position < end) {
                    entry = index.next(entry);
                }
            }
        } catch (final RuntimeException | Error e) {
            if (nioDestination != null) {
                nioDestination.limit(nioLimit);
                nioDestination.position(start);
            }
            throw e;
        }
        final int copied = (int) (position - offset);
        if (destination != null) {
            destination.writerIndex(start + copied);
        } else {
            nioDestination.limit(nioLimit);
            nioDestination.position(start + copied);
        }
        if (status == null) {
            status = endStatus(position);
        }
        context.hooks.recordRead(name, offset, position);
        return status;
    }

    /** Tells the cache manager a read used a cached entry (and, in a slower tier, counts towards its promotion). */
    private void recordRead(final ReadIndexEntry entry) {
        context.hooks.recordUse(name, entry);
        if (context.tiered && context.cache.tierOf(entry.address()) > 0) {
            context.hooks.recordTierRead(this, entry);
        }
    }

    /** Why a read that found every byte cached stopped at {@code position}. */
    private ReadStatus endStatus(final long position) {
        return position < length ? ReadStatus.MAX_LENGTH : sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA;
    }

    // ------------------------------------------------------------------------------------------
    // Seal, durability, truncate, delete
    // ------------------------------------------------------------------------------------------

    /**
     * @return the waiters to complete (all of them: none can get bytes any more), or null.
     */
    Waiter sealLocked() {
        checkLive();
        if (sealed) {
            return null;
        }
        sealed = true;
        return takeWaiters(Long.MAX_VALUE);
    }

    void markDurableLocked(final long offset) {
        checkLive();
        if (offset > length) {
            throw new IllegalArgumentException("offset=" + offset + " is past length=" + length + " of segment=" + name);
        }
        if (offset > durableLength) {
            durableLength = offset;
        }
    }

    /**
     * Moves the start offset to {@code offset} and removes the entries wholly before it, freeing
     * their cache entries now, or at their last unpin.
     */
    void truncateLocked(final long offset) {
        checkLive();
        if (offset > length) {
            throw new IllegalArgumentException("offset=" + offset + " is past length=" + length + " of segment=" + name);
        }
        if (offset <= startOffset) {
            return;
        }
        startOffset = offset;
        index.removeBefore(offset, context);
    }

    /**
     * Marks the segment deleted and retires every entry.
     *
     * @param storeClosed whether the store is closing (operations then report that).
     * @return the waiters to fail, or null.
     */
    Waiter deleteLocked(final boolean storeClosed) {
        return deleteLocked(storeClosed, false);
    }

    /**
     * As {@link #deleteLocked(boolean)}; with {@code keepCacheEntries} (a store closing for a
     * warm restart) the cache entries are left in the cache, unretired, for the warm catalog.
     */
    Waiter deleteLocked(final boolean storeClosed, final boolean keepCacheEntries) {
        if (deleted) {
            return null;
        }
        deleted = true;
        closed = storeClosed;
        if (!storeClosed) {
            context.hooks.segmentDeleted(name);
        }
        if (!keepCacheEntries) {
            index.forEach(context);
        }
        index.clear();
        return takeWaiters(Long.MAX_VALUE);
    }

    // ------------------------------------------------------------------------------------------
    // Eviction
    // ------------------------------------------------------------------------------------------

    /**
     * Offers the evictable entries in offset order, from the first at or after {@code from}, and
     * evicts or relocates them as the scan says. The caller holds the lock (taken with
     * {@code tryLock}); {@link #writing} is set only while this thread is inside a cache call on
     * that entry, that is when the scan runs in the cache's full handler on the appending thread.
     * Stops after a relocation when another thread waits for the lock: relocations copy bytes
     * under the lock, and a reader should not wait for a whole segment's worth of them.
     *
     * @return the offset to resume the scan at (the caller releases the lock and calls again),
     *         or -1 if the scan of this segment is complete.
     */
    long scanLocked(final EvictionScan scan, final long from) {
        if (deleted) {
            return -1;
        }
        for (ReadIndexEntry entry = index.ceiling(from); entry != null && !scan.isDone(); entry = index.next(entry)) {
            if (!entry.isCached() || entry == writing || entry.isPinned()) {
                continue;
            }
            // Not yet durable: never evicted (the cache holds its only copy); offered only to a
            // scan that moves entries (a shrink of the cache), never dropped.
            final boolean durable = entry.endOffset() <= durableLength;
            if (!durable && !scan.offersUndurable()) {
                continue;
            }
            int action = scan.action(name, entry);
            boolean moved = false;
            while (action >= 0) {
                final int fromTier = context.cache.tierOf(entry.address());
                try {
                    entry.address(context.cache.relocate(entry.address(), action));
                    entry.resetTierReads();
                    scan.relocated(name, entry, fromTier);
                    moved = true;
                    break;
                } catch (final CacheFullException e) {
                    action = scan.relocationFailed(name, entry, action);
                }
            }
            if (moved) {
                if (hasQueuedThreads() && entry.endOffset() > entry.offset()) {
                    return entry.endOffset();
                }
                continue;
            }
            if (action == EvictionScan.EVICT && durable) {
                scan.evicting(name, entry);
                context.cache.delete(entry.address());
                entry.address(ReadIndexEntry.NULL_ADDRESS);
                // The loop goes on from the placeholder that now covers the entry's bytes: its
                // successor is the entry after the coalesced run, as the evicted entry's was.
                entry = coalesceLocked(entry);
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
    private void listLocked(final ReadIndexEntry cached) {
        if (!listed && context.byGeneration != null) {
            listed = true;
            listedGeneration = cached.generation();
            context.byGeneration.push(this);
        }
    }

    /**
     * @param current the manager's current generation.
     * @return the generation of this segment's oldest cached entry (compared by their
     *         differences from {@code current}), or {@link #NO_CACHED_ENTRY} if it has no cached
     *         entry or is deleted.
     */
    long oldestCachedGenerationLocked(final int current) {
        if (deleted) {
            return NO_CACHED_ENTRY;
        }
        boolean found = false;
        int oldestAge = 0;
        int oldest = 0;
        for (ReadIndexEntry entry = index.ceiling(0); entry != null; entry = index.next(entry)) {
            // An entry may be younger than current (the generation moved on): a negative age.
            if (entry.isCached() && (!found || current - entry.generation() > oldestAge)) {
                found = true;
                oldest = entry.generation();
                oldestAge = current - oldest;
            }
        }
        return found ? oldest : NO_CACHED_ENTRY;
    }

    /** {@link #oldestCachedGenerationLocked}: the segment holds no cached entry. */
    static final long NO_CACHED_ENTRY = Long.MAX_VALUE;

    /**
     * Merges a placeholder with the placeholders right before and after it, where their
     * combined length fits {@link #MAX_PLACEHOLDER_LENGTH}: the earlier entry grows in place and
     * the later one leaves the index, so no key moves and the tree's order holds (the later
     * entry is removed before the earlier one grows over its range, so entries never overlap).
     * Allocates nothing. The removed entries are retired (they hold no cache entry and no pin,
     * so that frees nothing; it marks them gone for a promotion request still queued on one).
     *
     * <p>The surviving placeholder keeps its own generation (and tier-read count and promotion
     * tick): nothing reads those of a placeholder. The policies see only cached entries (the
     * scan skips placeholders before asking, and {@code recordUse} is called on cached entries
     * only), promotion skips entries not cached, and {@link #fillLocked} gives each piece it
     * caches the current generation; so no merge rule would change a decision, and keeping the
     * survivor's costs no write.
     *
     * @param placeholder an entry of the index that is not cached.
     * @return the placeholder now covering {@code placeholder}'s bytes: it, or the one before.
     */
    private ReadIndexEntry coalesceLocked(final ReadIndexEntry placeholder) {
        ReadIndexEntry survivor = placeholder;
        final ReadIndexEntry previous = index.lower(placeholder.offset());
        if (previous != null && mergeable(previous, placeholder)) {
            index.remove(placeholder.offset());
            previous.length(previous.length() + placeholder.length());
            placeholder.retire();
            survivor = previous;
        }
        final ReadIndexEntry next = index.higher(survivor.offset());
        if (next != null && mergeable(survivor, next)) {
            index.remove(next.offset());
            survivor.length(survivor.length() + next.length());
            next.retire();
        }
        return survivor;
    }

    /**
     * @return whether {@code second} is a placeholder right after the placeholder {@code first}
     *         and both fit in one.
     */
    private static boolean mergeable(final ReadIndexEntry first, final ReadIndexEntry second) {
        return !first.isCached() && !second.isCached() && first.endOffset() == second.offset()
            && (long) first.length() + second.length() <= MAX_PLACEHOLDER_LENGTH;
    }

    /**
     * Promotes an entry the cache manager queued (see {@link PromotionTarget}): called on the
     * thread draining the promotion queue, holding no lock; takes this segment's lock with
     * {@code tryLock}.
     */
    @Override
    public long promote(final ReadIndexEntry entry, final int targetTier, final long maxBlocks) {
        if (!tryLock()) {
            return 0;
        }
        try {
            if (deleted || entry.isRetired() || !entry.isCached() || entry.isPinned() || entry == writing || context.cache.isClosed()
                || context.cache.tierOf(entry.address()) <= targetTier) {
                return 0;
            }
            final long blocks = entry.length() == 0 ? 1 : (entry.length() - 1L) / context.cache.blockLength() + 1;
            if (blocks > maxBlocks) {
                return 0;
            }
            entry.address(context.cache.relocate(entry.address(), targetTier));
            entry.resetTierReads();
            return blocks;
        } catch (final CacheFullException e) {
            return 0;
        } finally {
            unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Waiting reads
    // ------------------------------------------------------------------------------------------

    Waiter newWaiter(final long offset, final int maxLength) {
        if (waiters == null) {
            waiters = new WaiterQueue(this);
        }
        return waiters.newWaiter(offset, maxLength);
    }

    void addWaiter(final Waiter waiter) {
        if (waiters == null) {
            waiters = new WaiterQueue(this);
        }
        waiters.add(waiter);
    }

    /**
     * Takes the waiters whose offset is below {@code end} out of the queue.
     *
     * @return the first of them, linked through {@link Waiter#next} in offset order, or null.
     */
    Waiter takeWaiters(final long end) {
        return waiters == null ? null : waiters.take(end);
    }

    int waiterCountLocked() {
        return waiters == null ? 0 : waiters.size();
    }

    @Override
    public String toString() {
        return "Segment{name=" + name + ", id=" + id + ", startOffset=" + startOffset + ", length=" + length + ", durableLength=" + durableLength
            + ", sealed=" + sealed + ", deleted=" + deleted + ", entries=" + index.size() + '}';
    }
}
