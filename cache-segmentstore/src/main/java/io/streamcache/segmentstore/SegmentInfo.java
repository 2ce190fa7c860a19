package io.streamcache.segmentstore;

/**
 * A snapshot of one segment's bounds, taken under its lock; an immutable value.
 *
 * @param name          the segment's name.
 * @param startOffset   the first offset still held: everything before it was truncated.
 * @param length        the end offset: bytes ever appended (so {@code length - startOffset}
 *                      bytes are held, cached or not).
 * @param durableLength the end of the durable prefix: entries wholly below it may be evicted.
 * @param sealed        whether the segment is sealed: {@code length} is final.
 */
public record SegmentInfo(String name, long startOffset, long length, long durableLength, boolean sealed) {
}
