package io.streamcache.segmentstore.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * A durable store's log, as a broker operates it: its statistics (the same figures as its
 * MBeans), its failure state and recovery after a disk error, and the preparation of files
 * before traffic. From {@code SegmentStore.log()}; the writer, the directory and the
 * historical reader behind it are not part of the API.
 *
 * <p><b>Threading:</b> every method may be called from any thread at any time, also while
 * appends and reads run; the statistics are snapshots (see each record's comment).
 */
public interface StoreLog {
    /**
     * @return the log's directory.
     */
    Path directory();

    /**
     * @return the aggregating writer's counters.
     */
    WriterStats writerStats();

    /**
     * @return the directory's files and their lifecycle counters.
     */
    LogDirectoryStats directoryStats();

    /**
     * @return the counters of reads from the log files (read-through and historical reads).
     */
    HistoricalReadStats historicalReadStats();

    /**
     * @return whether the log is failed now: a disk error stopped the writer and appends are
     *         refused (with {@link LogFailedException}) until it recovers, by itself after
     *         {@link LogConfig#retryInterval()} or through {@link #recover()}.
     */
    boolean isFailed();

    /**
     * @return the failure that stopped the writer, or null if it never failed.
     */
    LogFailedException lastFailure();

    /**
     * @return the times the writer recovered by itself after a disk error.
     */
    long automaticRecoveries();

    /**
     * Recovers the log after a disk error now (without waiting for the retry interval): the
     * writer continues in a new file, with a new epoch; requests in flight when it failed stay
     * failed. A no-op on a healthy log.
     *
     * @return completes once the writer accepts appends again, or exceptionally if the disk
     *         still fails.
     */
    CompletableFuture<Void> recover();

    /**
     * Creates (and, with {@link LogConfig#preWrite()}, pre-writes) up to {@code count} spare
     * files now, so that the first file rolls under traffic need not create files. Blocks the
     * caller for the file work.
     *
     * @param count spare files to have ready, &gt;= 0.
     * @throws IOException if the files cannot be created.
     */
    void prepareFiles(int count) throws IOException;
}
