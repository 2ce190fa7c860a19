package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReaderMarks}: which reads make a live sequential reader, and where the slowest one is.
 * The clock is the test's own (any long), so nothing here depends on time passing; a randomized
 * run checks the sweep's stamps against marks stamped with each read's exact time.
 */
class ReaderMarksTest {
    private static final long IDLE = 100;
    private static final long NONE = Long.MAX_VALUE;

    @Test
    void oneReadIsNoReaderTwoInARowAre() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(1000, 2000);
        assertEquals(NONE, marks.slowestLive(0, IDLE), "a single read (a key/value access) protects nothing");
        marks.observe(2000, 3000);
        assertEquals(3000, marks.slowestLive(1, IDLE), "read on from where it ended: a reader at 3000");
    }

    @Test
    void aMissAndItsSecondReadAreOneRead() {
        // A read-through: the cache misses (no bytes), the load, the same offset read again.
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(5000, 5000);
        marks.observe(5000, 6000);
        assertEquals(NONE, marks.slowestLive(1, IDLE), "a key/value read through the log is no reader");
        marks.observe(6000, 6000);
        marks.observe(6000, 7000);
        assertEquals(7000, marks.slowestLive(3, IDLE));
    }

    @Test
    void aReaderIdleLongerThanTheTimeoutAfterTheSweepThatSawItsLastReadIsNotLive() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(0, 10);
        marks.observe(10, 20);
        assertEquals(20, marks.slowestLive(5, IDLE), "the first sweep after the read stamps it at 5");
        assertEquals(20, marks.slowestLive(5 + IDLE, IDLE));
        assertEquals(NONE, marks.slowestLive(5 + IDLE + 1, IDLE));
        marks.observe(20, 30);
        assertEquals(30, marks.slowestLive(500, IDLE), "reading again makes it live again");
        assertEquals(NONE, marks.slowestLive(500 + IDLE + 1, IDLE));
    }

    @Test
    void aReaderLastSeenBeforeTheFirstSweepStaysLiveForOneTimeoutFromIt() {
        // The sweep cannot tell when a read happened, only that it happened since its last look.
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(0, 10);
        marks.observe(10, 20);
        assertEquals(20, marks.slowestLive(10 * IDLE, IDLE));
        assertEquals(NONE, marks.slowestLive(11 * IDLE + 1, IDLE));
    }

    @Test
    void theSlowestOfSeveralReadersCountsAndTheLeastRecentlyReadSlotIsTaken() {
        final ReaderMarks marks = new ReaderMarks();
        // A tail reader at 900 and a catch-up reader at 200.
        marks.observe(800, 850);
        marks.observe(850, 900);
        marks.observe(100, 150);
        marks.observe(150, 200);
        assertEquals(200, marks.slowestLive(3, IDLE));
        // Enough single reads elsewhere to take every slot: the least recently read go first.
        for (int i = 0; i < ReaderMarks.SLOTS; i++) {
            marks.observe(10_000L * (i + 1), 10_000L * (i + 1) + 5);
        }
        assertEquals(NONE, marks.slowestLive(20, IDLE), "both readers' slots were taken by newer reads");
    }

    @Test
    void aReadThatRewindsWithinTheLastReadContinuesTheReader() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(0, 100);
        marks.observe(100, 200);
        marks.observe(150, 160);
        assertEquals(200, marks.slowestLive(2, IDLE), "its position is the farthest it read");
    }

    /**
     * Randomized against a reference that stamps each read with its exact time (the marks as a
     * {@code System.nanoTime()} per read would keep them): at every sweep the marks count as live
     * at least the readers the reference does with the same timeout, and at most those it does
     * with the timeout plus the longest gap a read waited for its first sweep.
     */
    @Test
    void theSweptStampsBoundTheExactOnesByTheGapBetweenSweeps() {
        for (long seed = 1; seed <= 200; seed++) {
            final java.util.Random random = new java.util.Random(seed);
            final ReaderMarks marks = new ReaderMarks();
            final ExactMarks exact = new ExactMarks();
            final long[] positions = {0, 1_000_000, 2_000_000};
            long now = 0;
            long lastSweep = 0;
            long maxGap = 0;
            for (int step = 0; step < 2_000; step++) {
                now += random.nextInt(4) == 0 ? random.nextInt(3 * (int) IDLE) : random.nextInt(10);
                if (random.nextInt(8) == 0) {
                    maxGap = Math.max(maxGap, now - lastSweep);
                    lastSweep = now;
                    final long swept = marks.slowestLive(now, IDLE);
                    final String at = "seed " + seed + " step " + step;
                    assertTrue(swept <= exact.slowestLive(now, IDLE), at + ": every reader live by its exact time is live");
                    assertTrue(swept >= exact.slowestLive(now, IDLE + maxGap), at + ": no reader live longer than the gap allows");
                    continue;
                }
                final int which = random.nextInt(5);
                final long offset;
                final long end;
                if (which < positions.length) {
                    offset = positions[which];
                    end = offset + random.nextInt(100);
                    positions[which] = end;
                } else {
                    offset = random.nextBoolean() ? random.nextInt(10_000_000) : Math.max(0, positions[random.nextInt(positions.length)] - random.nextInt(50));
                    end = offset + random.nextInt(100);
                }
                marks.observe(offset, end);
                exact.observe(offset, end, now);
            }
        }
    }

    /** The reference: the same slots, each stamped with its last read's exact time. */
    private static final class ExactMarks {
        private final long[] from = new long[ReaderMarks.SLOTS];
        private final long[] end = new long[ReaderMarks.SLOTS];
        private final long[] firstEnd = new long[ReaderMarks.SLOTS];
        private final long[] order = new long[ReaderMarks.SLOTS];
        private final long[] time = new long[ReaderMarks.SLOTS];
        private long reads;

        /** The slot the last read used: tried first. */
        private int last;

        void observe(final long offset, final long readEnd, final long now) {
            reads++;
            if (continues(last, offset, readEnd, now)) {
                return;
            }
            int reuse = 0;
            for (int i = 0; i < ReaderMarks.SLOTS; i++) {
                if (continues(i, offset, readEnd, now)) {
                    last = i;
                    return;
                }
                if (order[i] < order[reuse]) {
                    reuse = i;
                }
            }
            from[reuse] = offset;
            end[reuse] = Math.max(offset, readEnd);
            firstEnd[reuse] = readEnd > offset ? readEnd : -1;
            order[reuse] = reads;
            time[reuse] = now;
            last = reuse;
        }

        private boolean continues(final int i, final long offset, final long readEnd, final long now) {
            if (order[i] == 0 || from[i] > offset || offset > end[i]) {
                return false;
            }
            from[i] = offset;
            end[i] = Math.max(end[i], readEnd);
            if (firstEnd[i] == -1 && readEnd > offset) {
                firstEnd[i] = readEnd;
            }
            order[i] = reads;
            time[i] = now;
            return true;
        }

        long slowestLive(final long now, final long idle) {
            long slowest = Long.MAX_VALUE;
            for (int i = 0; i < ReaderMarks.SLOTS; i++) {
                if (order[i] != 0 && now - time[i] <= idle && firstEnd[i] != -1 && end[i] > firstEnd[i]) {
                    slowest = Math.min(slowest, end[i]);
                }
            }
            return slowest;
        }
    }
}
