package io.streamcache.segmentstore.compaction;

/**
 * A durable store's retention and compaction, as a broker operates them from any thread: a retention policy per
 * segment, a pass now, and the counters. From {@code SegmentStore.compaction()} on a store
 * built with a {@link CompactionConfig}; the passes otherwise run in the background.
 *
 * <p><b>Threading:</b> every method may be called from any thread; {@link #runOnce()} runs a
 * pass on the caller's thread, serialized with the background passes.
 */
public interface Compaction {
    /**
     * Sets how much of a segment to keep, replacing the default of
     * {@link CompactionConfig#retention()}; applied by the next pass (which truncates the segment
     * to it and lets the files that only held the dropped bytes go). Kept by name, so a segment
     * created again under the name has it too.
     *
     * @param segment the segment's name.
     * @param policy  what to keep; null returns the segment to the default.
     */
    void retention(String segment, RetentionPolicy policy);

    /**
     * @param segment the segment's name.
     * @return the policy that applies to it (the default if none was set).
     */
    RetentionPolicy retention(String segment);

    /**
     * Runs one pass now: retention, then the compaction of the files with the least live data.
     */
    void runOnce();

    /**
     * @return the counters since the store was built.
     */
    CompactionStats stats();
}
