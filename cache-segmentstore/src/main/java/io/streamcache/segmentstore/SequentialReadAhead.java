package io.streamcache.segmentstore;

import com.google.errorprone.annotations.concurrent.GuardedBy;

/**
 * How much a segment's next load from the log reads: the historical reader's range length for a
 * reader that jumps, doubling up to a cap for one that reads on where the last load ended.
 * Thread-safe (a monitor taken once per load from the log, never on a cache hit).
 *
 * <pre>
 *  load [r, r + L)          next miss at r + L (a sequential catch-up)  -&gt; L' = min(2L, max)
 *                           next miss anywhere else                      -&gt; L' = base
 * </pre>
 * The state is per segment, not per reader: readers of one segment are not told apart, so two
 * catch-up readers at different places of one segment keep each other at the base length
 * (correct, only slower); one catch-up reader per segment, the common case, gets the read-ahead.
 */
final class SequentialReadAhead {
    private final int base;
    private final int max;
    @GuardedBy("this")
    private long nextStart = -1;
    @GuardedBy("this")
    private int length;

    /**
     * @param base the historical reader's range length: loads start at multiples of it.
     * @param max  the longest load, at least {@code base}.
     */
    SequentialReadAhead(final int base, final int max) {
        this.base = base;
        this.max = Math.max(base, max);
        this.length = base;
    }

    /**
     * @return bytes the load for a miss at {@code offset} should read, from {@code offset}
     *         aligned down to the base length; records the load as the last one.
     */
    synchronized int lengthFor(final long offset) {
        final long start = offset - offset % base;
        length = start == nextStart ? (int) Math.min((long) length * 2, max) : base;
        nextStart = start + length;
        return length;
    }
}
