package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown (a bad argument: an {@link IllegalArgumentException}, at once also by the asynchronous
 * append) by an append longer than the store takes in one append: with a log, the log's
 * {@link io.streamcache.log.LogConfig#maxAppendLength() maxAppendLength} (16 MiB by
 * default; an append is one record, in the log whole or not at all). Nothing was appended. An
 * immutable value.
 */
public final class SegmentAppendTooLongException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String segment;

    private final long length;
    private final int maxAppendLength;

    public SegmentAppendTooLongException(final String segment, final long length, final int maxAppendLength) {
        super("append of length=" + length + " to segment=" + segment + " is longer than maxAppendLength="
            + maxAppendLength + ": split it into several appends, or raise LogConfig.Builder.maxAppendLength");
        this.segment = segment;
        this.length = length;
        this.maxAppendLength = maxAppendLength;
    }

    /**
     * @return the refused append's length.
     */
    public long length() {
        return length;
    }

    /**
     * @return the longest append the store takes.
     */
    public int maxAppendLength() {
        return maxAppendLength;
    }

    /**
     * @return the segment's name, as given.
     */
    public String segment() {
        return segment;
    }
}
