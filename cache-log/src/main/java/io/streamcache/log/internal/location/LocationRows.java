package io.streamcache.log.internal.location;

import org.agrona.UnsafeAccess;

/**
 * The operations of a segment's location index on its off-heap <em>row</em>: segment offset to
 * (file number, position of the DATA record) for every DATA record of the segment, with floor
 * lookup. An index is nothing but the address of its row (a {@code long}); there is no object
 * per index. Callers hold rows where they need them: {@link LocationTable} in pages by segment
 * id, recovery in its segment states.
 *
 * <p><b>Threading:</b> none here. Every method touches the row and its chunks without any
 * lock; the caller makes sure that nobody else writes the row meanwhile (readers may share it
 * with each other) and that the row is still allocated: {@link LocationTable} holds its stripe
 * lock, {@link LocationIndex#create standalone indexes} their own lock, recovery confines a
 * segment to one thread. Row {@code 0} is a cleared index: the readers find nothing in it
 * ({@link #locate} returns false), {@link #add} throws, and it touches no memory.
 *
 * <h2>Off-heap</h2>
 * Everything is in off-heap chunks of the log's {@link LocationMemory}: a 64-byte <em>row</em>,
 * a <em>spine</em> of chunk addresses, and the chunks of records and blocks. That memory is
 * metadata of the log, not part of the cache's configured memory bound: see {@link LocationMemory}.
 * <pre>
 *  row (64 B chunk)                              spine (24 B per chunk k, grows by doubling)
 *   0 startOffset  u64                           +--------------+--------------+--------------+----
 *   8 endOffset    u64                           | rec chunk 0  | blk chunk 0  | 1st chunk 0  | rec chunk 1 ...
 *  16 stored records (dropped ones too) i32      | address u64  | address u64  | address u64  |
 *  20 head: first record not dropped    i32      +--------------+--------------+--------------+----
 *  24 blocks       i32                             spine + 24k      + 8            + 16
 *  28 record chunks i32   32 block chunks i32
 *  36 log2 of the spine's chunk size (0: none)
 *  40 spine address u64   48..63 unused
 * </pre>
 *
 * <h2>Layout of the records</h2>
 * One entry per DATA record: records are grouped in <em>blocks</em> of at most
 * {@link #BLOCK_RECORDS} records that lie in one file and whose offsets lie within 4 GiB of the
 * block's first; a block holds the full values, a record 32-bit differences.
 * <pre>
 *  per record i (8 bytes, one u64):
 *   63                             32 31                             0
 *  +---------------------------------+--------------------------------+
 *  | offset(i) - blockOffset(b), u32 | position(i) &gt;&gt;&gt; POSITION_SHIFT |
 *  +---------------------------------+--------------------------------+
 *  per block b (20 bytes, one per up to 64 records):
 *   block chunk, 16 B per block: [offset of its first record (u64), file number of its records (u64)]
 *   1st chunk,    4 B per block: [index of its first record (u32)]
 * </pre>
 * The entries are not in arrays that grow by copying but in <em>chunks</em> that are never
 * copied: chunk k holds 2^k entries up to a largest size (512 records: 4 KB; 256 blocks: 4 KB
 * and 1 KB), then every chunk has that size. Entry i is in chunk
 * {@code k = floor(log2(i + 1))} (or {@code L - 1 + ((i + 1) >> L)} past the first
 * {@code 2^(L+1) - 1} entries, {@code 2^L} the largest chunk), at slot {@code i + 1 - 2^k} (or
 * {@code (i + 1) mod 2^L}):
 * <pre>
 *  records:  chunk 0   chunk 1       chunk 2              chunk 9             chunk 10
 *           +---+     +---+---+     +---+---+---+---+     +---- 512 ----+     +---- 512 ----+
 *           | 0 |     | 1 | 2 |     | 3 | 4 | 5 | 6 | ... | 511 .. 1022 |     | 1023 ..     | ...
 *           +---+     +---+---+     +---+---+---+---+     +-------------+     +-------------+
 *  blocks:   chunks of 1, 2, 4 .. 256 blocks, then of 256
 * </pre>
 * An index of one record holds a row (64 B), a spine (32 B), a record chunk (8 B) and two block
 * chunks (16 B and 8 B): 128 bytes of off-heap memory. Chunks go back to the memory when
 * truncation drops them or the segment is deleted ({@link #free}), and are handed out again
 * to any index of the log: in a steady state where segments are truncated or deleted as the
 * log grows, adding records allocates nothing, on or off the heap. A chunk is given back only
 * while the caller excludes the readers of the row, after the row dropped its address; the row
 * itself only after the caller unpublished it (see {@link LocationTable}).
 *
 * <p>A record's length is not stored: a segment's DATA records are contiguous, so record i ends
 * where record i+1 starts, and the last one at {@link #endOffset}. Records are 8-byte
 * aligned, so a position shifted right by {@link #POSITION_SHIFT} fits 32 bits for files up to
 * {@link #MAX_POSITION} (32 GiB). Zero-length DATA records are not indexed (they hold no byte).
 *
 * <p><b>Footprint</b> (off-heap): 8 bytes per record plus 20 per block, 8.31 bytes per record with
 * full blocks, plus the row and the spine; the last chunk of each kind is partly empty (at most
 * 4 KB + 5 KB). {@link #footprint} computes it.
 *
 * <p><b>Truncation</b> ({@link #truncate}) moves the start offset and drops the records wholly
 * before it (the one containing it stays); the entries are moved to the front once the dropped
 * prefix is at least half of them, and the chunks then past half again the live entries are
 * given back, so a segment truncated as it grows keeps a bounded index.
 *
 * <p><b>Lifetime:</b> {@link #free} gives everything back, the row included; the caller then
 * forgets the row's address (or replaces it by 0: a cleared index, which touches no memory, so
 * the memory may be {@link LocationMemory#close() closed} once every row still in use is freed).
 */
public final class LocationRows {
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
    /** log2 of the largest record chunk: 512 records, 4 KB. */
    private static final int RECORD_LOG = 9;
    /** log2 of the largest block chunk: 256 blocks, 4 KB of offset/file pairs and 1 KB of firsts. */
    private static final int BLOCK_LOG = 8;

    // The row: see the class comment.
    /** log2 of a row's bytes: 64. */
    static final int ROW_LOG = 6;
    private static final int START = 0;
    private static final int END = 8;
    private static final int STORED = 16;
    private static final int HEAD = 20;
    private static final int BLOCKS = 24;
    private static final int REC_CHUNKS = 28;
    private static final int BLK_CHUNKS = 32;
    private static final int SPINE_LOG = 36;
    private static final int SPINE = 40;
    /** Bytes of spine per chunk index k: the addresses of the three chunks k. */
    private static final int SLOT = 24;

    private LocationRows() {
    }

    /**
     * Allocates the row of an empty index.
     *
     * @param memory      where the row and chunks are allocated and given back to: the log's.
     * @param startOffset the offset from which the log holds the segment's bytes: 0 for a segment
     *                    created in the log, its logged length for one first seen in a SNAPSHOT.
     * @return the row's address (never 0).
     * @throws IllegalArgumentException if {@code startOffset < 0}.
     * @throws IllegalStateException    if {@code memory} is closed.
     */
    public static long allocate(final LocationMemory memory, final long startOffset) {
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset=" + startOffset + " must be >= 0");
        }
        final long r = memory.allocate(ROW_LOG);
        init(r, startOffset);
        return r;
    }

    /** Makes the 64 bytes at {@code row} an empty index from {@code startOffset} (at least 0). */
    static void init(final long row, final long startOffset) {
        UnsafeAccess.UNSAFE.setMemory(row, 1L << ROW_LOG, (byte) 0);
        UnsafeAccess.UNSAFE.putLong(row + START, startOffset);
        UnsafeAccess.UNSAFE.putLong(row + END, startOffset);
    }

    /** Gives back the row's spine and chunks, not the row itself, which is then an empty index of no memory. */
    static void releaseContents(final LocationMemory memory, final long row) {
        releaseRecords(memory, row, 0);
        releaseBlocks(memory, row, 0);
        resizeSpine(memory, row, 0);
    }

    /**
     * Indexes a DATA record: the next bytes of the segment, in log order.
     *
     * @param offset     segment offset of its payload byte 0: must be {@link #endOffset}.
     * @param length     its payload length (0 is accepted and not indexed).
     * @param fileNumber the file holding it, at least 0.
     * @param position   its position in that file: a multiple of 8, at most {@link #MAX_POSITION}.
     * @throws IllegalArgumentException if an argument is out of range or the offset is not contiguous.
     * @throws IllegalStateException    if {@code row} is 0 (a cleared index).
     */
    public static void add(final LocationMemory memory, final long row, final long offset, final int length, final long fileNumber, final long position) {
        if (row == 0) {
            throw new IllegalStateException("location index was cleared (segment deleted)");
        }
        if (offset != end(row)) {
            throw new IllegalArgumentException("offset=" + offset + " is not end()=" + end(row));
        }
        if (length < 0 || fileNumber < 0 || position < 0 || position > MAX_POSITION
            || (position & ((1L << POSITION_SHIFT) - 1)) != 0) {
            throw new IllegalArgumentException("length=" + length + " fileNumber=" + fileNumber + " position=" + position
                + ": need length >= 0, fileNumber >= 0, position a multiple of 8 in [0, " + MAX_POSITION + "]");
        }
        if (length == 0) {
            return;
        }
        // The last block's chunks are looked up once (recovery adds every record of the log here).
        final int stored = stored(row);
        final int blocks = blockCount(row);
        final int last = blocks - 1;
        long base = offset;
        boolean opens = last < 0;
        if (!opens) {
            final long slot = spineSlot(row, chunkOf(last, BLOCK_LOG));
            final int at = slotOf(last, BLOCK_LOG);
            final long pair = UnsafeAccess.UNSAFE.getLong(slot + 8) + 16L * at;
            base = UnsafeAccess.UNSAFE.getLong(pair);
            opens = stored - UnsafeAccess.UNSAFE.getInt(UnsafeAccess.UNSAFE.getLong(slot + 16) + 4L * at) >= BLOCK_RECORDS || UnsafeAccess.UNSAFE.getLong(pair + 8) != fileNumber
                || offset - base > MAX_DELTA;
        }
        if (opens) {
            ensureBlocks(memory, row, blockCount(row) + 1);
            setBlock(row, blockCount(row), offset, fileNumber, stored(row));
            setBlockCount(row, blockCount(row) + 1);
            base = offset;
        }
        ensureRecords(memory, row, stored(row) + 1);
        setRecord(row, stored(row), pack(offset - base, (int) (position >>> POSITION_SHIFT)));
        setCount(row, stored(row) + 1);
        setEndOffset(row, offset + length);
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
    public static boolean relocate(final LocationMemory memory, final long row, final long offset, final int length, final long fileNumber, final long position) {
        if (fileNumber < 0 || position < 0 || position > MAX_POSITION || (position & ((1L << POSITION_SHIFT) - 1)) != 0) {
            throw new IllegalArgumentException("fileNumber=" + fileNumber + " position=" + position
                + ": need fileNumber >= 0, position a multiple of 8 in [0, " + MAX_POSITION + "]");
        }
        if (row == 0 || head(row) >= stored(row) || offset < 0 || offset >= end(row)) {
            return false;
        }
        final int headBlock = blockOf(row, head(row));
        if (offset < blockOffset(row, headBlock) + delta(row, head(row))) {
            return false;
        }
        final int i = floorIndex(row, offset);
        final int b = blockOf(row, i);
        final long base = blockOffset(row, b);
        if (i < head(row) || base + delta(row, i) != offset || endOf(row, i, b) - offset != length) {
            return false;
        }
        final int stored = (int) (position >>> POSITION_SHIFT);
        final long oldFile = blockFile(row, b);
        if (oldFile == fileNumber) {
            setRecord(row, i, pack(delta(row, i), stored));
            return true;
        }
        final int first = blockFirst(row, b);
        final int last = (b + 1 < blockCount(row) ? blockFirst(row, b + 1) : stored(row)) - 1;
        final long nextBase = i < last ? base + delta(row, i + 1) : -1;
        if (i == first && b > 0 && blockFile(row, b - 1) == fileNumber && offset - blockOffset(row, b - 1) <= MAX_DELTA) {
            // Joins the block before it.
            setRecord(row, i, pack(offset - blockOffset(row, b - 1), stored));
            if (i == last) {
                removeBlock(row, b);
            } else {
                rebase(row, i + 1, last, base, nextBase);
                setBlock(row, b, nextBase, blockFile(row, b), i + 1);
            }
            return true;
        }
        int at = b;
        if (i > first) {
            // Block b keeps [first, i); the record gets a block of its own after it.
            at = b + 1;
            insertBlock(memory, row, at, offset, fileNumber, i);
            setRecord(row, i, pack(0, stored));
        } else {
            setBlock(row, b, blockOffset(row, b), fileNumber, first);
            setRecord(row, i, pack(delta(row, i), stored));
        }
        if (i < last) {
            insertBlock(memory, row, at + 1, nextBase, oldFile, i + 1);
            rebase(row, i + 1, last, base, nextBase);
        }
        return true;
    }

    private static void rebase(final long row, final int from, final int to, final long oldBase, final long newBase) {
        final long shift = newBase - oldBase;
        for (int k = from; k <= to; k++) {
            final long r = record(row, k);
            setRecord(row, k, pack((r >>> 32) - shift, (int) r));
        }
    }

    private static void insertBlock(final LocationMemory memory, final long row, final int at, final long offset, final long fileNumber, final int first) {
        ensureBlocks(memory, row, blockCount(row) + 1);
        for (int k = blockCount(row); k > at; k--) {
            setBlock(row, k, blockOffset(row, k - 1), blockFile(row, k - 1), blockFirst(row, k - 1));
        }
        setBlock(row, at, offset, fileNumber, first);
        setBlockCount(row, blockCount(row) + 1);
    }

    private static void removeBlock(final long row, final int at) {
        for (int k = at; k < blockCount(row) - 1; k++) {
            setBlock(row, k, blockOffset(row, k + 1), blockFile(row, k + 1), blockFirst(row, k + 1));
        }
        setBlockCount(row, blockCount(row) - 1);
    }

    /**
     * Moves the start offset forward to {@code offset} and drops the records wholly before it.
     * A no-op if {@code offset} is at or before the start offset.
     *
     * @throws IllegalArgumentException if {@code offset} is past {@link #endOffset}.
     */
    public static void truncate(final LocationMemory memory, final long row, final long offset) {
        if (row == 0 || offset <= start(row)) {
            return;
        }
        if (offset > end(row)) {
            throw new IllegalArgumentException("offset=" + offset + " is past end()=" + end(row));
        }
        setStartOffset(row, offset);
        setHead(row, offset == end(row) ? stored(row) : floorIndex(row, offset));
        if (head(row) >= BLOCK_RECORDS && head(row) >= stored(row) - head(row)) {
            compact(memory, row);
        }
    }

    /**
     * Drops everything: the segment was deleted; the row, spine and chunks go back to the
     * memory. The caller forgets the address (or holds 0 in its place). A no-op for row 0.
     */
    public static void free(final LocationMemory memory, final long row) {
        if (row == 0) {
            return;
        }
        releaseContents(memory, row);
        memory.free(row, ROW_LOG);
    }

    /**
     * @return the first offset whose location is known: the segment's start offset, or the
     *         offset from which the log holds its bytes if later.
     */
    public static long startOffset(final long row) {
        return row == 0 ? 0 : start(row);
    }

    /**
     * @return the end of the indexed bytes: the end of the last DATA record indexed.
     */
    public static long endOffset(final long row) {
        return row == 0 ? 0 : end(row);
    }

    /**
     * @return records indexed and not dropped.
     */
    public static int count(final long row) {
        return row == 0 ? 0 : stored(row) - head(row);
    }

    /**
     * Copies out the locations of the records holding {@code [from, to)} clipped to
     * {@code [startOffset(), endOffset())}; the list's {@code from()} and {@code to()} say the
     * clipped range (empty if nothing of it is held).
     *
     * @return false (and an empty list from {@code from}) if the index was cleared.
     */
    public static boolean locate(final long row, final long from, final long to, final LocationList out) {
        if (row == 0) {
            out.reset(from, from);
            return false;
        }
        final long clippedFrom = Math.max(from, start(row));
        final long clippedTo = Math.min(to, end(row));
        out.reset(clippedFrom, Math.max(clippedFrom, clippedTo));
        if (clippedFrom >= clippedTo) {
            return true;
        }
        final int i = floorIndex(row, clippedFrom);
        scan(row, i, blockOf(row, i), clippedTo, out, null);
        return true;
    }

    /**
     * Reports every record not dropped, in offset order, under the monitor.
     */
    public static void forEach(final long row, final LocationIndex.RecordVisitor visitor) {
        if (row != 0 && head(row) < stored(row)) {
            scan(row, head(row), blockOf(row, head(row)), Long.MAX_VALUE, null, visitor);
        }
    }

    /**
     * Reports records {@code from} (of block {@code block}) onwards while they start before
     * {@code to}, to {@code out} or {@code visitor}: one pass that follows the blocks and reads
     * each record once.
     */
    private static void scan(final long row, final int from, final int firstBlock, final long to, final LocationList out,
                      final LocationIndex.RecordVisitor visitor) {
        int block = firstBlock;
        long base = blockOffset(row, block);
        long file = blockFile(row, block);
        int nextFirst = block + 1 < blockCount(row) ? blockFirst(row, block + 1) : Integer.MAX_VALUE;
        long r = record(row, from);
        for (int i = from; i < stored(row); i++) {
            if (i >= nextFirst) {
                block++;
                base = blockOffset(row, block);
                file = blockFile(row, block);
                nextFirst = block + 1 < blockCount(row) ? blockFirst(row, block + 1) : Integer.MAX_VALUE;
            }
            final long offset = base + (r >>> 32);
            if (offset >= to) {
                break;
            }
            final long position = (r & POSITION_MASK) << POSITION_SHIFT;
            final long end;
            if (i + 1 < stored(row)) {
                r = record(row, i + 1);
                end = (i + 1 >= nextFirst ? blockOffset(row, block + 1) : base) + (r >>> 32);
            } else {
                end = end(row);
            }
            if (out != null) {
                out.add(offset, (int) (end - offset), file, position);
            } else {
                visitor.onRecord(offset, (int) (end - offset), file, position);
            }
        }
    }

    /**
     * @return off-heap bytes of the index: its row, spine and chunks (as allocated: powers of
     *         two); 0 for row 0.
     */
    public static long footprint(final long row) {
        if (row == 0) {
            return 0;
        }
        long bytes = (1L << ROW_LOG) + spineBytes(row);
        for (int k = 0; k < recChunks(row); k++) {
            bytes += 1L << recordLog(k);
        }
        for (int k = 0; k < blkChunks(row); k++) {
            bytes += (1L << pairLog(k)) + (1L << firstLog(k));
        }
        return bytes;
    }

    /**
     * Gives back the chunks past what the index holds (after moving out the truncated prefix)
     * and shrinks the spine to fit.
     */
    public static void trimToSize(final LocationMemory memory, final long row) {
        if (row == 0) {
            return;
        }
        if (head(row) > 0) {
            compact(memory, row);
        }
        releaseRecords(memory, row, stored(row));
        releaseBlocks(memory, row, blockCount(row));
        resizeSpine(memory, row, Math.max(recChunks(row), blkChunks(row)));
    }

    // ------------------------------------------------------------------------------------------
    // Machinery
    // ------------------------------------------------------------------------------------------

    /**
     * @return the record holding {@code offset}, which is in [offset of the first record, end(row)).
     */
    private static int floorIndex(final long row, final long offset) {
        int low = 0;
        int high = blockCount(row) - 1;
        while (low < high) {
            final int mid = (low + high + 1) >>> 1;
            if (blockOffset(row, mid) <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        final int block = low;
        final long delta = offset - blockOffset(row, block);
        int first = blockFirst(row, block);
        int last = (block + 1 < blockCount(row) ? blockFirst(row, block + 1) : stored(row)) - 1;
        while (first < last) {
            final int mid = (first + last + 1) >>> 1;
            if (delta(row, mid) <= delta) {
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
    private static int blockOf(final long row, final int i) {
        int low = 0;
        int high = blockCount(row) - 1;
        while (low < high) {
            final int mid = (low + high + 1) >>> 1;
            if (blockFirst(row, mid) <= i) {
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
    private static long endOf(final long row, final int i, final int block) {
        if (i + 1 >= stored(row)) {
            return end(row);
        }
        final int nextBlock = block + 1 < blockCount(row) && blockFirst(row, block + 1) <= i + 1 ? block + 1 : block;
        return blockOffset(row, nextBlock) + delta(row, i + 1);
    }

    /**
     * Moves the records from {@link #head(row)} (and their blocks) to the front, then gives back the
     * chunks past half again what is left.
     */
    private static void compact(final LocationMemory memory, final long row) {
        final int firstBlock = head(row) < stored(row) ? blockOf(row, head(row)) : blockCount(row);
        final int records = stored(row) - head(row);
        final int blocks = blockCount(row) - firstBlock;
        for (int k = 0; k < records; k++) {
            setRecord(row, k, record(row, head(row) + k));
        }
        for (int b = 0; b < blocks; b++) {
            final int from = firstBlock + b;
            setBlock(row, b, blockOffset(row, from), blockFile(row, from), Math.max(0, blockFirst(row, from) - head(row)));
        }
        setCount(row, records);
        setBlockCount(row, blocks);
        setHead(row, 0);
        releaseRecords(memory, row, records + (records >> 1) + 1);
        releaseBlocks(memory, row, blocks + (blocks >> 1) + 1);
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

    // Row fields.
    private static long start(final long row) {
        return UnsafeAccess.UNSAFE.getLong(row + START);
    }

    private static void setStartOffset(final long row, final long value) {
        UnsafeAccess.UNSAFE.putLong(row + START, value);
    }

    private static long end(final long row) {
        return UnsafeAccess.UNSAFE.getLong(row + END);
    }

    private static void setEndOffset(final long row, final long value) {
        UnsafeAccess.UNSAFE.putLong(row + END, value);
    }

    private static int stored(final long row) {
        return UnsafeAccess.UNSAFE.getInt(row + STORED);
    }

    private static void setCount(final long row, final int value) {
        UnsafeAccess.UNSAFE.putInt(row + STORED, value);
    }

    private static int head(final long row) {
        return UnsafeAccess.UNSAFE.getInt(row + HEAD);
    }

    private static void setHead(final long row, final int value) {
        UnsafeAccess.UNSAFE.putInt(row + HEAD, value);
    }

    private static int blockCount(final long row) {
        return UnsafeAccess.UNSAFE.getInt(row + BLOCKS);
    }

    private static void setBlockCount(final long row, final int value) {
        UnsafeAccess.UNSAFE.putInt(row + BLOCKS, value);
    }

    private static int recChunks(final long row) {
        return UnsafeAccess.UNSAFE.getInt(row + REC_CHUNKS);
    }

    private static void setRecChunks(final long row, final int value) {
        UnsafeAccess.UNSAFE.putInt(row + REC_CHUNKS, value);
    }

    private static int blkChunks(final long row) {
        return UnsafeAccess.UNSAFE.getInt(row + BLK_CHUNKS);
    }

    private static void setBlkChunks(final long row, final int value) {
        UnsafeAccess.UNSAFE.putInt(row + BLK_CHUNKS, value);
    }

    /** @return the address of the spine's slot for chunks {@code k}. */
    private static long spineSlot(final long row, final int k) {
        return UnsafeAccess.UNSAFE.getLong(row + SPINE) + (long) SLOT * k;
    }

    private static long spineBytes(final long row) {
        final int log = UnsafeAccess.UNSAFE.getInt(row + SPINE_LOG);
        return log == 0 ? 0 : 1L << log;
    }

    /** Sizes the spine for {@code chunks} chunk indexes (0: none), keeping the slots it holds. */
    private static void resizeSpine(final LocationMemory memory, final long row, final int chunks) {
        final int oldLog = UnsafeAccess.UNSAFE.getInt(row + SPINE_LOG);
        final int log = chunks == 0 ? 0 : LocationMemory.logFor((long) SLOT * chunks);
        if (log == oldLog) {
            return;
        }
        final long old = UnsafeAccess.UNSAFE.getLong(row + SPINE);
        long spine = 0;
        if (log != 0) {
            spine = memory.allocate(log);
            if (old != 0) {
                UnsafeAccess.UNSAFE.copyMemory(old, spine, Math.min(1L << oldLog, 1L << log) / SLOT * SLOT);
            }
        }
        UnsafeAccess.UNSAFE.putLong(row + SPINE, spine);
        UnsafeAccess.UNSAFE.putInt(row + SPINE_LOG, log);
        if (old != 0) {
            memory.free(old, oldLog);
        }
    }

    /** Makes room in the spine for chunks {@code k}: doubling. */
    private static void ensureSpine(final LocationMemory memory, final long row, final int k) {
        if ((long) SLOT * (k + 1) > spineBytes(row)) {
            resizeSpine(memory, row, k == 0 ? 1 : 2 * k);
        }
    }

    private static int recordLog(final int k) {
        return 3 + Math.min(k, RECORD_LOG);
    }

    private static int pairLog(final int k) {
        return 4 + Math.min(k, BLOCK_LOG);
    }

    private static int firstLog(final int k) {
        return Math.max(LocationMemory.MIN_LOG, 2 + Math.min(k, BLOCK_LOG));
    }

    private static long record(final long row, final int i) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(row, chunkOf(i, RECORD_LOG))) + 8L * slotOf(i, RECORD_LOG));
    }

    private static long delta(final long row, final int i) {
        return record(row, i) >>> 32;
    }

    private static void setRecord(final long row, final int i, final long value) {
        UnsafeAccess.UNSAFE.putLong(UnsafeAccess.UNSAFE.getLong(spineSlot(row, chunkOf(i, RECORD_LOG))) + 8L * slotOf(i, RECORD_LOG), value);
    }

    private static long blockOffset(final long row, final int b) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(row, chunkOf(b, BLOCK_LOG)) + 8) + 16L * slotOf(b, BLOCK_LOG));
    }

    private static long blockFile(final long row, final int b) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(row, chunkOf(b, BLOCK_LOG)) + 8) + 16L * slotOf(b, BLOCK_LOG) + 8);
    }

    private static int blockFirst(final long row, final int b) {
        return UnsafeAccess.UNSAFE.getInt(UnsafeAccess.UNSAFE.getLong(spineSlot(row, chunkOf(b, BLOCK_LOG)) + 16) + 4L * slotOf(b, BLOCK_LOG));
    }

    private static void setBlock(final long row, final int b, final long offset, final long fileNumber, final int first) {
        final long slot = spineSlot(row, chunkOf(b, BLOCK_LOG));
        final int at = slotOf(b, BLOCK_LOG);
        final long pair = UnsafeAccess.UNSAFE.getLong(slot + 8) + 16L * at;
        UnsafeAccess.UNSAFE.putLong(pair, offset);
        UnsafeAccess.UNSAFE.putLong(pair + 8, fileNumber);
        UnsafeAccess.UNSAFE.putInt(UnsafeAccess.UNSAFE.getLong(slot + 16) + 4L * at, first);
    }

    private static void ensureRecords(final LocationMemory memory, final long row, final int records) {
        while (capacity(recChunks(row), RECORD_LOG) < records) {
            final int k = recChunks(row);
            ensureSpine(memory, row, k);
            UnsafeAccess.UNSAFE.putLong(spineSlot(row, k), memory.allocate(recordLog(k)));
            setRecChunks(row, k + 1);
        }
    }

    private static void ensureBlocks(final LocationMemory memory, final long row, final int blocks) {
        while (capacity(blkChunks(row), BLOCK_LOG) < blocks) {
            final int k = blkChunks(row);
            ensureSpine(memory, row, k);
            final long pairs = memory.allocate(pairLog(k));
            final long firsts;
            try {
                firsts = memory.allocate(firstLog(k));
            } catch (final RuntimeException | Error e) {
                memory.free(pairs, pairLog(k));
                throw e;
            }
            final long slot = spineSlot(row, k);
            UnsafeAccess.UNSAFE.putLong(slot + 8, pairs);
            UnsafeAccess.UNSAFE.putLong(slot + 16, firsts);
            setBlkChunks(row, k + 1);
        }
    }

    /** Gives back the record chunks not needed to hold {@code keep} records. */
    private static void releaseRecords(final LocationMemory memory, final long row, final int keep) {
        while (recChunks(row) > 0 && capacity(recChunks(row) - 1, RECORD_LOG) >= keep) {
            final int k = recChunks(row) - 1;
            setRecChunks(row, k);
            final long slot = spineSlot(row, k);
            final long chunk = UnsafeAccess.UNSAFE.getLong(slot);
            UnsafeAccess.UNSAFE.putLong(slot, 0);
            memory.free(chunk, recordLog(k));
        }
    }

    /** Gives back the block chunks not needed to hold {@code keep} blocks. */
    private static void releaseBlocks(final LocationMemory memory, final long row, final int keep) {
        while (blkChunks(row) > 0 && capacity(blkChunks(row) - 1, BLOCK_LOG) >= keep) {
            final int k = blkChunks(row) - 1;
            setBlkChunks(row, k);
            final long slot = spineSlot(row, k);
            final long pairs = UnsafeAccess.UNSAFE.getLong(slot + 8);
            final long firsts = UnsafeAccess.UNSAFE.getLong(slot + 16);
            UnsafeAccess.UNSAFE.putLong(slot + 8, 0);
            UnsafeAccess.UNSAFE.putLong(slot + 16, 0);
            memory.free(pairs, pairLog(k));
            memory.free(firsts, firstLog(k));
        }
    }

    /** @return the row's bounds and counts, for messages. */
    public static String describe(final long row) {
        if (row == 0) {
            return "LocationIndex{cleared}";
        }
        return "LocationIndex{start=" + start(row) + ", end=" + end(row) + ", records=" + (stored(row) - head(row))
            + ", blocks=" + blockCount(row) + '}';
    }
}
