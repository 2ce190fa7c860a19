package io.streamcache.log;

import io.streamcache.log.internal.AggregatingWriter;
/**
 * A snapshot of an {@code AggregatingWriter}'s counters since it started; an immutable value.
 * The counters are read one by one, so a snapshot taken while the writer runs may mix
 * neighbouring moments.
 *
 * @param batches        writes of a batch (each one positional write).
 * @param bytesWritten   bytes of those writes: records, padding, and carried tails written again.
 * @param payloadBytes   payload bytes of the records written (what the producers appended).
 * @param paddingBytes   bytes of padding records.
 * @param forces         forces (fdatasync) of the log.
 * @param forceNanos     time spent in those forces, in nanoseconds (with forces in flight, the
 *                       sum of each force's own time, which may exceed the time elapsed).
 * @param requests       requests completed successfully.
 * @param failedRequests requests failed (disk errors, rejections while failed, close).
 * @param queueDepth     requests waiting in the queue now.
 * @param bufferedBytes  bytes in the batch buffer now (a carried tail, records not yet written).
 * @param filesRolled    files the writer moved to after filling one.
 * @param filesRetired   dead files handed over for deletion or recycling.
 * @param failed         whether the writer is failed now (rejecting requests until {@code recover()}).
 */
public record WriterStats(long batches, long bytesWritten, long payloadBytes, long paddingBytes, long forces, long forceNanos, long requests,
                          long failedRequests, int queueDepth, int bufferedBytes, long filesRolled, long filesRetired,
                          boolean failed) {
    /**
     * @return the mean length of a write, 0 before the first.
     */
    public double meanBatchLength() {
        return batches == 0 ? 0 : (double)bytesWritten / batches;
    }
}
