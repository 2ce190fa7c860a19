package io.streamcache.segmentstore;

import io.streamcache.core.CacheException;

/**
 * Root of the exceptions a {@link SegmentStore} throws about one segment's state; an immutable
 * value, safe to pass between threads. The operation that threw left the store unchanged.
 */
public abstract class SegmentException extends CacheException {
    private static final long serialVersionUID = 1L;

    private final String segment;

    protected SegmentException(final String segment, final String message) {
        super(message);
        this.segment = segment;
    }

    /**
     * @return the name of the segment the operation was about.
     */
    public String segment() {
        return segment;
    }
}
