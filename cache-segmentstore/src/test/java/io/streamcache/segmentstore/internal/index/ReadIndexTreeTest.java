package io.streamcache.segmentstore.internal.index;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The static form of the read index, as a segment uses it (the root in the owner's field):
 * a random sequence of updates and lookups against a {@link TreeMap}, and the errors.
 */
class ReadIndexTreeTest {
    @Test
    void shouldMatchATreeMapThroughItsRoot() {
        final Random random = new Random(14);
        final TreeMap<Long, ReadIndexEntry> model = new TreeMap<>();
        ReadIndexEntry root = null;
        for (int step = 0; step < 40_000; step++) {
            final long key = random.nextInt(2_000) * 10L;
            final int op = random.nextInt(10);
            if (op < 4) {
                if (!model.containsKey(key)) {
                    final ReadIndexEntry entry = new ReadIndexEntry(key, 10, 1, step);
                    root = ReadIndexTree.insert(root, entry);
                    model.put(key, entry);
                }
            } else if (op < 6) {
                final ReadIndexEntry entry = model.remove(key);
                if (entry != null) {
                    root = ReadIndexTree.remove(root, entry);
                    assertFalse(entry.isLinked(), "removed entries are unlinked");
                }
            } else if (op == 6 && random.nextInt(50) == 0) {
                final List<ReadIndexEntry> removed = new ArrayList<>();
                root = ReadIndexTree.removeBefore(root, key, removed::add);
                final List<ReadIndexEntry> expected = new ArrayList<>(model.headMap(key, false).values());
                // An entry ending at or before key: offset + 10 <= key.
                expected.removeIf(e -> e.endOffset() > key);
                assertEquals(expected, removed, "removed in offset order at step " + step);
                for (final ReadIndexEntry e : removed) {
                    model.remove(e.offset());
                    assertFalse(e.isLinked());
                }
            } else {
                assertSame(value(model.floorEntry(key)), ReadIndexTree.floor(root, key));
                assertSame(value(model.ceilingEntry(key + 1)), ReadIndexTree.ceiling(root, key + 1));
                assertSame(value(model.higherEntry(key)), ReadIndexTree.higher(root, key));
                assertSame(value(model.lowerEntry(key)), ReadIndexTree.lower(root, key));
                assertSame(model.get(key), ReadIndexTree.get(root, key));
                final Map.Entry<Long, ReadIndexEntry> floor = model.floorEntry(key + 5);
                assertSame(floor != null && floor.getValue().contains(key + 5) ? floor.getValue() : null,
                    ReadIndexTree.floorContaining(root, key + 5));
            }
            if (step % 1000 == 0) {
                assertEquals(model.size(), ReadIndexTree.checkInvariants(root));
                assertEquals(model.size(), ReadIndexTree.count(root));
                assertSame(value(model.firstEntry()), ReadIndexTree.first(root));
                assertSame(value(model.lastEntry()), ReadIndexTree.last(root));
                final List<ReadIndexEntry> inOrder = new ArrayList<>();
                ReadIndexTree.forEach(root, inOrder::add);
                assertEquals(new ArrayList<>(model.values()), inOrder);
            }
        }
        root = ReadIndexTree.removeBefore(root, Long.MAX_VALUE, e -> assertFalse(e.isLinked()));
        assertNull(root, "Long.MAX_VALUE removes every entry");
    }

    @Test
    void shouldRejectAnEntryOfAnotherTreeOrNone() {
        ReadIndexEntry a = null;
        ReadIndexEntry b = null;
        final ReadIndexEntry inA = new ReadIndexEntry(0, 10, 1, 0);
        final ReadIndexEntry inB = new ReadIndexEntry(0, 10, 1, 0);
        a = ReadIndexTree.insert(a, inA);
        b = ReadIndexTree.insert(b, inB);
        final ReadIndexEntry rootA = a;
        assertThrows(IllegalArgumentException.class, () -> ReadIndexTree.remove(rootA, inB), "same offset, another tree's entry");
        assertThrows(IllegalArgumentException.class, () -> ReadIndexTree.insert(rootA, inB), "linked elsewhere");
        assertThrows(IllegalArgumentException.class, () -> ReadIndexTree.insert(rootA, new ReadIndexEntry(0, 5, 1, 0)), "duplicate key");
        assertThrows(IllegalArgumentException.class, () -> ReadIndexTree.remove(null, inA), "empty tree");
        assertSame(inA, ReadIndexTree.get(a, 0), "unchanged");
        ReadIndexTree.clear(b);
        assertFalse(inB.isLinked(), "clear unlinks");
        assertTrue(inA.isLinked());
        assertEquals(0, ReadIndexTree.count(null));
        assertEquals(0, ReadIndexTree.height(null));
    }

    private static ReadIndexEntry value(final Map.Entry<Long, ReadIndexEntry> entry) {
        return entry == null ? null : entry.getValue();
    }
}
