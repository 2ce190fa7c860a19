package io.streamcache.log.internal.location;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import org.agrona.UnsafeAccess;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.StampedLock;

/**
 * The location indexes of a store's live segments by segment id, with no object per segment:
 * each index is its off-heap row ({@link LocationRows}) in the table's {@link LocationRowArena},
 * and the table holds the rows' numbers in pages of {@link #PAGE_IDS} {@code int}s.
 *
 * <h2>Table by id</h2>
 * Segment ids are small ints handed out in increasing order by the store and never reused, so
 * a directory (one reference per page) grows by copying, a page is made when its first id is
 * put and dropped when its last one is removed (ids only grow, so the pages of old ids empty out).
 * <pre>
 *  directory (volatile, grows by doubling)     page p (int[1024]: row numbers, 0 = none)
 *  +--------+--------+--------+-----           +---------+----------+-----+-----+
 *  | page 0 | null   | page 2 | ...   --------&gt;| row(id) | row(id+1)| ... |  0  |  id = p * 1024 + slot
 *  +--------+--------+--------+-----           +---------+----------+-----+-----+
 *                                                   |  LocationRowArena: blocks of 1,024 rows
 *  stripes: StampedLock[256], id &amp; 255              v  off-heap row (64 B) -&gt; spine -&gt; chunks
 * </pre>
 * Heap per live segment: 4 bytes in its page (at most 4 KB per page of 1,024 ids while any of
 * them lives). Off-heap: the row (in a 64 KiB block of rows), spine and chunks in the table's
 * {@link LocationMemory} (metadata of the log, outside the cache's memory bound).
 *
 * <h2>Threading</h2>
 * Thread-safe. One writer per segment at a time (recovery hands over, then the log writer's
 * thread follows the records, in log order) and any number of readers (historical reads, the
 * compactor, a queue's rebuild). Every access to a row holds the {@link StampedLock} of its id's
 * <em>stripe</em> ({@code id & (STRIPES - 1)}, {@link #STRIPES} locks for the whole table):
 * readers the read lock, which they share with every other reader, so readers never wait for
 * each other, of one segment or of different ones; the writer's changes to a row ({@link #add},
 * {@link #truncate}, {@link #relocate}) and the changes of the table ({@link #create},
 * {@link #remove}, {@link #adopt}) the write lock. A reader thus waits only for a change of a
 * row of its stripe (one record's add: tens of nanoseconds) and the writer only for the readers
 * of its stripe.
 *
 * <p><b>Why no reader sees a freed row or chunk:</b> a reader finds the row's address in the
 * page while holding its stripe's read lock and uses it before letting go ({@link #get} and
 * {@link #contains} read the slot without the lock but never touch the row). A row leaves the
 * table ({@link #remove}, a replacing {@link #create}, {@link #close}) under the write lock of
 * the same stripe: its slot is set to 0 and only then the row and its chunks are freed, still
 * under that lock; a chunk a truncation gives back likewise. So while a reader holds the read
 * lock, the row it found stays allocated and unchanged, and after the write lock is released
 * every reader finds the slot at 0 (the lock orders the slot's write before its read). The
 * directory and pages are heap arrays: published with release writes and read with acquire
 * reads without a lock, and a page dropped while a reader holds it is garbage collected, not
 * freed. A cleared index (slot 0) touches no memory. A freed row's number may be handed to
 * another segment at once: a reader that found the old number under the read lock is done
 * with it before the write lock that freed it was granted.
 *
 * <p>Lock order: a stripe, then the table's structure monitor (the directory and the live
 * counts per page), then the memory's monitor. {@link #close()} takes them in that order too.
 *
 * <p><b>Lifetime:</b> {@link #close()} (after the writer stopped) frees every row; lookups then
 * find nothing. The memory is the caller's to close after that.
 */
public final class LocationTable implements AutoCloseable {
    /** Ids per page of the table. */
    public static final int PAGE_IDS = 1 << 10;
    /** Locks of the table: a segment's is {@code stripes[id & (STRIPES - 1)]}. */
    public static final int STRIPES = 1 << 8;
    private static final int PAGE_SHIFT = 10;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle PAGES = MethodHandles.arrayElementVarHandle(int[][].class);

    private final LocationMemory memory;
    private final LocationRowArena arena;
    private final StampedLock[] stripes = new StampedLock[STRIPES];
    /** The directory of pages; its elements read with acquire, written with release. */
    private volatile int[][] pages = new int[0][];
    /** Live rows per page. */
    @GuardedBy("structure")
    private int[] livePerPage = new int[0];
    private final Object structure = new Object();
    @GuardedBy("structure")
    private boolean closed;

    /**
     * @param memory where the rows are allocated (and rows adopted from another memory copied to).
     */
    public LocationTable(final LocationMemory memory) {
        this.memory = Objects.requireNonNull(memory, "memory");
        this.arena = new LocationRowArena(memory);
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new StampedLock();
        }
    }

    /** @return the memory of the rows. */
    public LocationMemory memory() {
        return memory;
    }

    StampedLock stripe(final int segmentId) {
        return stripes[segmentId & (STRIPES - 1)];
    }

    /**
     * @return the row of a segment id, 0 if none: the caller holds its stripe to use the row
     *         (without it, only whether there is one may be asked).
     */
    long rowOf(final int segmentId) {
        final int number = numberOf(segmentId);
        return number == 0 ? 0 : arena.address(number);
    }

    /** @return the row number of a segment id, 0 if none. */
    private int numberOf(final int segmentId) {
        if (segmentId < 0) {
            return 0;
        }
        final int[][] directory = pages;
        final int p = segmentId >>> PAGE_SHIFT;
        if (p >= directory.length) {
            return 0;
        }
        final int[] page = (int[]) PAGES.getAcquire(directory, p);
        return page == null ? 0 : (int) SLOTS.getAcquire(page, segmentId & (PAGE_IDS - 1));
    }

    /**
     * @return a view of the segment's index, or null if the table holds none for it now. Takes
     *         no lock: it reads the slot (an acquire read of a heap array) but not the row; the
     *         view finds the row anew under the stripe's lock on every call, so a remove that
     *         races this lookup leaves a view that finds nothing.
     */
    public LocationIndex get(final int segmentId) {
        return numberOf(segmentId) == 0 ? null : new View(segmentId);
    }

    /** @return whether the table holds an index of the segment now (no lock, as {@link #get}). */
    public boolean contains(final int segmentId) {
        return numberOf(segmentId) != 0;
    }

    /**
     * Puts an empty index for a segment (its CREATE), replacing (and freeing) one it held.
     *
     * @throws IllegalArgumentException if {@code segmentId < 0} or {@code startOffset < 0}.
     */
    public void create(final int segmentId, final long startOffset) {
        checkId(segmentId);
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset=" + startOffset + " must be >= 0");
        }
        if (isClosed()) {
            return;
        }
        put(segmentId, arena.allocate(startOffset));
    }

    private boolean isClosed() {
        synchronized (structure) {
            return closed;
        }
    }

    /**
     * Takes over a row recovery built, replacing (and freeing) one held for the segment. A row
     * of another memory (a recovery hook that scanned on its own) is copied into this table's
     * memory and freed there.
     *
     * @param row   the row: the caller gives it up (0: nothing is put).
     * @param owner the memory it was allocated in.
     */
    public void adopt(final int segmentId, final long row, final LocationMemory owner) {
        checkId(segmentId);
        if (row == 0) {
            return;
        }
        final long own = owner == memory ? row : copy(row, owner);
        if (isClosed()) {
            LocationRows.free(memory, own);
            return;
        }
        // The row's 64 bytes move into a numbered row of the arena; its spine and chunks stay.
        final int number = arena.allocate(0);
        UnsafeAccess.UNSAFE.copyMemory(own, arena.address(number), 1L << LocationRows.ROW_LOG);
        memory.free(own, LocationRows.ROW_LOG);
        put(segmentId, number);
    }

    /**
     * Takes over the row of a standalone index ({@link LocationIndex#create}, {@link LocationIndex#over}),
     * which is cleared (it no longer holds the row). A view of this table is ignored.
     */
    public void adopt(final int segmentId, final LocationIndex index) {
        checkId(segmentId);
        if (index instanceof View) {
            return;
        }
        final StampedLock lock = index.lock();
        final long stamp = lock.writeLock();
        final long row;
        try {
            row = index.row();
            index.forget();
        } finally {
            lock.unlockWrite(stamp);
        }
        adopt(segmentId, row, index.memory());
    }

    private long copy(final long row, final LocationMemory owner) {
        final long start = LocationRows.startOffset(row);
        final long[] first = {-1};
        LocationRows.forEach(row, (offset, length, fileNumber, position) -> {
            if (first[0] < 0) {
                first[0] = offset;
            }
        });
        final long copy = LocationRows.allocate(memory, first[0] < 0 ? LocationRows.endOffset(row) : first[0]);
        try {
            LocationRows.forEach(row, (offset, length, fileNumber, position) ->
                LocationRows.add(memory, copy, offset, length, fileNumber, position));
            LocationRows.truncate(memory, copy, start);
        } catch (final RuntimeException | Error e) {
            LocationRows.free(memory, copy);
            throw e;
        }
        LocationRows.free(owner, row);
        return copy;
    }

    private void put(final int segmentId, final int number) {
        final StampedLock lock = stripe(segmentId);
        final long stamp = lock.writeLock();
        try {
            final int freed;
            synchronized (structure) {
                if (closed) {
                    freed = number;
                } else {
                    final int p = segmentId >>> PAGE_SHIFT;
                    int[][] directory = pages;
                    if (p >= directory.length) {
                        final int length = Math.max(p + 1, 2 * directory.length);
                        final int[][] grown = new int[length][];
                        for (int i = 0; i < directory.length; i++) {
                            grown[i] = (int[]) PAGES.getAcquire(directory, i);
                        }
                        livePerPage = Arrays.copyOf(livePerPage, length);
                        pages = grown;
                        directory = grown;
                    }
                    int[] page = (int[]) PAGES.getAcquire(directory, p);
                    if (page == null) {
                        page = new int[PAGE_IDS];
                        PAGES.setRelease(directory, p, page);
                    }
                    final int slot = segmentId & (PAGE_IDS - 1);
                    final int old = (int) SLOTS.getAcquire(page, slot);
                    SLOTS.setRelease(page, slot, number);
                    if (old == 0) {
                        livePerPage[p]++;
                    }
                    freed = old != number ? old : 0;
                }
            }
            arena.free(freed);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Indexes a DATA record of a segment (nothing if the table holds no index of it).
     *
     * @return whether the segment has an index.
     * @throws IllegalArgumentException as {@link LocationIndex#add}.
     */
    public boolean add(final int segmentId, final long offset, final int length, final long fileNumber, final long position) {
        final StampedLock lock = stripe(segmentId);
        final long stamp = lock.writeLock();
        try {
            final long row = rowOf(segmentId);
            if (row != 0) {
                LocationRows.add(memory, row, offset, length, fileNumber, position);
            }
            return row != 0;
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Truncates a segment's index (nothing if none): see {@link LocationIndex#truncate}. */
    public void truncate(final int segmentId, final long offset) {
        final StampedLock lock = stripe(segmentId);
        final long stamp = lock.writeLock();
        try {
            LocationRows.truncate(memory, rowOf(segmentId), offset);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Moves a record of a segment's index (false if none): see {@link LocationIndex#relocate}. */
    public boolean relocate(final int segmentId, final long offset, final int length, final long fileNumber, final long position) {
        final StampedLock lock = stripe(segmentId);
        final long stamp = lock.writeLock();
        try {
            return LocationRows.relocate(memory, rowOf(segmentId), offset, length, fileNumber, position);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Removes and frees a segment's index (nothing if none). */
    public void remove(final int segmentId) {
        if (segmentId < 0) {
            return;
        }
        final StampedLock lock = stripe(segmentId);
        final long stamp = lock.writeLock();
        try {
            removeLocked(segmentId);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** Under the segment's stripe write lock: the slot to 0, then the row freed. */
    private void removeLocked(final int segmentId) {
        final int old;
        synchronized (structure) {
            final int[][] directory = pages;
            final int p = segmentId >>> PAGE_SHIFT;
            if (p >= directory.length) {
                return;
            }
            final int[] page = (int[]) PAGES.getAcquire(directory, p);
            if (page == null) {
                return;
            }
            final int slot = segmentId & (PAGE_IDS - 1);
            old = (int) SLOTS.getAcquire(page, slot);
            if (old == 0) {
                return;
            }
            SLOTS.setRelease(page, slot, 0);
            if (--livePerPage[p] == 0) {
                PAGES.setRelease(directory, p, null);
            }
        }
        arena.free(old);
    }

    /** @return pages of the table held now (tests). */
    public int pageCount() {
        final int[][] directory = pages;
        int count = 0;
        for (int i = 0; i < directory.length; i++) {
            if (PAGES.getAcquire(directory, i) != null) {
                count++;
            }
        }
        return count;
    }

    /** @return the heap bytes of the pages held now, headers included (a page: 16 + 4 * {@link #PAGE_IDS}). */
    public long pageHeapBytes() {
        return (long) pageCount() * (16 + 4L * PAGE_IDS);
    }

    /** @return off-heap bytes of the arena's blocks of rows (tests: the memory's used bytes are these plus the rows' spines and chunks). */
    public long rowBlockBytes() {
        return arena.blockBytes();
    }

    /**
     * Frees every row and gives the arena's blocks back to the memory: after the writer stopped.
     * Creates and adoptions after it do nothing (an adopted row is freed). Idempotent.
     */
    @Override
    public void close() {
        final int[][] directory;
        synchronized (structure) {
            if (closed) {
                return;
            }
            closed = true;
            directory = pages;
        }
        for (int p = 0; p < directory.length; p++) {
            for (int slot = 0; slot < PAGE_IDS; slot++) {
                final int[] page = (int[]) PAGES.getAcquire(directory, p);
                if (page == null) {
                    break;
                }
                if ((int) SLOTS.getAcquire(page, slot) != 0) {
                    remove(p * PAGE_IDS + slot);
                }
            }
        }
        synchronized (structure) {
            pages = new int[0][];
            livePerPage = new int[0];
            // No slot holds a number any more and none will be put: no reader can reach a row.
            arena.release();
        }
    }

    private static void checkId(final int segmentId) {
        if (segmentId < 0) {
            throw new IllegalArgumentException("segmentId=" + segmentId + " must be >= 0");
        }
    }

    /** A view of one id of the table: finds the row under the stripe's lock on every call. */
    private final class View extends LocationIndex {
        private final int segmentId;

        View(final int segmentId) {
            this.segmentId = segmentId;
        }

        @Override
        StampedLock lock() {
            return stripe(segmentId);
        }

        @Override
        long row() {
            return rowOf(segmentId);
        }

        @Override
        public LocationMemory memory() {
            return memory;
        }

        @Override
        void release() {
            removeLocked(segmentId);
        }

        @Override
        void forget() {
            throw new UnsupportedOperationException("a view does not own its row");
        }

        private LocationTable table() {
            return LocationTable.this;
        }

        @Override
        public boolean equals(final Object o) {
            return o instanceof View other && other.table() == LocationTable.this && other.segmentId == segmentId;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(LocationTable.this) * 31 + segmentId;
        }
    }
}
