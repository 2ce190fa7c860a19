package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link ReaderMarks}: which reads make a live sequential reader, and where the slowest one is.
 * The clock is the test's own (any long), so nothing here depends on time passing.
 */
class ReaderMarksTest {
    private static final long IDLE = 100;
    private static final long NONE = Long.MAX_VALUE;

    @Test
    void oneReadIsNoReaderTwoInARowAre() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(1000, 2000, 0);
        assertEquals(NONE, marks.slowestLive(0, IDLE), "a single read (a key/value access) protects nothing");
        marks.observe(2000, 3000, 1);
        assertEquals(3000, marks.slowestLive(1, IDLE), "read on from where it ended: a reader at 3000");
    }

    @Test
    void aMissAndItsSecondReadAreOneRead() {
        // A read-through: the cache misses (no bytes), the load, the same offset read again.
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(5000, 5000, 0);
        marks.observe(5000, 6000, 1);
        assertEquals(NONE, marks.slowestLive(1, IDLE), "a key/value read through the log is no reader");
        marks.observe(6000, 6000, 2);
        marks.observe(6000, 7000, 3);
        assertEquals(7000, marks.slowestLive(3, IDLE));
    }

    @Test
    void aReaderIdleLongerThanTheTimeoutIsNotLive() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(0, 10, 0);
        marks.observe(10, 20, 5);
        assertEquals(20, marks.slowestLive(5 + IDLE, IDLE));
        assertEquals(NONE, marks.slowestLive(5 + IDLE + 1, IDLE));
        marks.observe(20, 30, 500);
        assertEquals(30, marks.slowestLive(500, IDLE), "reading again makes it live again");
    }

    @Test
    void theSlowestOfSeveralReadersCountsAndTheLeastRecentlyReadSlotIsTaken() {
        final ReaderMarks marks = new ReaderMarks();
        // A tail reader at 900 and a catch-up reader at 200.
        marks.observe(800, 850, 0);
        marks.observe(850, 900, 1);
        marks.observe(100, 150, 2);
        marks.observe(150, 200, 3);
        assertEquals(200, marks.slowestLive(3, IDLE));
        // Enough single reads elsewhere to take every slot: the least recently read go first.
        for (int i = 0; i < ReaderMarks.SLOTS; i++) {
            marks.observe(10_000L * (i + 1), 10_000L * (i + 1) + 5, 10 + i);
        }
        assertEquals(NONE, marks.slowestLive(20, IDLE), "both readers' slots were taken by newer reads");
    }

    @Test
    void aReadThatRewindsWithinTheLastReadContinuesTheReader() {
        final ReaderMarks marks = new ReaderMarks();
        marks.observe(0, 100, 0);
        marks.observe(100, 200, 1);
        marks.observe(150, 160, 2);
        assertEquals(200, marks.slowestLive(2, IDLE), "its position is the farthest it read");
    }
}
