package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * {@link SequentialReadAhead}: doubling for a reader that misses where the last load ended, the
 * base length for any other miss.
 */
class SequentialReadAheadTest {
    private static final int BASE = 1 << 20;

    @Test
    void shouldDoubleForASequentialReaderUpToTheCap() {
        final SequentialReadAhead readAhead = new SequentialReadAhead(BASE, 8 * BASE);
        long at = 0;
        final int[] expected = {BASE, 2 * BASE, 4 * BASE, 8 * BASE, 8 * BASE, 8 * BASE};
        for (final int length : expected) {
            assertEquals(length, readAhead.lengthFor(at), "at=" + at);
            at += length;
        }
    }

    @Test
    void shouldAlignTheMissDownAndCountAMissInsideTheNextBaseRangeAsSequential() {
        final SequentialReadAhead readAhead = new SequentialReadAhead(BASE, 8 * BASE);
        assertEquals(BASE, readAhead.lengthFor(100));
        assertEquals(2 * BASE, readAhead.lengthFor(BASE + 5), "the next range, wherever in it the miss is");
    }

    @Test
    void shouldFallBackToTheBaseLengthOnAJump() {
        final SequentialReadAhead readAhead = new SequentialReadAhead(BASE, 8 * BASE);
        readAhead.lengthFor(0);
        assertEquals(2 * BASE, readAhead.lengthFor(BASE));
        assertEquals(BASE, readAhead.lengthFor(50L * BASE), "a jump ahead");
        assertEquals(BASE, readAhead.lengthFor(0), "a jump back");
        assertEquals(2 * BASE, readAhead.lengthFor(BASE));
    }

    @Test
    void shouldNeverGrowPastABaseBelowTheCap() {
        final SequentialReadAhead readAhead = new SequentialReadAhead(BASE, BASE / 2);
        assertEquals(BASE, readAhead.lengthFor(0));
        assertEquals(BASE, readAhead.lengthFor(BASE));
    }

    @Test
    void shouldGiveTheBaseLengthWithoutWaitingWhileAnotherMissComputesItsLength() {
        final SequentialReadAhead readAhead = new SequentialReadAhead(BASE, 8 * BASE);
        assertEquals(BASE, readAhead.lengthFor(0));
        readAhead.busyForTest(true);
        assertEquals(BASE, readAhead.lengthFor(BASE), "a concurrent miss: the base length, at once");
        readAhead.busyForTest(false);
        assertEquals(2 * BASE, readAhead.lengthFor(BASE), "the concurrent miss recorded nothing: this one still goes on from the first");
        assertFalse(readAhead.isBusy());
    }
}
