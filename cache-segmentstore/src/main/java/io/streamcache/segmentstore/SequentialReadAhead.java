package io.streamcache.segmentstore;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * How much a segment's next load from the log reads: the historical reader's range length for a
 * reader that jumps, doubling up to a cap for one that reads on where the last load ended.
 * Thread-safe and never waits: {@link #lengthFor} runs on the thread of the reading call
 * ({@code readAsync}'s miss), so it takes no monitor; a call that finds another one in progress
 * (two misses of one segment at once) gets the base length and records nothing, as two readers
 * of one segment get anyway (below).
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
    private static final VarHandle BUSY;

    static {
        try {
            BUSY = MethodHandles.lookup().findVarHandle(SequentialReadAhead.class, "busy", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int base;
    private final int max;
    /** 1 while a {@link #lengthFor} updates the state below; its compare-and-set and release order them. */
    @SuppressWarnings("unused") // through BUSY
    private volatile int busy;
    /** Written and read only by the holder of {@link #busy}. */
    private long nextStart = -1;
    /** Written and read only by the holder of {@link #busy}. */
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
     *         aligned down to the base length; records the load as the last one. If another
     *         call is in progress (a concurrent miss of the segment): the base length,
     *         recorded nowhere. Never waits, allocates nothing.
     */
    int lengthFor(final long offset) {
        if (!BUSY.compareAndSet(this, 0, 1)) {
            return base;
        }
        try {
            final long start = offset - offset % base;
            length = start == nextStart ? (int) Math.min((long) length * 2, max) : base;
            nextStart = start + length;
            return length;
        } finally {
            BUSY.setRelease(this, 0);
        }
    }

    /** @return whether a {@link #lengthFor} is in progress (for tests). */
    boolean isBusy() {
        return (int) BUSY.getVolatile(this) != 0;
    }

    /** Marks a {@link #lengthFor} in progress, or ends it (for tests that stand for a concurrent miss). */
    void busyForTest(final boolean inProgress) {
        BUSY.setVolatile(this, inProgress ? 1 : 0);
    }
}
