package io.streamcache.log.internal;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FileDataNodes} against a map of node to values, through growth past several pages and reuse of freed nodes. */
class FileDataNodesTest {
    @Test
    void nodesKeepTheirValuesAndFreedNodesAreReusedBeforeNewOnes() {
        final SplittableRandom random = new SplittableRandom(7);
        final FileDataNodes nodes = new FileDataNodes();
        final Map<Integer, long[]> model = new HashMap<>();
        final List<Integer> live = new ArrayList<>();
        int highest = -1;
        for (int step = 0; step < 50_000; step++) {
            if (live.isEmpty() || random.nextInt(10) < 6) {
                final long file = random.nextLong(1L << 40);
                final long end = random.nextLong();
                final int next = random.nextInt(4) == 0 ? FileDataNodes.NIL : random.nextInt(100_000);
                final int n = nodes.allocate(file, end, next);
                assertTrue(!model.containsKey(n), "node " + n + " is in use");
                if (n > highest) {
                    assertEquals(highest + 1, n, "a new node only when none is free");
                    assertEquals(model.size(), n, "no node free while a new one is made");
                    highest = n;
                }
                model.put(n, new long[] {file, end, next});
                live.add(n);
            } else if (random.nextBoolean()) {
                final int n = live.remove(random.nextInt(live.size()));
                nodes.free(n);
                model.remove(n);
            } else {
                final int n = live.get(random.nextInt(live.size()));
                final long end = random.nextLong();
                nodes.end(n, end);
                model.get(n)[1] = end;
            }
        }
        assertEquals(model.size(), nodes.live());
        assertTrue(highest > 4 * 1024, "several pages were made: " + highest);
        for (final Map.Entry<Integer, long[]> e : model.entrySet()) {
            assertEquals(e.getValue()[0], nodes.file(e.getKey()));
            assertEquals(e.getValue()[1], nodes.end(e.getKey()));
            assertEquals(e.getValue()[2], nodes.next(e.getKey()));
        }
    }

    /**
     * The pages are off the heap: making 100,000 nodes (98 pages) allocates a buffer object per
     * page and the directory's doublings on the heap, well under a byte a node (pages of heap
     * columns allocated 20 bytes a node: 2 MB here). Bytes, counted by the JVM: no timing.
     */
    @Test
    void growingAllocatesUnderAByteANodeOnTheHeap() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final FileDataNodes nodes = new FileDataNodes();
        nodes.allocate(1, 1, FileDataNodes.NIL);
        final int count = 100_000;
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 1; i < count; i++) {
            nodes.allocate(i, 2L * i, i - 1);
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < count, "heap bytes allocated for " + count + " nodes: " + allocated);
        assertEquals(98L * FileDataNodes.PAGE_BYTES, nodes.offHeapBytes());
        for (int i = 1; i < count; i += 997) {
            assertEquals(i, nodes.file(i));
            assertEquals(2L * i, nodes.end(i));
            assertEquals(i - 1, nodes.next(i));
        }
    }

    @Test
    void aNodeNeverMadeIsRefusedNotRead() {
        final FileDataNodes nodes = new FileDataNodes();
        final int n = nodes.allocate(3, 4, FileDataNodes.NIL);
        assertEquals(FileDataNodes.NIL, nodes.next(n));
        assertThrows(IllegalStateException.class, () -> nodes.file(n + 1));
        assertThrows(IllegalStateException.class, () -> nodes.end(-1));
        assertThrows(IllegalStateException.class, () -> nodes.end(1 << 20, 5));
    }
}
