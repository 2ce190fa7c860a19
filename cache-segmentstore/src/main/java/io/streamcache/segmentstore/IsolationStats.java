package io.streamcache.segmentstore;

/**
 * An immutable snapshot of how a store kept its readers and writers apart
 * ({@link SegmentStore#isolationStats()}); safe to share between threads. Counts are since the
 * store was built; see {@code docs/reading.md} (<em>Isolation</em>) for what each means.
 *
 * @param appendRoomWaits       appends that found the cache without room and waited for memory (with no lock held).
 * @param appendRoomWaitNanos   the time those appends waited, in all.
 * @param appendRoomRefusals    appends that found no room within the wait and failed with a {@code CacheFullException}.
 * @param fillsAdmitted         pieces of ranges read from the log that were put back into the cache.
 * @param fillBytesAdmitted     the bytes of those pieces.
 * @param fillsRefusedNoRoom    fills given up because the cache had no free room after one eviction pass (the read was served from the range, uncached).
 * @param fillsRefusedBudget    fills given up because the store's read budget was spent (served uncached likewise).
 * @param readBudgetBytes       the store's read budget: bytes that unreleased results and fills in progress may hold at most.
 * @param readBudgetUsedBytes   the bytes charged to the store's read budget now.
 * @param readBudgetWaiting     reads waiting for room in a read budget now.
 * @param readBudgetWaits       reads that waited for room in a read budget (the store's or a reader's).
 * @param readBudgetWaitNanos   the time those reads waited, in all.
 * @param readBudgetRefusals    reads refused at once with a {@link ReadBudgetExceededException} (fail-fast budgets).
 * @param readsPastEnd          reads at an offset past the segment's end ({@link ReadStatus#PAST_END}).
 * @param readsHandedOff        asynchronous reads that found their segment's lock held by another thread (a fill publishing,
 *                              an eviction, an append) and were handed to the store's read-timeouts thread rather than wait.
 * @param rangeBufferBytes      direct memory held now by the pool that ranges read from the log go through, in use and free
 *                              (at most the store's read budget, or two ranges if that is less).
 * @param rangeHeapFallbacks    ranges read from the log into a heap array because that pool was at its limit.
 * @param fillsRefusedUnread    fills given up because making room would have evicted bytes a live reader has not read yet
 *                              (another segment's unread tail, or the bytes ahead of a catch-up reader): served uncached.
 */
public record IsolationStats(long appendRoomWaits, long appendRoomWaitNanos, long appendRoomRefusals, long fillsAdmitted,
                             long fillBytesAdmitted, long fillsRefusedNoRoom, long fillsRefusedBudget, long readBudgetBytes,
                             long readBudgetUsedBytes, int readBudgetWaiting, long readBudgetWaits, long readBudgetWaitNanos,
                             long readBudgetRefusals, long readsPastEnd, long readsHandedOff, long rangeBufferBytes,
                             long rangeHeapFallbacks, long fillsRefusedUnread) {
}
