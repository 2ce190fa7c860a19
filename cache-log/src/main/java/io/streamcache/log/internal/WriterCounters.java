package io.streamcache.log.internal;

import io.streamcache.log.WriterStats;

/**
 * The aggregating writer's counters: each field is written by one thread only (the writer
 * thread, or the constructor before it starts) with a plain read and a volatile write, and read
 * by any thread (volatile). A {@link #snapshot} reads them one by one, so a snapshot taken while
 * the writer runs may mix neighbouring moments.
 */
final class WriterCounters {
    volatile long batches;
    volatile long bytesWritten;
    volatile long payloadBytes;
    volatile long paddingBytes;
    volatile long forces;
    /** Time spent in those forces, in nanoseconds. */
    volatile long forceNanos;
    /** Requests completed successfully, published when the completion thread is signalled. */
    volatile long requests;
    /** Requests failed, published when the completion thread is signalled. */
    volatile long failedRequests;
    volatile long filesRolled;
    volatile long filesRetired;
    volatile int bufferedBytes;
    volatile long automaticRecoveries;
    volatile long copiedRecords;
    volatile long copiedBytes;
    volatile long copiesSkipped;

    /** One batch written: {@code length} bytes of which {@code payload} appended and {@code padding} padding. */
    void batch(final int length, final long payload, final long padding) {
        batches = batches + 1;
        bytesWritten = bytesWritten + length;
        payloadBytes = payloadBytes + payload;
        paddingBytes = paddingBytes + padding;
    }

    /** One force of the log, which took {@code nanos}. */
    void force(final long nanos) {
        forces = forces + 1;
        forceNanos = forceNanos + nanos;
    }

    void fileRolled() {
        filesRolled = filesRolled + 1;
    }

    void fileRetired() {
        filesRetired = filesRetired + 1;
    }

    void automaticRecovery() {
        automaticRecoveries = automaticRecoveries + 1;
    }

    void copied(final int length) {
        copiedRecords = copiedRecords + 1;
        copiedBytes = copiedBytes + length;
    }

    void copySkipped() {
        copiesSkipped = copiesSkipped + 1;
    }

    /**
     * @param queueDepth requests waiting in the queue now.
     * @param failed     whether the writer is failed now.
     */
    WriterStats snapshot(final int queueDepth, final boolean failed) {
        return new WriterStats(batches, bytesWritten, payloadBytes, paddingBytes, forces, forceNanos, requests, failedRequests,
            queueDepth, bufferedBytes, filesRolled, filesRetired, failed);
    }
}
