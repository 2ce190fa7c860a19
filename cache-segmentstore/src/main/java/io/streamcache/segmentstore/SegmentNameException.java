package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown when a segment name cannot be stored: empty, not well-formed UTF-16 (an unpaired
 * surrogate, which UTF-8 cannot encode), or longer than {@link SegmentNames#MAX_NAME_LENGTH}
 * bytes of UTF-8. A bad argument, so an {@link IllegalArgumentException} (see docs/errors.md). Nothing was created or written. An immutable value.
 */
public final class SegmentNameException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String segment;

    public SegmentNameException(final String segment, final String reason) {
        super("segment name " + SegmentNames.quote(segment) + " " + reason + "; choose another name");
        this.segment = segment;
    }

    /**
     * @return the segment's name, as given.
     */
    public String segment() {
        return segment;
    }
}
