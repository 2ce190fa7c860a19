package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;

/**
 * Bytes of one segment read from the log by a {@link HistoricalReader}: {@code [offset(),
 * endOffset())}; an immutable value shared by every caller that asked for the range. The bytes
 * are read-only. On the heap (a reader without {@link RangeBuffers}) they are not reference
 * counted and {@link #release()} does nothing; in a buffer of the reader's {@link RangeBuffers}
 * each caller's future completes with a claim on the range, which the caller gives back with
 * {@link #release()} once done with the bytes (a view it keeps longer takes its own reference,
 * e.g. {@code data(from).retainedSlice()}), and the last release gives the memory back.
 */
public final class LogRange {
    private final int segmentId;
    private final long offset;
    private final ByteBuf data;
    private final RuntimeException fillFailure;
    /** Whether {@link #data} is a buffer of {@link RangeBuffers}, counted by claims. */
    private final boolean counted;

    LogRange(final int segmentId, final long offset, final ByteBuf data, final RuntimeException fillFailure) {
        this(segmentId, offset, data, fillFailure, false);
    }

    LogRange(final int segmentId, final long offset, final ByteBuf data, final RuntimeException fillFailure, final boolean counted) {
        this.segmentId = segmentId;
        this.offset = offset;
        this.data = data;
        this.fillFailure = fillFailure;
        this.counted = counted;
    }

    LogRange withFillFailure(final RuntimeException failure) {
        return new LogRange(segmentId, offset, data, failure, counted);
    }

    /**
     * A caller's claim, taken when its future completes: the range itself with one more
     * reference, or, if the reader already let a counted range go (a caller that joined it
     * after it completed), an empty range at the same offset that holds no byte: the bytes were
     * filled into the cache before the range completed, so the caller reads them there.
     */
    LogRange claim() {
        if (!counted) {
            return this;
        }
        try {
            data.retain();
            return this;
        } catch (final IllegalReferenceCountException e) {
            return new LogRange(segmentId, offset, Unpooled.EMPTY_BUFFER, fillFailure, false);
        }
    }

    /**
     * Gives back a caller's claim (or the reader's own reference); nothing for heap bytes.
     * Once per claim: the bytes must not be read after it (a retained view stays readable).
     */
    public void release() {
        if (counted) {
            data.release();
        }
    }

    /**
     * @return the segment.
     */
    public int segmentId() {
        return segmentId;
    }

    /**
     * @return segment offset of the first byte.
     */
    public long offset() {
        return offset;
    }

    /**
     * @return bytes held.
     */
    public int length() {
        return data.readableBytes();
    }

    /**
     * @return segment offset just past the last byte.
     */
    public long endOffset() {
        return offset + data.readableBytes();
    }

    /**
     * @return whether the range holds the byte at {@code offset}. It may not hold the offset that
     *         was asked for if the segment was truncated past it meanwhile.
     */
    public boolean contains(final long offset) {
        return offset >= this.offset && offset < endOffset();
    }

    /**
     * @return all the bytes: a read-only duplicate with its own indices.
     */
    public ByteBuf data() {
        return data.duplicate();
    }

    /**
     * @return the bytes from {@code from} to {@link #endOffset()}: a read-only slice.
     * @throws IndexOutOfBoundsException if {@code from} is outside {@code [offset(), endOffset()]}.
     */
    public ByteBuf data(final long from) {
        if (from < offset || from > endOffset()) {
            throw new IndexOutOfBoundsException("from=" + from + " outside [" + offset + ", " + endOffset() + "]");
        }
        return data.slice(data.readerIndex() + (int) (from - offset), (int) (endOffset() - from));
    }

    /**
     * @return what the {@link RangeSink} threw for this range (the bytes are still good), or null.
     */
    public RuntimeException fillFailure() {
        return fillFailure;
    }

    @Override
    public String toString() {
        return "LogRange{segmentId=" + segmentId + ", offset=" + offset + ", length=" + length() + ", fillFailure=" + fillFailure
            + '}';
    }
}
