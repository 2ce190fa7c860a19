package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LocationIndex} against a plain {@link TreeMap} of records: random adds (runs in one
 * file, file switches, empty records), truncations, relocations, locates, forEach and deletes,
 * on many indexes sharing one poisoned {@link LocationMemory}, so chunks dropped by one index
 * are taken by another (a chunk used after its return reads -1 and fails the comparison). At the
 * end the indexes' footprints add up to the memory's used bytes, and once every index is
 * cleared nothing is left in use: no chunk leaks. Each run is done twice: on standalone indexes,
 * and on the rows of a {@link LocationTable} reached both through views and by id (the writer's
 * way), with deletes by {@link LocationTable#remove} or a view's clear, new segments on ids that
 * only grow (new pages, old pages dropped), and the table's close at the end.
 */
class LocationIndexModelTest {
    private record Loc(long offset, int length, long fileNumber, long position) {
        long end() {
            return offset + length;
        }
    }

    /** One segment: its index and the reference. */
    private static final class Pair {
        final LocationIndex index;
        /** The table holding it, or null for a standalone index. */
        final LocationTable table;
        final int id;
        final TreeMap<Long, Loc> model = new TreeMap<>();
        long start;
        long end;
        long file;

        Pair(final LocationMemory memory, final long file) {
            this.index = LocationIndex.create(0, memory);
            this.table = null;
            this.id = -1;
            this.file = file;
        }

        Pair(final LocationTable table, final int id, final long file) {
            table.create(id, 0);
            this.index = table.get(id);
            this.table = table;
            this.id = id;
            this.file = file;
        }

        /** @return whether this step goes to the table by id rather than through the view. */
        boolean byId(final SplittableRandom random) {
            return table != null && random.nextBoolean();
        }
    }

    /** Hands out ids in increasing order, sometimes skipping to a later page. */
    private static final class Ids {
        int next = 1;

        int next(final SplittableRandom random) {
            next += random.nextInt(20) == 0 ? LocationTable.PAGE_IDS + random.nextInt(LocationTable.PAGE_IDS) : 1 + random.nextInt(3);
            return next;
        }
    }

    @Test
    void shouldMatchAReferenceWithChunksRecycledBetweenIndexes() {
        for (int seed = 0; seed < 20; seed++) {
            run(seed, 20_000, 4);
        }
    }

    @Test
    void shouldMatchAReferenceOverManySmallIndexesSharingSlabs() {
        run(99, 50_000, 500);
    }

    @Test
    void shouldMatchAReferenceThroughLongRunsOfLargeChunks() {
        run(7, 200_000, 4);
    }

    private static void run(final int seed, final int steps, final int segments) {
        run(seed, steps, segments, false);
        run(seed, steps, segments, true);
    }

    private static void run(final int seed, final int steps, final int segments, final boolean inTable) {
        final SplittableRandom random = new SplittableRandom(seed);
        final LocationMemory memory = new LocationMemory(true);
        final LocationTable table = inTable ? new LocationTable(memory) : null;
        final Ids ids = new Ids();
        final List<Pair> pairs = new ArrayList<>();
        long nextFile = 1;
        for (int i = 0; i < segments; i++) {
            pairs.add(inTable ? new Pair(table, ids.next(random), nextFile) : new Pair(memory, nextFile));
        }
        for (int step = 0; step < steps; step++) {
            final int which = random.nextInt(pairs.size());
            final Pair p = pairs.get(which);
            final int op = random.nextInt(100);
            final String at = "seed " + seed + " step " + step + " op " + op;
            if (op < 60) {
                // A run of adds, mostly in the current file, sometimes a switch or a big gap.
                final int run = 1 + random.nextInt(random.nextInt(10) == 0 ? 300 : 5);
                for (int k = 0; k < run; k++) {
                    if (random.nextInt(20) == 0) {
                        p.file = nextFile++;
                    }
                    final int length = random.nextInt(50) == 0 ? 0 : 1 + random.nextInt(random.nextInt(100) == 0 ? Integer.MAX_VALUE : 500);
                    final long position = 8L * random.nextInt(1 << 20);
                    if (p.byId(random)) {
                        assertTrue(p.table.add(p.id, p.end, length, p.file, position));
                    } else {
                        p.index.add(p.end, length, p.file, position);
                    }
                    if (length > 0) {
                        p.model.put(p.end, new Loc(p.end, length, p.file, position));
                    }
                    p.end += length;
                }
            } else if (op < 70) {
                if (p.end > p.start) {
                    final long to = random.nextInt(4) == 0 ? p.end : p.start + random.nextLong(p.end - p.start + 1);
                    if (p.byId(random)) {
                        p.table.truncate(p.id, to);
                    } else {
                        p.index.truncate(to);
                    }
                    if (to > p.start) {
                        p.start = to;
                    }
                    p.model.headMap(p.start, true).entrySet().removeIf(e -> e.getValue().end() <= p.start);
                }
            } else if (op < 80) {
                relocate(random, p, nextFile, at);
                if (random.nextInt(4) == 0) {
                    nextFile++;
                }
            } else if (op < 97) {
                final long from = random.nextLong(p.end + 10);
                final long to = from + random.nextLong(1 + random.nextInt(3) * (p.end - Math.min(from, p.end) + 5));
                assertLocates(p, from, to, at);
            } else if (op < 99) {
                assertForEach(p, at);
            } else {
                // DELETE: the chunks go back to the memory and a new segment takes this one's place.
                if (p.byId(random)) {
                    p.table.remove(p.id);
                } else {
                    p.index.clear();
                }
                assertTrue(p.index.isCleared());
                assertFalse(p.index.locate(0, Long.MAX_VALUE, new LocationList()), at);
                assertEquals(0, p.index.endOffset(), at);
                if (inTable) {
                    assertFalse(table.contains(p.id), at);
                    assertEquals(null, table.get(p.id), at);
                    assertFalse(table.add(p.id, 0, 1, 1, 0), "a removed id takes no record: " + at);
                }
                pairs.set(which, inTable ? new Pair(table, ids.next(random), nextFile++) : new Pair(memory, nextFile++));
            }
        }
        for (final Pair p : pairs) {
            assertForEach(p, "end of seed " + seed);
            assertLocates(p, 0, Long.MAX_VALUE, "end of seed " + seed);
        }
        if (steps >= 20_000) {
            assertTrue(memory.reused() > 0, "chunks were recycled: " + memory.reused());
        }
        long footprints = 0;
        for (final Pair p : pairs) {
            footprints += p.index.footprint();
        }
        if (inTable) {
            // The table's rows are in its arena's blocks: the memory holds those instead of a chunk per row.
            footprints += table.rowBlockBytes() - 64L * pairs.size();
        }
        assertEquals(memory.usedBytes(), footprints, "the indexes' footprints are the memory's used bytes");
        assertTrue(memory.reservedBytes() >= memory.usedBytes());
        if (inTable) {
            assertTrue(table.pageCount() <= pairs.size(), "pages of removed ids are dropped: " + table.pageCount());
            table.close();
            assertEquals(0, table.pageCount());
            for (final Pair p : pairs) {
                assertTrue(p.index.isCleared(), "a view finds nothing after the close");
            }
        } else {
            for (final Pair p : pairs) {
                p.index.clear();
            }
        }
        assertEquals(0, memory.usedBytes(), "every chunk went back to the memory");
        memory.close();
        assertEquals(0, memory.reservedBytes());
    }

    private static void relocate(final SplittableRandom random, final Pair p, final long file, final String at) {
        final long newPosition = 8L * random.nextInt(1 << 20);
        if (p.model.isEmpty() || random.nextInt(8) == 0) {
            // Something not held: before the start, of another length, or past the end.
            final long offset = random.nextLong(p.end + 10);
            final Map.Entry<Long, Loc> held = p.model.floorEntry(offset);
            final int length = 1 + random.nextInt(600);
            final boolean matches = held != null && held.getKey() == offset && held.getValue().length() == length;
            assertEquals(matches, p.byId(random) ? p.table.relocate(p.id, offset, length, file, newPosition)
                : p.index.relocate(offset, length, file, newPosition), at);
            if (matches) {
                p.model.put(offset, new Loc(offset, length, file, newPosition));
            }
            return;
        }
        // A held record, or a run of them in order (as compaction copies them).
        Map.Entry<Long, Loc> e = p.model.ceilingEntry(random.nextLong(p.end));
        if (e == null) {
            e = p.model.firstEntry();
        }
        final int run = 1 + random.nextInt(random.nextInt(4) == 0 ? 100 : 3);
        long position = newPosition;
        for (int k = 0; k < run && e != null; k++) {
            final Loc old = e.getValue();
            assertTrue(p.byId(random) ? p.table.relocate(p.id, old.offset(), old.length(), file, position)
                : p.index.relocate(old.offset(), old.length(), file, position), at + " relocate " + old);
            p.model.put(old.offset(), new Loc(old.offset(), old.length(), file, position));
            position += 8L * (1 + random.nextInt(100));
            if (position > LocationIndex.MAX_POSITION - (1L << 30)) {
                position = 0;
            }
            e = p.model.higherEntry(old.offset());
        }
    }

    private static void assertLocates(final Pair p, final long from, final long to, final String at) {
        final LocationList list = new LocationList();
        assertTrue(p.index.locate(from, to, list), at);
        final long clippedFrom = Math.max(from, p.start);
        final long clippedTo = Math.min(to, p.end);
        final List<Loc> expected = new ArrayList<>();
        if (clippedFrom < clippedTo) {
            final Long first = p.model.floorKey(clippedFrom);
            for (final Loc loc : p.model.tailMap(first == null ? clippedFrom : first, true).values()) {
                if (loc.offset() >= clippedTo) {
                    break;
                }
                if (loc.end() > clippedFrom) {
                    expected.add(loc);
                }
            }
        }
        final List<Loc> actual = new ArrayList<>();
        for (int i = 0; i < list.count(); i++) {
            actual.add(new Loc(list.offset(i), list.length(i), list.fileNumber(i), list.position(i)));
        }
        assertEquals(expected, actual, at + " locate(" + from + ", " + to + ")");
        assertEquals(p.start, p.index.startOffset(), at);
        assertEquals(p.end, p.index.endOffset(), at);
        assertEquals(p.model.size(), p.index.count(), at);
    }

    private static void assertForEach(final Pair p, final String at) {
        final List<Loc> visited = new ArrayList<>();
        p.index.forEach((offset, length, fileNumber, position) -> visited.add(new Loc(offset, length, fileNumber, position)));
        assertEquals(new ArrayList<>(p.model.values()), visited, at + " forEach");
    }
}
