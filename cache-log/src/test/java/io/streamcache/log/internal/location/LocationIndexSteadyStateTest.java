package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The steady-state claim for the location index: once segments are truncated and deleted as the
 * log grows, adding records allocates nothing, every chunk coming back from the off-heap memory.
 * Counted both by the memory (no chunk carved and no slab added after the warm-up) and by the JVM (bytes allocated by
 * this thread over the measured loop).
 */
class LocationIndexSteadyStateTest {
    @Test
    void shouldAllocateNothingOnceChunksAreRecycled() {
        final LocationMemory memory = new LocationMemory();
        final LocationIndex[] indexes = new LocationIndex[16];
        final long[] ends = new long[indexes.length];
        for (int i = 0; i < indexes.length; i++) {
            indexes[i] = LocationIndex.create(0, memory);
        }
        run(indexes, ends, 200_000);
        final long chunks = memory.carved();
        final long reserved = memory.reservedBytes();
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final long id = Thread.currentThread().getId();
        final long before = threads.getThreadAllocatedBytes(id);
        run(indexes, ends, 200_000);
        final long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertEquals(chunks, memory.carved(), "no chunk carved in the steady state");
        assertEquals(reserved, memory.reservedBytes(), "no slab added in the steady state");
        assertTrue(memory.reused() > 0);
        // The MXBean call itself may allocate a little; 200,000 adds allocating anything would show far more.
        assertTrue(allocated < 1024, "bytes allocated by 200,000 adds with truncations: " + allocated);
    }

    /** Each index gets records in runs of files and is truncated to its last ~300 records. */
    private static void run(final LocationIndex[] indexes, final long[] ends, final int adds) {
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
