package io.streamcache.segmentstore.compaction;

/**
 * A snapshot of a store's compaction counters; an immutable value. The counters are read one by
 * one, so a snapshot taken during a pass may mix neighbouring moments.
 *
 * @param passes               passes run (background and {@link Compaction#runOnce()}).
 * @param filesCompacted       files whose live records were copied out and which were retired.
 * @param recordsCopied        records copied to the log's tail.
 * @param bytesCopied          payload bytes copied.
 * @param retentionTruncations truncations made by retention policies.
 * @param failures             passes that failed (the log's disk, a concurrent close).
 * @param slackLength          bytes of dead data the log may hold beyond the live data before a
 *                             file is compacted.
 */
public record CompactionStats(long passes, long filesCompacted, long recordsCopied, long bytesCopied, long retentionTruncations,
                              long failures, long slackLength) {
}
