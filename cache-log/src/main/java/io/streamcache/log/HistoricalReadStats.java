package io.streamcache.log;

/**
 * A snapshot of a store's historical reads (bytes read back from the log files once evicted):
 * counters since the reader was built, and its queue now; an immutable value. The counters are
 * read one by one, so a snapshot taken during reads may mix neighbouring moments.
 *
 * @param loads           ranges read (one per distinct in-flight range).
 * @param joins           calls that joined a read already in flight instead of reading.
 * @param fileReads       positional reads issued (spans of records).
 * @param bytesRead       bytes those reads returned.
 * @param failures        reads that completed exceptionally.
 * @param fillFailures    ranges whose bytes could not be put back in the cache.
 * @param cachedMeanwhile misses found cached when their read would have started: another
 *                        caller's read of the range had just filled them.
 * @param inFlight        ranges being read now (or queued to be).
 * @param queued          reads waiting for a reading thread now (0 on a shared executor or the
 *                        callers' threads).
 */
public record HistoricalReadStats(long loads, long joins, long fileReads, long bytesRead, long failures, long fillFailures,
                                  long cachedMeanwhile, int inFlight, int queued) {
}
