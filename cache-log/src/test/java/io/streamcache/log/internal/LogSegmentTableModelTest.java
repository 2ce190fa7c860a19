package io.streamcache.log.internal;

import org.agrona.collections.LongArrayList;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogSegmentTable}'s rows and file lists against the table it replaced, written out here
 * as a reference: a map of segment objects by id and, per file, a map of segment id to the
 * highest data end, a file being dead when every segment in its map is deleted or truncated past
 * that end (data of a segment never created count as live). Random records over thousands of
 * ids (several row pages, pages emptied and dropped), rolls, recovered files, compaction copies
 * and retired files; after every few steps the segments, the counts and the dead files must agree.
 */
class LogSegmentTableModelTest {
    /** The old table's entry. */
    private static final class Ref {
        final String name;
        long start;
        long length;
        boolean sealed;

        Ref(final String name, final long start, final long length, final boolean sealed) {
            this.name = name;
            this.start = start;
            this.length = length;
            this.sealed = sealed;
        }
    }

    /** The old table: objects and a map per file. */
    private static final class Reference {
        final Map<Integer, Ref> segments = new HashMap<>();
        final TreeMap<Long, Map<Integer, Long>> files = new TreeMap<>();
        long current = -1;

        void file(final long number) {
            files.computeIfAbsent(number, n -> new HashMap<>());
        }

        void fileData(final long number, final int id, final long end) {
            file(number);
            files.get(number).merge(id, end, Math::max);
        }

        void data(final int id, final long end) {
            final Ref ref = segments.get(id);
            if (ref != null && ref.length < end) {
                ref.length = end;
            }
            files.get(current).merge(id, end, Math::max);
        }

        void copy(final int id, final long end) {
            if (segments.containsKey(id)) {
                files.get(current).merge(id, end, Math::max);
            }
        }

        void truncate(final int id, final long start) {
            final Ref ref = segments.get(id);
            if (ref != null && ref.start < start) {
                ref.start = start;
            }
        }

        void delete(final int id) {
            segments.remove(id);
            for (final Map<Integer, Long> data : files.values()) {
                data.remove(id);
            }
        }

        List<Long> takeDead() {
            final List<Long> dead = new ArrayList<>();
            files.entrySet().removeIf(file -> {
                if (file.getKey() == current) {
                    return false;
                }
                for (final Map.Entry<Integer, Long> data : file.getValue().entrySet()) {
                    final Ref ref = segments.get(data.getKey());
                    if (ref == null || ref.start < data.getValue()) {
                        return false;
                    }
                }
                dead.add(file.getKey());
                return true;
            });
            return dead;
        }
    }

    @Test
    void theRowsAndFileListsAgreeWithTheObjectTableItReplaced() {
        for (long seed = 1; seed <= 30; seed++) {
            run(seed, 3_000 + (int)(seed * 131 % 4_000));
        }
    }

    private static void run(final long seed, final int steps) {
        final SplittableRandom random = new SplittableRandom(seed);
        final LogSegmentTable table = new LogSegmentTable();
        final Reference reference = new Reference();
        // Recovered state first, as the writer seeds it: segments, then files with their data ends.
        int nextId = random.nextInt(3_000);
        long nextFile = 1 + random.nextInt(5);
        for (int i = random.nextInt(200); i > 0; i--) {
            final int id = nextId;
            nextId += 1 + random.nextInt(20);
            final long length = random.nextLong(100_000);
            final long start = random.nextLong(length + 1);
            final boolean sealed = random.nextBoolean();
            final String name = "r" + id;
            table.restore(id, name, start, length, sealed);
            reference.segments.put(id, new Ref(name, start, length, sealed));
        }
        for (int f = random.nextInt(4); f > 0; f--) {
            final long number = nextFile++;
            table.file(number);
            reference.file(number);
            for (final int id : new ArrayList<>(reference.segments.keySet())) {
                if (random.nextInt(3) == 0) {
                    final long end = random.nextLong(100_000);
                    table.fileData(number, id, end);
                    reference.fileData(number, id, end);
                }
            }
            if (random.nextInt(4) == 0) {
                // Data of a segment never created (its CREATE in a file already gone).
                final int unknown = nextId++;
                table.fileData(number, unknown, 10);
                reference.fileData(number, unknown, 10);
            }
        }
        table.currentFile(nextFile);
        reference.file(nextFile);
        reference.current = nextFile++;

        for (int step = 0; step < steps; step++) {
            final int op = random.nextInt(1000);
            final List<Integer> live = new ArrayList<>(reference.segments.keySet());
            final Integer some = live.isEmpty() ? null : live.get(random.nextInt(live.size()));
            if (op < 200 || some == null) {
                final int id = nextId;
                nextId += 1 + (random.nextInt(10) == 0 ? random.nextInt(3_000) : 0);
                final String name = "s" + id;
                table.create(id, name.getBytes(StandardCharsets.UTF_8));
                reference.segments.put(id, new Ref(name, 0, 0, false));
            } else if (op < 550) {
                final long end = reference.segments.get(some).length + random.nextLong(-50, 5_000);
                table.data(some, end);
                reference.data(some, end);
            } else if (op < 570) {
                final int unknown = random.nextBoolean() ? nextId++ : random.nextInt(nextId + 10);
                if (!reference.segments.containsKey(unknown)) {
                    // Data of a segment the table never saw created.
                    final long end = 1 + random.nextLong(1_000);
                    table.data(unknown, end);
                    reference.data(unknown, end);
                }
            } else if (op < 620) {
                final long end = random.nextLong(reference.segments.get(some).length + 1);
                final int id = random.nextInt(8) == 0 ? nextId + 5 : some;
                table.copy(id, end);
                reference.copy(id, end);
            } else if (op < 720) {
                final Ref ref = reference.segments.get(some);
                final long start = ref.start + random.nextLong(Math.max(1, ref.length - ref.start + 1));
                table.truncate(some, start);
                reference.truncate(some, start);
            } else if (op < 750) {
                table.seal(some);
                reference.segments.get(some).sealed = true;
            } else if (op < 900) {
                final int id = random.nextInt(20) == 0 ? random.nextInt(nextId + 10) : some;
                table.delete(id);
                reference.delete(id);
            } else if (op < 940) {
                final long number = nextFile++;
                table.currentFile(number);
                reference.file(number);
                reference.current = number;
            } else if (op < 950) {
                final List<Long> numbers = new ArrayList<>(reference.files.keySet());
                final long number = numbers.get(random.nextInt(numbers.size()));
                if (number != reference.current) {
                    table.removeFile(number);
                    reference.files.remove(number);
                }
            } else {
                check(table, reference, "seed=" + seed + " step=" + step);
            }
        }
        check(table, reference, "seed=" + seed + " end");

        // Everything deleted: no row page and no node is left.
        for (final int id : new ArrayList<>(reference.segments.keySet())) {
            table.delete(id);
            reference.delete(id);
        }
        for (final Map<Integer, Long> data : new ArrayList<>(reference.files.values())) {
            for (final int id : new ArrayList<>(data.keySet())) {
                table.delete(id);
                reference.delete(id);
            }
        }
        check(table, reference, "seed=" + seed + " all deleted");
        assertEquals(0, table.nodeCount(), "seed=" + seed);
        assertEquals(0, table.rowPages(), "seed=" + seed);
    }

    private static void check(final LogSegmentTable table, final Reference reference, final String where) {
        assertEquals(reference.segments.size(), table.segmentCount(), where);
        for (final Map.Entry<Integer, Ref> e : reference.segments.entrySet()) {
            final LogSegmentTable.Entry entry = table.segment(e.getKey());
            final Ref ref = e.getValue();
            assertArrayEquals(ref.name.getBytes(StandardCharsets.UTF_8), entry.name, where);
            assertEquals(ref.start, entry.start, where + " id=" + e.getKey());
            assertEquals(ref.length, entry.length, where + " id=" + e.getKey());
            assertEquals(ref.sealed, entry.sealed, where + " id=" + e.getKey());
            assertTrue(table.contains(e.getKey()), where);
            assertEquals(ref.start, table.start(e.getKey()), where);
            assertEquals(ref.length, table.length(e.getKey()), where);
        }
        assertNull(table.segment(Integer.MAX_VALUE), where);
        assertEquals(reference.files.size(), table.fileCount(), where);
        for (final long number : reference.files.keySet()) {
            assertTrue(table.hasFile(number), where + " file=" + number);
        }
        final List<Long> expected = reference.takeDead();
        final LongArrayList dead = new LongArrayList();
        table.takeDeadFiles(dead);
        final long[] actual = dead.toLongArray();
        Arrays.sort(actual);
        assertArrayEquals(expected.stream().mapToLong(Long::longValue).toArray(), actual, where);
    }
}
