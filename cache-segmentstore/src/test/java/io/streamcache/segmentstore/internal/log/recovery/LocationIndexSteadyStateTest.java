package io.streamcache.segmentstore.internal.log.recovery;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The claim of issue 14 for the location index: once segments are truncated and deleted as the
 * log grows, adding records allocates nothing, every chunk coming back from the pool. Counted
 * both by the pool (no chunk allocated after the warm-up) and by the JVM (bytes allocated by
 * this thread over the measured loop).
 */
class LocationIndexSteadyStateTest {
    @Test
    void shouldAllocateNothingOnceChunksAreRecycled() {
        final LocationChunkPool pool = new LocationChunkPool(1L << 20, false);
        final LocationIndex[] indexes = new LocationIndex[16];
        final long[] ends = new long[indexes.length];
        for (int i = 0; i < indexes.length; i++) {
            indexes[i] = new LocationIndex(0, pool);
        }
        run(indexes, ends, pool, 200_000);
        final long chunks = pool.allocated();
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final long id = Thread.currentThread().getId();
        final long before = threads.getThreadAllocatedBytes(id);
        run(indexes, ends, pool, 200_000);
        final long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertEquals(chunks, pool.allocated(), "no chunk allocated in the steady state");
        assertTrue(pool.reused() > 0);
        // The MXBean call itself may allocate a little; 200,000 adds allocating anything would show far more.
        assertTrue(allocated < 1024, "bytes allocated by 200,000 adds with truncations: " + allocated);
    }

    /** Each index gets records in runs of files and is truncated to its last ~300 records. */
    private static void run(final LocationIndex[] indexes, final long[] ends, final LocationChunkPool pool, final int adds) {
        for (int n = 0; n < adds; n++) {
            final int i = n % indexes.length;
            final long record = ends[i] / 100;
            indexes[i].add(ends[i], 100, 1 + record / 37, 8 * (record % 10_000));
            ends[i] += 100;
            if (record % 250 == 249) {
                indexes[i].truncate(ends[i] - 300 * 100L);
            }
        }
    }
}
