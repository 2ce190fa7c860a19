package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheException;

/**
 * The segment family of {@link StreamcacheException}s: what a {@link SegmentStore} throws about
 * one segment's state (absent, already there, sealed, truncated, ...); an immutable value, safe
 * to pass between threads. The operation that threw left the store unchanged.
 */
public abstract class SegmentException extends StreamcacheException {
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
