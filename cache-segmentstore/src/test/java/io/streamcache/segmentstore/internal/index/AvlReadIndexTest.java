package io.streamcache.segmentstore.internal.index;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class AvlReadIndexTest {
    /** Keys of the random test are multiples of this, so every entry of length <= it is disjoint. */
    private static final int KEY_SPACING = 10;

    // ---------------------------------------------------------------------------------------
    // Model test

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 2, 3})
    void shouldMatchTreeMapUnderRandomInsertsAndRemoves(final long seed) {
        final Random random = new Random(seed);
        final AvlReadIndex tree = new AvlReadIndex();
        final TreeMap<Long, ReadIndexEntry> model = new TreeMap<>();
        final int keyCount = 300;
        final int operations = 8_000;

        for (int op = 0; op < operations; op++) {
            final long key = (long) random.nextInt(keyCount) * KEY_SPACING;
            final int choice = random.nextInt(100);
            final String what;
            if (choice < 50) {
                what = "insert offset=" + key;
                final ReadIndexEntry entry = entry(key, random.nextInt(KEY_SPACING + 1));
                if (model.containsKey(key)) {
                    final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tree.insert(entry), what);
                    assertTrue(e.getMessage().contains("offset=" + key), e.getMessage());
                    assertFalse(entry.isLinked(), "rejected entry must stay unlinked");
                } else {
                    tree.insert(entry);
                    model.put(key, entry);
                }
            } else if (choice < 85) {
                what = "remove offset=" + key;
                final ReadIndexEntry expected = model.remove(key);
                final ReadIndexEntry removed = tree.remove(key);
                assertSame(expected, removed, what);
                if (removed != null) {
                    assertFalse(removed.isLinked(), "removed entry must be unlinked");
                }
            } else if (choice < 90) {
                what = "removeFirst";
                final Map.Entry<Long, ReadIndexEntry> expected = model.pollFirstEntry();
                final ReadIndexEntry removed = tree.removeFirst();
                assertSame(expected == null ? null : expected.getValue(), removed, what);
            } else if (choice < 92) {
                // Truncation to somewhere in the first quarter of the key space, inside or between entries.
                final long truncateAt = random.nextInt(keyCount * KEY_SPACING / 4);
                what = "removeBefore offset=" + truncateAt;
                final List<ReadIndexEntry> expected = new ArrayList<>();
                while (!model.isEmpty() && model.firstEntry().getValue().endOffset() <= truncateAt) {
                    expected.add(model.pollFirstEntry().getValue());
                }
                final List<ReadIndexEntry> removed = new ArrayList<>();
                assertEquals(expected.size(), tree.removeBefore(truncateAt, removed::add), what);
                assertEquals(expected, removed, what);
            } else {
                // Mutate an entry in place: never needs a re-insert.
                what = "update offset=" + key;
                final ReadIndexEntry entry = tree.get(key);
                assertSame(model.get(key), entry, what);
                if (entry != null) {
                    entry.length(random.nextInt(KEY_SPACING + 1));
                    entry.address(random.nextInt());
                    entry.generation(op);
                }
            }
            verify(tree, model, keyCount, op, what + " at op=" + op);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Balance

    @Test
    void shouldKeepHeightLogarithmicUnderAscendingInserts() {
        final AvlReadIndex tree = new AvlReadIndex();
        final int count = 1 << 20;
        for (int i = 0; i < count; i++) {
            tree.insert(entry((long) i * 4096, 4096));
            assertHeightBound(tree);
            if (Integer.bitCount(i + 1) == 1 && i < 1 << 14) {
                tree.checkInvariants();
            }
        }
        tree.checkInvariants();
        assertEquals(count, tree.size());
        assertEquals(0L, tree.first().offset());
        assertEquals((long) (count - 1) * 4096, tree.last().offset());
    }

    @Test
    void shouldKeepHeightLogarithmicUnderDescendingInserts() {
        final AvlReadIndex tree = new AvlReadIndex();
        final int count = 100_000;
        for (int i = count - 1; i >= 0; i--) {
            tree.insert(entry(i, 1));
            assertHeightBound(tree);
        }
        tree.checkInvariants();
        assertEquals(count, tree.size());
    }

    @Test
    void shouldKeepHeightLogarithmicWhenAppendingAtTheRightAndTruncatingAtTheLeft() {
        final AvlReadIndex tree = new AvlReadIndex();
        final int window = 1000;
        long nextOffset = 0;
        for (int i = 0; i < 100_000; i++) {
            tree.insert(entry(nextOffset, 100));
            nextOffset += 100;
            if (tree.size() > window) {
                assertEquals(1, tree.removeBefore(tree.first().endOffset()));
            }
            assertHeightBound(tree);
        }
        tree.checkInvariants();
        assertEquals(window, tree.size());
        assertEquals(nextOffset - 100L * window, tree.first().offset());
    }

    @Test
    void shouldKeepHeightLogarithmicUnderRandomRemovesOfAFullTree() {
        final Random random = new Random(7);
        final AvlReadIndex tree = new AvlReadIndex();
        final List<Long> keys = new ArrayList<>();
        for (int i = 0; i < 50_000; i++) {
            tree.insert(entry(i, 1));
            keys.add((long) i);
        }
        Collections.shuffle(keys, random);
        for (int i = 0; i < keys.size(); i++) {
            assertEquals(keys.get(i).longValue(), tree.remove(keys.get(i)).offset());
            assertHeightBound(tree);
            if (i % 5000 == 0) {
                tree.checkInvariants();
            }
        }
        assertTrue(tree.isEmpty());
        tree.checkInvariants();
    }

    // ---------------------------------------------------------------------------------------
    // floorContaining

    @Test
    void shouldFindTheContainingEntryAtEntryBoundaries() {
        final AvlReadIndex tree = new AvlReadIndex();
        final ReadIndexEntry a = entry(100, 50);
        final ReadIndexEntry b = entry(150, 50);
        // gap [200, 300)
        final ReadIndexEntry c = entry(300, 1);
        final ReadIndexEntry empty = entry(301, 0);
        final ReadIndexEntry evicted = entry(400, 100);
        evicted.address(ReadIndexEntry.NULL_ADDRESS);
        for (final ReadIndexEntry e : List.of(evicted, c, a, empty, b)) {
            tree.insert(e);
        }

        assertNull(tree.floorContaining(Long.MIN_VALUE));
        assertNull(tree.floorContaining(-1));
        assertNull(tree.floorContaining(0));
        assertNull(tree.floorContaining(99));
        assertSame(a, tree.floorContaining(100), "start");
        assertSame(a, tree.floorContaining(149), "end - 1");
        assertSame(b, tree.floorContaining(150), "end of a = start of b");
        assertSame(b, tree.floorContaining(199));
        assertNull(tree.floorContaining(200), "end of b, start of gap");
        assertNull(tree.floorContaining(299), "end of gap");
        assertSame(c, tree.floorContaining(300), "one-byte entry");
        assertNull(tree.floorContaining(301), "zero-length entry covers nothing");
        assertNull(tree.floorContaining(399));
        assertSame(evicted, tree.floorContaining(400), "evicted entries are still found; the read reports not cached");
        assertSame(evicted, tree.floorContaining(499));
        assertNull(tree.floorContaining(500), "past the last entry");
        assertNull(tree.floorContaining(Long.MAX_VALUE));

        // Appends grow the last entry in place: no re-insert.
        evicted.length(150);
        assertSame(evicted, tree.floorContaining(549));
        assertNull(tree.floorContaining(550));
        tree.checkInvariants();
    }

    @Test
    void shouldFindTheContainingEntryAtTheEndOfTheOffsetRange() {
        final AvlReadIndex tree = new AvlReadIndex();
        final ReadIndexEntry e = entry(Long.MAX_VALUE - 10, 10);
        tree.insert(e);
        assertNull(tree.floorContaining(Long.MAX_VALUE - 11));
        assertSame(e, tree.floorContaining(Long.MAX_VALUE - 10));
        assertSame(e, tree.floorContaining(Long.MAX_VALUE - 1));
        assertNull(tree.floorContaining(Long.MAX_VALUE));
    }

    // ---------------------------------------------------------------------------------------
    // Truncation

    @Test
    void shouldRemoveEntriesEndingAtOrBeforeTheTruncationOffset() {
        final AvlReadIndex tree = new AvlReadIndex();
        final List<ReadIndexEntry> entries = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            final ReadIndexEntry e = entry(i * 10L, 10);
            entries.add(e);
            tree.insert(e);
        }
        final List<ReadIndexEntry> removed = new ArrayList<>();

        assertEquals(0, tree.removeBefore(9, removed::add), "first entry ends at 10");
        assertEquals(0, tree.removeBefore(-5, removed::add));
        assertEquals(6, tree.size());

        assertEquals(2, tree.removeBefore(25, removed::add), "[0,10) and [10,20) end <= 25; [20,30) straddles");
        assertEquals(entries.subList(0, 2), removed);
        assertSame(entries.get(2), tree.first());
        assertEquals(4, tree.size());
        tree.checkInvariants();

        assertEquals(1, tree.removeBefore(30, removed::add), "end == offset is removed");
        assertEquals(entries.subList(0, 3), removed);
        for (final ReadIndexEntry e : removed) {
            assertFalse(e.isLinked());
        }

        assertEquals(3, tree.removeBefore(Long.MAX_VALUE));
        assertTrue(tree.isEmpty());
        assertEquals(0, tree.size());
        assertEquals(0, tree.removeBefore(Long.MAX_VALUE), "empty tree");
        tree.checkInvariants();

        // Removed entries can be linked again.
        tree.insert(entries.get(0));
        assertSame(entries.get(0), tree.get(0));
        tree.checkInvariants();
    }

    @Test
    void shouldTruncateAcrossGapsLeftByRemovedEntries() {
        final AvlReadIndex tree = new AvlReadIndex();
        tree.insert(entry(0, 10));
        tree.insert(entry(50, 10));
        tree.insert(entry(100, 10));
        assertEquals(1, tree.removeBefore(50), "the gap [10, 50) holds no entry");
        assertEquals(50L, tree.first().offset());
        assertEquals(1, tree.removeBefore(99));
        assertEquals(100L, tree.first().offset());
        tree.checkInvariants();
    }

    // ---------------------------------------------------------------------------------------
    // Walking

    @Test
    void shouldWalkForwardInOffsetOrder() {
        final Random random = new Random(11);
        final AvlReadIndex tree = new AvlReadIndex();
        final TreeMap<Long, ReadIndexEntry> model = new TreeMap<>();
        while (model.size() < 2000) {
            final long key = random.nextInt(1_000_000);
            if (!model.containsKey(key)) {
                final ReadIndexEntry e = entry(key, 1);
                tree.insert(e);
                model.put(key, e);
            }
        }
        final List<ReadIndexEntry> walked = new ArrayList<>();
        for (ReadIndexEntry e = tree.first(); e != null; e = tree.next(e)) {
            walked.add(e);
        }
        assertEquals(new ArrayList<>(model.values()), walked);

        final List<ReadIndexEntry> visited = new ArrayList<>();
        tree.forEach(visited::add);
        assertEquals(new ArrayList<>(model.values()), visited);
    }

    // ---------------------------------------------------------------------------------------
    // Garbage

    @Test
    void shouldAllocateNothingOnLookupsInsertsAndRemoves() {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof ThreadMXBean, "HotSpot's ThreadMXBean");
        final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        final long thread = Thread.currentThread().getId();
        final int count = 4096;
        final ReadIndexEntry[] entries = new ReadIndexEntry[count];
        for (int i = 0; i < count; i++) {
            entries[i] = entry(i * 100L, 50);
        }
        final AvlReadIndex tree = new AvlReadIndex();
        long sink = 0;
        long allocated = 0;
        for (int round = 0; round < 3; round++) {
            final long before = threads.getThreadAllocatedBytes(thread);
            for (int i = 0; i < count; i++) {
                tree.insert(entries[i]);
            }
            for (long q = -1; q < count * 100L; q += 17) {
                sink += identity(tree.get(q)) + identity(tree.floor(q)) + identity(tree.ceiling(q))
                    + identity(tree.higher(q)) + identity(tree.lower(q)) + identity(tree.floorContaining(q));
            }
            for (ReadIndexEntry e = tree.first(); e != null; e = tree.next(e)) {
                sink += e.length();
            }
            for (int i = 0; i < count; i += 2) {
                sink += tree.remove(i * 100L).length();
            }
            sink += tree.removeBefore(count * 50L);
            while (tree.removeFirst() != null) {
                sink++;
            }
            allocated = threads.getThreadAllocatedBytes(thread) - before;
        }
        assertTrue(sink != 0);
        // The last round runs warm; a little slack for the measuring call itself.
        assertTrue(allocated < 1024, "allocated=" + allocated + " bytes in a round of lookups, inserts and removes");
    }

    private static long identity(final ReadIndexEntry entry) {
        return entry == null ? 0 : entry.offset();
    }

    // ---------------------------------------------------------------------------------------
    // Edge cases

    @Test
    void shouldAnswerNothingWhenEmpty() {
        final AvlReadIndex tree = new AvlReadIndex();
        assertEquals(0, tree.size());
        assertTrue(tree.isEmpty());
        assertEquals(0, tree.height());
        for (final long q : new long[] {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE}) {
            assertNull(tree.get(q));
            assertNull(tree.floor(q));
            assertNull(tree.ceiling(q));
            assertNull(tree.higher(q));
            assertNull(tree.lower(q));
            assertNull(tree.floorContaining(q));
            assertNull(tree.remove(q));
        }
        assertNull(tree.first());
        assertNull(tree.last());
        assertNull(tree.removeFirst());
        assertNull(tree.next(entry(0, 1)));
        tree.forEach(e -> fail("visited " + e));
        tree.clear();
        tree.checkInvariants();
        assertTrue(tree.toString().contains("size=0"), tree.toString());
    }

    @Test
    void shouldAnswerAroundASingleEntry() {
        final AvlReadIndex tree = new AvlReadIndex();
        final ReadIndexEntry e = entry(100, 10);
        tree.insert(e);
        assertEquals(1, tree.size());
        assertEquals(1, tree.height());
        assertSame(e, tree.first());
        assertSame(e, tree.last());
        assertSame(e, tree.get(100));
        assertNull(tree.get(99));
        assertNull(tree.get(101));
        assertNull(tree.floor(99));
        assertSame(e, tree.floor(100));
        assertSame(e, tree.floor(Long.MAX_VALUE));
        assertSame(e, tree.ceiling(Long.MIN_VALUE));
        assertSame(e, tree.ceiling(100));
        assertNull(tree.ceiling(101));
        assertSame(e, tree.higher(99));
        assertNull(tree.higher(100));
        assertSame(e, tree.lower(101));
        assertNull(tree.lower(100));
        assertNull(tree.next(e));
        tree.checkInvariants();

        assertSame(e, tree.remove(100));
        assertTrue(tree.isEmpty());
        assertEquals(0, tree.height());
        tree.checkInvariants();
    }

    @Test
    void shouldRejectADuplicateOffsetAndLeaveTheTreeUnchanged() {
        final AvlReadIndex tree = new AvlReadIndex();
        final List<ReadIndexEntry> entries = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            final ReadIndexEntry e = entry(i * 7L, 7);
            entries.add(e);
            tree.insert(e);
        }
        final String before = shape(tree);
        final int height = tree.height();

        final ReadIndexEntry duplicate = entry(42, 3);
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tree.insert(duplicate));
        assertEquals("duplicate offset=42", e.getMessage());

        assertEquals(before, shape(tree), "links and heights unchanged");
        assertEquals(100, tree.size());
        assertEquals(height, tree.height());
        assertSame(entries.get(6), tree.get(42));
        assertFalse(duplicate.isLinked());
        tree.checkInvariants();

        // The rejected entry is free to go into another tree.
        final AvlReadIndex other = new AvlReadIndex();
        other.insert(duplicate);
        assertSame(duplicate, other.get(42));
    }

    @Test
    void shouldRejectAnEntryAlreadyInATree() {
        final AvlReadIndex tree = new AvlReadIndex();
        final ReadIndexEntry e = entry(5, 1);
        tree.insert(e);
        final AvlReadIndex other = new AvlReadIndex();
        final IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class, () -> other.insert(e));
        assertEquals("entry already in a tree: offset=5", thrown.getMessage());
        assertTrue(other.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> tree.insert(e));
        assertEquals(1, tree.size());
        tree.checkInvariants();
    }

    @Test
    void shouldRejectANullEntry() {
        final AvlReadIndex tree = new AvlReadIndex();
        assertThrows(NullPointerException.class, () -> tree.insert(null));
        assertTrue(tree.isEmpty());
    }

    @Test
    void shouldUnlinkEveryEntryOnClear() {
        final AvlReadIndex tree = new AvlReadIndex();
        final List<ReadIndexEntry> entries = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            final ReadIndexEntry e = entry(i, 1);
            entries.add(e);
            tree.insert(e);
        }
        tree.clear();
        assertTrue(tree.isEmpty());
        assertEquals(0, tree.size());
        assertNull(tree.get(0));
        for (final ReadIndexEntry e : entries) {
            assertFalse(e.isLinked());
            assertNull(e.left);
            assertNull(e.right);
        }
        for (final ReadIndexEntry e : entries) {
            tree.insert(e);
        }
        assertEquals(1000, tree.size());
        tree.checkInvariants();
    }

    @Test
    void shouldReportBrokenInvariantsWithTheOffsetConcerned() {
        final AvlReadIndex tree = new AvlReadIndex();
        for (int i = 0; i < 7; i++) {
            tree.insert(entry(i * 10L, 10));
        }
        tree.checkInvariants();
        final ReadIndexEntry root = tree.floor(30);
        assertEquals(3, root.height, "seven ascending inserts make a perfect tree rooted at 30");

        root.height = 5;
        final IllegalStateException height = assertThrows(IllegalStateException.class, tree::checkInvariants);
        assertEquals("wrong height: offset=30 stored=5 computed=3", height.getMessage());
        root.height = 3;

        final ReadIndexEntry leftChild = root.left;
        final ReadIndexEntry swapped = leftChild.left;
        leftChild.left = leftChild.right;
        leftChild.right = swapped;
        final IllegalStateException order = assertThrows(IllegalStateException.class, tree::checkInvariants);
        assertTrue(order.getMessage().startsWith("order broken:"), order.getMessage());
        leftChild.right = leftChild.left;
        leftChild.left = swapped;
        tree.checkInvariants();

        final ReadIndexEntry rightChild = root.right;
        final ReadIndexEntry detached = rightChild.right;
        rightChild.right = null;
        // 50 keeps its left child 40, so heights and balances still hold: only the count is off.
        final IllegalStateException size = assertThrows(IllegalStateException.class, tree::checkInvariants);
        assertEquals("size=7 but the tree links count=6 entries", size.getMessage());
        rightChild.right = detached;
        tree.checkInvariants();

        final ReadIndexEntry left = root.left;
        root.left = null;
        final IllegalStateException unbalanced = assertThrows(IllegalStateException.class, tree::checkInvariants);
        assertEquals("unbalanced: offset=30 balance=-2 leftHeight=0 rightHeight=2", unbalanced.getMessage());
        root.left = left;
        tree.checkInvariants();
    }

    // ---------------------------------------------------------------------------------------
    // Helpers

    private static ReadIndexEntry entry(final long offset, final int length) {
        return new ReadIndexEntry(offset, length, (int) (offset * 31 + 1), 0);
    }

    private static void assertHeightBound(final AvlReadIndex tree) {
        final double bound = 1.45 * Math.log(tree.size() + 2) / Math.log(2);
        if (tree.height() > bound) {
            fail("height=" + tree.height() + " exceeds 1.45*log2(size+2)=" + bound + " at size=" + tree.size());
        }
    }

    /** Every node's offset, height and children, in order: equal strings mean equal shapes. */
    private static String shape(final AvlReadIndex tree) {
        final StringBuilder out = new StringBuilder();
        tree.forEach(e -> out.append(e.offset()).append(":h").append(e.height)
            .append(":l").append(e.left == null ? "-" : Long.toString(e.left.offset()))
            .append(":r").append(e.right == null ? "-" : Long.toString(e.right.offset()))
            .append(' '));
        return out.toString();
    }

    /**
     * Checks structure and every lookup against the model: on every key, between keys and
     * outside the key range.
     */
    private static void verify(final AvlReadIndex tree, final NavigableMap<Long, ReadIndexEntry> model,
                               final int keyCount, final int op, final String after) {
        try {
            tree.checkInvariants();
        } catch (final IllegalStateException e) {
            fail("after " + after + ": " + e.getMessage(), e);
        }
        if (tree.size() != model.size()) {
            fail("after " + after + ": size=" + tree.size() + " expected=" + model.size());
        }
        assertHeightBound(tree);
        same(value(model.firstEntry()), tree.first(), "first", 0, after);
        same(value(model.lastEntry()), tree.last(), "last", 0, after);

        // Every possible key, and one offset between each pair of keys, moving with the operation
        // count so that every offset inside and between entries is probed over a run.
        final long end = (long) keyCount * KEY_SPACING + KEY_SPACING;
        final long between = 1 + op % (KEY_SPACING - 1);
        for (long q = -KEY_SPACING; q <= end; q += KEY_SPACING) {
            verifyQuery(tree, model, q, after);
            verifyQuery(tree, model, q + between, after);
        }
        verifyQuery(tree, model, -1, after);
        verifyQuery(tree, model, Long.MIN_VALUE, after);
        verifyQuery(tree, model, Long.MAX_VALUE, after);
    }

    private static void verifyQuery(final AvlReadIndex tree, final NavigableMap<Long, ReadIndexEntry> model,
                                    final long q, final String after) {
        final Long key = q;
        same(model.get(key), tree.get(q), "get", q, after);
        final ReadIndexEntry floor = value(model.floorEntry(key));
        same(floor, tree.floor(q), "floor", q, after);
        same(value(model.ceilingEntry(key)), tree.ceiling(q), "ceiling", q, after);
        same(value(model.higherEntry(key)), tree.higher(q), "higher", q, after);
        same(value(model.lowerEntry(key)), tree.lower(q), "lower", q, after);
        same(floor != null && q < floor.endOffset() ? floor : null, tree.floorContaining(q), "floorContaining", q, after);
    }

    private static ReadIndexEntry value(final Map.Entry<Long, ReadIndexEntry> entry) {
        return entry == null ? null : entry.getValue();
    }

    private static void same(final ReadIndexEntry expected, final ReadIndexEntry actual,
                             final String lookup, final long q, final String after) {
        if (expected != actual) {
            fail(lookup + "(" + q + ") after " + after + ": expected " + expected + " but was " + actual);
        }
    }
}
