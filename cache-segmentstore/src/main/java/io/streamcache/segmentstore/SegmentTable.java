package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.StreamcacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Objects;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store's segments in memory: the table of live segments by name (and, with a log, by id), and
 * every operation applied to them at once (the {@link SegmentMutations} of a store without a
 * log, and what {@link DurableSegmentTable} applies once the log holds a change), the reads,
 * fills and bounds, and the walk the cache manager evicts through. The algorithms on one
 * segment are {@link Segment}'s; see {@link SegmentStore} for the design (append and read paths,
 * pinning, eviction).
 *
 * <p><b>Threading:</b> thread-safe. The table is a {@link SegmentMap} by name (and one by id):
 * a lookup is lock-free and allocates nothing, a create or a delete changes the map under the
 * map's own monitor (the control path only); every operation on a segment takes that segment's lock, and
 * operations on different segments have no lock in common. Waiters an operation takes out of a
 * segment's queue are completed after it released the lock ({@link WaitingReads}). The eviction
 * walk takes each segment's lock with {@code tryLock} (see {@link EvictionSource}).
 */
final class SegmentTable implements SegmentMutations {
    private final String storeName;
    private final ManagerHooks managerHooks;
    private final WaitingReads waiting;
    /** How readers and writers waited for each other (see {@link IsolationStats}). */
    final IsolationCounters isolation = new IsolationCounters();
    /** The cache, for appends that make room with no lock held. */
    private final BlockCache cache;
    /** The live segments by name. */
    final SegmentMap.ByName segments = new SegmentMap.ByName();
    /** With a log: the live segments by id, for the historical reader's fills. */
    final SegmentMap.ById segmentsById = new SegmentMap.ById();
    private final AtomicInteger nextSegmentId = new AtomicInteger(1);
    private final EvictionSource evictionSource = new StoreEvictionSource();
    /** The segments holding cached entries, oldest first, for the manager's passes. */
    private final SegmentsByGeneration byGeneration = new SegmentsByGeneration();
    /** What this table's segments share (one object for all of them). */
    private final SegmentContext context;
    /** The same for recovered segments: their appends are durable (the log's). */
    private final SegmentContext recoveredContext;
    private volatile boolean closed;

    SegmentTable(final String storeName, final BlockCache cache, final ManagerHooks managerHooks, final int maxIndexEntryLength,
                 final int fillTier, final boolean appendsDurable, final WaitingReads waiting) {
        this.storeName = storeName;
        this.cache = cache;
        this.managerHooks = managerHooks;
        this.waiting = waiting;
        this.context = new SegmentContext(cache, managerHooks, maxIndexEntryLength, appendsDurable, fillTier, byGeneration);
        this.recoveredContext = context.withAppendsDurable(true);
    }

    /**
     * @return what the cache manager walks to evict this table's entries (the store registers it).
     */
    EvictionSource evictionSource() {
        return evictionSource;
    }

    // ------------------------------------------------------------------------------------------
    // The table
    // ------------------------------------------------------------------------------------------

    /**
     * @return a new segment, not in the table yet, with the next id.
     */
    Segment newSegment(final String name) {
        return new Segment(nextSegmentId.getAndIncrement(), name, context);
    }

    /**
     * @return the live segment named {@code name}: a lock-free map lookup.
     * @throws SegmentNotFoundException if there is none.
     * @throws CacheClosedException     if the store is closed.
     */
    Segment segment(final String name) {
        Objects.requireNonNull(name, "name");
        ensureOpen();
        final Segment segment = segments.get(name);
        if (segment == null) {
            throw new SegmentNotFoundException(name, "does not exist");
        }
        return segment;
    }

    /** The segment object, or null (for tests). */
    Segment segmentOrNull(final String name) {
        return segments.get(name);
    }

    /** With a log: the segment whose records carry {@code id}, or null. */
    Segment segmentById(final int id) {
        return segmentsById.get(id);
    }

    /** With a log: forgets a segment's id once its DELETE is durable. */
    void forgetId(final int id) {
        segmentsById.remove(id);
    }

    boolean exists(final String name) {
        return segments.containsKey(name);
    }

    int count() {
        return segments.size();
    }

    /**
     * @return the names of the live segments now: a snapshot, sorted.
     */
    Set<String> names() {
        return Collections.unmodifiableSet(new TreeSet<>(segments.names()));
    }

    /**
     * Creates the recovered segments, their bytes NOT_CACHED gaps; new segments take ids above theirs.
     */
    void restore(final RecoveredLog recovered) {
        final List<RecoveredSegment> live = recovered.liveSegments();
        final Segment[] built = new Segment[live.size()];
        buildRestored(live, 0, built.length, built);
        putRestored(live, built, recovered.nextSegmentId());
    }

    /**
     * Builds the segments {@code [from, to)} of {@code live} into {@code built}, each with its
     * bounds, seal and NOT_CACHED gaps, without putting them in the table: each segment is its
     * own (its lock, read index and gap entries), so {@link LogOpening} builds chunks of them on
     * two threads and publishes them to the table's thread by a join.
     */
    @SuppressWarnings("ReturnValueIgnored") // hashCode() is called for its cached side effect
    void buildRestored(final List<RecoveredSegment> live, final int from, final int to, final Segment[] built) {
        for (int i = from; i < to; i++) {
            final RecoveredSegment state = live.get(i);
            final Segment segment = new Segment(state.id(), state.name(), recoveredContext);
            segment.lock();
            try {
                segment.restoreLocked(state.startOffset(), state.length(), state.sealed());
            } finally {
                segment.unlock();
            }
            // The map hashes the name next: computed here, on whichever thread built the segment.
            state.name().hashCode();
            built[i] = segment;
        }
    }

    /**
     * Puts the segments {@link #buildRestored} built into the table, in order, and sets the next id.
     *
     * @throws CacheConfigurationException if two have the same name (the first such pair in order).
     */
    void putRestored(final List<RecoveredSegment> live, final Segment[] built, final long nextId) {
        final int count = segments.size() + built.length;
        segments.ensureCapacity(count);
        segmentsById.ensureCapacity(count);
        for (int i = 0; i < built.length; i++) {
            if (segments.putIfAbsent(built[i]) != null) {
                throw new CacheConfigurationException("recovery restored two segments named " + live.get(i).name());
            }
            segmentsById.put(built[i]);
        }
        nextSegmentId.set((int) Math.min(Integer.MAX_VALUE, nextId));
    }

    // ------------------------------------------------------------------------------------------
    // Operations in memory
    // ------------------------------------------------------------------------------------------

    @Override
    public void create(final String name) {
        final Segment segment = newSegment(name);
        if (segments.putIfAbsent(segment) != null) {
            throw new SegmentExistsException(name);
        }
        undoIfClosed(segment);
    }

    @Override
    public CompletableFuture<Void> createAsync(final String name) {
        try {
            create(name);
            return CompletableFuture.completedFuture(null);
        } catch (final SegmentExistsException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A segment created while the store closed (the close may have missed it) is deleted again,
     * and the creation fails with a {@link CacheClosedException}.
     */
    void undoIfClosed(final Segment segment) {
        if (closed) {
            deleteSegment(segment, true);
            segments.remove(segment.name, segment);
            ensureOpen();
        }
    }

    /**
     * Appends under the segment's lock with only the blocks free now; when the cache has not
     * enough, releases the lock and makes room with nothing held ({@link BlockCache#makeRoom}:
     * an eviction pass, then a wait on the frees of other threads, such as
     * {@link #markDurable}'s writers making data evictable), and tries again, until the cache's
     * full-retry timeout has passed: then {@link CacheFullException}. Appends of other segments
     * are never held up meanwhile: this thread holds no lock while it waits.
     */
    @Override
    public long append(final String name, final long expectedOffset, final ByteBuf data) {
        return append(name, expectedOffset, data, cache.fullRetryTimeoutNanos());
    }

    private long append(final String name, final long expectedOffset, final ByteBuf data, final long waitNanos) {
        final Segment segment = segment(name);
        long deadline = 0L;
        long waitStart = 0L;
        while (true) {
            long offset;
            Waiter woken = null;
            segment.lock();
            try {
                checkLength(segment, expectedOffset, segment.length);
                offset = segment.appendLocked(data, false);
                if (offset != Segment.NO_ROOM) {
                    woken = segment.takeWaiters(segment.length);
                }
            } finally {
                segment.unlock();
            }
            if (offset != Segment.NO_ROOM) {
                if (waitStart != 0L) {
                    isolation.appendRoomWaited(System.nanoTime() - waitStart);
                }
                if (woken != null) {
                    waiting.complete(segment, woken);
                }
                return offset;
            }
            final long now = System.nanoTime();
            if (deadline == 0L) {
                deadline = now + waitNanos;
                waitStart = now;
            }
            final long left = deadline - now;
            final int room = cache.makeRoom(data.readableBytes(), Math.max(0L, left));
            if (room == BlockCache.ROOM_NONE || room == BlockCache.ROOM_LATER && System.nanoTime() - deadline >= 0) {
                isolation.appendRoomWaited(System.nanoTime() - waitStart);
                isolation.appendRoomRefused();
                throw new CacheFullException("cache " + cache.name() + " has no room for an append of length=" + data.readableBytes()
                    + " to segment=" + name + (room == BlockCache.ROOM_NONE ? ": the full handler freed nothing"
                    : " within fullRetryTimeout=" + java.time.Duration.ofNanos(waitNanos)) + " (its data is not durable yet, or pinned by reads)", 0);
            }
        }
    }

    /**
     * Never waits for memory: a cache without room for the append after one eviction pass (run
     * on this thread, no lock held) fails the future at once with {@link CacheFullException};
     * {@link #append} is the call that waits.
     */
    @Override
    public CompletableFuture<Long> appendAsync(final String name, final long expectedOffset, final ByteBuf data) {
        try {
            return CompletableFuture.completedFuture(append(name, expectedOffset, data, 0L));
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public long seal(final String name) {
        final Segment segment = segment(name);
        final Waiter woken;
        final long length;
        segment.lock();
        try {
            woken = segment.sealLocked();
            length = segment.length;
        } finally {
            segment.unlock();
        }
        if (woken != null) {
            waiting.complete(segment, woken);
        }
        return length;
    }

    @Override
    public void truncate(final String name, final long offset) {
        final Segment segment = segment(name);
        segment.lock();
        try {
            segment.truncateLocked(offset);
        } finally {
            segment.unlock();
        }
    }

    @Override
    public void delete(final String name) {
        ensureOpen();
        final Segment segment = segments.remove(name);
        if (segment == null) {
            throw new SegmentNotFoundException(name, "does not exist");
        }
        deleteSegment(segment, false);
    }

    /**
     * Marks a segment (out of the table, or about to leave it) deleted, retires its entries and
     * fails its waiting reads.
     */
    void deleteSegment(final Segment segment, final boolean storeClosed) {
        deleteSegment(segment, storeClosed, false);
    }

    private void deleteSegment(final Segment segment, final boolean storeClosed, final boolean keepCacheEntries) {
        final Waiter waiters;
        segment.lock();
        try {
            waiters = segment.deleteLocked(storeClosed, keepCacheEntries);
        } finally {
            segment.unlock();
        }
        if (waiters != null) {
            waiting.fail(segment, waiters, storeClosed);
        }
    }

    /**
     * Fills with the segment's lock held only to find and publish pieces ({@link SegmentFill#fillOutsideLock}).
     *
     * @throws CacheFullException if the cache has no room for a piece after one eviction pass.
     */
    long fill(final Segment segment, final long offset, final ByteBuf data) {
        return SegmentFill.fillOutsideLock(segment, offset, data, context.fillTier, true, false, isolation);
    }

    void markDurable(final String name, final long offset) {
        final Segment segment = segment(name);
        segment.lock();
        try {
            segment.markDurableLocked(offset);
        } finally {
            segment.unlock();
        }
    }

    SegmentInfo info(final String name) {
        final Segment segment = segment(name);
        segment.lock();
        try {
            return segment.infoLocked();
        } finally {
            segment.unlock();
        }
    }

    /** The copying read into a {@link ByteBuf} from its writer index (see {@link Segment#copyLocked(long, ByteBuf)}). */
    ReadStatus copy(final String name, final long offset, final ByteBuf destination) {
        final Segment segment = segment(name);
        segment.lock();
        try {
            return segment.copyLocked(offset, destination);
        } finally {
            segment.unlock();
        }
    }

    /** The copying read into a {@link ByteBuffer} from its position (see {@link Segment#copyLocked(long, ByteBuffer)}). */
    ReadStatus copy(final String name, final long offset, final ByteBuffer destination) {
        final Segment segment = segment(name);
        segment.lock();
        try {
            return segment.copyLocked(offset, destination);
        } finally {
            segment.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * @return true if this call closed the table (operations then throw {@link CacheClosedException}),
     *         false if it was closed already.
     */
    synchronized boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    boolean isClosed() {
        return closed;
    }

    void ensureOpen() {
        if (closed) {
            throw new CacheClosedException("segment store " + storeName + " is closed");
        }
    }

    /**
     * Stops eviction through this table, then deletes every segment (pinned entries are freed at
     * their last release), failing the waiting reads with a {@link CacheClosedException}.
     */
    void deleteAll() {
        deleteAll(false);
    }

    /**
     * As {@link #deleteAll()}; with {@code keepCacheEntries} (a close for a warm restart, after
     * the last checkpoint) the segments' cache entries stay in the cache for the next open.
     */
    void deleteAll(final boolean keepCacheEntries) {
        managerHooks.unregister(evictionSource);
        for (final Segment segment : segments.values()) {
            segments.remove(segment.name, segment);
            deleteSegment(segment, true, keepCacheEntries);
        }
    }

    /** Stops eviction through this table (a warm close's last checkpoint must see what stays). */
    void stopEviction() {
        managerHooks.unregister(evictionSource);
    }

    /** Undoes a store's construction that failed: no reads wait yet. */
    void abandon() {
        managerHooks.unregister(evictionSource);
        for (final Segment segment : segments.values()) {
            segment.lock();
            try {
                segment.deleteLocked(true);
            } finally {
                segment.unlock();
            }
        }
        segments.clear();
    }

    /** A conditional append's check, under the segment's lock. */
    static void checkLength(final Segment segment, final long expectedOffset, final long length) {
        if (expectedOffset != ANY_OFFSET && expectedOffset != length) {
            segment.checkLive();
            if (segment.sealed) {
                throw new SegmentSealedException(segment.name, length);
            }
            throw new SegmentLengthMismatchException(segment.name, expectedOffset, length);
        }
    }

    /**
     * The store as the cache manager sees it: walks the segments, taking each lock with
     * {@code tryLock} (never blocking: see {@link EvictionSource}).
     */
    private final class StoreEvictionSource implements EvictionSource {
        @Override
        public int scan(final EvictionScan scan) {
            int busy = 0;
            final Object[] slots = segments.slots();
            for (int i = 0; i < slots.length; i++) {
                final Segment segment = SegmentMap.segmentAt(slots, i);
                if (segment == null) {
                    continue;
                }
                if (scan.isDone()) {
                    break;
                }
                long from = 0;
                while (from >= 0 && !scan.isDone()) {
                    if (!segment.tryLock()) {
                        busy++;
                        break;
                    }
                    try {
                        from = segment.scanLocked(scan, from);
                    } finally {
                        segment.unlock();
                    }
                    if (from >= 0) {
                        // A reader or appender queued for the lock during a relocation: it goes
                        // first, and this pass leaves the segment (busy) instead of taking the
                        // lock back; a later pass resumes. Bounded work, no spin or yield (the
                        // scan may run on the log's completion thread, through makeRoom).
                        busy++;
                        break;
                    }
                }
            }
            return busy;
        }

        @Override
        public boolean walksOldestFirst() {
            return true;
        }

        @Override
        public int scanOldestFirst(final EvictionScan scan, final int current) {
            return byGeneration.scan(scan, current);
        }

        @Override
        public String toString() {
            return "StoreEvictionSource{store=" + storeName + '}';
        }
    }
}
