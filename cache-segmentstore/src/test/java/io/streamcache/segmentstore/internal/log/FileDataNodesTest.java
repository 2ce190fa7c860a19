package io.streamcache.segmentstore.internal.log;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
                final long file = random.nextLong(1 << 40);
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
}
