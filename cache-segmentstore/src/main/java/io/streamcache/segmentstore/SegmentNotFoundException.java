package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown (or completing a waiting read) when a segment does not exist: never created, or
 * deleted, possibly while the operation waited. An immutable value.
 */
public final class SegmentNotFoundException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public SegmentNotFoundException(final String segment, final String detail) {
        super(segment, "segment=" + segment + " " + detail);
    }
}
