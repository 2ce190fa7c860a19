package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown by an append to a sealed segment; nothing was appended. An immutable value.
 */
public final class SegmentSealedException extends SegmentException {
    private static final long serialVersionUID = 1L;

    private final long length;

    public SegmentSealedException(final String segment, final long length) {
        super(segment, "segment=" + segment + " is sealed at length=" + length);
        this.length = length;
    }

    /**
     * @return the segment's final length.
     */
    public long length() {
        return length;
    }
}
