package io.streamcache.segmentstore.internal.compaction;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.segmentstore.SegmentInfo;

import java.util.Set;

/**
 * The segments a {@link Compactor} keeps within their retention and whose live records it moves:
 * the store's, handed to the compactor when the store is built. Every method may be called from
 * any thread (the compactor's background thread, or a caller of {@link Compactor#runOnce()}),
 * while appends and reads run.
 */
public interface CompactedSegments {
    /** @return the store's name, for the compactor's thread and logs. */
    String name();

    /** @return the names of the segments now (a snapshot; a segment may go right after). */
    Set<String> segmentNames();

    /**
     * @throws io.streamcache.segmentstore.SegmentNotFoundException if no such segment exists.
     */
    SegmentInfo info(String segment);

    /**
     * Truncates a segment durably (as the store's {@code truncate}).
     *
     * @throws io.streamcache.segmentstore.SegmentNotFoundException if no such segment exists.
     */
    void truncate(String segment, long offset);

    /**
     * @return where the segment's bytes are in the log files, or null if the log has no
     *         locations of it (recovered by a custom recovery).
     * @throws io.streamcache.segmentstore.SegmentNotFoundException if no such segment exists.
     */
    LocationIndex locations(String segment);
}
