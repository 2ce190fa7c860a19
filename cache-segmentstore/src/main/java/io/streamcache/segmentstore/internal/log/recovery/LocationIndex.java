package io.streamcache.segmentstore.internal.log.recovery;

import java.util.Arrays;

/**
 * Where one segment's bytes are in the log, thread-safe (every public method synchronizes on
 * the index): segment offset to (file number, position of the DATA record) for every DATA
 * record of the segment, with floor lookup. It has one writer (recovery, then the log writer,
 * appending in log order) and any number of readers (historical reads); they hold the monitor
 * for a binary search or for copying out the locations of one range.
 *
 * <h2>Layout</h2>
 * One entry per DATA record, packed in primitive arrays (no object per record): records are
 * grouped in <em>blocks</em> of at most {@link #BLOCK_RECORDS} records that lie in one file and
 * whose offsets lie within 4 GiB of the block's first; a block holds the full values, a record
 * 32-bit differences.
 * <pre>
 *  per record i (8 bytes):
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +---------------------------------------------------------------+
 *  | deltas[i]:    offset(i) - blockOffsets[b], unsigned 32 bits   |
 *  +---------------------------------------------------------------+
 *  | positions[i]: position(i) &gt;&gt;&gt; POSITION_SHIFT, unsigned 32   |
 *  +---------------------------------------------------------------+
 *  per block b (20 bytes, one per up to 64 records):
 *   blockOffsets[b] (u64): offset of its first record
 *   blockFiles[b]   (u64): the file number of all its records
 *   blockFirst[b]   (u32): the index of its first record
 * </pre>
 * A record's length is not stored: a segment's DATA records are contiguous, so record i ends
 * where record i+1 starts, and the last one at {@link #endOffset()}. Records are 8-byte
 * aligned, so a position shifted right by {@link #POSITION_SHIFT} fits 32 bits for files up to
 * {@link #MAX_POSITION} (32 GiB). Zero-length DATA records are not indexed (they hold no byte).
 *
 * <p><b>Footprint:</b> 8 bytes per record plus 20 per block, 8.31 bytes per record with full
 * blocks, at tight capacity ({@link #trimToSize()}, which recovery calls); arrays grow by half,
 * so up to 12.5 bytes per record right after a growth. {@link #footprint()} computes it.
 *
 * <p><b>Truncation</b> ({@link #truncate}) moves the start offset and drops the records wholly
 * before it (the one containing it stays); the arrays are compacted once the dropped prefix is
 * at least half of them, so a segment truncated as it grows keeps a bounded index.
 */
public final class LocationIndex {
    /** Records per block, at most. */
    public static final int BLOCK_RECORDS = 64;
    /** Bits of a record's offset difference from its block's first offset. */
    public static final int DELTA_BITS = 32;
    /** Largest offset difference within a block. */
    public static final long MAX_DELTA = (1L << DELTA_BITS) - 1;
    /** Record positions are multiples of {@code 1 << POSITION_SHIFT}: 8. */
    public static final int POSITION_SHIFT = 3;
    /** Bits of a stored (shifted) position. */
    public static final int POSITION_BITS = 32;
    /** Largest record position that can be indexed: just under 32 GiB. */
    public static final long MAX_POSITION = ((1L << POSITION_BITS) - 1) << POSITION_SHIFT;
    private static final long DELTA_MASK = MAX_DELTA;
    private static final long POSITION_MASK = (1L << POSITION_BITS) - 1;
    /**
     * First capacity of the record and block arrays (then half again each time). Small: a store
     * of many short segments (a message queue per segment, 250,000 of them, most with one to a
     * few records, each in another file, so one block per record) would otherwise hold 8 slots
     * of each of the five arrays per segment, about 300 bytes, for one record.
     */
    private static final int INITIAL_RECORDS = 2;
    private static final int INITIAL_BLOCKS = 2;
    /** Approximate bytes of the object and its six array headers. */
    private static final int FIXED_FOOTPRINT = 64 + 5 * 16;

    private static final int[] NO_INTS = new int[0];
    private static final long[] NO_LONGS = new long[0];

    // Empty until the first record: recovery builds one index per segment, 250,000 at a time,
    // and many get no record (segments seen in a SNAPSHOT with nothing appended after it).
    private int[] deltas = NO_INTS;
    private int[] positions = NO_INTS;
    private long[] blockOffsets = NO_LONGS;
    private long[] blockFiles = NO_LONGS;
    private int[] blockFirst = NO_INTS;
    /** Records stored, dropped ones included. */
    private int count;
    /** First record not dropped by truncation. */
    private int head;
    private int blockCount;
    private long startOffset;
    private long endOffset;
    private boolean cleared;

    /**
     * @param startOffset the offset from which the log holds the segment's bytes: 0 for a segment
     *                    created in the log, its logged length for one first seen in a SNAPSHOT.
     */
    public LocationIndex(final long startOffset) {
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset=" + startOffset + " must be >= 0");
        }
        this.startOffset = startOffset;
        this.endOffset = startOffset;
    }

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
    public synchronized void add(final long offset, final int length, final long fileNumber, final long position) {
        addOwned(offset, length, fileNumber, position);
    }

    /**
     * {@link #add} without the monitor: for the one thread that owns an index not yet published
     * (recovery building it).
     */
    void addOwned(final long offset, final int length, final long fileNumber, final long position) {
        if (cleared) {
            throw new IllegalStateException("location index was cleared (segment deleted)");
        }
        if (offset != endOffset) {
            throw new IllegalArgumentException("offset=" + offset + " is not endOffset=" + endOffset);
        }
        if (length < 0 || fileNumber < 0 || position < 0 || position > MAX_POSITION
            || (position & ((1L << POSITION_SHIFT) - 1)) != 0) {
            throw new IllegalArgumentException("length=" + length + " fileNumber=" + fileNumber + " position=" + position
                + ": need length >= 0, fileNumber >= 0, position a multiple of 8 in [0, " + MAX_POSITION + "]");
        }
        if (length == 0) {
            return;
        }
        final int last = blockCount - 1;
        if (last < 0 || count - blockFirst[last] >= BLOCK_RECORDS || blockFiles[last] != fileNumber
            || offset - blockOffsets[last] > MAX_DELTA) {
            if (blockCount == blockOffsets.length) {
                final int capacity = grown(blockCount);
                blockOffsets = Arrays.copyOf(blockOffsets, capacity);
                blockFiles = Arrays.copyOf(blockFiles, capacity);
                blockFirst = Arrays.copyOf(blockFirst, capacity);
            }
            blockOffsets[blockCount] = offset;
            blockFiles[blockCount] = fileNumber;
            blockFirst[blockCount] = count;
            blockCount++;
        }
        if (count == deltas.length) {
            final int capacity = grown(count);
            deltas = Arrays.copyOf(deltas, capacity);
            positions = Arrays.copyOf(positions, capacity);
        }
        deltas[count] = (int) (offset - blockOffsets[blockCount - 1]);
        positions[count] = (int) (position >>> POSITION_SHIFT);
        count++;
        endOffset = offset + length;
    }

    /**
     * Moves one record to a new place: compaction copied it ({@code LogRecordDescriptor.FLAG_COPY})
     * and its old file is about to be retired. The record is found by its offset and length; a
     * record that is not held (dropped by truncation, never indexed, or of another length) is
     * left alone. The record's block is split around it (it joins the block before when that one
     * is in the new file and within reach, so a run of records copied in order stays one block).
     *
     * @param offset     segment offset of the record's payload byte 0.
     * @param length     its payload length.
     * @param fileNumber the file holding the copy.
     * @param position   the copy's position there: a multiple of 8, at most {@link #MAX_POSITION}.
     * @return whether the record was found and moved.
     * @throws IllegalArgumentException if {@code fileNumber} or {@code position} is out of range.
     */
    public synchronized boolean relocate(final long offset, final int length, final long fileNumber, final long position) {
        return relocateOwned(offset, length, fileNumber, position);
    }

    boolean relocateOwned(final long offset, final int length, final long fileNumber, final long position) {
        if (fileNumber < 0 || position < 0 || position > MAX_POSITION || (position & ((1L << POSITION_SHIFT) - 1)) != 0) {
            throw new IllegalArgumentException("fileNumber=" + fileNumber + " position=" + position
                + ": need fileNumber >= 0, position a multiple of 8 in [0, " + MAX_POSITION + "]");
        }
        if (cleared || head >= count || offset < 0 || offset >= endOffset) {
            return false;
        }
        final int headBlock = blockOf(head);
        if (offset < blockOffsets[headBlock] + (deltas[head] & DELTA_MASK)) {
            return false;
        }
        final int i = floorIndex(offset);
        final int b = blockOf(i);
        final long base = blockOffsets[b];
        if (i < head || base + (deltas[i] & DELTA_MASK) != offset || endOf(i, b) - offset != length) {
            return false;
        }
        final int stored = (int) (position >>> POSITION_SHIFT);
        final long oldFile = blockFiles[b];
        if (oldFile == fileNumber) {
            positions[i] = stored;
            return true;
        }
        final int first = blockFirst[b];
        final int last = (b + 1 < blockCount ? blockFirst[b + 1] : count) - 1;
        final long nextBase = i < last ? base + (deltas[i + 1] & DELTA_MASK) : -1;
        positions[i] = stored;
        if (i == first && b > 0 && blockFiles[b - 1] == fileNumber && offset - blockOffsets[b - 1] <= MAX_DELTA) {
            // Joins the block before it.
            deltas[i] = (int) (offset - blockOffsets[b - 1]);
            if (i == last) {
                removeBlock(b);
            } else {
                rebase(i + 1, last, base, nextBase);
                blockOffsets[b] = nextBase;
                blockFirst[b] = i + 1;
            }
            return true;
        }
        int at = b;
        if (i > first) {
            // Block b keeps [first, i); the record gets a block of its own after it.
            at = b + 1;
            insertBlock(at, offset, fileNumber, i);
            deltas[i] = 0;
        } else {
            blockFiles[b] = fileNumber;
        }
        if (i < last) {
            insertBlock(at + 1, nextBase, oldFile, i + 1);
            rebase(i + 1, last, base, nextBase);
        }
        return true;
    }

    private void rebase(final int from, final int to, final long oldBase, final long newBase) {
        final long shift = newBase - oldBase;
        for (int k = from; k <= to; k++) {
            deltas[k] = (int) ((deltas[k] & DELTA_MASK) - shift);
        }
    }

    private void insertBlock(final int at, final long offset, final long fileNumber, final int first) {
        if (blockCount == blockOffsets.length) {
            final int capacity = grown(blockCount);
            blockOffsets = Arrays.copyOf(blockOffsets, capacity);
            blockFiles = Arrays.copyOf(blockFiles, capacity);
            blockFirst = Arrays.copyOf(blockFirst, capacity);
        }
        final int moved = blockCount - at;
        System.arraycopy(blockOffsets, at, blockOffsets, at + 1, moved);
        System.arraycopy(blockFiles, at, blockFiles, at + 1, moved);
        System.arraycopy(blockFirst, at, blockFirst, at + 1, moved);
        blockOffsets[at] = offset;
        blockFiles[at] = fileNumber;
        blockFirst[at] = first;
        blockCount++;
    }

    private void removeBlock(final int at) {
        final int moved = blockCount - at - 1;
        System.arraycopy(blockOffsets, at + 1, blockOffsets, at, moved);
        System.arraycopy(blockFiles, at + 1, blockFiles, at, moved);
        System.arraycopy(blockFirst, at + 1, blockFirst, at, moved);
        blockCount--;
    }

    /**
     * Moves the start offset forward to {@code offset} and drops the records wholly before it.
     * A no-op if {@code offset} is at or before the start offset.
     *
     * @throws IllegalArgumentException if {@code offset} is past {@link #endOffset()}.
     */
    public synchronized void truncate(final long offset) {
        truncateOwned(offset);
    }

    void truncateOwned(final long offset) {
        if (offset <= startOffset || cleared) {
            return;
        }
        if (offset > endOffset) {
            throw new IllegalArgumentException("offset=" + offset + " is past endOffset=" + endOffset);
        }
        startOffset = offset;
        head = offset == endOffset ? count : floorIndex(offset);
        if (head >= BLOCK_RECORDS && head >= count - head) {
            compact();
        }
    }

    /**
     * Drops everything: the segment was deleted. Later lookups find nothing; {@link #add} throws.
     */
    public synchronized void clear() {
        cleared = true;
        deltas = new int[0];
        positions = new int[0];
        blockOffsets = new long[0];
        blockFiles = new long[0];
        blockFirst = new int[0];
        count = 0;
        head = 0;
        blockCount = 0;
    }

    /**
     * @return whether {@link #clear()} was called.
     */
    public synchronized boolean isCleared() {
        return cleared;
    }

    /**
     * @return the first offset whose location is known: the segment's start offset, or the
     *         offset from which the log holds its bytes if later.
     */
    public synchronized long startOffset() {
        return startOffset;
    }

    /**
     * @return the end of the indexed bytes: the end of the last DATA record indexed.
     */
    public synchronized long endOffset() {
        return endOffset;
    }

    /**
     * @return records indexed and not dropped.
     */
    public synchronized int count() {
        return count - head;
    }

    /**
     * Copies out the locations of the records holding {@code [from, to)} clipped to
     * {@code [startOffset(), endOffset())}; the list's {@code from()} and {@code to()} say the
     * clipped range (empty if nothing of it is held).
     *
     * @return false (and an empty list) if the index was cleared.
     */
    public synchronized boolean locate(final long from, final long to, final LocationList out) {
        final long clippedFrom = Math.max(from, startOffset);
        final long clippedTo = Math.min(to, endOffset);
        out.reset(clippedFrom, Math.max(clippedFrom, clippedTo));
        if (cleared) {
            return false;
        }
        if (clippedFrom >= clippedTo) {
            return true;
        }
        int i = floorIndex(clippedFrom);
        int block = blockOf(i);
        while (i < count) {
            if (block + 1 < blockCount && blockFirst[block + 1] <= i) {
                block++;
            }
            final long offset = blockOffsets[block] + (deltas[i] & DELTA_MASK);
            if (offset >= clippedTo) {
                break;
            }
            out.add(offset, (int) (endOf(i, block) - offset), blockFiles[block], (positions[i] & POSITION_MASK) << POSITION_SHIFT);
            i++;
        }
        return true;
    }

    /**
     * Receives the live records of an index from {@link #forEach}.
     */
    @FunctionalInterface
    public interface RecordVisitor {
        void onRecord(long offset, int length, long fileNumber, long position);
    }

    /**
     * Reports every record not dropped, in offset order, under the monitor.
     */
    public synchronized void forEach(final RecordVisitor visitor) {
        int block = head < count ? blockOf(head) : 0;
        for (int i = head; i < count; i++) {
            if (block + 1 < blockCount && blockFirst[block + 1] <= i) {
                block++;
            }
            final long offset = blockOffsets[block] + (deltas[i] & DELTA_MASK);
            visitor.onRecord(offset, (int) (endOf(i, block) - offset), blockFiles[block],
                (positions[i] & POSITION_MASK) << POSITION_SHIFT);
        }
    }

    /**
     * @return heap bytes of the index: its arrays at their capacity plus headers.
     */
    public synchronized long footprint() {
        return FIXED_FOOTPRINT + 4L * deltas.length + 4L * positions.length + 8L * blockOffsets.length + 8L * blockFiles.length
            + 4L * blockFirst.length;
    }

    /**
     * Shrinks the arrays to what they hold (dropping the truncated prefix).
     */
    public synchronized void trimToSize() {
        if (cleared) {
            return;
        }
        if (head > 0 && head < count) {
            compact();
        }
        // Copied only if not tight already (most recovered indexes are).
        if (deltas.length != count) {
            deltas = Arrays.copyOf(deltas, count);
            positions = Arrays.copyOf(positions, count);
        }
        if (blockOffsets.length != blockCount) {
            blockOffsets = Arrays.copyOf(blockOffsets, blockCount);
            blockFiles = Arrays.copyOf(blockFiles, blockCount);
            blockFirst = Arrays.copyOf(blockFirst, blockCount);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Machinery
    // ------------------------------------------------------------------------------------------

    /**
     * @return the record holding {@code offset}, which is in [offset of the first record, endOffset).
     */
    private int floorIndex(final long offset) {
        int low = 0;
        int high = blockCount - 1;
        while (low < high) {
            final int mid = (low + high + 1) >>> 1;
            if (blockOffsets[mid] <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        final int block = low;
        final long delta = offset - blockOffsets[block];
        int first = blockFirst[block];
        int last = (block + 1 < blockCount ? blockFirst[block + 1] : count) - 1;
        while (first < last) {
            final int mid = (first + last + 1) >>> 1;
            if ((deltas[mid] & DELTA_MASK) <= delta) {
                first = mid;
            } else {
                last = mid - 1;
            }
        }
        return first;
    }

    /**
     * @return the block holding record {@code i}.
     */
    private int blockOf(final int i) {
        int low = 0;
        int high = blockCount - 1;
        while (low < high) {
            final int mid = (low + high + 1) >>> 1;
            if (blockFirst[mid] <= i) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * @return the end offset of record {@code i} of block {@code block}.
     */
    private long endOf(final int i, final int block) {
        if (i + 1 >= count) {
            return endOffset;
        }
        final int nextBlock = block + 1 < blockCount && blockFirst[block + 1] <= i + 1 ? block + 1 : block;
        return blockOffsets[nextBlock] + (deltas[i + 1] & DELTA_MASK);
    }

    /**
     * Moves the records from {@link #head} (and their blocks) to the start of the arrays,
     * shrinking them when they are mostly empty.
     */
    private void compact() {
        final int firstBlock = head < count ? blockOf(head) : blockCount;
        final int records = count - head;
        final int blocks = blockCount - firstBlock;
        final int recordCapacity = deltas.length > 4 * Math.max(records, INITIAL_RECORDS) ? grown(records) : deltas.length;
        final int blockCapacity = blockOffsets.length > 4 * Math.max(blocks, INITIAL_BLOCKS) ? grown(blocks) : blockOffsets.length;
        deltas = shift(deltas, head, records, recordCapacity);
        positions = shift(positions, head, records, recordCapacity);
        blockOffsets = shift(blockOffsets, firstBlock, blocks, blockCapacity);
        blockFiles = shift(blockFiles, firstBlock, blocks, blockCapacity);
        blockFirst = shift(blockFirst, firstBlock, blocks, blockCapacity);
        for (int b = 0; b < blocks; b++) {
            blockFirst[b] = Math.max(0, blockFirst[b] - head);
        }
        count = records;
        blockCount = blocks;
        head = 0;
    }

    private static int grown(final int size) {
        return Math.max(INITIAL_RECORDS, size + (size >> 1));
    }

    private static int[] shift(final int[] array, final int from, final int length, final int capacity) {
        final int[] target = capacity == array.length ? array : new int[capacity];
        System.arraycopy(array, from, target, 0, length);
        return target;
    }

    private static long[] shift(final long[] array, final int from, final int length, final int capacity) {
        final long[] target = capacity == array.length ? array : new long[capacity];
        System.arraycopy(array, from, target, 0, length);
        return target;
    }

    @Override
    public synchronized String toString() {
        return "LocationIndex{startOffset=" + startOffset + ", endOffset=" + endOffset + ", records=" + (count - head)
            + ", blocks=" + blockCount + ", cleared=" + cleared + '}';
    }
}
