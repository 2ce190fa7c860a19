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
 * One entry per DATA record, packed in primitive chunks (no object per record): records are
 * grouped in <em>blocks</em> of at most {@link #BLOCK_RECORDS} records that lie in one file and
 * whose offsets lie within 4 GiB of the block's first; a block holds the full values, a record
 * 32-bit differences.
 * <pre>
 *  per record i (8 bytes, one long):
 *   63                             32 31                             0
 *  +---------------------------------+--------------------------------+
 *  | offset(i) - blockOffset(b), u32 | position(i) &gt;&gt;&gt; POSITION_SHIFT |
 *  +---------------------------------+--------------------------------+
 *  per block b (20 bytes, one per up to 64 records):
 *   long chunk, 2 per block: [offset of its first record (u64), file number of its records (u64)]
 *   int chunk,  1 per block: [index of its first record (u32)]
 * </pre>
 * The entries are not in arrays that grow by copying but in <em>chunks</em> that are never
 * copied: chunk k holds 2^k entries up to a largest size (512 records: a 4 KB {@code long[]};
 * 256 blocks: a 4 KB {@code long[]} and a 1 KB {@code int[]}), then every chunk has that size.
 * Entry i is in chunk {@code k = floor(log2(i + 1))} (or {@code L - 1 + ((i + 1) >> L)} past
 * the first {@code 2^(L+1) - 1} entries, {@code 2^L} the largest chunk), at slot
 * {@code i + 1 - 2^k} (or {@code (i + 1) mod 2^L}):
 * <pre>
 *  records:  rec0      chunk 1       chunk 2              chunk 9             chunk 10
 *           +---+     +---+---+     +---+---+---+---+     +---- 512 ----+     +---- 512 ----+
 *           | 0 |     | 1 | 2 |     | 3 | 4 | 5 | 6 | ... | 511 .. 1022 |     | 1023 ..     | ...
 *           +---+     +---+---+     +---+---+---+---+     +-------------+     +-------------+
 *  blocks:   blk0/first0, then chunks of 2, 4 .. 256 blocks (long[2n] offset/file pairs, int[n] firsts)
 *
 *  spine (chunks k &gt;= 1, made at the second chunk, doubling):
 *  +------------+------------+------------+------------+------------+------------+----
 *  | rec chunk 1| blk chunk 1| 1st chunk 1| rec chunk 2| blk chunk 2| 1st chunk 2| ...
 *  +------------+------------+------------+------------+------------+------------+----
 *    spine[3k-3]  spine[3k-2]  spine[3k-1]   (a slot is null where one kind has fewer chunks)
 * </pre>
 * Chunk 0 is held in a field of its own, the others in the spine, so an index of one record
 * holds three small arrays (a {@code long[1]}, a {@code long[2]} and an {@code int[1]}: 80
 * bytes) and no spine. Chunks come from a {@link LocationChunkPool} when the
 * index has one (the store's, used by the log writer's thread) and go back to it when truncation
 * drops them or the segment is deleted ({@link #clear()}): in a steady state where segments are
 * truncated or deleted as the log grows, adding records allocates nothing; while an index only
 * grows, it allocates the bytes it keeps, once (plus a spine reference per chunk). A chunk is
 * given back only under the index's monitor, after the index dropped its reference, so no reader
 * (they read under the monitor) can see it again.
 *
 * <p>A record's length is not stored: a segment's DATA records are contiguous, so record i ends
 * where record i+1 starts, and the last one at {@link #endOffset()}. Records are 8-byte
 * aligned, so a position shifted right by {@link #POSITION_SHIFT} fits 32 bits for files up to
 * {@link #MAX_POSITION} (32 GiB). Zero-length DATA records are not indexed (they hold no byte).
 *
 * <p><b>Footprint:</b> 8 bytes per record plus 20 per block, 8.31 bytes per record with full
 * blocks, plus 16 bytes of header and 4 of spine per chunk (8.37 with full 512-record
 * chunks); the last chunk of each kind is partly empty (at most 4 KB + 5 KB).
 * {@link #footprint()} computes it.
 *
 * <p><b>Truncation</b> ({@link #truncate}) moves the start offset and drops the records wholly
 * before it (the one containing it stays); the entries are moved to the front once the dropped
 * prefix is at least half of them, and the chunks then past half again the live entries are
 * given back, so a segment truncated as it grows keeps a bounded index.
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
    /** log2 of the largest record chunk: 512 records, a 4 KB {@code long[]}. */
    private static final int RECORD_LOG = LocationChunkPool.MAX_CHUNK_LOG;
    /** log2 of the largest block chunk: 256 blocks, a 4 KB {@code long[]} and a 1 KB {@code int[]}. */
    private static final int BLOCK_LOG = LocationChunkPool.MAX_CHUNK_LOG - 1;
    /** Chunks (k >= 1) the spine has room for at first. */
    private static final int FIRST_SPINE = 2;
    /** Approximate bytes of the object and the headers of its three chunk-0 arrays. */
    private static final int FIXED_FOOTPRINT = 72 + 3 * 16;

    // Chunk 0 of each kind in a field, chunks k >= 1 in a spine (slot 0 unused), both null until
    // needed: recovery builds one index per segment, 250,000 at a time, and many get no record.
    private long[] rec0;
    private long[] blk0;
    private int[] first0;
    /**
     * Chunks k >= 1: {@code spine[3k - 3]} the records' {@code long[]}, {@code spine[3k - 2]} the
     * blocks' {@code long[]}, {@code spine[3k - 1]} the blocks' {@code int[]} (one spine, not three:
     * 32 B less per index past its first record).
     */
    private Object[] spine;
    private int recChunks;
    private int blkChunks;
    /** Where chunks come from and go back to; null: allocated, and left to the collector. */
    private LocationChunkPool pool;
    /** Records stored, dropped ones included. */
    private int count;
    /** First record not dropped by truncation. */
    private int head;
    private int blockCount;
    private long startOffset;
    private long endOffset;
    private boolean cleared;

    /**
     * An index without a pool (recovery builds these; the store hands them its pool when it adopts them).
     *
     * @param startOffset the offset from which the log holds the segment's bytes: 0 for a segment
     *                    created in the log, its logged length for one first seen in a SNAPSHOT.
     */
    public LocationIndex(final long startOffset) {
        this(startOffset, null);
    }

    /**
     * @param startOffset see {@link #LocationIndex(long)}.
     * @param pool        where chunks are taken from and given back to; null for none.
     */
    public LocationIndex(final long startOffset, final LocationChunkPool pool) {
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset=" + startOffset + " must be >= 0");
        }
        this.startOffset = startOffset;
        this.endOffset = startOffset;
        this.pool = pool;
    }

    /**
     * Takes chunks from {@code pool} from now on and gives them back to it (chunks already held,
     * allocated or from another pool, go to it as well when dropped).
     */
    public synchronized void usePool(final LocationChunkPool pool) {
        this.pool = pool;
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
        // The last block's chunk is looked up once (recovery adds every record of the log here).
        final int last = blockCount - 1;
        long base = offset;
        boolean opens = last < 0;
        if (!opens) {
            final long[] pairs;
            final int[] firstRecords;
            final int slot;
            if (last == 0) {
                pairs = blk0;
                firstRecords = first0;
                slot = 0;
            } else {
                final int k = chunkOf(last, BLOCK_LOG);
                pairs = (long[]) spine[3 * k - 2];
                firstRecords = (int[]) spine[3 * k - 1];
                slot = slotOf(last, BLOCK_LOG);
            }
            base = pairs[2 * slot];
            opens = count - firstRecords[slot] >= BLOCK_RECORDS || pairs[2 * slot + 1] != fileNumber || offset - base > MAX_DELTA;
        }
        if (opens) {
            ensureBlocks(blockCount + 1);
            setBlock(blockCount, offset, fileNumber, count);
            blockCount++;
            base = offset;
        }
        ensureRecords(count + 1);
        setRecord(count, pack(offset - base, (int) (position >>> POSITION_SHIFT)));
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
        if (offset < blockOffset(headBlock) + delta(head)) {
            return false;
        }
        final int i = floorIndex(offset);
        final int b = blockOf(i);
        final long base = blockOffset(b);
        if (i < head || base + delta(i) != offset || endOf(i, b) - offset != length) {
            return false;
        }
        final int stored = (int) (position >>> POSITION_SHIFT);
        final long oldFile = blockFile(b);
        if (oldFile == fileNumber) {
            setRecord(i, pack(delta(i), stored));
            return true;
        }
        final int first = blockFirst(b);
        final int last = (b + 1 < blockCount ? blockFirst(b + 1) : count) - 1;
        final long nextBase = i < last ? base + delta(i + 1) : -1;
        if (i == first && b > 0 && blockFile(b - 1) == fileNumber && offset - blockOffset(b - 1) <= MAX_DELTA) {
            // Joins the block before it.
            setRecord(i, pack(offset - blockOffset(b - 1), stored));
            if (i == last) {
                removeBlock(b);
            } else {
                rebase(i + 1, last, base, nextBase);
                setBlock(b, nextBase, blockFile(b), i + 1);
            }
            return true;
        }
        int at = b;
        if (i > first) {
            // Block b keeps [first, i); the record gets a block of its own after it.
            at = b + 1;
            insertBlock(at, offset, fileNumber, i);
            setRecord(i, pack(0, stored));
        } else {
            setBlock(b, blockOffset(b), fileNumber, first);
            setRecord(i, pack(delta(i), stored));
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
            final long r = record(k);
            setRecord(k, pack((r >>> 32) - shift, (int) r));
        }
    }

    private void insertBlock(final int at, final long offset, final long fileNumber, final int first) {
        ensureBlocks(blockCount + 1);
        for (int k = blockCount; k > at; k--) {
            setBlock(k, blockOffset(k - 1), blockFile(k - 1), blockFirst(k - 1));
        }
        setBlock(at, offset, fileNumber, first);
        blockCount++;
    }

    private void removeBlock(final int at) {
        for (int k = at; k < blockCount - 1; k++) {
            setBlock(k, blockOffset(k + 1), blockFile(k + 1), blockFirst(k + 1));
        }
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
     * Drops everything: the segment was deleted; the chunks go back to the pool. Later lookups
     * find nothing; {@link #add} throws.
     */
    public synchronized void clear() {
        cleared = true;
        releaseRecords(0);
        releaseBlocks(0);
        spine = null;
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
        final int i = floorIndex(clippedFrom);
        scan(i, blockOf(i), clippedTo, out, null);
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
        if (head < count) {
            scan(head, blockOf(head), Long.MAX_VALUE, null, visitor);
        }
    }

    /**
     * Reports records {@code from} (of block {@code block}) onwards while they start before
     * {@code to}, to {@code out} or {@code visitor}: one pass that follows the blocks and reads
     * each record once.
     */
    private void scan(final int from, final int firstBlock, final long to, final LocationList out,
                      final RecordVisitor visitor) {
        int block = firstBlock;
        long base = blockOffset(block);
        long file = blockFile(block);
        int nextFirst = block + 1 < blockCount ? blockFirst(block + 1) : Integer.MAX_VALUE;
        long r = record(from);
        for (int i = from; i < count; i++) {
            if (i >= nextFirst) {
                block++;
                base = blockOffset(block);
                file = blockFile(block);
                nextFirst = block + 1 < blockCount ? blockFirst(block + 1) : Integer.MAX_VALUE;
            }
            final long offset = base + (r >>> 32);
            if (offset >= to) {
                break;
            }
            final long position = (r & POSITION_MASK) << POSITION_SHIFT;
            final long end;
            if (i + 1 < count) {
                r = record(i + 1);
                end = (i + 1 >= nextFirst ? blockOffset(block + 1) : base) + (r >>> 32);
            } else {
                end = endOffset;
            }
            if (out != null) {
                out.add(offset, (int) (end - offset), file, position);
            } else {
                visitor.onRecord(offset, (int) (end - offset), file, position);
            }
        }
    }

    /**
     * @return heap bytes of the index: the object, its chunks (headers included) and spines.
     */
    public synchronized long footprint() {
        long bytes = FIXED_FOOTPRINT;
        for (int k = 0; k < recChunks; k++) {
            bytes += 8L * (1 << Math.min(k, RECORD_LOG)) + (k > 0 ? 16 : 0);
        }
        for (int k = 0; k < blkChunks; k++) {
            bytes += 20L * (1 << Math.min(k, BLOCK_LOG)) + (k > 0 ? 32 : 0);
        }
        return bytes + (spine == null ? 0 : 16 + 4L * spine.length);
    }

    /**
     * Gives back the chunks past what the index holds (after moving out the truncated prefix)
     * and shrinks the spines to fit.
     */
    public synchronized void trimToSize() {
        if (cleared) {
            return;
        }
        if (head > 0) {
            compact();
        }
        releaseRecords(count);
        releaseBlocks(blockCount);
        final int length = 3 * (Math.max(recChunks, blkChunks) - 1);
        if (spine != null && spine.length != length) {
            spine = length <= 0 ? null : Arrays.copyOf(spine, length);
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
            if (blockOffset(mid) <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        final int block = low;
        final long delta = offset - blockOffset(block);
        int first = blockFirst(block);
        int last = (block + 1 < blockCount ? blockFirst(block + 1) : count) - 1;
        while (first < last) {
            final int mid = (first + last + 1) >>> 1;
            if (delta(mid) <= delta) {
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
            if (blockFirst(mid) <= i) {
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
        final int nextBlock = block + 1 < blockCount && blockFirst(block + 1) <= i + 1 ? block + 1 : block;
        return blockOffset(nextBlock) + delta(i + 1);
    }

    /**
     * Moves the records from {@link #head} (and their blocks) to the front, then gives back the
     * chunks past half again what is left.
     */
    private void compact() {
        final int firstBlock = head < count ? blockOf(head) : blockCount;
        final int records = count - head;
        final int blocks = blockCount - firstBlock;
        for (int k = 0; k < records; k++) {
            setRecord(k, record(head + k));
        }
        for (int b = 0; b < blocks; b++) {
            final int from = firstBlock + b;
            setBlock(b, blockOffset(from), blockFile(from), Math.max(0, blockFirst(from) - head));
        }
        count = records;
        blockCount = blocks;
        head = 0;
        releaseRecords(records + (records >> 1) + 1);
        releaseBlocks(blocks + (blocks >> 1) + 1);
    }

    // ------------------------------------------------------------------------------------------
    // Chunks
    // ------------------------------------------------------------------------------------------

    /** @return the chunk holding entry {@code i}: see the class comment. */
    private static int chunkOf(final int i, final int log) {
        final int j = i + 1;
        return j < 1 << log ? 31 - Integer.numberOfLeadingZeros(j) : log - 1 + (j >>> log);
    }

    /** @return the slot of entry {@code i} in its chunk. */
    private static int slotOf(final int i, final int log) {
        final int j = i + 1;
        return j < 1 << log ? j - Integer.highestOneBit(j) : j & ((1 << log) - 1);
    }

    /** @return entries held by the first {@code chunks} chunks. */
    private static int capacity(final int chunks, final int log) {
        return chunks <= log + 1 ? (1 << chunks) - 1 : (1 << (log + 1)) - 1 + ((chunks - log - 1) << log);
    }

    private static long pack(final long delta, final int storedPosition) {
        return (delta << 32) | (storedPosition & POSITION_MASK);
    }

    private long record(final int i) {
        return i == 0 ? rec0[0] : ((long[]) spine[3 * chunkOf(i, RECORD_LOG) - 3])[slotOf(i, RECORD_LOG)];
    }

    private long delta(final int i) {
        return record(i) >>> 32;
    }

    private void setRecord(final int i, final long value) {
        if (i == 0) {
            rec0[0] = value;
        } else {
            ((long[]) spine[3 * chunkOf(i, RECORD_LOG) - 3])[slotOf(i, RECORD_LOG)] = value;
        }
    }

    private long blockOffset(final int b) {
        return b == 0 ? blk0[0] : ((long[]) spine[3 * chunkOf(b, BLOCK_LOG) - 2])[2 * slotOf(b, BLOCK_LOG)];
    }

    private long blockFile(final int b) {
        return b == 0 ? blk0[1] : ((long[]) spine[3 * chunkOf(b, BLOCK_LOG) - 2])[2 * slotOf(b, BLOCK_LOG) + 1];
    }

    private int blockFirst(final int b) {
        return b == 0 ? first0[0] : ((int[]) spine[3 * chunkOf(b, BLOCK_LOG) - 1])[slotOf(b, BLOCK_LOG)];
    }

    private void setBlock(final int b, final long offset, final long fileNumber, final int first) {
        if (b == 0) {
            blk0[0] = offset;
            blk0[1] = fileNumber;
            first0[0] = first;
        } else {
            final int k = chunkOf(b, BLOCK_LOG);
            final int slot = slotOf(b, BLOCK_LOG);
            final long[] pairs = (long[]) spine[3 * k - 2];
            pairs[2 * slot] = offset;
            pairs[2 * slot + 1] = fileNumber;
            ((int[]) spine[3 * k - 1])[slot] = first;
        }
    }

    private void ensureRecords(final int records) {
        while (capacity(recChunks, RECORD_LOG) < records) {
            final int k = recChunks;
            final long[] chunk = takeLongs(Math.min(k, RECORD_LOG));
            if (k == 0) {
                rec0 = chunk;
            } else {
                ensureSpine(k);
                spine[3 * k - 3] = chunk;
            }
            recChunks++;
        }
    }

    private void ensureBlocks(final int blocks) {
        while (capacity(blkChunks, BLOCK_LOG) < blocks) {
            final int k = blkChunks;
            final int log = Math.min(k, BLOCK_LOG);
            final long[] chunk = takeLongs(log + 1);
            final int[] firstChunk = takeInts(log);
            if (k == 0) {
                blk0 = chunk;
                first0 = firstChunk;
            } else {
                ensureSpine(k);
                spine[3 * k - 2] = chunk;
                spine[3 * k - 1] = firstChunk;
            }
            blkChunks++;
        }
    }

    /** Makes room in the spine for chunk {@code k >= 1}: 2 chunks first, then doubling. */
    private void ensureSpine(final int k) {
        if (spine == null || spine.length < 3 * k) {
            spine = Arrays.copyOf(spine == null ? new Object[0] : spine, 3 * Math.max(FIRST_SPINE, 2 * k));
        }
    }

    /** Gives back the record chunks not needed to hold {@code keep} records. */
    private void releaseRecords(final int keep) {
        while (recChunks > 0 && capacity(recChunks - 1, RECORD_LOG) >= keep) {
            final int k = --recChunks;
            final long[] chunk;
            if (k == 0) {
                chunk = rec0;
                rec0 = null;
            } else {
                chunk = (long[]) spine[3 * k - 3];
                spine[3 * k - 3] = null;
            }
            give(chunk);
        }
    }

    /** Gives back the block chunks not needed to hold {@code keep} blocks. */
    private void releaseBlocks(final int keep) {
        while (blkChunks > 0 && capacity(blkChunks - 1, BLOCK_LOG) >= keep) {
            final int k = --blkChunks;
            final long[] chunk;
            final int[] firstChunk;
            if (k == 0) {
                chunk = blk0;
                firstChunk = first0;
                blk0 = null;
                first0 = null;
            } else {
                chunk = (long[]) spine[3 * k - 2];
                firstChunk = (int[]) spine[3 * k - 1];
                spine[3 * k - 2] = null;
                spine[3 * k - 1] = null;
            }
            give(chunk);
            give(firstChunk);
        }
    }

    private long[] takeLongs(final int log) {
        return pool != null ? pool.takeLongs(log) : new long[1 << log];
    }

    private int[] takeInts(final int log) {
        return pool != null ? pool.takeInts(log) : new int[1 << log];
    }

    private void give(final long[] chunk) {
        if (pool != null) {
            pool.give(chunk);
        }
    }

    private void give(final int[] chunk) {
        if (pool != null) {
            pool.give(chunk);
        }
    }

    @Override
    public synchronized String toString() {
        return "LocationIndex{startOffset=" + startOffset + ", endOffset=" + endOffset + ", records=" + (count - head)
            + ", blocks=" + blockCount + ", cleared=" + cleared + '}';
    }
}
