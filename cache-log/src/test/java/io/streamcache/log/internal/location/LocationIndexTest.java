package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LocationIndexTest {
    /** Shared by the tests of this class: freed by the garbage collector with the class. */
    private static final LocationMemory MEMORY = new LocationMemory(true);

    /** One record of the reference model. */
    private record Loc(long offset, int length, long fileNumber, long position) {
    }

    @Test
    void shouldDeriveLayoutConstantsFromBits() {
        assertEquals(0xFFFF_FFFFL, LocationIndex.MAX_DELTA);
        assertEquals((1L << 35) - 8, LocationIndex.MAX_POSITION);
        assertEquals(32L << 30, LocationIndex.MAX_POSITION + 8, "positions up to 32 GiB");
    }

    @Test
    void shouldRoundTripEveryPackedField() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        final List<Loc> model = new ArrayList<>();
        long offset = 0;
        final long[] positions = {0, 8, 4096, LocationIndex.MAX_POSITION, (1L << 32) + 8, 24};
        final long[] files = {1, 1, 2, Long.MAX_VALUE, 7, 0};
        final int[] lengths = {1, Integer.MAX_VALUE, 100, 5, Integer.MAX_VALUE, 3};
        for (int i = 0; i < positions.length; i++) {
            index.add(offset, lengths[i], files[i], positions[i]);
            model.add(new Loc(offset, lengths[i], files[i], positions[i]));
            offset += lengths[i];
        }
        assertEquals(offset, index.endOffset());
        assertMatches(model, index, 0, offset);
        for (final Loc loc : model) {
            assertMatches(model, index, loc.offset(), loc.offset() + 1);
            assertMatches(model, index, loc.offset() + loc.length() - 1, loc.offset() + loc.length());
        }
    }

    @Test
    void shouldFindTheFloorRecordAgainstAModel() {
        final SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 20; round++) {
            final long start = random.nextLong(1 << 20);
            final LocationIndex index = LocationIndex.create(start, MEMORY);
            final TreeMap<Long, Loc> model = new TreeMap<>();
            long offset = start;
            long file = 1;
            long position = 4096;
            final int count = random.nextInt(1, 2000);
            for (int i = 0; i < count; i++) {
                final int length = random.nextInt(0, 3) == 0 ? random.nextInt(1, 10) : random.nextInt(1, 200_000);
                if (random.nextInt(100) == 0) {
                    file++;
                    position = 4096;
                }
                index.add(offset, length, file, position);
                model.put(offset, new Loc(offset, length, file, position));
                offset += length;
                position += 8L * random.nextInt(3, 1000);
            }
            final List<Loc> locs = new ArrayList<>(model.values());
            for (int probe = 0; probe < 200; probe++) {
                final long from = start + random.nextLong(offset - start);
                final long to = from + 1 + random.nextLong(300_000);
                assertMatches(locs, index, from, to);
            }
            assertForEachMatches(locs, index);
            if (round % 2 == 0) {
                index.trimToSize();
                assertMatches(locs, index, start, offset);
            }
        }
    }

    @Test
    void shouldStartANewBlockWhenTheFileChangesOrTheOffsetsSpreadPast4GiB() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        final List<Loc> model = new ArrayList<>();
        long offset = 0;
        for (int i = 0; i < 10; i++) {
            // Each record holds 1 GiB + 1: the deltas overflow 32 bits within a few records.
            final int length = (1 << 30) + 1;
            index.add(offset, length, i / 3 + 1, 8L * i);
            model.add(new Loc(offset, length, i / 3 + 1, 8L * i));
            offset += length;
        }
        assertMatches(model, index, 0, offset);
        for (final Loc loc : model) {
            assertMatches(model, index, loc.offset() + loc.length() / 2, loc.offset() + loc.length() / 2 + 1);
        }
    }

    @Test
    void shouldSkipZeroLengthRecords() {
        final LocationIndex index = LocationIndex.create(10, MEMORY);
        index.add(10, 5, 1, 4096);
        index.add(15, 0, 1, 4128);
        index.add(15, 5, 1, 4160);
        assertEquals(2, index.count());
        assertMatches(List.of(new Loc(10, 5, 1, 4096), new Loc(15, 5, 1, 4160)), index, 10, 20);
    }

    @Test
    void shouldRejectWhatCannotBePacked() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        assertThrows(IllegalArgumentException.class, () -> index.add(1, 5, 1, 4096), "not contiguous");
        assertThrows(IllegalArgumentException.class, () -> index.add(0, 5, 1, 4097), "not 8-aligned");
        assertThrows(IllegalArgumentException.class, () -> index.add(0, 5, 1, LocationIndex.MAX_POSITION + 8), "past 32 GiB");
        assertThrows(IllegalArgumentException.class, () -> index.add(0, -1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> index.add(0, 1, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> LocationIndex.create(-1, MEMORY));
        index.add(0, 5, 1, 0);
        assertThrows(IllegalArgumentException.class, () -> index.truncate(6), "past the end");
    }

    @Test
    void shouldDropTruncatedRecordsAndCompact() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        final List<Loc> model = new ArrayList<>();
        long offset = 0;
        for (int i = 0; i < 10_000; i++) {
            index.add(offset, 100, 1 + i / 1000, 4096 + 128L * (i % 1000));
            model.add(new Loc(offset, 100, 1 + i / 1000, 4096 + 128L * (i % 1000)));
            offset += 100;
        }
        final long before = index.footprint();
        for (long start = 50; start < offset; start += 97_531) {
            index.truncate(start);
            assertEquals(start, index.startOffset());
            final long first = start / 100;
            assertEquals(10_000 - first, index.count());
            assertMatches(model, index, 0, offset);
            assertForEachMatches(model, index);
            assertMatches(model, index, start, start + 1);
        }
        index.truncate(offset - 1);
        assertEquals(1, index.count());
        index.truncate(offset);
        assertEquals(0, index.count());
        assertTrue(index.footprint() < before / 4, "compaction shrinks the arrays: " + index.footprint() + " vs " + before);
        final LocationList list = new LocationList();
        assertTrue(index.locate(0, offset, list));
        assertEquals(0, list.count());
        index.add(offset, 7, 11, 4096);
        assertMatches(List.of(new Loc(offset, 7, 11, 4096)), index, 0, offset + 7);
    }

    @Test
    void shouldFindNothingOnceCleared() {
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        index.add(0, 5, 1, 4096);
        index.clear();
        assertTrue(index.isCleared());
        final LocationList list = new LocationList();
        assertFalse(index.locate(0, 5, list));
        assertEquals(0, list.count());
        assertThrows(IllegalStateException.class, () -> index.add(5, 1, 1, 4128));
    }

    /**
     * A short segment's index stays small: one record (one block) takes two slots of each array,
     * not eight (a store of 250,000 message queues holds one index per queue, most with a record
     * or two); records still index and grow past it.
     */
    @Test
    void shouldHoldAFewRecordsInSmallChunks() {
        final LocationMemory memory = new LocationMemory();
        final LocationIndex index = LocationIndex.create(0, memory);
        final long used = memory.usedBytes();
        assertEquals(64, index.footprint(), "an empty index: its row");
        index.add(0, 100, 3, 4096);
        // A spine of one slot (24 -> 32 B), a record chunk (8 B), a block's pair (16 B) and first (4 -> 8 B).
        assertEquals(64 + 32 + 8 + 16 + 8, index.footprint(), "one record");
        assertEquals(used + index.footprint() - 64, memory.usedBytes(), "taken from the shared memory");
        for (int i = 1; i < 20; i++) {
            index.add(100L * i, 100, 3 + i, 4096 + 8L * i);
        }
        final LocationList list = new LocationList();
        assertTrue(index.locate(0, 2000, list));
        assertEquals(2000, index.endOffset());
    }

    /**
     * Bytes per record indexed, at tight capacity and as the arrays grow: the figure quoted in
     * the class comment.
     */
    @Test
    void shouldTakeAboutEightBytesPerRecord() {
        final int records = 1_000_000;
        final LocationIndex index = LocationIndex.create(0, MEMORY);
        long offset = 0;
        double worstGrowing = 0;
        for (int i = 0; i < records; i++) {
            index.add(offset, 100, 1 + i / 100_000, 4096 + 128L * (i % 100_000));
            offset += 100;
            if (i > 1000 && i % 9973 == 0) {
                worstGrowing = Math.max(worstGrowing, (double) index.footprint() / (i + 1));
            }
        }
        final double growing = (double) index.footprint() / records;
        index.trimToSize();
        final double tight = (double) index.footprint() / records;
        System.out.printf("LocationIndex: %.2f bytes/record at tight capacity, %.2f growing (worst seen %.2f)%n", tight, growing,
            worstGrowing);
        assertTrue(tight < 8.4, "tight=" + tight);
        assertTrue(worstGrowing < 12.6, "growing=" + worstGrowing);
    }

    private static void assertMatches(final List<Loc> model, final LocationIndex index, final long from, final long to) {
        final LocationList list = new LocationList();
        assertTrue(index.locate(from, to, list));
        final long clippedFrom = Math.max(from, index.startOffset());
        final long clippedTo = Math.min(to, index.endOffset());
        // The model is in offset order: binary search the first record ending after clippedFrom.
        int low = 0;
        int high = model.size();
        while (low < high) {
            final int mid = (low + high) >>> 1;
            if (model.get(mid).offset() + model.get(mid).length() <= clippedFrom) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        final List<Loc> expected = new ArrayList<>();
        for (int i = low; i < model.size() && model.get(i).offset() < clippedTo; i++) {
            expected.add(model.get(i));
        }
        final List<Loc> actual = new ArrayList<>();
        for (int i = 0; i < list.count(); i++) {
            actual.add(new Loc(list.offset(i), list.length(i), list.fileNumber(i), list.position(i)));
        }
        assertEquals(expected, actual, "locate(" + from + ", " + to + ")");
        if (clippedFrom < clippedTo) {
            assertEquals(clippedFrom, list.from());
            assertEquals(clippedTo, list.to());
        }
    }

    private static void assertForEachMatches(final List<Loc> model, final LocationIndex index) {
        final Set<Loc> all = new HashSet<>(model);
        final List<Loc> visited = new ArrayList<>();
        index.forEach((offset, length, fileNumber, position) -> visited.add(new Loc(offset, length, fileNumber, position)));
        assertEquals(index.count(), visited.size());
        for (final Loc loc : visited) {
            assertTrue(all.contains(loc), "forEach reported " + loc);
        }
        for (int i = 1; i < visited.size(); i++) {
            assertEquals(visited.get(i - 1).offset() + visited.get(i - 1).length(), visited.get(i).offset(), "contiguous");
        }
    }
}
