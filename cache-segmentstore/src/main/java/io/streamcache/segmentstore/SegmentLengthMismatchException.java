package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown by a conditional append ({@link SegmentStore#appendAsync(String, long, io.netty.buffer.ByteBuf)}
 * and its overloads) when the segment's length is not the offset the caller expected: another
 * append got there first (a replica out of step, a producer's retry of an append that did land).
 * Nothing was appended. An immutable value.
 */
public final class SegmentLengthMismatchException extends SegmentException {
    private static final long serialVersionUID = 1L;

    private final long expectedOffset;
    private final long length;

    public SegmentLengthMismatchException(final String segment, final long expectedOffset, final long length) {
        super(segment, "segment=" + segment + " has length=" + length + ", not expectedOffset=" + expectedOffset
            + ": nothing was appended; read the segment's length again (info) before retrying");
        this.expectedOffset = expectedOffset;
        this.length = length;
    }

    /**
     * @return the offset the append was to land at.
     */
    public long expectedOffset() {
        return expectedOffset;
    }

    /**
     * @return the segment's length when the append was refused (with a log: including the
     *         appends admitted but not yet durable, since they are ordered before this one).
     */
    public long length() {
        return length;
    }
}
