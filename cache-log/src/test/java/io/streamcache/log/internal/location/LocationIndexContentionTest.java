package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The thread-safety contract of {@link LocationIndex} with a shared {@link LocationMemory}:
 * one writer adds, truncates, relocates and deletes (clears and replaces) indexes, so chunks pass
 * from index to index through the pool, while readers locate ranges of the same indexes. The
 * pool poisons every returned chunk (-1), and every record's place is a function of its offset
 * (or of its relocation), so a reader that saw a chunk after its return, or an entry half
 * written, reports a location no record ever had. No timing is asserted: the writer does a fixed
 * amount of work and the readers read until it is done.
 */
class LocationIndexContentionTest {
    private static final int INDEXES = 8;
    private static final int LENGTH = 100;

    /** Where record {@code n} is first written (this test and {@link LocationTableTest}): a function of its offset. */
    static long file(final long n) {
        return 1 + n / 7;
    }

    static long position(final long n) {
        return 8 * (n % 100_000);
    }

    /** Where record {@code n} is after its relocation. */
    static long movedFile(final long n) {
        return 1_000_000 + n / 5;
    }

    static long movedPosition(final long n) {
        return 8 * (n % 100_000) + 8;
    }

    @Test
    void shouldNeverShowARecycledChunkToAReader() throws InterruptedException {
        final LocationMemory memory = new LocationMemory(true);
        final AtomicReferenceArray<LocationIndex> indexes = new AtomicReferenceArray<>(INDEXES);
        for (int i = 0; i < INDEXES; i++) {
            indexes.set(i, LocationIndex.create(0, memory));
        }
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> readers = new ArrayList<>();
        final AtomicLong reads = new AtomicLong();
        for (int r = 0; r < 3; r++) {
            final int id = r;
            final Thread reader = new Thread(() -> {
                final SplittableRandom random = new SplittableRandom(100 + id);
                final LocationList list = new LocationList();
                try {
                    while (!done.get() && failure.get() == null) {
                        final LocationIndex index = indexes.get(random.nextInt(INDEXES));
                        final long from = LENGTH * (long) random.nextInt(40_000) + random.nextInt(LENGTH);
                        final long to = from + 1 + random.nextInt(50 * LENGTH);
                        if (!index.locate(from, to, list)) {
                            continue;
                        }
                        check(list);
                        reads.incrementAndGet();
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
            final long[] ends = new long[INDEXES];
            for (int step = 0; step < 300_000 && failure.get() == null; step++) {
                if (step % 10_000 == 0) {
                    // The readers read during every stretch of the run, whatever the scheduler does.
                    final long seen = reads.get();
                    while (reads.get() < seen + 10 && failure.get() == null) {
                        Thread.yield();
                    }
                }
                final int which = random.nextInt(INDEXES);
                final LocationIndex index = indexes.get(which);
                final int op = random.nextInt(1000);
                if (op < 900) {
                    final long n = ends[which] / LENGTH;
                    index.add(ends[which], LENGTH, file(n), position(n));
                    ends[which] += LENGTH;
                } else if (op < 960) {
                    if (ends[which] > 0) {
                        index.truncate(random.nextLong(ends[which] + 1));
                    }
                } else if (op < 998) {
                    if (ends[which] > 0) {
                        long n = random.nextLong(ends[which] / LENGTH);
                        for (int k = 0; k < 20 && n * LENGTH < ends[which]; k++, n++) {
                            index.relocate(n * LENGTH, LENGTH, movedFile(n), movedPosition(n));
                        }
                    }
                } else {
                    index.clear();
                    indexes.set(which, LocationIndex.create(0, memory));
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
        assertTrue(memory.reused() > 0, "chunks were recycled between indexes");
        assertTrue(reads.get() >= 300, "reads checked: " + reads.get());
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
