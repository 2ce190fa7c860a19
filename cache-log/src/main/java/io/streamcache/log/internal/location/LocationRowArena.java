package io.streamcache.log.internal.location;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import org.agrona.UnsafeAccess;

import java.util.Arrays;

/**
 * The rows of a {@link LocationTable}, numbered, so that the table's pages hold a 4-byte number
 * per segment id instead of an 8-byte address: rows are 64-byte slots of blocks of
 * {@link #BLOCK_ROWS} rows, each block one 64 KiB chunk of the table's {@link LocationMemory}.
 * <pre>
 *  blocks (long[], volatile, grows by doubling)      block b: 1,024 rows of 64 B
 *  +---------+---------+----                         +--------+--------+-----+--------+
 *  | block 0 | block 1 | ...   --------------------&gt;  | row 0  | row 1  | ... | row 1023|
 *  +---------+---------+----                         +--------+--------+-----+--------+
 *  row number n (n &gt;= 1; 0 means none) = b * 1024 + slot, address = blocks[b] + 64 * slot
 *  free rows: a list through the rows themselves (bytes 0..3: the next free number, 0 ends it)
 * </pre>
 * A freed row's number is handed out again to any segment; blocks go back to the memory only
 * with the memory's close. Row 0 of block 0 is never used (number 0 is "none").
 *
 * <p><b>Threading:</b> {@link #allocate} and {@link #free} hold the arena's monitor (the table
 * calls them under a stripe's write lock and its structure monitor: lock order stripe, structure,
 * arena, memory). {@link #address} takes no lock: a number read from the table (an acquire read
 * of a slot written with release after the number was allocated) is in a block the
 * {@code blocks} array published before it.
 */
final class LocationRowArena {
    /** Rows per block: 1,024 rows of 64 bytes, 64 KiB. */
    static final int BLOCK_ROWS = 1 << 10;
    private static final int BLOCK_SHIFT = 10;
    private static final int BLOCK_LOG = BLOCK_SHIFT + LocationRows.ROW_LOG;

    private final LocationMemory memory;
    /** Block addresses; grown by copying, then published. */
    private volatile long[] blocks = new long[0];
    @GuardedBy("this")
    private int blockCount;
    /** Numbers handed out once at least: the next new one is {@code carved}. */
    @GuardedBy("this")
    private int carved = 1;
    /** The first free number, 0 if none. */
    @GuardedBy("this")
    private int freeHead;
    private int live;
    /** {@link #release} was called. */
    @GuardedBy("this")
    private boolean released;

    LocationRowArena(final LocationMemory memory) {
        this.memory = memory;
    }

    /** @return the address of row {@code number} (at least 1, handed out by {@link #allocate}). */
    long address(final int number) {
        return blocks[number >>> BLOCK_SHIFT] + ((long) (number & (BLOCK_ROWS - 1)) << LocationRows.ROW_LOG);
    }

    /**
     * @return the number of a row made an empty index from {@code startOffset}.
     * @throws IllegalStateException if the arena was released or the memory closed, or the numbers ran out (2^31 rows).
     */
    synchronized int allocate(final long startOffset) {
        if (released) {
            throw new IllegalStateException("location rows were released: the table is closed");
        }
        int number = freeHead;
        if (number != 0) {
            freeHead = UnsafeAccess.UNSAFE.getInt(address(number));
        } else {
            if (carved == Integer.MAX_VALUE) {
                throw new IllegalStateException("location rows exhausted: " + carved);
            }
            number = carved;
            if (number >>> BLOCK_SHIFT >= blockCount) {
                addBlock();
            }
            carved++;
        }
        LocationRows.init(address(number), startOffset);
        live++;
        return number;
    }

    @GuardedBy("this")
    private void addBlock() {
        final long block = memory.allocate(BLOCK_LOG);
        long[] current = blocks;
        if (blockCount == current.length) {
            current = Arrays.copyOf(current, Math.max(4, 2 * current.length));
        }
        current[blockCount++] = block;
        // A write to the array a reader may hold is of a slot it cannot ask for yet; publish anyway.
        blocks = current;
    }

    /** Gives back a row's spine and chunks and takes its number back (0: nothing). */
    synchronized void free(final int number) {
        if (number == 0 || released) {
            return;
        }
        final long row = address(number);
        LocationRows.releaseContents(memory, row);
        if (memory.poisoned()) {
            UnsafeAccess.UNSAFE.setMemory(row + 4, (1L << LocationRows.ROW_LOG) - 4, (byte) -1);
        }
        UnsafeAccess.UNSAFE.putInt(row, freeHead);
        freeHead = number;
        live--;
    }

    /**
     * Gives the blocks back to the memory: once no row is in use and none will be asked for
     * (the table's close). Later {@link #allocate} calls throw.
     */
    synchronized void release() {
        final long[] current = blocks;
        for (int b = 0; b < blockCount; b++) {
            memory.free(current[b], BLOCK_LOG);
        }
        blockCount = 0;
        blocks = new long[0];
        freeHead = 0;
        released = true;
    }

    /** @return rows handed out and not freed. */
    synchronized int live() {
        return live;
    }

    /** @return bytes of the blocks (held until the memory closes). */
    synchronized long blockBytes() {
        return (long) blockCount << BLOCK_LOG;
    }
}
