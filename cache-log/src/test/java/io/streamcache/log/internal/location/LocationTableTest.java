package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static io.streamcache.log.internal.location.LocationIndexContentionTest.file;
import static io.streamcache.log.internal.location.LocationIndexContentionTest.movedFile;
import static io.streamcache.log.internal.location.LocationIndexContentionTest.movedPosition;
import static io.streamcache.log.internal.location.LocationIndexContentionTest.position;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LocationTable}: no object per segment, rows adopted from another memory copied, views
 * equal by id, the close; and its threading contract under contention (the randomized model
 * test against a reference is {@link LocationIndexModelTest}, which runs on a table too).
 */
class LocationTableTest {
    private static final int SLOTS = 8;
    private static final int LENGTH = 100;

    @Test
    void shouldKeepNoObjectPerSegment() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (LocationMemory memory = new LocationMemory()) {
            final LocationTable table = new LocationTable(memory);
            // Warm up the code paths (and the memory's slabs) on ids of pages the measured part does not use.
            final int warm = 20_000;
            for (int id = 0; id < warm; id++) {
                table.create(id, 0);
                table.add(id, 0, 100, 1, 8L * id);
            }
            for (int id = 0; id < warm; id++) {
                table.remove(id);
            }
            final int segments = 100_000;
            final int base = 1 << 20;
            final long tid = Thread.currentThread().getId();
            final long before = threads.getThreadAllocatedBytes(tid);
            for (int id = base; id < base + segments; id++) {
                table.create(id, 0);
                table.add(id, 0, 100, 1, 8L * id);
                table.add(id, 100, 100, 1, 8L * id + 4096);
            }
            final long allocated = threads.getThreadAllocatedBytes(tid) - before;
            // The pages: 4 bytes per id, 4 KB per 1,024 ids; a handle per segment would add 16-24 bytes each.
            assertTrue(allocated < 6L * segments, "allocated " + allocated + " bytes of heap for " + segments + " segments");
            assertTrue(table.pageHeapBytes() >= 4L * segments, "the pages hold 4 bytes per id: " + table.pageHeapBytes());
            table.close();
            assertEquals(0, memory.usedBytes());
        }
    }

    @Test
    void shouldCopyARowOfAnotherMemoryAndFreeItThere() {
        try (LocationMemory mine = new LocationMemory(true); LocationMemory other = new LocationMemory(true)) {
            final LocationTable table = new LocationTable(mine);
            final LocationIndex built = LocationIndex.create(1000, other);
            for (int i = 0; i < 300; i++) {
                built.add(1000 + i * 50L, 50, 1 + i / 100, 8L * i);
            }
            built.truncate(1000 + 75);
            final List<long[]> expected = records(built);
            table.adopt(3, built);
            assertTrue(built.isCleared(), "the standalone index gave its row up");
            assertEquals(0, other.usedBytes(), "the row of the other memory was freed there");
            final LocationIndex adopted = table.get(3);
            assertEquals(1075, adopted.startOffset());
            assertEquals(1000 + 300 * 50, adopted.endOffset());
            assertEquals(expected.size(), records(adopted).size());
            for (int i = 0; i < expected.size(); i++) {
                assertEquals(List.of(expected.get(i)[0], expected.get(i)[1], expected.get(i)[2], expected.get(i)[3]),
                    List.of(records(adopted).get(i)[0], records(adopted).get(i)[1], records(adopted).get(i)[2], records(adopted).get(i)[3]));
            }
            // An empty row of another memory keeps its bounds.
            final long empty = LocationRows.allocate(other, 500);
            table.adopt(4, empty, other);
            assertEquals(500, table.get(4).startOffset());
            assertEquals(500, table.get(4).endOffset());
            // A row of the table's own memory is taken as it is.
            final long own = LocationRows.allocate(mine, 7);
            table.adopt(5, own, mine);
            assertEquals(7, table.get(5).endOffset());
            table.close();
            assertEquals(0, mine.usedBytes());
            assertEquals(0, other.usedBytes());
        }
    }

    @Test
    void shouldHandOutViewsThatAreEqualByIdAndFindNothingOnceRemoved() {
        try (LocationMemory memory = new LocationMemory(true)) {
            final LocationTable table = new LocationTable(memory);
            assertNull(table.get(9));
            table.create(9, 0);
            table.create(9 + LocationTable.STRIPES, 0);
            final LocationIndex view = table.get(9);
            assertEquals(view, table.get(9));
            assertEquals(view.hashCode(), table.get(9).hashCode());
            assertNotEquals(view, table.get(9 + LocationTable.STRIPES), "another id of the same stripe");
            assertTrue(table.add(9, 0, 10, 1, 0));
            // CREATE again: the old row is freed, the view now finds the new one.
            table.create(9, 0);
            assertEquals(0, view.endOffset());
            view.clear();
            assertFalse(table.contains(9));
            assertTrue(table.contains(9 + LocationTable.STRIPES), "the other id of the stripe is untouched");
            assertFalse(view.locate(0, 10, new LocationList()));
            assertThrows(IllegalStateException.class, () -> view.add(0, 10, 1, 0));
            assertThrows(IllegalArgumentException.class, () -> table.create(-1, 0));
            assertThrows(IllegalArgumentException.class, () -> table.create(1, -1));
            table.close();
            table.create(11, 0);
            assertNull(table.get(11), "a create after the close frees its row at once");
            assertEquals(0, memory.usedBytes());
        }
    }

    private static List<long[]> records(final LocationIndex index) {
        final List<long[]> records = new ArrayList<>();
        index.forEach((offset, length, fileNumber, position) -> records.add(new long[] {offset, length, fileNumber, position}));
        return records;
    }

    /**
     * One writer adds, truncates, relocates by id and removes segments (new ones on new ids:
     * rows, spines and chunks pass between segments through the poisoned pool), while readers
     * look ids up and locate ranges through views, some kept across the removal of their id. The
     * ids of the live segments share two stripes, so readers and the writer meet on every lock.
     * Every record's place is a function of its offset (or of its relocation): a reader that saw
     * a freed row or chunk (-1 bytes), another segment's row, or an entry half written reports
     * a location no record had. No timing is asserted: the writer does a fixed amount of work
     * and the readers read until it is done.
     */
    @Test
    void shouldNeverShowAFreedRowOrChunkToAReader() throws InterruptedException {
        final LocationMemory memory = new LocationMemory(true);
        final LocationTable table = new LocationTable(memory);
        final AtomicIntegerArray ids = new AtomicIntegerArray(SLOTS);
        int generation = 0;
        for (int w = 0; w < SLOTS; w++) {
            final int id = idOf(generation++);
            table.create(id, 0);
            ids.set(w, id);
        }
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong reads = new AtomicLong();
        final List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            final int seed = r;
            final Thread reader = new Thread(() -> {
                final SplittableRandom random = new SplittableRandom(100 + seed);
                final LocationList list = new LocationList();
                LocationIndex kept = null;
                try {
                    while (!done.get() && failure.get() == null) {
                        final LocationIndex view = kept != null && random.nextBoolean() ? kept : table.get(ids.get(random.nextInt(SLOTS)));
                        if (view == null) {
                            continue;
                        }
                        kept = view;
                        final long from = LENGTH * (long) random.nextInt(40_000) + random.nextInt(LENGTH);
                        final long to = from + 1 + random.nextInt(50 * LENGTH);
                        if (view.locate(from, to, list)) {
                            check(list);
                            reads.incrementAndGet();
                        }
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "reader-" + r);
            readers.add(reader);
            reader.start();
        }
        try {
            final SplittableRandom random = new SplittableRandom(1);
            final long[] ends = new long[SLOTS];
            for (int step = 0; step < 300_000 && failure.get() == null; step++) {
                if (step % 10_000 == 0) {
                    // The readers read during every stretch of the run, whatever the scheduler does.
                    final long seen = reads.get();
                    while (reads.get() < seen + 10 && failure.get() == null) {
                        Thread.yield();
                    }
                }
                final int which = random.nextInt(SLOTS);
                final int id = ids.get(which);
                final int op = random.nextInt(1000);
                if (op < 900) {
                    final long n = ends[which] / LENGTH;
                    assertTrue(table.add(id, ends[which], LENGTH, file(n), position(n)));
                    ends[which] += LENGTH;
                } else if (op < 960) {
                    if (ends[which] > 0) {
                        table.truncate(id, random.nextLong(ends[which] + 1));
                    }
                } else if (op < 998) {
                    if (ends[which] > 0) {
                        long n = random.nextLong(ends[which] / LENGTH);
                        for (int k = 0; k < 20 && n * LENGTH < ends[which]; k++, n++) {
                            table.relocate(id, n * LENGTH, LENGTH, movedFile(n), movedPosition(n));
                        }
                    }
                } else {
                    table.remove(id);
                    final int next = idOf(generation++);
                    table.create(next, 0);
                    ids.set(which, next);
                    ends[which] = 0;
                }
            }
        } finally {
            done.set(true);
            for (final Thread reader : readers) {
                reader.join();
            }
        }
        assertNull(failure.get(), () -> "a reader saw a bad location: " + failure.get());
        assertTrue(memory.reused() > 0, "rows and chunks were recycled between segments");
        assertTrue(reads.get() >= 300, "reads checked: " + reads.get());
        table.close();
        assertEquals(0, memory.usedBytes());
        memory.close();
    }

    /** @return the id of the n-th segment: every id falls in stripe 0 or 1, ids grow across pages. */
    private static int idOf(final int n) {
        return (n / 2) * LocationTable.STRIPES + (n & 1);
    }

    private static void check(final LocationList list) {
        long expected = -1;
        for (int i = 0; i < list.count(); i++) {
            final long offset = list.offset(i);
            if (offset % LENGTH != 0 || list.length(i) != LENGTH || (expected >= 0 && offset != expected)) {
                throw new AssertionError("entry " + i + " of " + list);
            }
            final long n = offset / LENGTH;
            final long file = list.fileNumber(i);
            final long position = list.position(i);
            final boolean original = file == file(n) && position == position(n);
            final boolean moved = file == movedFile(n) && position == movedPosition(n);
            if (!original && !moved) {
                throw new AssertionError("record " + n + " at file " + file + " position " + position + " in " + list);
            }
            expected = offset + LENGTH;
        }
        if (list.count() > 0 && (list.offset(0) > list.from() || expected < list.to())) {
            throw new AssertionError("does not cover [" + list.from() + ", " + list.to() + "): " + list);
        }
    }
}
