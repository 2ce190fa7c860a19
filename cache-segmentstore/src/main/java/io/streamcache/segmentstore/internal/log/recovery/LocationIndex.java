package io.streamcache.segmentstore.internal.log.recovery;

import org.agrona.UnsafeAccess;

/**
 * Where one segment's bytes are in the log, thread-safe (every public method synchronizes on
 * the index): segment offset to (file number, position of the DATA record) for every DATA
 * record of the segment, with floor lookup. It has one writer (recovery, then the log writer,
 * appending in log order) and any number of readers (historical reads); they hold the monitor
 * for a binary search or for copying out the locations of one range. The monitor is the
 * index's own: readers of different segments never wait for each other.
 *
 * <h2>Off-heap</h2>
 * The object is a handle of 24 bytes of heap (its header, the {@link LocationMemory} and the
 * address of its row); everything else is in off-heap chunks of the log's
 * {@link LocationMemory}: a 64-byte <em>row</em>, a <em>spine</em> of chunk addresses, and
 * the chunks of records and blocks. That memory is metadata of the log, not part of the
 * cache's configured memory bound: see {@link LocationMemory}.
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
 * truncation drops them or the segment is deleted ({@link #clear()}), and are handed out again
 * to any index of the log: in a steady state where segments are truncated or deleted as the
 * log grows, adding records allocates nothing, on or off the heap. A chunk is given back only
 * under the index's monitor, after the index dropped its address, so no reader (they read under
 * the monitor) can see it again.
 *
 * <p>A record's length is not stored: a segment's DATA records are contiguous, so record i ends
 * where record i+1 starts, and the last one at {@link #endOffset()}. Records are 8-byte
 * aligned, so a position shifted right by {@link #POSITION_SHIFT} fits 32 bits for files up to
 * {@link #MAX_POSITION} (32 GiB). Zero-length DATA records are not indexed (they hold no byte).
 *
 * <p><b>Footprint</b> (off-heap): 8 bytes per record plus 20 per block, 8.31 bytes per record with
 * full blocks, plus the row and the spine; the last chunk of each kind is partly empty (at most
 * 4 KB + 5 KB). {@link #footprint()} computes it.
 *
 * <p><b>Truncation</b> ({@link #truncate}) moves the start offset and drops the records wholly
 * before it (the one containing it stays); the entries are moved to the front once the dropped
 * prefix is at least half of them, and the chunks then past half again the live entries are
 * given back, so a segment truncated as it grows keeps a bounded index.
 *
 * <p><b>Lifetime:</b> {@link #clear()} gives everything back; a cleared index touches no memory
 * (lookups find nothing, {@link #startOffset()} and {@link #endOffset()} say 0), so its
 * memory may be {@link LocationMemory#close() closed} once every index still in use is cleared.
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
    /** Heap bytes of the object: header, the memory's reference and the row's address. */
    public static final int HEAP_BYTES = 24;
    private static final long DELTA_MASK = MAX_DELTA;
    private static final long POSITION_MASK = (1L << POSITION_BITS) - 1;
    /** log2 of the largest record chunk: 512 records, 4 KB. */
    private static final int RECORD_LOG = 9;
    /** log2 of the largest block chunk: 256 blocks, 4 KB of offset/file pairs and 1 KB of firsts. */
    private static final int BLOCK_LOG = 8;

    // The row: see the class comment.
    private static final int ROW_LOG = 6;
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

    private final LocationMemory memory;
    /** The row's address; 0 once cleared. Guarded by the monitor. */
    private long row;

    /**
     * @param startOffset the offset from which the log holds the segment's bytes: 0 for a segment
     *                    created in the log, its logged length for one first seen in a SNAPSHOT.
     * @param memory      where the row and chunks are allocated and given back to: the log's.
     * @throws IllegalArgumentException if {@code startOffset < 0}.
     * @throws IllegalStateException    if {@code memory} is closed.
     */
    public LocationIndex(final long startOffset, final LocationMemory memory) {
        if (startOffset < 0) {
            throw new IllegalArgumentException("startOffset=" + startOffset + " must be >= 0");
        }
        this.memory = java.util.Objects.requireNonNull(memory, "memory");
        final long r = memory.allocate(ROW_LOG);
        UnsafeAccess.UNSAFE.setMemory(r, 1L << ROW_LOG, (byte) 0);
        UnsafeAccess.UNSAFE.putLong(r + START, startOffset);
        UnsafeAccess.UNSAFE.putLong(r + END, startOffset);
        this.row = r;
    }

    /** @return the memory holding this index. */
    public LocationMemory memory() {
        return memory;
    }

    /**
     * Indexes a DATA record: the next bytes of the segment, in log order.
     *
     * @param offset     segment offset of its payload byte 0: must be {@link #end()}.
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
        if (row == 0) {
            throw new IllegalStateException("location index was cleared (segment deleted)");
        }
        if (offset != end()) {
            throw new IllegalArgumentException("offset=" + offset + " is not end()=" + end());
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
        final int stored = stored();
        final int blocks = blockCount();
        final int last = blocks - 1;
        long base = offset;
        boolean opens = last < 0;
        if (!opens) {
            final long slot = spineSlot(chunkOf(last, BLOCK_LOG));
            final int at = slotOf(last, BLOCK_LOG);
            final long pair = UnsafeAccess.UNSAFE.getLong(slot + 8) + 16L * at;
            base = UnsafeAccess.UNSAFE.getLong(pair);
            opens = stored - UnsafeAccess.UNSAFE.getInt(UnsafeAccess.UNSAFE.getLong(slot + 16) + 4L * at) >= BLOCK_RECORDS || UnsafeAccess.UNSAFE.getLong(pair + 8) != fileNumber
                || offset - base > MAX_DELTA;
        }
        if (opens) {
            ensureBlocks(blockCount() + 1);
            setBlock(blockCount(), offset, fileNumber, stored());
            setBlockCount(blockCount() + 1);
            base = offset;
        }
        ensureRecords(stored() + 1);
        setRecord(stored(), pack(offset - base, (int) (position >>> POSITION_SHIFT)));
        setCount(stored() + 1);
        setEndOffset(offset + length);
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
        if (row == 0 || head() >= stored() || offset < 0 || offset >= end()) {
            return false;
        }
        final int headBlock = blockOf(head());
        if (offset < blockOffset(headBlock) + delta(head())) {
            return false;
        }
        final int i = floorIndex(offset);
        final int b = blockOf(i);
        final long base = blockOffset(b);
        if (i < head() || base + delta(i) != offset || endOf(i, b) - offset != length) {
            return false;
        }
        final int stored = (int) (position >>> POSITION_SHIFT);
        final long oldFile = blockFile(b);
        if (oldFile == fileNumber) {
            setRecord(i, pack(delta(i), stored));
            return true;
        }
        final int first = blockFirst(b);
        final int last = (b + 1 < blockCount() ? blockFirst(b + 1) : stored()) - 1;
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
        ensureBlocks(blockCount() + 1);
        for (int k = blockCount(); k > at; k--) {
            setBlock(k, blockOffset(k - 1), blockFile(k - 1), blockFirst(k - 1));
        }
        setBlock(at, offset, fileNumber, first);
        setBlockCount(blockCount() + 1);
    }

    private void removeBlock(final int at) {
        for (int k = at; k < blockCount() - 1; k++) {
            setBlock(k, blockOffset(k + 1), blockFile(k + 1), blockFirst(k + 1));
        }
        setBlockCount(blockCount() - 1);
    }

    /**
     * Moves the start offset forward to {@code offset} and drops the records wholly before it.
     * A no-op if {@code offset} is at or before the start offset.
     *
     * @throws IllegalArgumentException if {@code offset} is past {@link #end()}.
     */
    public synchronized void truncate(final long offset) {
        truncateOwned(offset);
    }

    void truncateOwned(final long offset) {
        if (row == 0 || offset <= start()) {
            return;
        }
        if (offset > end()) {
            throw new IllegalArgumentException("offset=" + offset + " is past end()=" + end());
        }
        setStartOffset(offset);
        setHead(offset == end() ? stored() : floorIndex(offset));
        if (head() >= BLOCK_RECORDS && head() >= stored() - head()) {
            compact();
        }
    }

    /**
     * Drops everything: the segment was deleted; the row, spine and chunks go back to the
     * memory. Later lookups find nothing; {@link #add} throws. Idempotent.
     */
    public synchronized void clear() {
        final long r = row;
        if (r == 0) {
            return;
        }
        releaseRecords(0);
        releaseBlocks(0);
        resizeSpine(0);
        row = 0;
        memory.free(r, ROW_LOG);
    }

    /**
     * @return whether {@link #clear()} was called.
     */
    public synchronized boolean isCleared() {
        return row == 0;
    }

    /**
     * @return the first offset whose location is known: the segment's start offset, or the
     *         offset from which the log holds its bytes if later.
     */
    public synchronized long startOffset() {
        return row == 0 ? 0 : start();
    }

    /**
     * @return the end of the indexed bytes: the end of the last DATA record indexed.
     */
    public synchronized long endOffset() {
        return row == 0 ? 0 : end();
    }

    /**
     * @return records indexed and not dropped.
     */
    public synchronized int count() {
        return row == 0 ? 0 : stored() - head();
    }

    /**
     * Copies out the locations of the records holding {@code [from, to)} clipped to
     * {@code [startOffset(), endOffset())}; the list's {@code from()} and {@code to()} say the
     * clipped range (empty if nothing of it is held).
     *
     * @return false (and an empty list from {@code from}) if the index was cleared.
     */
    public synchronized boolean locate(final long from, final long to, final LocationList out) {
        if (row == 0) {
            out.reset(from, from);
            return false;
        }
        final long clippedFrom = Math.max(from, start());
        final long clippedTo = Math.min(to, end());
        out.reset(clippedFrom, Math.max(clippedFrom, clippedTo));
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
        if (row != 0 && head() < stored()) {
            scan(head(), blockOf(head()), Long.MAX_VALUE, null, visitor);
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
        int nextFirst = block + 1 < blockCount() ? blockFirst(block + 1) : Integer.MAX_VALUE;
        long r = record(from);
        for (int i = from; i < stored(); i++) {
            if (i >= nextFirst) {
                block++;
                base = blockOffset(block);
                file = blockFile(block);
                nextFirst = block + 1 < blockCount() ? blockFirst(block + 1) : Integer.MAX_VALUE;
            }
            final long offset = base + (r >>> 32);
            if (offset >= to) {
                break;
            }
            final long position = (r & POSITION_MASK) << POSITION_SHIFT;
            final long end;
            if (i + 1 < stored()) {
                r = record(i + 1);
                end = (i + 1 >= nextFirst ? blockOffset(block + 1) : base) + (r >>> 32);
            } else {
                end = end();
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
     *         two); 0 once cleared. Its heap is {@link #HEAP_BYTES}.
     */
    public synchronized long footprint() {
        if (row == 0) {
            return 0;
        }
        long bytes = (1L << ROW_LOG) + spineBytes();
        for (int k = 0; k < recChunks(); k++) {
            bytes += 1L << recordLog(k);
        }
        for (int k = 0; k < blkChunks(); k++) {
            bytes += (1L << pairLog(k)) + (1L << firstLog(k));
        }
        return bytes;
    }

    /**
     * Gives back the chunks past what the index holds (after moving out the truncated prefix)
     * and shrinks the spine to fit.
     */
    public synchronized void trimToSize() {
        if (row == 0) {
            return;
        }
        if (head() > 0) {
            compact();
        }
        releaseRecords(stored());
        releaseBlocks(blockCount());
        resizeSpine(Math.max(recChunks(), blkChunks()));
    }

    // ------------------------------------------------------------------------------------------
    // Machinery
    // ------------------------------------------------------------------------------------------

    /**
     * @return the record holding {@code offset}, which is in [offset of the first record, end()).
     */
    private int floorIndex(final long offset) {
        int low = 0;
        int high = blockCount() - 1;
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
        int last = (block + 1 < blockCount() ? blockFirst(block + 1) : stored()) - 1;
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
        int high = blockCount() - 1;
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
        if (i + 1 >= stored()) {
            return end();
        }
        final int nextBlock = block + 1 < blockCount() && blockFirst(block + 1) <= i + 1 ? block + 1 : block;
        return blockOffset(nextBlock) + delta(i + 1);
    }

    /**
     * Moves the records from {@link #head()} (and their blocks) to the front, then gives back the
     * chunks past half again what is left.
     */
    private void compact() {
        final int firstBlock = head() < stored() ? blockOf(head()) : blockCount();
        final int records = stored() - head();
        final int blocks = blockCount() - firstBlock;
        for (int k = 0; k < records; k++) {
            setRecord(k, record(head() + k));
        }
        for (int b = 0; b < blocks; b++) {
            final int from = firstBlock + b;
            setBlock(b, blockOffset(from), blockFile(from), Math.max(0, blockFirst(from) - head()));
        }
        setCount(records);
        setBlockCount(blocks);
        setHead(0);
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

    // Row fields.
    private long start() {
        return UnsafeAccess.UNSAFE.getLong(row + START);
    }

    private void setStartOffset(final long value) {
        UnsafeAccess.UNSAFE.putLong(row + START, value);
    }

    private long end() {
        return UnsafeAccess.UNSAFE.getLong(row + END);
    }

    private void setEndOffset(final long value) {
        UnsafeAccess.UNSAFE.putLong(row + END, value);
    }

    private int stored() {
        return UnsafeAccess.UNSAFE.getInt(row + STORED);
    }

    private void setCount(final int value) {
        UnsafeAccess.UNSAFE.putInt(row + STORED, value);
    }

    private int head() {
        return UnsafeAccess.UNSAFE.getInt(row + HEAD);
    }

    private void setHead(final int value) {
        UnsafeAccess.UNSAFE.putInt(row + HEAD, value);
    }

    private int blockCount() {
        return UnsafeAccess.UNSAFE.getInt(row + BLOCKS);
    }

    private void setBlockCount(final int value) {
        UnsafeAccess.UNSAFE.putInt(row + BLOCKS, value);
    }

    private int recChunks() {
        return UnsafeAccess.UNSAFE.getInt(row + REC_CHUNKS);
    }

    private void setRecChunks(final int value) {
        UnsafeAccess.UNSAFE.putInt(row + REC_CHUNKS, value);
    }

    private int blkChunks() {
        return UnsafeAccess.UNSAFE.getInt(row + BLK_CHUNKS);
    }

    private void setBlkChunks(final int value) {
        UnsafeAccess.UNSAFE.putInt(row + BLK_CHUNKS, value);
    }

    /** @return the address of the spine's slot for chunks {@code k}. */
    private long spineSlot(final int k) {
        return UnsafeAccess.UNSAFE.getLong(row + SPINE) + (long) SLOT * k;
    }

    private long spineBytes() {
        final int log = UnsafeAccess.UNSAFE.getInt(row + SPINE_LOG);
        return log == 0 ? 0 : 1L << log;
    }

    /** Sizes the spine for {@code chunks} chunk indexes (0: none), keeping the slots it holds. */
    private void resizeSpine(final int chunks) {
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
    private void ensureSpine(final int k) {
        if ((long) SLOT * (k + 1) > spineBytes()) {
            resizeSpine(k == 0 ? 1 : 2 * k);
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

    private long record(final int i) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(chunkOf(i, RECORD_LOG))) + 8L * slotOf(i, RECORD_LOG));
    }

    private long delta(final int i) {
        return record(i) >>> 32;
    }

    private void setRecord(final int i, final long value) {
        UnsafeAccess.UNSAFE.putLong(UnsafeAccess.UNSAFE.getLong(spineSlot(chunkOf(i, RECORD_LOG))) + 8L * slotOf(i, RECORD_LOG), value);
    }

    private long blockOffset(final int b) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(chunkOf(b, BLOCK_LOG)) + 8) + 16L * slotOf(b, BLOCK_LOG));
    }

    private long blockFile(final int b) {
        return UnsafeAccess.UNSAFE.getLong(UnsafeAccess.UNSAFE.getLong(spineSlot(chunkOf(b, BLOCK_LOG)) + 8) + 16L * slotOf(b, BLOCK_LOG) + 8);
    }

    private int blockFirst(final int b) {
        return UnsafeAccess.UNSAFE.getInt(UnsafeAccess.UNSAFE.getLong(spineSlot(chunkOf(b, BLOCK_LOG)) + 16) + 4L * slotOf(b, BLOCK_LOG));
    }

    private void setBlock(final int b, final long offset, final long fileNumber, final int first) {
        final long slot = spineSlot(chunkOf(b, BLOCK_LOG));
        final int at = slotOf(b, BLOCK_LOG);
        final long pair = UnsafeAccess.UNSAFE.getLong(slot + 8) + 16L * at;
        UnsafeAccess.UNSAFE.putLong(pair, offset);
        UnsafeAccess.UNSAFE.putLong(pair + 8, fileNumber);
        UnsafeAccess.UNSAFE.putInt(UnsafeAccess.UNSAFE.getLong(slot + 16) + 4L * at, first);
    }

    private void ensureRecords(final int records) {
        while (capacity(recChunks(), RECORD_LOG) < records) {
            final int k = recChunks();
            ensureSpine(k);
            UnsafeAccess.UNSAFE.putLong(spineSlot(k), memory.allocate(recordLog(k)));
            setRecChunks(k + 1);
        }
    }

    private void ensureBlocks(final int blocks) {
        while (capacity(blkChunks(), BLOCK_LOG) < blocks) {
            final int k = blkChunks();
            ensureSpine(k);
            final long pairs = memory.allocate(pairLog(k));
            final long firsts;
            try {
                firsts = memory.allocate(firstLog(k));
            } catch (final RuntimeException | Error e) {
                memory.free(pairs, pairLog(k));
                throw e;
            }
            final long slot = spineSlot(k);
            UnsafeAccess.UNSAFE.putLong(slot + 8, pairs);
            UnsafeAccess.UNSAFE.putLong(slot + 16, firsts);
            setBlkChunks(k + 1);
        }
    }

    /** Gives back the record chunks not needed to hold {@code keep} records. */
    private void releaseRecords(final int keep) {
        while (recChunks() > 0 && capacity(recChunks() - 1, RECORD_LOG) >= keep) {
            final int k = recChunks() - 1;
            setRecChunks(k);
            final long slot = spineSlot(k);
            final long chunk = UnsafeAccess.UNSAFE.getLong(slot);
            UnsafeAccess.UNSAFE.putLong(slot, 0);
            memory.free(chunk, recordLog(k));
        }
    }

    /** Gives back the block chunks not needed to hold {@code keep} blocks. */
    private void releaseBlocks(final int keep) {
        while (blkChunks() > 0 && capacity(blkChunks() - 1, BLOCK_LOG) >= keep) {
            final int k = blkChunks() - 1;
            setBlkChunks(k);
            final long slot = spineSlot(k);
            final long pairs = UnsafeAccess.UNSAFE.getLong(slot + 8);
            final long firsts = UnsafeAccess.UNSAFE.getLong(slot + 16);
            UnsafeAccess.UNSAFE.putLong(slot + 8, 0);
            UnsafeAccess.UNSAFE.putLong(slot + 16, 0);
            memory.free(pairs, pairLog(k));
            memory.free(firsts, firstLog(k));
        }
    }

    @Override
    public synchronized String toString() {
        if (row == 0) {
            return "LocationIndex{cleared}";
        }
        return "LocationIndex{start()=" + start() + ", end()=" + end() + ", records=" + (stored() - head())
            + ", blocks=" + blockCount() + '}';
    }
}
