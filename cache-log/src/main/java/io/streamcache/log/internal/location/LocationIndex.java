package io.streamcache.log.internal.location;

import java.util.Objects;
import java.util.concurrent.locks.StampedLock;

/**
 * Where one segment's bytes are in the log, thread-safe: segment offset to (file number,
 * position of the DATA record) for every DATA record of the segment, with floor lookup. The
 * index itself is an off-heap row of the log's {@link LocationMemory} ({@link LocationRows}
 * draws it); this type is how the rest of the store reaches one.
 *
 * <p>There are two kinds, neither of which is kept per segment:
 * <ul>
 *   <li>a <em>view</em> of one segment id in a {@link LocationTable} ({@link LocationTable#get}):
 *       a 24-byte object made per lookup (a read-through miss, the compactor's pass, a queue's
 *       rebuild), holding the table and the id, not the row; each call finds the row under the
 *       table's lock of that id, so a view of a deleted segment finds nothing. Two views of one
 *       id of one table are {@link #equals equal}.</li>
 *   <li>a <em>standalone</em> index ({@link #create}, {@link #over}) holding its row and its own
 *       lock: tests, and recovery's results read before the table adopts them.</li>
 * </ul>
 *
 * <p><b>Threading:</b> one writer ({@link #add}, {@link #truncate}, {@link #relocate},
 * {@link #clear}, {@link #trimToSize}) at a time, any number of readers ({@link #locate},
 * {@link #forEach}, the bounds), which share the lock (a {@link StampedLock}'s read lock); the
 * writer has it alone. A visitor of {@link #forEach} runs under the read lock and must not call
 * any location index (the lock is not reentrant and may be shared with other segments').
 */
public abstract class LocationIndex {
    /** Records per block, at most. */
    public static final int BLOCK_RECORDS = LocationRows.BLOCK_RECORDS;
    /** Bits of a record's offset difference from its block's first offset. */
    public static final int DELTA_BITS = LocationRows.DELTA_BITS;
    /** Largest offset difference within a block. */
    public static final long MAX_DELTA = LocationRows.MAX_DELTA;
    /** Record positions are multiples of {@code 1 << POSITION_SHIFT}: 8. */
    public static final int POSITION_SHIFT = LocationRows.POSITION_SHIFT;
    /** Bits of a stored (shifted) position. */
    public static final int POSITION_BITS = LocationRows.POSITION_BITS;
    /** Largest record position that can be indexed: just under 32 GiB. */
    public static final long MAX_POSITION = LocationRows.MAX_POSITION;

    /**
     * Receives the live records of an index from {@link #forEach}.
     */
    @FunctionalInterface
    public interface RecordVisitor {
        void onRecord(long offset, int length, long fileNumber, long position);
    }

    LocationIndex() {
    }

    /**
     * @param startOffset the offset from which the log holds the segment's bytes.
     * @param memory      where the row and chunks are allocated and given back to.
     * @return a new standalone index with its own row and lock.
     * @throws IllegalArgumentException if {@code startOffset < 0}.
     * @throws IllegalStateException    if {@code memory} is closed.
     */
    public static LocationIndex create(final long startOffset, final LocationMemory memory) {
        Objects.requireNonNull(memory, "memory");
        return new Standalone(memory, LocationRows.allocate(memory, startOffset), false);
    }

    /**
     * @param memory the row's memory (may be null for row 0).
     * @return a standalone index over an existing row (0: a cleared one): nobody else may change
     *         the row while it is in use, and {@link #clear()} frees it. Two of one row of one
     *         memory are {@link #equals equal}.
     */
    public static LocationIndex over(final LocationMemory memory, final long row) {
        if (row != 0) {
            Objects.requireNonNull(memory, "memory");
        }
        return new Standalone(memory, row, true);
    }

    /** @return the lock that guards this index's row (its stripe for a view). */
    abstract StampedLock lock();

    /** @return the row's address, under {@link #lock()}; 0 if cleared. */
    abstract long row();

    /** @return the memory of the row. */
    public abstract LocationMemory memory();

    /** Forgets and frees the row, under {@link #lock()}'s write lock. */
    abstract void release();

    /** Forgets the row without freeing it (it was handed over), under {@link #lock()}'s write lock. */
    abstract void forget();

    /**
     * Indexes a DATA record: the next bytes of the segment, in log order.
     *
     * @param offset     segment offset of its payload byte 0: must be {@link #endOffset()}.
     * @param length     its payload length (0 is accepted and not indexed).
     * @param fileNumber the file holding it, at least 0.
     * @param position   its position in that file: a multiple of 8, at most {@link #MAX_POSITION}.
     * @throws IllegalArgumentException if an argument is out of range or the offset is not contiguous.
     * @throws IllegalStateException    if the index was {@link #clear() cleared}.
     */
    public final void add(final long offset, final int length, final long fileNumber, final long position) {
        final StampedLock lock = lock();
        final long stamp = lock.writeLock();
        try {
            LocationRows.add(memory(), row(), offset, length, fileNumber, position);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Moves one record to a new place (a compaction copy): see {@link LocationRows#relocate}.
     *
     * @return whether the record was found and moved.
     * @throws IllegalArgumentException if {@code fileNumber} or {@code position} is out of range.
     */
    public final boolean relocate(final long offset, final int length, final long fileNumber, final long position) {
        final StampedLock lock = lock();
        final long stamp = lock.writeLock();
        try {
            return LocationRows.relocate(memory(), row(), offset, length, fileNumber, position);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Moves the start offset forward to {@code offset} and drops the records wholly before it.
     * A no-op if {@code offset} is at or before the start offset, or the index was cleared.
     *
     * @throws IllegalArgumentException if {@code offset} is past {@link #endOffset()}.
     */
    public final void truncate(final long offset) {
        final StampedLock lock = lock();
        final long stamp = lock.writeLock();
        try {
            LocationRows.truncate(memory(), row(), offset);
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Drops everything: the row, spine and chunks go back to the memory (a view's segment leaves
     * its table). Later lookups find nothing; {@link #add} throws. Idempotent.
     */
    public final void clear() {
        final StampedLock lock = lock();
        final long stamp = lock.writeLock();
        try {
            release();
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /** @return whether the index was cleared (a view: its segment holds no row in the table). */
    public final boolean isCleared() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return row() == 0;
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /**
     * @return the first offset whose location is known: the segment's start offset, or the
     *         offset from which the log holds its bytes if later; 0 once cleared.
     */
    public final long startOffset() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.startOffset(row());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /** @return the end of the indexed bytes: the end of the last DATA record indexed; 0 once cleared. */
    public final long endOffset() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.endOffset(row());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /** @return records indexed and not dropped. */
    public final int count() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.count(row());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /**
     * Copies out the locations of the records holding {@code [from, to)} clipped to
     * {@code [startOffset(), endOffset())}; the list's {@code from()} and {@code to()} say the
     * clipped range (empty if nothing of it is held).
     *
     * @return false (and an empty list from {@code from}) if the index was cleared.
     */
    public final boolean locate(final long from, final long to, final LocationList out) {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.locate(row(), from, to, out);
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /**
     * Reports every record not dropped, in offset order, under the read lock (the visitor must
     * not call a location index).
     */
    public final void forEach(final RecordVisitor visitor) {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            LocationRows.forEach(row(), visitor);
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /** @return off-heap bytes of the index: its row, spine and chunks; 0 once cleared. No heap per index. */
    public final long footprint() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.footprint(row());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /** Gives back the chunks past what the index holds and shrinks the spine to fit. */
    public final void trimToSize() {
        final StampedLock lock = lock();
        final long stamp = lock.writeLock();
        try {
            LocationRows.trimToSize(memory(), row());
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    @Override
    public final String toString() {
        final StampedLock lock = lock();
        final long stamp = lock.readLock();
        try {
            return LocationRows.describe(row());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    /** An index holding its own row and lock. */
    private static final class Standalone extends LocationIndex {
        private final LocationMemory memory;
        private final StampedLock lock = new StampedLock();
        /** The row it was made over ({@link #over}), its identity; 0: identity by object ({@link #create}). */
        private final long key;
        /** Guarded by {@link #lock}. */
        private long row;

        Standalone(final LocationMemory memory, final long row, final boolean byRow) {
            this.memory = memory;
            this.row = row;
            this.key = byRow ? row : 0;
        }

        @Override
        public boolean equals(final Object o) {
            if (o == this) {
                return true;
            }
            return key != 0 && o instanceof Standalone other && other.key == key && other.memory == memory;
        }

        @Override
        public int hashCode() {
            return key != 0 ? Long.hashCode(key) : System.identityHashCode(this);
        }

        @Override
        StampedLock lock() {
            return lock;
        }

        @Override
        long row() {
            return row;
        }

        @Override
        public LocationMemory memory() {
            return memory;
        }

        @Override
        void release() {
            final long r = row;
            row = 0;
            LocationRows.free(memory, r);
        }

        @Override
        void forget() {
            row = 0;
        }
    }
}
