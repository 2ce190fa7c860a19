package io.streamcache.log;

/**
 * JMX view of a store's log writer, registered as {@code io.streamcache:type=LogWriter,name=<log
 * name>} while the writer runs (unregistered when it closes): callable from any thread; each
 * attribute reads the writer's counter now, as {@link WriterStats} does (the attributes are read
 * one by one, so they may mix neighbouring moments).
 */
public interface LogWriterMXBean {
    String getName();

    /** @return batches written (each one positional write). */
    long getBatches();

    /** @return bytes of those writes: records, padding, and carried tails written again. */
    long getBytesWritten();

    /** @return payload bytes of the records written (what the producers appended). */
    long getPayloadBytes();

    /** @return bytes of padding records. */
    long getPaddingBytes();

    /** @return forces (fdatasync) of the log. */
    long getForces();

    /** @return requests completed successfully. */
    long getRequests();

    /** @return requests failed (disk errors, rejections while failed, close). */
    long getFailedRequests();

    /** @return requests waiting in the queue now. */
    int getQueueDepth();

    /** @return bytes in the batch buffer now. */
    int getBufferedBytes();

    /** @return the mean length of a write, 0 before the first. */
    double getMeanBatchLength();

    /** @return files the writer moved to after filling one. */
    long getFilesRolled();

    /** @return dead files handed over for deletion or recycling. */
    long getFilesRetired();

    /** @return recoveries the writer ran by itself after a disk error. */
    long getAutomaticRecoveries();

    /** @return whether the writer is failed now (rejecting requests until it recovers). */
    boolean isFailed();
}
