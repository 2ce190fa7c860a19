package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheThreads;

import io.streamcache.segmentstore.internal.log.LogDirectory;
import io.streamcache.segmentstore.internal.log.LogLock;
import io.streamcache.segmentstore.internal.log.recovery.RecoveredLog;
import io.streamcache.segmentstore.internal.log.recovery.RecoveryHook;
import io.streamcache.segmentstore.internal.log.recovery.ScanningRecoveryHook;
import io.streamcache.segmentstore.log.CorruptionPolicy;
import io.streamcache.segmentstore.log.LogConfig;

import java.io.IOException;
import java.nio.file.Files;

/**
 * The recovery wiring of a store with a log, run once while the store is built: locks the log
 * directory for this store's writer, recovers what its files hold, restores the segments into
 * the {@link SegmentTable} (their bytes NOT_CACHED gaps) and their location indexes into the
 * {@link LogLocations}, and hands the open directory and the recovered state on to the writer
 * ({@link DurableSegmentTable}).
 * <pre>
 *  LogLock.acquire(directory)                 one writer per directory, before anything is read
 *  hook = the builder's, or a ScanningRecoveryHook(corruption policy)
 *  scanning hook: scan(log)                   before the directory opens: cuts a torn tail,
 *                                             deletes dead files
 *  LogDirectory.open(log, lock)
 *  hook.recover(directory, recovered)         if the directory holds files
 *  table.restore(recovered)                   segments, bounds, seals; ids continue above theirs
 *  locations.adoptLive(live segments)         where the restored bytes are in the files; on a
 *                                             helper thread beside the restore (scanning hook)
 * </pre>
 * The restore and the adoption touch different tables (the store's segments, the location
 * indexes by id) and take the same list of live segments, so they run at once: the helper
 * (role {@link StreamcacheThreads.Role#RECOVERY_SCAN}) is joined before {@link #open} returns
 * or throws, and its failure is rethrown. At 250,000 segments each is a few tenths of a second
 * of an open after a kill (issue 14).
 * If anything fails, {@link #abandon()} closes what was opened (the directory, else the lock).
 *
 * <p><b>Threading:</b> confined to the thread building the store.
 */
final class LogOpening {
    private final LogConfig log;
    private final RecoveryHook hook;
    private final StreamcacheThreads threads;
    private final String owner;
    private LogLock writerLock;
    private LogDirectory directory;

    /**
     * @param hook the builder's recovery hook, or null for a {@link ScanningRecoveryHook} with
     *             {@code corruptionPolicy}.
     */
    LogOpening(final LogConfig log, final RecoveryHook hook, final CorruptionPolicy corruptionPolicy,
               final StreamcacheThreads threads, final String owner) {
        this.log = log;
        this.threads = threads;
        this.owner = owner;
        this.hook = hook != null ? hook : new ScanningRecoveryHook(corruptionPolicy);
    }

    /**
     * Locks and opens the directory and restores what it holds into {@code table} and
     * {@code locations}.
     *
     * @return what the writer continues from.
     */
    RecoveredLog open(final SegmentTable table, final LogLocations locations) throws IOException {
        // One writer per directory: locked before recovery reads or repairs anything.
        writerLock = LogLock.acquire(log.directory());
        if (hook instanceof ScanningRecoveryHook scanning && scanning.recoveredLog() == null
            && Files.isDirectory(log.directory())) {
            // Before the directory opens: the scan cuts the tail and deletes files.
            scanning.locationMemory(locations.memory());
            scanning.scan(log, threads, owner);
        }
        directory = LogDirectory.open(log, writerLock);
        final RecoveredLog recovered = directory.fileNumbers().length > 0 ? hook.recover(directory) : RecoveredLog.empty();
        if (hook instanceof ScanningRecoveryHook) {
            restoreAndAdopt(recovered, table, locations);
        } else {
            table.restore(recovered);
        }
        return recovered;
    }

    /**
     * Restores the segments on this thread while a helper adopts their location indexes (on this
     * thread too if no helper can be started); both are done, or the first failure thrown, when it returns.
     */
    private void restoreAndAdopt(final RecoveredLog recovered, final SegmentTable table, final LogLocations locations) {
        final Throwable[] failure = new Throwable[1];
        final Runnable adopt = () -> {
            try {
                locations.adoptLive(recovered.liveSegments());
            } catch (final RuntimeException | Error e) {
                failure[0] = e;
            }
        };
        Thread helper = null;
        try {
            helper = threads.newThread(StreamcacheThreads.Role.RECOVERY_SCAN, owner, adopt);
            helper.start();
        } catch (final RuntimeException | OutOfMemoryError e) {
            helper = null;
        }
        try {
            table.restore(recovered);
        } finally {
            if (helper == null) {
                adopt.run();
            } else {
                boolean interrupted = false;
                while (helper.isAlive()) {
                    try {
                        helper.join();
                    } catch (final InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        // After the join (which makes the helper's writes visible here).
        if (failure[0] instanceof RuntimeException e) {
            throw e;
        }
        if (failure[0] instanceof Error e) {
            throw e;
        }
    }

    /**
     * @return the directory {@link #open} opened.
     */
    LogDirectory directory() {
        return directory;
    }

    /** Closes what {@link #open} opened, after it (or the writer's start) failed. */
    void abandon() {
        if (directory != null) {
            directory.close();
        } else if (writerLock != null) {
            writerLock.close();
        }
    }
}
