package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown by {@link SegmentStore#create(String)} when a segment of that name exists already; the
 * existing segment is untouched. An immutable value.
 */
public final class SegmentExistsException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public SegmentExistsException(final String segment) {
        super(segment, "segment=" + segment + " exists already");
    }
}
