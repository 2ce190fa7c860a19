package io.streamcache.core.cache;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A statistic counter for the read path that costs no atomic instruction: one cell per thread
 * slot (threads hashed by id, as the allocator's hints are), each bumped with a plain read and
 * an opaque write, summed by readers of the stats.
 *
 * <p><b>Why not a {@code LongAdder}.</b> An uncontended {@code LongAdder} is a compare-and-set on
 * its base, a locked instruction that also waits for the store buffer to drain: on a read of a
 * hot 10 KB entry it was the one atomic of the whole operation (counted per operation in
 * {@code docs/benchmarks.md}, "Block cache").
 *
 * <p><b>Layout.</b> Each cell is the first {@code long} of its own 128-byte stripe, so that
 * threads of different slots never write one cache line (two lines, for the adjacent-line
 * prefetcher):
 * <pre>
 *   cells: [ slot 0 | 15 unused longs ][ slot 1 | 15 unused longs ] ... [ slot 63 | ... ]
 * </pre>
 *
 * <p><b>Threading:</b> any thread may increment and sum at once. Exact while no two threads of
 * one slot increment at the same instant; when they do, one increment may be lost (the count
 * only ever undercounts). A sum is not a snapshot across cells.
 */
final class StripedCounter {
    /** Cells: a power of two; threads are hashed to them by id. */
    static final int SLOTS = 64;
    private static final int STRIDE = 128 / Long.BYTES;
    private static final VarHandle CELLS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] cells = new long[SLOTS * STRIDE];

    /** Adds one in the calling thread's cell. */
    void increment() {
        final int i = ((int)Thread.currentThread().getId() & (SLOTS - 1)) * STRIDE;
        CELLS.setOpaque(cells, i, (long)CELLS.getOpaque(cells, i) + 1);
    }

    /** @return the sum of the cells. */
    long sum() {
        long sum = 0;
        for (int i = 0; i < cells.length; i += STRIDE) {
            sum += (long)CELLS.getOpaque(cells, i);
        }
        return sum;
    }
}
