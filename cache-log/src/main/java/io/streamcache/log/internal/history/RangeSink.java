package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;

/**
 * Takes the bytes of every range a {@link HistoricalReader} reads; must be thread-safe (called
 * on the reading thread: an executor thread, or the first caller's). Called once per read
 * however many callers asked for it, before their futures complete: the store binds it to
 * {@code SegmentStore.fill(name, offset, data)}.
 */
@FunctionalInterface
public interface RangeSink {
    /**
     * @param segmentId the segment.
     * @param offset    segment offset of {@code data}'s first readable byte.
     * @param data      the bytes, read-only, not to be released; valid during the call (with
     *                  {@link RangeBuffers}, only then: copy what is kept).
     */
    void fill(int segmentId, long offset, ByteBuf data);
}
