package io.streamcache.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * A durable store's log, as a broker operates it from any thread at any time: its statistics (the same figures as its
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
     * Forces the log on demand, whatever its {@link DurabilityPolicy}: the future completes once
     * every append (and create, seal, truncate, delete) acknowledged or queued before the call
     * is on disk, written and forced ({@code fdatasync}), and after each of their futures
     * completed. "Queued" means its {@code append}/{@code appendAsync} (or other mutating call)
     * returned before this call began; a call racing with this one may or may not be covered.
     *
     * <p>What it adds per policy: under {@link DurabilityPolicy#NEVER} and
     * {@link DurabilityPolicy#interval(Duration)} an acknowledgement means written (in the page cache:
     * it survives a process crash, not a power cut); after {@code force()} completes, everything
     * acknowledged before it survives a power cut as well. Under
     * {@link DurabilityPolicy#EVERY_BATCH} every acknowledgement already means forced, so it
     * only waits for the appends queued before it (and forces nothing more when nothing
     * written is unforced).
     *
     * <p>Cost: one {@code fdatasync} of the current file. The writer thread takes the call in
     * queue order, and the force requests waiting when it forces share that one force, so
     * concurrent callers (or a caller per ledger, per partition) coalesce. The caller's thread
     * does not block; do not call {@code join()} on it from the store's completion thread.
     *
     * @return completes with null; or exceptionally with a {@link LogFailedException} if the log
     *         is failed, or fails before the force succeeds (then appends before it may not be
     *         forced; see {@link #isFailed()}, {@link #recover()}), or with
     *         {@link io.streamcache.core.CacheClosedException} if the store is closed. Never
     *         throws.
     */
    CompletableFuture<Void> force();

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
