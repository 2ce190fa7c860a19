package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LocationIndex#relocate}: moving records to a compaction copy's place, against a model,
 * interleaved with appends and truncation.
 */
class LocationIndexRelocateTest {
    /** Shared by the tests of this class: freed by the garbage collector with the class. */
    private static final LocationMemory MEMORY = new LocationMemory(true);

    private record Loc(long offset, int length, long fileNumber, long position) {
    }

    private static List<Loc> records(final LocationIndex index) {
        final List<Loc> out = new ArrayList<>();
        index.forEach((offset, length, fileNumber, position) -> out.add(new Loc(offset, length, fileNumber, position)));
        return out;
    }

    private static List<Loc> located(final LocationIndex index, final long from, final long to) {
        final LocationList list = new LocationList();
        index.locate(from, to, list);
        final List<Loc> out = new ArrayList<>();
        for (int i = 0; i < list.count(); i++) {
            out.add(new Loc(list.offset(i), list.length(i), list.fileNumber(i), list.position(i)));
        }
        return out;
    }

    @Test
    void shouldMoveOneRecordInTheMiddleOfABlockAndKeepItsNeighbours() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        for (int i = 0; i < 10; i++) {
            index.add(i * 100L, 100, 1, 4096 + i * 128L);
        }
        assertTrue(index.relocate(500, 100, 7, 8192));
        final List<Loc> records = records(index);
        assertEquals(10, records.size());
        assertEquals(new Loc(400, 100, 1, 4096 + 4 * 128), records.get(4));
        assertEquals(new Loc(500, 100, 7, 8192), records.get(5));
        assertEquals(new Loc(600, 100, 1, 4096 + 6 * 128), records.get(6));
        assertEquals(List.of(new Loc(500, 100, 7, 8192)), located(index, 550, 560));
    }

    @Test
    void shouldIgnoreARecordItDoesNotHold() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        index.add(0, 100, 1, 4096);
        index.add(100, 100, 1, 4224);
        index.truncate(150);
        assertFalse(index.relocate(0, 100, 2, 4096), "dropped by truncation");
        assertFalse(index.relocate(100, 50, 2, 4096), "another length");
        assertFalse(index.relocate(120, 80, 2, 4096), "not a record start");
        assertFalse(index.relocate(200, 10, 2, 4096), "past the end");
        assertTrue(index.relocate(100, 100, 2, 4096));
        index.clear();
        assertFalse(index.relocate(100, 100, 3, 4096), "cleared");
        assertThrows(IllegalArgumentException.class, () -> LocationIndex.create(0, MEMORY).relocate(0, 1, 1, 12));
    }

    @Test
    void shouldKeepARunOfRecordsCopiedInOrderInFewBlocks() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        for (int i = 0; i < 640; i++) {
            index.add(i * 10L, 10, 1 + i / 128, 4096 + (i % 128) * 40L);
        }
        final long before = index.footprint();
        for (int i = 0; i < 640; i++) {
            assertTrue(index.relocate(i * 10L, 10, 50, 4096 + i * 40L));
        }
        final List<Loc> records = records(index);
        for (int i = 0; i < 640; i++) {
            assertEquals(new Loc(i * 10L, 10, 50, 4096 + i * 40L), records.get(i));
        }
        assertTrue(index.footprint() <= before + 64, "blocks merged: " + index.footprint() + " vs " + before);
    }

    @Test
    void shouldMatchAModelUnderRandomAppendsRelocationsAndTruncations() {
        for (long seed = 1; seed <= 40; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final LocationIndex index = LocationIndex.create(0, MEMORY);
            final TreeMap<Long, Loc> model = new TreeMap<>();
            long end = 0;
            long start = 0;
            long file = 1;
            for (int step = 0; step < 2000; step++) {
                final int op = random.nextInt(10);
                if (op < 5 || model.isEmpty()) {
                    final int length = 1 + random.nextInt(random.nextBoolean() ? 50 : 5000);
                    if (random.nextInt(20) == 0) {
                        file++;
                    }
                    final long position = 8L * random.nextInt(1 << 20);
                    index.add(end, length, file, position);
                    model.put(end, new Loc(end, length, file, position));
                    end += length;
                } else if (op < 9) {
                    final List<Long> keys = new ArrayList<>(model.keySet());
                    final Loc loc = model.get(keys.get(random.nextInt(keys.size())));
                    final long target = random.nextInt(4) == 0 ? loc.fileNumber() : 100 + random.nextInt(3);
                    final long position = 8L * random.nextInt(1 << 20);
                    assertTrue(index.relocate(loc.offset(), loc.length(), target, position), "seed " + seed + " step " + step);
                    model.put(loc.offset(), new Loc(loc.offset(), loc.length(), target, position));
                } else {
                    start = start + random.nextLong(Math.max(1, end - start + 1));
                    index.truncate(start);
                    final Long floor = model.floorKey(start);
                    if (floor != null) {
                        model.headMap(floor).clear();
                    }
                    if (start == end) {
                        model.clear();
                    }
                }
                if (step % 97 == 0 || step == 1999) {
                    assertEquals(new ArrayList<>(model.values()), records(index), "seed " + seed + " step " + step);
                    if (end > start) {
                        final long from = start + random.nextLong(end - start);
                        final long to = from + 1 + random.nextLong(end - from);
                        final List<Loc> expected = new ArrayList<>(model.subMap(model.floorKey(from), true, to, false).values());
                        assertEquals(expected, located(index, from, to), "seed " + seed + " locate [" + from + ", " + to + ")");
                    }
                }
            }
        }
    }
}
