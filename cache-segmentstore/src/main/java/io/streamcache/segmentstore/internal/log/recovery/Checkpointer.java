package io.streamcache.segmentstore.internal.log.recovery;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.segmentstore.internal.log.LogFileDescriptor;
import io.streamcache.segmentstore.log.CorruptionPolicy;
import io.streamcache.segmentstore.log.LogConfig;
import io.streamcache.segmentstore.log.LogCorruptedException;
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
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static io.streamcache.segmentstore.internal.log.LogFileDescriptor.FIRST_RECORD_POSITION;

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
 * start from the current checkpoint if it validates and matches the directory (else from the
 * oldest file), replay each later file before F with a {@link LogScanner} into a
 * {@link LogReplay} under {@link CorruptionPolicy#FAIL}, each required to end as a file before
 * the tail must (end of file, zeros, stale bytes) with its SNAPSHOT matching the replay;
 * then check F's SNAPSHOT against the result (its first record only) and write the state
 * ({@link RecoveryCheckpoint#write}: a temporary file, forced, renamed, the directory forced).
 * Anything that does not fit (a file deleted or recycled meanwhile, damage, a SNAPSHOT that
 * disagrees) skips this checkpoint, logged; the old one stays, and the next roll tries again.
 * A checkpoint therefore only ever holds what a full replay of the same files found.
 *
 * <h2>Cost</h2>
 * A checkpoint reads the previous one and the files since it, and writes the whole state:
 * the segment table, ~16 bytes per DATA record of the live segments and ~12 bytes per segment
 * and covered file. While it runs it holds a second copy of the table and the location
 * indexes (the heap of an open's replay) besides the store's own: budget the heap for both. Out
 * of heap, it skips that checkpoint and tries again at the next roll. The first one after an
 * open without a valid checkpoint replays every file.
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
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (final InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            final RecoveryCheckpoint current = RecoveryCheckpoint.read(directory);
            checkpointed = current != null ? current.fileNumber() : 0;
        } catch (final RecoveryCheckpoint.Refused e) {
            checkpointed = 0;
        }
        while (!closed) {
            final long target = started;
            if (target <= attempted || target - checkpointed < everyFiles) {
                LockSupport.park(this);
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
                // Its replay holds a second copy of the table while it runs: with too little heap the
                // thread gives this one up (the replay is garbage now) rather than dying; the next roll tries again.
                skipped.incrementAndGet();
                LOG.error("Log {}: recovery checkpoint before fileNumber={} skipped, out of heap (a checkpoint needs about"
                    + " the heap of an open's replay besides the store's own): {}", directory, target, e.toString());
            }
        }
    }

    /** This checkpoint is not written; the reason is logged. */
    static final class Skip extends Exception {
        Skip(final String message) {
            super(message, null, false, false);
        }
    }

    private long checkpoint(final long target) throws IOException, Skip {
        return checkpoint(directory, scanner, target, () -> closed);
    }

    /**
     * Replays the files before {@code target} and writes the checkpoint (see the class comment).
     *
     * @param stop checked between files: true abandons the checkpoint.
     * @return its length, or -1 if stopped.
     * @throws Skip if the files do not allow it now (the reason says why).
     */
    static long checkpoint(final Path directory, final LogScanner scanner, final long target, final BooleanSupplier stop)
        throws IOException, Skip {
        final List<Long> numbers = LogRecovery.listFileNumbers(directory);
        final int targetIndex = numbers.indexOf(target);
        if (targetIndex <= 0) {
            throw new Skip("fileNumber=" + target + (targetIndex < 0 ? " is not in the directory" : " is the oldest file"));
        }
        LogReplay replay = new LogReplay(directory, CorruptionPolicy.FAIL);
        final List<RecoveryCheckpoint.CoveredFile> files = new ArrayList<>();
        long maxEpoch = -1;
        int from = 0;
        boolean continued = false;
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
            LOG.info("Log {}: the recovery checkpoint on disk is not continued, the next one replays every file: {}", directory,
                e.getMessage());
            replay = new LogReplay(directory, CorruptionPolicy.FAIL);
            files.clear();
            maxEpoch = -1;
            from = 0;
            continued = false;
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
        return RecoveryCheckpoint.write(directory, number, epoch, maxEpoch, replay, files);
    }
}
