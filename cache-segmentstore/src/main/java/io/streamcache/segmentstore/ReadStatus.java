package io.streamcache.segmentstore;

/**
 * Why a read stopped where it did, an immutable value; every {@link ReadResult} carries one.
 */
public enum ReadStatus {
    /** The read returned {@code maxLength} bytes; more may be read from {@code nextOffset}. */
    MAX_LENGTH,
    /** The read reached the end of an unsealed segment: {@code nextOffset} is its length; appends may follow. */
    END_OF_DATA,
    /** The read reached the end of a sealed segment: no byte will ever follow. */
    SEALED_END,
    /**
     * The byte at {@code nextOffset} belongs to the segment but is not in the cache (evicted):
     * read it from the log. Bytes before it, if any, were returned.
     */
    NOT_CACHED,
    /**
     * A waiting read ({@link SegmentStore#readOrWait}) saw no byte arrive at its offset before
     * its timeout; it holds no data.
     */
    TIMED_OUT,
    /**
     * A {@link SegmentStore#readAsync} asked for an offset past the end of an unsealed segment,
     * beyond every offset an append has been given
     * (with a log: appended bytes not yet durable count): no append can make it readable before
     * the bytes before it, so the read returns at once with no data instead of waiting for its
     * timeout. A broker answers "offset out of range" for it; {@code nextOffset} is the offset asked.
     * ({@link SegmentStore#readOrWait} still waits there, as documented: a caller that knows an
     * append will reach the offset may wait for it.)
     */
    PAST_END
}
