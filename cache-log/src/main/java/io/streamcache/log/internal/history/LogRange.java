package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;

/**
 * Bytes of one segment read from the log by a {@link HistoricalReader}: {@code [offset(),
 * endOffset())}; an immutable value shared by every caller that asked for the range. The bytes
 * are on the heap, read-only, and not reference counted: nothing to release.
 */
public final class LogRange {
    private final int segmentId;
    private final long offset;
    private final ByteBuf data;
    private final RuntimeException fillFailure;

    LogRange(final int segmentId, final long offset, final ByteBuf data, final RuntimeException fillFailure) {
        this.segmentId = segmentId;
        this.offset = offset;
        this.data = data;
        this.fillFailure = fillFailure;
    }

    LogRange withFillFailure(final RuntimeException failure) {
        return new LogRange(segmentId, offset, data, failure);
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
