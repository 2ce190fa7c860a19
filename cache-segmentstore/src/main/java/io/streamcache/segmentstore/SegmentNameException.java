package io.streamcache.segmentstore;

/**
 * Thrown when a segment name cannot be stored: empty, not well-formed UTF-16 (an unpaired
 * surrogate, which UTF-8 cannot encode), or longer than {@link SegmentNames#MAX_NAME_LENGTH}
 * bytes of UTF-8. Nothing was created or written. An immutable value.
 */
public final class SegmentNameException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public SegmentNameException(final String segment, final String reason) {
        super(segment, "segment name " + SegmentNames.quote(segment) + " " + reason + "; choose another name");
    }
}
