package io.streamcache.segmentstore;

import io.streamcache.core.internal.concurrent.Waits;
import io.streamcache.core.StreamcacheThreads;

import io.streamcache.log.internal.CurrentFileRecord;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogLock;
import io.streamcache.log.internal.PreparedSegmentTable;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.internal.recovery.RecoveryHook;
import io.streamcache.log.internal.recovery.ScanningRecoveryHook;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogCorruptedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

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
 *  PreparedSegmentTable.seed(live, files)     the writer's segment table, on the helper while
 *                                             this thread puts the segments into the table's maps
 * </pre>
 * The restore and the adoption touch different tables (the store's segments, the location
 * indexes by id) and take the same list of live segments, so they run at once; the segments
 * themselves (each its own lock, read index and gap entries) are built on both threads, and put
 * into the table's maps on this thread, in order. The helper (role
 * {@link StreamcacheThreads.Role#RECOVERY_SCAN}) is joined before {@link #open} returns or
 * throws, and its failure is rethrown. At 250,000 segments each is a few tenths of a second of
 * an open after a kill. Once the segments are built the helper seeds the writer's
 * segment table from the same recovered state ({@link PreparedSegmentTable}) while this thread
 * fills the maps, and leaves it in the {@link RecoveredLog} for the writer to take.
 * If anything fails, {@link #abandon()} closes what was opened (the directory, else the lock).
 *
 * <p><b>Threading:</b> confined to the thread building the store.
 */
final class LogOpening {
    private static final Logger LOG = LoggerFactory.getLogger(LogOpening.class);
    /** Segments per chunk of the restore's building, claimed by this thread and the helper. */
    private static final int RESTORE_CHUNK = 4096;
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
        checkNoFileMissing();
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
     * Before recovery reads or cuts anything: every file the last writer recorded as live
     * ({@link CurrentFileRecord}: the current one and those before it that no retirement
     * removed) must be in the directory, unless {@link LogConfig#allowMissingFiles()}.
     *
     * @throws LogCorruptedException naming the first missing file.
     */
    private void checkNoFileMissing() throws IOException {
        final CurrentFileRecord.Missing missing = CurrentFileRecord.missing(log.directory());
        if (missing == null) {
            return;
        }
        final Path file = log.directory().resolve(LogFileDescriptor.fileName(missing.first()));
        if (!log.allowMissingFiles()) {
            throw new LogCorruptedException(file, missing.first(), 0, missing.reason()
                + "; restore them, or open with LogConfig.Builder.allowMissingFiles(true) to lose them");
        }
        LOG.warn("log {}: {}; opening without them (allowMissingFiles)", log.directory(), missing.reason());
    }

    /**
     * Restores the segments while a helper adopts their location indexes: the segments are built
     * in chunks of {@link #RESTORE_CHUNK} claimed by this thread and the helper (once it has
     * adopted), then put into the table on this thread in order (the table's maps are this
     * thread's). Everything is done, or the first failure thrown, when it returns; without a
     * helper (none could be started) this thread does it all.
     */
    private void restoreAndAdopt(final RecoveredLog recovered, final SegmentTable table, final LogLocations locations) {
        final List<RecoveredSegment> live = recovered.liveSegments();
        final Segment[] segments = new Segment[live.size()];
        final AtomicInteger next = new AtomicInteger();
        final Runnable build = () -> {
            for (int from = next.getAndAdd(RESTORE_CHUNK); from < segments.length; from = next.getAndAdd(RESTORE_CHUNK)) {
                table.buildRestored(live, from, Math.min(segments.length, from + RESTORE_CHUNK), segments);
            }
        };
        // [0]: the adoption's or the building's failure (written before the latch is counted down),
        // [1]: the seed's (read after the join only).
        final Throwable[] failure = new Throwable[2];
        // Counted down by the helper once it built its last chunk (or failed): the maps wait for it.
        final CountDownLatch built = new CountDownLatch(1);
        final Runnable helperTask = () -> {
            try {
                locations.adoptLive(live);
                build.run();
            } catch (final RuntimeException | Error e) {
                failure[0] = e;
                return;
            } finally {
                built.countDown();
            }
            try {
                recovered.prepareWriterTable(PreparedSegmentTable.seed(live, recovered.files()));
            } catch (final RuntimeException | Error e) {
                failure[1] = e;
            }
        };
        Thread helper = null;
        try {
            helper = threads.newThread(StreamcacheThreads.Role.RECOVERY_SCAN, owner, helperTask);
            helper.start();
        } catch (final RuntimeException | OutOfMemoryError e) {
            helper = null;
        }
        try {
            build.run();
            if (helper == null) {
                helperTask.run();
            } else {
                Waits.awaitUninterruptibly(built);
            }
            // The helper's chunks are built (the latch orders its writes before this read) or it failed.
            if (failure[0] == null) {
                table.putRestored(live, segments, recovered.nextSegmentId());
            }
        } finally {
            if (helper != null) {
                Waits.joinUninterruptibly(helper);
            }
        }
        // After the join (which makes the helper's writes visible here).
        for (final Throwable t : failure) {
            if (t instanceof RuntimeException e) {
                throw e;
            }
            if (t instanceof Error e) {
                throw e;
            }
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
