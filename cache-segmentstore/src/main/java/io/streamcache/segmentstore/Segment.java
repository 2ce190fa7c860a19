package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;

import java.nio.ByteBuffer;
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
 * one ({@link SegmentEviction}, on eviction; {@link #appendGapLocked} grows a trailing one), so a
 * segment's index holds at most one placeholder per gap between cached runs (cached entries + 1)
 * as long as no gap is longer than {@link #MAX_PLACEHOLDER_LENGTH} (a longer one takes one
 * placeholder per 1 to 2 GiB: two neighbours merge only if they fit in one), instead of one per
 * {@code maxEntryLength} bytes ever evicted. A placeholder may therefore be longer than
 * {@code maxEntryLength}: it has no cache entry to bound. Placeholders are never pinned (reads
 * pin only cached entries, and eviction skips pinned ones), never grown by appends, never
 * relocated or promoted; only {@link SegmentFill#fill} turns their bytes back into cached entries, in
 * pieces of at most {@code maxEntryLength}.
 *
 * <p>With a durable log, {@link #length} is the end of the bytes that are durable and in the
 * index (what readers see); what the log has not made durable yet (the offsets handed to
 * appends on their way, the requests in flight, a SEAL or DELETE in flight) is the durability
 * layer's, in the segment's {@link SegmentDurability}, which {@link DurableSegmentTable} owns.
 *
 * <p><b>Heap per segment.</b> A store may hold hundreds of thousands of segments, so
 * a segment holds only its own state: its lock is the object itself ({@link SegmentLock}, no
 * {@code ReentrantLock}), what all segments of the store share is one {@link SegmentContext}
 * (cache, manager hooks, settings, the retiring of removed entries: no lambda per segment), and
 * the waiting reads are a {@link WaiterQueue} made with the first one (it is also the waiters'
 * timeout), and the read index is its root entry in a field of the segment, the algorithms
 * static in {@link ReadIndexTree} (no 24-byte tree object per segment). 104 bytes with compressed
 * oops (JOL 0.17, JDK 17: the 3-byte gap after the booleans is the only waste), plus the index
 * entries and, with a log, the durability layer's 40-byte {@link SegmentDurability} (with its
 * fields in the segment instead, the segment measured 128 bytes: 16 more per segment with a log,
 * 24 fewer without one).
 *
 * <p><b>Design note: the split.</b> Everything here is state guarded by the segment's one lock,
 * or an algorithm over that state: bounds, the read index and its pins, the placeholders, the
 * waiting reads, the listing for eviction passes and the read reports to the policy. Each
 * operation reads and changes several of them in one critical section (an append grows the
 * index, moves the bounds, lists the segment and takes the woken waiters), so the state stays
 * here and the concerns that touch the fewest fields are classes of their own, called with the
 * lock held: the waiting reads ({@link WaiterQueue}), the manager's view (the eviction scan,
 * placeholder coalescing, the listing and promotion: {@link SegmentEviction}) and the fill and
 * warm-restart adoption paths, which share the placeholder splitting ({@link SegmentFill}). This
 * class keeps the append, gap, read, copy, seal, truncate and delete paths, and thin delegates
 * for the others so that callers need not know where an algorithm lives.
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
    final SegmentContext context;
    /** How long this segment's loads from the log are; made on the first load. */
    private volatile SequentialReadAhead readAhead;

    // Guarded by the lock.
    /**
     * The root of the read index, an AVL tree of {@link ReadIndexEntry} nodes ({@link ReadIndexTree}
     * holds the algorithms: lookups take this root, updates return the new one); null when empty.
     */
    ReadIndexEntry indexRoot;
    long startOffset;
    long length;
    long durableLength;
    boolean sealed;
    boolean deleted;
    /** Deleted because the store closed: operations report that instead of "not found". */
    boolean closed;
    /** Whether appends may grow {@code ReadIndexTree.last(indexRoot)}; false after a failed append left it longer in the cache than in the index. */
    boolean tailOpen;
    /** The entry a cache call on this thread is changing now: eviction must not touch it. */
    ReadIndexEntry writing;
    /**
     * With a log: what the durability layer keeps of this segment, made and changed by
     * {@link DurableSegmentTable} only (under the lock); null until it first logs a change of
     * the segment, and always without a log.
     */
    SegmentDurability durability;
    /** Where this segment's sequential readers are, made with the first read; null until then. */
    ReaderMarks readerMarks;
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
        this(id, name, new SegmentContext(cache, manager.hooks(), maxEntryLength, appendsDurable, fillTier, null));
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
        return appendLocked(data, true);
    }

    /** {@link #appendLocked(ByteBuf, boolean)}: the cache had not the free blocks the append needs. */
    static final long NO_ROOM = -1L;

    /**
     * As {@link #appendLocked(ByteBuf)}; with {@code mayWait} false the cache takes only blocks
     * free now (it never runs an eviction pass or waits while this segment's lock is held), and
     * an append they cannot hold returns {@link #NO_ROOM} with the index and bounds as they were.
     * The caller then makes room with no lock held ({@code BlockCache.makeRoom}) and tries again.
     */
    long appendLocked(final ByteBuf data, final boolean mayWait) {
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
            final ReadIndexEntry last = ReadIndexTree.last(indexRoot);
            if (tailOpen && last != null && last.isCached() && last.endOffset() == position && last.length() < context.maxEntryLength) {
                final int n = Math.min(remaining, context.maxEntryLength - last.length());
                writing = last;
                final ByteBuf part = n == total ? data : data.slice(srcIndex, n);
                final int address = mayWait ? context.cache.append(last.address(), part) : context.cache.tryAppend(last.address(), part);
                writing = null;
                if (address == BlockCache.NULL_ADDRESS) {
                    return NO_ROOM;
                }
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
                final ByteBuf part = n == total ? data : data.slice(srcIndex, n);
                final int address = mayWait ? context.cache.insert(part) : context.cache.tryInsert(part, 0);
                if (address == BlockCache.NULL_ADDRESS) {
                    rollBack(grown, grownLength, firstNewOffset, tailWasOpen);
                    return NO_ROOM;
                }
                final ReadIndexEntry entry;
                try {
                    entry = context.newEntry(position, n, address, context.hooks.generation());
                    indexRoot = ReadIndexTree.insert(indexRoot, entry);
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
            ReadIndexEntry last = ReadIndexTree.last(indexRoot);
            while (last != null && last.offset() >= firstNewOffset) {
                indexRoot = ReadIndexTree.remove(indexRoot, last);
                context.accept(last);
                last = ReadIndexTree.last(indexRoot);
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
     * As {@link #commitLocked}, for the log's completion thread, which must never wait for
     * memory with a segment's lock held: takes only free blocks; when there are not enough it
     * releases this lock (held once), makes room with nothing held (one eviction pass, no wait),
     * takes the lock again and tries once more; then appends a gap. The caller holds the lock
     * once, and checks {@link #deleted} again after (the lock was released meanwhile); the
     * segment's length changes only by commits, which run on the calling thread.
     *
     * @return whether the bytes were cached (false: a gap, or the segment was deleted meanwhile).
     */
    boolean commitWithoutWaitLocked(final ByteBuf data) {
        try {
            if (appendLocked(data, false) != NO_ROOM) {
                return true;
            }
            unlock();
            try {
                context.cache.makeRoom(data.readableBytes(), 0L);
            } finally {
                lock();
            }
            if (deleted) {
                return false;
            }
            if (appendLocked(data, false) != NO_ROOM) {
                return true;
            }
        } catch (final CacheException e) {
            // Too long for one entry of a tiny cache, or closed: a gap, as commitLocked does.
            if (deleted) {
                return false;
            }
        }
        appendGapLocked(data.readableBytes());
        return false;
    }

    /**
     * Appends {@code length} bytes that are not cached: grows the last entry if it is a
     * placeholder ending at the segment's length (allocating nothing), then adds placeholders of
     * at most {@link #MAX_PLACEHOLDER_LENGTH} bytes (one, unless the gap is longer).
     */
    void appendGapLocked(final long length) {
        long position = this.length;
        long remaining = length;
        final ReadIndexEntry last = ReadIndexTree.last(indexRoot);
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
            indexRoot = ReadIndexTree.insert(indexRoot, context.newEntry(position, n, ReadIndexEntry.NULL_ADDRESS, generation));
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
        this.sealed = sealed;
    }

    // ------------------------------------------------------------------------------------------
    // Fill (SegmentFill)
    // ------------------------------------------------------------------------------------------

    /**
     * Caches the bytes of {@code data}, the segment's bytes from {@code offset}, where the index
     * holds none (see {@link SegmentFill#fill}), inserting into the store's fill tier first.
     *
     * @return bytes newly cached.
     */
    long fillLocked(final long offset, final ByteBuf data) {
        return SegmentFill.fill(this, offset, data, context.fillTier);
    }

    /** The store's fill tier: where {@link #fillLocked(long, ByteBuf)} inserts first. */
    int fillTier() {
        return context.fillTier;
    }

    /** As {@link #fillLocked(long, ByteBuf)}, inserting into {@code tier} first. */
    long fillLocked(final long offset, final ByteBuf data, final int tier) {
        return SegmentFill.fill(this, offset, data, tier);
    }

    /** A warm restart's step: see {@link SegmentFill#adopt}. */
    WarmRestore.Reason adoptLocked(final long offset, final int n, final int address, final int age) {
        return SegmentFill.adopt(this, offset, n, address, age);
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
     * Where a load from the log that starts before {@code offset} should stop so that it reads
     * no byte the cache already holds: the offset of the first cached entry that starts after
     * {@code offset}, under the segment's lock, taken and released here. Placeholders between
     * cached runs are coalesced (see the class comment), so this visits at most a few entries.
     *
     * @return that entry's offset, or {@link Long#MAX_VALUE} if nothing after {@code offset} is
     *         cached.
     */
    long nextCachedOffset(final long offset) {
        lock();
        try {
            return nextCachedLocked(offset);
        } finally {
            unlock();
        }
    }

    /**
     * As {@link #nextCachedOffset}, but only if the segment's lock is free (or held by this
     * thread): never waits for it.
     *
     * @return that entry's offset, or {@code offset} if another thread holds the lock (the
     *         caller then loads one range and no read-ahead).
     */
    long tryNextCachedOffset(final long offset) {
        if (!tryLock()) {
            return offset;
        }
        try {
            return nextCachedLocked(offset);
        } finally {
            unlock();
        }
    }

    private long nextCachedLocked(final long offset) {
        ReadIndexEntry entry = ReadIndexTree.higher(indexRoot, offset);
        while (entry != null && !entry.isCached()) {
            entry = ReadIndexTree.higher(indexRoot, entry.offset());
        }
        return entry == null ? Long.MAX_VALUE : entry.offset();
    }

    /**
     * A read-through's one lookup: {@link #readLocked} under the segment's lock (only if it is
     * free when {@code tryOnly}), and, if it finds no byte cached at {@code offset}, where the
     * cache holds bytes again after it ({@link #nextCachedOffset}) in {@code nextCached[0]}, in
     * the same lock.
     *
     * @return the result, or null if {@code tryOnly} and another thread holds the lock.
     */
    ReadResult readForMiss(final long offset, final int maxLength, final boolean tryOnly, final long[] nextCached) {
        if (tryOnly) {
            if (!tryLock()) {
                return null;
            }
        } else {
            lock();
        }
        try {
            final ReadResult result = readLocked(offset, maxLength);
            if (result.status() == ReadStatus.NOT_CACHED && result.length() == 0) {
                nextCached[0] = nextCachedLocked(offset);
            }
            return result;
        } finally {
            unlock();
        }
    }

    /**
     * @return whether a read at {@code offset} finds no cached byte there now (no entry or a
     *         placeholder; also a deleted segment or an offset truncated away, for the load to
     *         report; false at or past the end), or true if another thread holds the segment's lock:
     *         a lookup that never waits and makes no result (the check a load makes just before
     *         it reads the log, for a miss another reader's load may have filled since).
     */
    boolean tryIsMissing(final long offset) {
        if (!tryLock()) {
            return true;
        }
        try {
            if (deleted || offset < startOffset) {
                // The load reads and reports the race.
                return true;
            }
            if (offset >= length) {
                return false;
            }
            final ReadIndexEntry entry = ReadIndexTree.floorContaining(indexRoot, offset);
            return entry == null || !entry.isCached();
        } finally {
            unlock();
        }
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
     * As {@link #read}, but only if the segment's lock is free (or held by this thread): never
     * waits for it.
     *
     * @return the result, or null if another thread holds the lock (a fill publishing, an
     *         eviction, an append): the caller hands the read to a thread that may wait.
     */
    ReadResult tryRead(final long offset, final int maxLength) {
        if (!tryLock()) {
            return null;
        }
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
            observeReadLocked(offset, offset);
            return ReadResult.empty(name, offset, sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA);
        }
        final long end = offset + Math.min(maxLength, length - offset);
        long position = offset;
        ByteBuf[] views = NO_VIEWS;
        ReadIndexEntry[] pinned = NO_ENTRIES;
        int count = 0;
        ReadStatus status = null;
        try {
            ReadIndexEntry entry = ReadIndexTree.floorContaining(indexRoot, position);
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
                    entry = ReadIndexTree.next(indexRoot, entry);
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
        observeReadLocked(offset, position);
        return count == 0
            ? ReadResult.empty(name, offset, status)
            : new ReadResult(name, offset, (int) (position - offset), status, views, pinned, count, context.cache, context.hooks.readPins());
    }

    /**
     * Copies the bytes {@link #readLocked} would return for {@code maxLength} = the room in the
     * destination: into {@code destination} from its writer index, which is advanced by the bytes
     * copied. The caller checked that the destination is writable. No pin: the bytes are copied
     * before the lock is released. Records each entry's use as {@link #readLocked} does.
     * Allocates nothing. On failure the destination's indices are as they were (bytes past them
     * may have been written).
     *
     * @return why the copy stopped where it did.
     */
    ReadStatus copyLocked(final long offset, final ByteBuf destination) {
        final ReadStatus atEnd = copyAtEndLocked(offset);
        if (atEnd != null) {
            return atEnd;
        }
        final int start = destination.writerIndex();
        final long end = offset + Math.min(destination.writableBytes(), length - offset);
        final long position = copyEntriesLocked(offset, end, destination, start);
        destination.writerIndex(start + (int) (position - offset));
        return copiedLocked(offset, end, position);
    }

    /**
     * As {@link #copyLocked(long, ByteBuf)}, into {@code destination} from its position, which is
     * advanced by the bytes copied; its limit is as it was, on failure too.
     */
    ReadStatus copyLocked(final long offset, final ByteBuffer destination) {
        final ReadStatus atEnd = copyAtEndLocked(offset);
        if (atEnd != null) {
            return atEnd;
        }
        final int start = destination.position();
        final int limit = destination.limit();
        final long end = offset + Math.min(destination.remaining(), length - offset);
        final long position;
        try {
            position = copyEntriesLocked(offset, end, destination, start);
        } catch (final RuntimeException | Error e) {
            destination.limit(limit);
            destination.position(start);
            throw e;
        }
        destination.limit(limit);
        destination.position(start + (int) (position - offset));
        return copiedLocked(offset, end, position);
    }

    /** A copy's status when {@code offset} is at or past the end (the read observed), else null. */
    private ReadStatus copyAtEndLocked(final long offset) {
        checkReadable(offset);
        if (offset < length) {
            return null;
        }
        observeReadLocked(offset, offset);
        return sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA;
    }

    /**
     * Copies the cached bytes [offset, end), entry by entry, into {@code destination} from index
     * {@code start}, stopping at the first byte not cached; records each entry's use.
     *
     * @param destination a {@link ByteBuf} (written at absolute indices) or a {@link ByteBuffer}
     *                    (whose limit is moved to bound each entry's copy), never null: the typed
     *                    overloads of {@code copyLocked} are the only callers. One parameter
     *                    dispatched by type, rather than a wrapper per copy, keeps the read
     *                    allocation-free.
     * @return the offset the copy reached.
     */
    private long copyEntriesLocked(final long offset, final long end, final Object destination, final int start) {
        long position = offset;
        ReadIndexEntry entry = ReadIndexTree.floorContaining(indexRoot, position);
        while (position < end) {
            if (entry == null || !entry.contains(position) || !entry.isCached()) {
                break;
            }
            final int from = (int) (position - entry.offset());
            final int n = (int) Math.min(end - position, entry.length() - from);
            final int at = start + (int) (position - offset);
            if (destination instanceof ByteBuf buf) {
                context.cache.copyTo(entry.address(), from, buf, at, n);
            } else {
                // The cache copies remaining() bytes from the position: bound them by the limit.
                final ByteBuffer nio = (ByteBuffer) destination;
                nio.limit(at + n);
                context.cache.copyTo(entry.address(), from, nio);
            }
            recordRead(entry);
            position += n;
            if (position < end) {
                entry = ReadIndexTree.next(indexRoot, entry);
            }
        }
        return position;
    }

    /** Observes the copy of [offset, position) and says why it stopped there. */
    private ReadStatus copiedLocked(final long offset, final long end, final long position) {
        final ReadStatus status = position < end ? ReadStatus.NOT_CACHED : endStatus(position);
        observeReadLocked(offset, position);
        return status;
    }

    /** Tells the cache manager a read used a cached entry (and, in a slower tier, counts towards its promotion). */
    /**
     * Reports a read of {@code [offset, end)} ({@code end == offset}: none returned) to the
     * manager's policy and to this segment's {@link ReaderMarks}, which eviction reads to spare
     * the bytes live readers have not read yet. Under the lock; allocates only with the first read.
     */
    void observeReadLocked(final long offset, final long end) {
        context.hooks.recordRead(name, offset, end);
        if (readerMarks == null) {
            readerMarks = new ReaderMarks();
        }
        readerMarks.observe(offset, end);
    }

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
        indexRoot = ReadIndexTree.removeBefore(indexRoot, offset, context);
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
        if (keepCacheEntries) {
            ReadIndexTree.clear(indexRoot);
            indexRoot = null;
        } else {
            // Removed one by one (each unlinked before it is retired, so it may be recycled):
            // forEach would walk links of entries already back in the pool.
            indexRoot = ReadIndexTree.removeBefore(indexRoot, Long.MAX_VALUE, context);
        }
        return takeWaiters(Long.MAX_VALUE);
    }

    // ------------------------------------------------------------------------------------------
    // Eviction (SegmentEviction)
    // ------------------------------------------------------------------------------------------

    /** The eviction scan of this segment: see {@link SegmentEviction#scan}. */
    long scanLocked(final EvictionScan scan, final long from) {
        return SegmentEviction.scan(this, scan, from);
    }

    /** Lists this segment for the manager's passes if it is not: see {@link SegmentEviction#list}. */
    void listLocked(final ReadIndexEntry cached) {
        SegmentEviction.list(this, cached);
    }

    /** See {@link SegmentEviction#oldestCachedGeneration}. */
    long oldestCachedGenerationLocked(final int current) {
        return SegmentEviction.oldestCachedGeneration(this, current);
    }

    /** {@link #oldestCachedGenerationLocked}: the segment holds no cached entry. */
    static final long NO_CACHED_ENTRY = Long.MAX_VALUE;

    /** Promotes a queued entry, taking the lock with {@code tryLock}: see {@link SegmentEviction#promote}. */
    @Override
    public long promote(final ReadIndexEntry entry, final long offset, final int targetTier, final long maxBlocks) {
        return SegmentEviction.promote(this, entry, offset, targetTier, maxBlocks);
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
            + ", sealed=" + sealed + ", deleted=" + deleted + ", entries=" + ReadIndexTree.count(indexRoot) + '}';
    }
}
