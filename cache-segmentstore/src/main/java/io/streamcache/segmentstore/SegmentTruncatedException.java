package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown by a read (or completing a waiting read) at an offset the segment no longer holds: it
 * was truncated past it. An immutable value.
 */
public final class SegmentTruncatedException extends SegmentException {
    private static final long serialVersionUID = 1L;

    private final long offset;
    private final long startOffset;

    public SegmentTruncatedException(final String segment, final long offset, final long startOffset) {
        super(segment, "segment=" + segment + " offset=" + offset + " is before startOffset=" + startOffset + " (truncated)");
        this.offset = offset;
        this.startOffset = startOffset;
    }

    /**
     * @return the offset asked for.
     */
    public long offset() {
        return offset;
    }

    /**
     * @return the segment's first offset when the read was refused.
     */
    public long startOffset() {
        return startOffset;
    }
}
