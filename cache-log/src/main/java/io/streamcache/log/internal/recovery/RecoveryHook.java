package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;

import java.io.IOException;

/**
 * Rebuilds a segment store's state from its log directory when the store is built over a
 * directory that holds log files: called once, on the building thread, before the writer starts
 * and before the store is returned. An implementation scans the files, validates the records,
 * returns the segments, the files with their data and the tail as a {@link RecoveredLog} (the
 * scanning one, {@link ScanningRecoveryHook}, returns {@link LogRecovery}'s; another builds one
 * with {@link RecoveredLog#builder()}), and may delete files it finds unused (spares left by a
 * crash) with {@link LogDirectory#deleteFile(long)}.
 *
 * <p>What it must know about the writer's output (see {@link AggregatingWriter}): a SNAPSHOT
 * record is a complete segment table (a segment absent from it was deleted); a file holding a
 * header and no valid SNAPSHOT record is an unused spare; with
 * {@link DurabilityPolicy#EVERY_BATCH} only the last batch of the last file may be torn (at
 * most {@link LogConfig#batchLength()} plus a page after the last valid record), and a torn
 * batch may leave valid records after an invalid page; a non-last file ends at its first zero
 * or invalid record; a recycled file may hold stale records after its tail, which never pass
 * the CRC (it is seeded with the file number).
 */
@FunctionalInterface
public interface RecoveryHook {
    /**
     * @param directory the opened directory (its background thread not started yet).
     * @return the recovered state.
     * @throws IOException if the files cannot be read; the store is not built.
     */
    RecoveredLog recover(LogDirectory directory) throws IOException;
}
