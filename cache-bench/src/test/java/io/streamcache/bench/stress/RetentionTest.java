package io.streamcache.bench.stress;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RetentionTest {
    private static final long KEEP = 1L << 20;
    private static final long STEP = Retention.stepFor(KEEP);
    private static final long NO_READER = Long.MAX_VALUE;

    @Test
    void shouldStepAQuarterOfWhatASegmentKeepsButNotLessThanTheMinimum() {
        assertEquals(256 << 10, STEP);
        assertEquals(Retention.MIN_STEP, Retention.stepFor(1000));
    }

    @Test
    void shouldKeepTheRetainedBytesBehindTheEnd() {
        final long end = 10L << 20;
        assertEquals(end - KEEP, Retention.target(end, NO_READER, 0, KEEP, STEP));
    }

    @Test
    void shouldWaitUntilAWholeStepCanBeDropped() {
        final long truncatedTo = 4L << 20;
        assertEquals(-1, Retention.target(truncatedTo + KEEP + STEP - 1, NO_READER, truncatedTo, KEEP, STEP));
        assertEquals(truncatedTo + STEP, Retention.target(truncatedTo + KEEP + STEP, NO_READER, truncatedTo, KEEP, STEP));
    }

    @Test
    void shouldNeverTruncatePastTheTailReader() {
        final long end = 100L << 20;
        final long reader = 50L << 20;
        assertEquals(reader, Retention.target(end, reader, 0, KEEP, STEP));
        // A reader within a step of the last truncation holds the segment where it is.
        assertEquals(-1, Retention.target(end, STEP - 1, 0, KEEP, STEP));
    }

    @Test
    void shouldLeaveASegmentShorterThanWhatItKeeps() {
        assertEquals(-1, Retention.target(KEEP / 2, NO_READER, 0, KEEP, STEP));
    }
}
