package io.streamcache.log.internal;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link SegmentRows} against two {@code HashMap}s, through growth of the directory, emptied pages and reuse of rows. */
class SegmentRowsTest {
    @Test
    void theColumnsAgreeWithMapsThroughGrowthAndDroppedPages() {
        for (long seed = 1; seed <= 20; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final SegmentRows rows = new SegmentRows();
            final Map<Integer, Integer> state = new HashMap<>();
            final Map<Integer, Integer> head = new HashMap<>();
            int base = 0;
            for (int step = 0; step < 20_000; step++) {
                // A band of ids moving up, as the store hands them out.
                final int id = base + random.nextInt(3 * SegmentRows.PAGE_SIZE);
                final int op = random.nextInt(10);
                if (op < 4) {
                    final int value = 1 + random.nextInt(1000);
                    rows.state(id, value);
                    state.put(id, value);
                } else if (op < 6 && state.containsKey(id)) {
                    final int value = random.nextInt(100);
                    rows.head(id, value);
                    head.put(id, value);
                } else if (op < 9) {
                    if (state.containsKey(id)) {
                        rows.head(id, 0);
                    }
                    head.remove(id);
                    rows.state(id, 0);
                    state.remove(id);
                } else {
                    base += random.nextInt(64);
                }
                if (step % 500 == 0) {
                    check(rows, state, head, "seed=" + seed + " step=" + step);
                }
            }
            check(rows, state, head, "seed=" + seed);
            for (final int id : state.keySet().toArray(new Integer[0])) {
                rows.head(id, 0);
                rows.state(id, 0);
            }
            assertEquals(0, rows.pages(), "every page dropped with its last row");
        }
    }

    private static void check(final SegmentRows rows, final Map<Integer, Integer> state, final Map<Integer, Integer> head,
                              final String where) {
        final TreeMap<Integer, Integer> pages = new TreeMap<>();
        for (final Map.Entry<Integer, Integer> e : state.entrySet()) {
            assertEquals(e.getValue(), rows.state(e.getKey()), where);
            assertEquals(head.getOrDefault(e.getKey(), 0), rows.head(e.getKey()), where);
            pages.merge(e.getKey() >>> SegmentRows.PAGE_SHIFT, 1, Integer::sum);
        }
        assertEquals(pages.size(), rows.pages(), where);
        final Map<Integer, Integer> visited = new HashMap<>();
        rows.forEachHead(visited::put);
        final Map<Integer, Integer> nonZero = new HashMap<>(head);
        nonZero.values().removeIf(v -> v == 0);
        assertEquals(nonZero, visited, where);
        assertEquals(0, rows.state(Integer.MAX_VALUE), where);
        assertEquals(0, rows.state(-5), "a negative id has no row");
    }

    @Test
    void aRowWithNodesCannotBeRemovedAndAHeadNeedsARow() {
        final SegmentRows rows = new SegmentRows();
        rows.state(5, 3);
        rows.head(5, 7);
        assertThrows(IllegalStateException.class, () -> rows.state(5, 0));
        assertThrows(IllegalStateException.class, () -> rows.head(6, 1));
        assertThrows(IllegalStateException.class, () -> rows.head(5_000, 1));
        assertThrows(IllegalArgumentException.class, () -> rows.state(-1, 1));
    }
}
