package io.streamcache.segmentstore;

/**
 * An immutable exception, thrown by {@link SegmentStore#fill} on a store with a log: there the log owns the durable copy
 * and puts evicted bytes back itself ({@link SegmentStore#readThrough(String, long, int)}), checked against its
 * CRCs; bytes handed in from outside could differ from the logged ones and would then be served
 * as if they were. Nothing was changed. An immutable value.
 */
public final class SegmentFillRefusedException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public SegmentFillRefusedException(final String segment, final long offset) {
        super(segment, "fill(segment=" + segment + ", offset=" + offset + ") refused: the store has a log, which fills evicted "
            + "bytes itself; read them with readThrough instead");
    }
}
