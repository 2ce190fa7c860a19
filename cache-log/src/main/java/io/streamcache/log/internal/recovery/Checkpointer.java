package io.streamcache.log.internal.recovery;

import io.streamcache.core.internal.concurrent.Waits;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogCorruptedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;

/**
 * Writes a log directory's {@link RecoveryCheckpoint} in the background, so that an open replays
 * only the files written since. One thread per writer, created at {@link #start}, stopped by
 * {@link #close()}.
 *
 * <h2>When</h2>
 * The writer calls {@link #fileStarted} when it rolls to a new file F, after F's SNAPSHOT was
 * written and forced (and, under every durability policy, the file before it forced): a
 * volatile write and an unpark, nothing on the append path waits for a checkpoint. The thread
 * writes one when at least {@link LogConfig#checkpointFiles()} files were started since the
 * last; at most one is in flight, and rolls during it only move the target (the next one
 * covers them).
 *
 * <h2>How</h2>
 * The same replay as an open, on this thread, reading the files (from the page cache, mostly):
 * start from the state of the last checkpoint this thread wrote, kept in memory ({@link Retained}),
 * if that checkpoint is still the one on disk and the directory matches it as it would have to
 * match the file; else from the current checkpoint on disk if it validates and matches the
 * directory (else from the oldest file); replay each later file before F with a {@link LogScanner} into a
 * {@link LogReplay} under {@link CorruptionPolicy#FAIL}, each required to end as a file before
 * the tail must (end of file, zeros, stale bytes) with its SNAPSHOT matching the replay;
 * then check F's SNAPSHOT against the result (its first record only) and write the state
 * ({@link RecoveryCheckpoint#write}: a temporary file, forced, renamed, the directory forced).
 * Anything that does not fit (a file deleted or recycled meanwhile, damage, a SNAPSHOT that
 * disagrees) skips this checkpoint, logged; the old one stays, and the next roll tries again.
 * A checkpoint therefore only ever holds what a full replay of the same files found.
 *
 * <h2>After an open</h2>
 * If the directory holds a checkpoint when the thread starts, the open (most likely) started
 * from it and did not read the files it covers: {@link CoveredFilesVerifier} checks them, from
 * {@link CoveredFilesVerifier#START_DELAY_MILLIS} after the start (so as not to slow the rest
 * of the open), between checkpoints (they do not wait for it: a process killed again within the
 * delay still leaves them), and logs any damage at ERROR with the
 * file and the position.
 *
 * <h2>Cost</h2>
 * A checkpoint replays the files since the previous one and writes the whole state: the segment
 * table, ~16 bytes per DATA record of the live segments and ~12 bytes per segment and covered
 * file. The first one after an open reads the previous checkpoint back and rebuilds the table
 * from it (or replays every file if there is none); the later ones continue from the state kept
 * in memory, which the writer's profile showed was worth it: at 250,000 segments, rebuilding the
 * table from the file took 42% of this thread's samples and writing it 34%
 * (docs/benchmarks.md, "Opening a log"). The thread holds a second copy of the table and the location
 * indexes (the heap of an open's replay) besides the store's own, between checkpoints too:
 * budget the heap for both. Out of heap, it drops that copy, skips the checkpoint and tries
 * again at the next roll, from the file.
 */
public final class Checkpointer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Checkpointer.class);

    private final Path directory;
    private final int everyFiles;
    private final LogScanner scanner;
    private final Thread thread;
    /** The newest file the writer started (written by the writer thread). */
    private volatile long started;
    private volatile boolean closed;
    /** F of the newest checkpoint on disk (this thread only). */
    private long checkpointed;
    /** The target of the last attempt (this thread only). */
    private long attempted;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final CoveredFilesVerifier verifier = new CoveredFilesVerifier();

    private Checkpointer(final LogConfig config, final StreamcacheThreads threads, final String owner) {
        this.directory = config.directory();
        this.everyFiles = config.checkpointFiles();
        this.scanner = new LogScanner(LogScanner.CHUNK_LENGTH_DEFAULT, ScanningRecoveryHook.tornWriteWindow(config));
        this.thread = threads.newThread(StreamcacheThreads.Role.RECOVERY_SCAN, owner + "-checkpoint", this::run);
    }

    /**
     * Starts the checkpoint thread of a log.
     *
     * @param config the log's settings: {@link LogConfig#checkpointFiles()} must be positive.
     * @param owner  the log's name, in the thread's name.
     */
    public static Checkpointer start(final LogConfig config, final StreamcacheThreads threads, final String owner) {
        if (config.checkpointFiles() <= 0) {
            throw new IllegalArgumentException("checkpointFiles=" + config.checkpointFiles() + " must be positive");
        }
        final Checkpointer checkpointer = new Checkpointer(config, Objects.requireNonNull(threads, "threads"), owner);
        checkpointer.thread.start();
        return checkpointer;
    }

    /**
     * The writer moved to file {@code number} (its SNAPSHOT is durable). Any thread; never blocks.
     */
    public void fileStarted(final long number) {
        if (number > started) {
            started = number;
            LockSupport.unpark(thread);
        }
    }

    /** @return checkpoints written since the start. */
    public long written() {
        return written.get();
    }

    /** @return checkpoints attempted and skipped (see the class comment). */
    public long skipped() {
        return skipped.get();
    }

    /**
     * Stops the thread, after the checkpoint it may be writing is written or abandoned (it
     * checks between files). Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        Waits.joinUninterruptibly(thread);
    }

    /** @return the check of the covered files after the open (read it after {@link #close()}). */
    CoveredFilesVerifier verifier() {
        return verifier;
    }

    private void run() {
        RecoveryCheckpoint current = null;
        try {
            current = RecoveryCheckpoint.read(directory);
            checkpointed = current != null ? current.fileNumber() : 0;
        } catch (final RecoveryCheckpoint.Refused e) {
            checkpointed = 0;
        }
        // The covered files are checked once the open is done (START_DELAY_MILLIS), but the
        // checkpoints of this run do not wait for that: a process that lives less than the delay
        // (a broker killed again soon after a restart) still leaves checkpoints behind.
        RecoveryCheckpoint unverified = current;
        final long verifyAt = System.nanoTime() + CoveredFilesVerifier.START_DELAY_MILLIS * 1_000_000L;
        while (!closed) {
            if (unverified != null && System.nanoTime() - verifyAt >= 0) {
                verifyCoveredFiles(unverified);
                unverified = null; // its mapping is not needed any more
                continue;
            }
            final long target = started;
            if (target <= attempted || target - checkpointed < everyFiles) {
                if (unverified != null) {
                    LockSupport.parkNanos(this, Math.max(1, verifyAt - System.nanoTime()));
                } else {
                    LockSupport.park(this);
                }
                continue;
            }
            attempted = target;
            final long begin = System.nanoTime();
            try {
                final long bytes = checkpoint(target);
                if (bytes >= 0) {
                    checkpointed = target;
                    written.incrementAndGet();
                    LOG.info("Log {}: recovery checkpoint before fileNumber={} written, bytes={}, in {} ms", directory, target,
                        bytes, (System.nanoTime() - begin) / 1_000_000);
                }
            } catch (final Skip e) {
                skipped.incrementAndGet();
                LOG.info("Log {}: recovery checkpoint before fileNumber={} skipped: {}", directory, target, e.getMessage());
            } catch (final LogCorruptedException e) {
                skipped.incrementAndGet();
                LOG.warn("Log {}: recovery checkpoint before fileNumber={} skipped, the replay failed: {}", directory, target,
                    e.getMessage());
            } catch (final NoSuchFileException e) {
                // Compaction or retirement deleted a file while it was being replayed: expected, not a fault.
                skipped.incrementAndGet();
                LOG.info("Log {}: recovery checkpoint before fileNumber={} skipped, a file was deleted meanwhile: {}", directory,
                    target, e.getMessage());
            } catch (final IOException | RuntimeException e) {
                skipped.incrementAndGet();
                LOG.warn("Log {}: recovery checkpoint before fileNumber={} skipped: {}", directory, target, e.toString());
            } catch (final OutOfMemoryError e) {
                // Its replay holds a second copy of the table: with too little heap the thread gives this one up
                // (the replay, held or not, is garbage now) rather than dying; the next roll tries again, from the file.
                skipped.incrementAndGet();
                LOG.error("Log {}: recovery checkpoint before fileNumber={} skipped, out of heap (a checkpoint needs about"
                    + " the heap of an open's replay besides the store's own): {}", directory, target, e.toString());
            }
        }
    }

    /**
     * The files before the checkpoint's F were not read by the open: check them now, once the
     * open is done ({@link CoveredFilesVerifier}: from {@code START_DELAY_MILLIS} after the start), between
     * the checkpoints of this run, which do not wait for it.
     */
    private void verifyCoveredFiles(final RecoveryCheckpoint current) {
        final long begin = System.nanoTime();
        try {
            if (verifier.verify(directory, scanner, current, () -> closed)) {
                LOG.info("Log {}: the {} files before the recovery checkpoint's fileNumber={} checked, bytes={}, damaged={}, in {} ms",
                    directory, verifier.filesChecked(), current.fileNumber(), verifier.bytesChecked(), verifier.damage().size(),
                    (System.nanoTime() - begin) / 1_000_000);
            }
        } catch (final RecoveryCheckpoint.Refused | RuntimeException e) {
            LOG.warn("Log {}: the files before the recovery checkpoint were not checked: {}", directory, e.toString());
        }
    }

    /** This checkpoint is not written; the reason is logged. */
    static final class Skip extends Exception {
        Skip(final String message) {
            super(message, null, false, false);
        }
    }

    private long checkpoint(final long target) throws IOException, Skip {
        return checkpoint(directory, scanner, target, () -> closed, retained);
    }

    /**
     * The replay's state as of the last checkpoint this thread wrote, kept so that the next one
     * continues from it instead of reading the file back and rebuilding the table: restoring a
     * checkpoint of 250,000 segments built ~40 MB worth of objects per checkpoint, garbage a
     * moment later, on the cores the writer needs. Held between checkpoints (a second copy of
     * the table and location indexes, as while a checkpoint runs); dropped whenever a checkpoint
     * does not complete, so the next one starts from the file on disk as before.
     */
    static final class Retained {
        private LogReplay replay;
        private List<RecoveryCheckpoint.CoveredFile> files;
        private long fileNumber;
        private long fileEpoch;
        private long maxEpoch;
        /** Checkpoints that continued from the state in memory (tests). */
        long continued;

        void clear() {
            replay = null;
            files = null;
        }

        boolean holds() {
            return replay != null;
        }
    }

    private final Retained retained = new Retained();

    /** As {@link #checkpoint(Path, LogScanner, long, BooleanSupplier, Retained)}, nothing kept. */
    static long checkpoint(final Path directory, final LogScanner scanner, final long target, final BooleanSupplier stop)
        throws IOException, Skip {
        return checkpoint(directory, scanner, target, stop, new Retained());
    }

    /**
     * Replays the files before {@code target} and writes the checkpoint (see the class comment).
     *
     * @param stop     checked between files: true abandons the checkpoint.
     * @param retained the state of the previous checkpoint, if it is the one on disk and every
     *                 file below its F in the directory is one it covers, unchanged (the same
     *                 check as for the file on disk); on return the state of this one, or
     *                 nothing if none was written.
     * @return its length, or -1 if stopped.
     * @throws Skip if the files do not allow it now (the reason says why).
     */
    static long checkpoint(final Path directory, final LogScanner scanner, final long target, final BooleanSupplier stop,
                           final Retained retained) throws IOException, Skip {
        final LogReplay held = retained.replay;
        final List<RecoveryCheckpoint.CoveredFile> heldFiles = retained.files;
        final long heldNumber = retained.fileNumber;
        final long heldEpoch = retained.fileEpoch;
        final long heldMaxEpoch = retained.maxEpoch;
        // Whatever happens below, the state in memory is consumed: only a written checkpoint puts one back.
        retained.clear();
        final List<Long> numbers = LogRecovery.listFileNumbers(directory);
        final int targetIndex = numbers.indexOf(target);
        if (targetIndex <= 0) {
            throw new Skip("fileNumber=" + target + (targetIndex < 0 ? " is not in the directory" : " is the oldest file"));
        }
        LogReplay replay = null;
        final List<RecoveryCheckpoint.CoveredFile> files = new ArrayList<>();
        long maxEpoch = -1;
        int from = 0;
        boolean continued = false;
        if (held != null && heldNumber < target && heldNumber == RecoveryCheckpoint.fileNumberOnDisk(directory)) {
            try {
                RecoveryCheckpoint.check(directory.resolve(RecoveryCheckpoint.FILE_NAME), directory, numbers, heldNumber, heldEpoch,
                    heldFiles);
                from = numbers.indexOf(heldNumber);
                keepPresent(held, heldFiles, new HashSet<>(numbers.subList(0, from)));
                replay = held;
                files.addAll(heldFiles);
                maxEpoch = heldMaxEpoch;
                continued = true;
                retained.continued++;
            } catch (final RecoveryCheckpoint.Refused e) {
                LOG.info("Log {}: the recovery checkpoint held in memory is not continued: {}", directory, e.getMessage());
                from = 0;
            }
        }
        if (replay == null) {
            replay = new LogReplay(directory, CorruptionPolicy.FAIL);
            try {
                final RecoveryCheckpoint previous = RecoveryCheckpoint.read(directory);
                if (previous != null && previous.fileNumber() >= target) {
                    throw new Skip("the checkpoint on disk is as new (fileNumber=" + previous.fileNumber() + ")");
                }
                if (previous != null) {
                    previous.check(directory, numbers);
                    from = numbers.indexOf(previous.fileNumber());
                    files.addAll(previous.restore(replay, new HashSet<>(numbers.subList(0, from))));
                    maxEpoch = previous.maxEpoch();
                    continued = true;
                }
            } catch (final RecoveryCheckpoint.Refused e) {
                LOG.info("Log {}: the recovery checkpoint on disk is not continued, the next one replays every file: {}",
                    directory, e.getMessage());
                replay = new LogReplay(directory, CorruptionPolicy.FAIL);
                files.clear();
                maxEpoch = -1;
                from = 0;
                continued = false;
            }
        }
        for (int i = from; i < targetIndex; i++) {
            if (stop.getAsBoolean()) {
                return -1;
            }
            final long number = numbers.get(i);
            final Path path = directory.resolve(LogFileDescriptor.fileName(number));
            final LogReplay.SnapshotMode mode = continued && i == from ? LogReplay.SnapshotMode.CHECK
                : i == 0 ? LogReplay.SnapshotMode.APPLY
                : number == numbers.get(i - 1) + 1 ? LogReplay.SnapshotMode.CHECK : LogReplay.SnapshotMode.RESYNC;
            replay.beginFile(number, path, mode);
            final LogFileScan scan;
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
                scan = scanner.scan(channel, number, replay);
            }
            final ScanEnd end = scan.end();
            final boolean shortFile = scan.fileLength() > 0 && scan.size() < scan.fileLength();
            if (shortFile || (end != ScanEnd.END_OF_FILE && end != ScanEnd.ZEROS && end != ScanEnd.STALE)
                || scan.endPosition() <= FIRST_RECORD_POSITION) {
                throw new Skip(path + " ends at position=" + scan.endPosition() + " (" + end + (scan.reason() != null ? ": "
                    + scan.reason() : "") + ", size=" + scan.size() + "), not as a file before the tail");
            }
            if (scan.epoch() < maxEpoch) {
                throw new Skip(path + " has EPOCH=" + scan.epoch() + ", lower than an earlier file's EPOCH=" + maxEpoch);
            }
            maxEpoch = scan.epoch();
            replay.endFile();
            files.add(RecoveryCheckpoint.CoveredFile.of(scan));
        }
        // The target's SNAPSHOT must equal the replayed table (its first record only: the writer is filling it).
        // The check leaves the table as it is, so the state stays the one before the target.
        final long number = numbers.get(targetIndex);
        final Path path = directory.resolve(LogFileDescriptor.fileName(number));
        replay.beginFile(number, path, number == numbers.get(targetIndex - 1) + 1 ? LogReplay.SnapshotMode.CHECK
            : LogReplay.SnapshotMode.RESYNC);
        final long epoch;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            epoch = scanner.firstSnapshot(channel, number, replay);
        }
        if (epoch < 0 || epoch < maxEpoch) {
            throw new Skip(path + ": no valid SNAPSHOT, or its EPOCH=" + epoch + " is lower than EPOCH=" + maxEpoch);
        }
        if (stop.getAsBoolean()) {
            return -1;
        }
        final long length = RecoveryCheckpoint.write(directory, number, epoch, maxEpoch, replay, files);
        retained.replay = replay;
        retained.files = files;
        retained.fileNumber = number;
        retained.fileEpoch = epoch;
        retained.maxEpoch = maxEpoch;
        return length;
    }

    /**
     * Drops the covered files that are no longer in the directory (compaction deleted them), with
     * their DATA ends: what {@link RecoveryCheckpoint#restore} does for the file on disk.
     */
    private static void keepPresent(final LogReplay replay, final List<RecoveryCheckpoint.CoveredFile> files,
                                    final Set<Long> present) {
        for (int i = files.size() - 1; i >= 0; i--) {
            if (!present.contains(files.get(i).number())) {
                files.remove(i);
                replay.fileEnds.remove(i);
            }
        }
    }
}
