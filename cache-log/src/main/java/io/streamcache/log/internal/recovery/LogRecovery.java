package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationMemory;

import io.streamcache.core.StreamcacheThreads;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.internal.CurrentFileRecord;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * Rebuilds the segments and their location indexes from a log directory, cuts a torn tail, and
 * tells the writer where to resume; one thread, once per open ({@link #recover()}).
 *
 * <h2>Procedure</h2>
 * <ol>
 *   <li><b>List</b> the files {@code log-<16 hex>.log} in number order. Numbers may have gaps:
 *       any file but the tail may be deleted once its data are dead.</li>
 *   <li><b>Find the tail</b>, from the newest file back: the newest file that holds any valid
 *       record. Newer files that hold none (spares, a roll cut short) are removed.</li>
 *   <li><b>Replay</b> the files oldest first with a {@link LogScanner} into a {@link LogReplay}. The oldest file's
 *       SNAPSHOT (its first record) is the starting segment table. Each later file's SNAPSHOT
 *       is <em>checked</em> against the table replayed so far if the file follows the previous
 *       one, and <em>re-synchronizes</em> the table across a gap (deleted files) otherwise:
 *       segments absent from it were deleted, new ones created, and a segment whose logged
 *       length jumps forward has its location index restarted there (the bytes in between
 *       were in the deleted files, so they must be dead by the end, which step 5 checks). Then
 *       the records, in log order:
 *       <pre>
 *  CREATE    id not live, name not live           new segment [0, 0)
 *  DATA      live, not sealed, offset == length   length += LENGTH; location indexed
 *  SEAL      live, offset == length               sealed (again: idempotent)
 *  TRUNCATE  live, offset &lt;= length              start = max(start, offset); locations dropped
 *  DELETE    live                                 deleted; its id and name may be created again
 *       </pre>
 *       A record that breaks a rule (a DATA record whose offset is not the segment's length,
 *       for one) validated, so it is not torn: it is corruption at that record.</li>
 *   <li><b>Judge the end of each file</b> ({@link ScanEnd}): a file before the tail must end
 *       at its end, with zeros, or with stale bytes at a page boundary; the tail may also end
 *       {@link ScanEnd#TORN}. Anything else is corruption (see the policy).</li>
 *   <li><b>Check</b> that every live segment's bytes from its start offset are in the files.</li>
 *   <li><b>Cut the tail</b> at its first invalid byte (unless {@link Builder#readOnly}):
 *       if that is inside a page, a PADDING record fills the page from it, so the records before
 *       it in the page stay and a later scan steps over the torn bytes; then zeros from the
 *       next page boundary (the resume position) to the end of every valid record and nonzero
 *       page the scan found after the cut ({@link LogFileScan#zeroEnd()}), and to FILE_LENGTH if
 *       the file is shorter; then a force. A valid record left after the resume position could
 *       otherwise chain onto what the writer writes next. Files after the tail are deleted,
 *       newest first, and the directory forced.</li>
 * </ol>
 *
 * <h2>Corruption policy</h2>
 * A torn tail is expected after a crash: the records of a write that was not forced were never
 * acknowledged, and cutting them loses nothing promised. Bytes that cannot be a torn write
 * (invalid bytes before later valid records beyond the torn-write window, invalid bytes inside a
 * page of a file that is not the tail, a misplaced or inconsistent record, a SNAPSHOT that
 * contradicts the records before it, a bad header before the tail) mean acknowledged data may
 * be gone. By default ({@link CorruptionPolicy#FAIL}) recovery then throws a
 * {@link LogCorruptedException} naming the file and position, and changes nothing on disk. With
 * {@link CorruptionPolicy#TRUNCATE} it cuts the log there like a torn tail instead: the file of
 * the corruption becomes the tail (or is removed if nothing before the corruption is left in
 * it), later files are deleted, and the exception is reported in {@link RecoveredLog#truncation()}.
 * Missing bytes of a live segment (its start offset before what the files hold: a file deleted
 * while it held live data) always throw: no cut can mend them.
 *
 * <h2>Clean close, file lengths, epochs</h2>
 * With a valid clean-close mark ({@link io.streamcache.log.internal.CleanMark}) nothing is
 * taken for a torn write: the tail must be the mark's file and end at its position, or the log
 * is corrupt. A file shorter than its header's FILE_LENGTH is corrupt at position=its size. A
 * file whose header EPOCH is lower than an earlier file's always fails (two writers). A torn tail
 * that is cut is logged at WARN and counted ({@link RecoveredLog#tornTailBytes()}); under
 * {@link CorruptionPolicy#FAIL_ON_TORN_TAIL} it fails instead.
 *
 * <h2>Recovery checkpoint</h2>
 * With {@link Builder#checkpoint(boolean)} and a {@link RecoveryCheckpoint} in the directory that
 * validates and matches the files (its file F there with the same epoch, every file before F one
 * it covers), the replay starts from the checkpoint's state and reads only F (whose SNAPSHOT is
 * checked against it) and the files after it; the files before F are not read. Nothing on disk
 * changes until the checkpoint is accepted: a checkpoint that does not validate or match, any
 * corruption or cut in the files from F on, or a live byte left located in a deleted file makes
 * the open log why and run the full replay above instead, so its errors and cuts are exactly
 * those of the full replay ({@link #checkpointUsed()} says which ran).
 *
 * <h2>What the writer must guarantee</h2>
 * Every write starts and ends on a page boundary (the last records of a write are followed by
 * PADDING to the boundary, in every file, also the one rolled away from); a write is issued only
 * after the previous one was forced, or the torn-write window covers all the writes in flight
 * ({@link Builder#tornWriteWindow}: set it to the largest write plus a page); a new file has a
 * valid header before records go into it, and its first record is a SNAPSHOT
 * ({@link SnapshotCodec}) of the table exactly as the records before it leave it; location
 * indexes are fed in log order.
 */
public final class LogRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);
    /**
     * Records after its SNAPSHOT a file needs for its replay to go to lanes: below this, starting
     * a helper costs about what the lanes save.
     */
    static final int MIN_LANE_RECORDS = 256;

    private final Path directory;
    private final CorruptionPolicy corruptionPolicy;
    private final boolean allowMissingFiles;
    private final boolean readOnly;
    private final long tornWriteWindow;
    private final int chunkLength;
    private final boolean parallelScan;
    /** Threads of the work after the replay, the caller included (with {@link #parallelScan}). */
    private final int parallelism;
    /** Segments (or files) per chunk of that work, at least. */
    private final int workChunk;
    private final StreamcacheThreads threads;
    private final String owner;
    private final boolean checkpoint;
    /** Where the location indexes are built; null: a memory of each recovery's own. */
    private final LocationMemory locationMemory;
    /** The replay of the last {@link #recover(RecoveryCheckpoint)}, until it is returned or discarded. */
    private LogReplay attempt;
    /** Files of the last {@link #recover()} replayed from a {@link Prescanner}'s scan. */
    private int prescannedFiles;
    /** The replay of the last {@link #recover()} (for its counters, also after a failure). */
    private LogReplay lastReplay;
    /** Whether the last {@link #recover()} started from a recovery checkpoint. */
    private boolean checkpointUsed;

    private LogRecovery(final Builder builder) {
        this.directory = builder.directory;
        this.corruptionPolicy = builder.corruptionPolicy;
        this.readOnly = builder.readOnly;
        this.allowMissingFiles = builder.allowMissingFiles;
        this.tornWriteWindow = builder.tornWriteWindow;
        this.chunkLength = builder.chunkLength;
        this.parallelScan = builder.parallelScan;
        this.parallelism = builder.parallelism;
        this.workChunk = builder.workChunk;
        this.threads = builder.threads;
        this.owner = builder.owner;
        this.checkpoint = builder.checkpoint;
        this.locationMemory = builder.locationMemory;
    }

    /** @return whether the last {@link #recover()} started from the directory's recovery checkpoint. */
    public boolean checkpointUsed() {
        return checkpointUsed;
    }

    /** @return files of the last {@link #recover()} whose records were applied in lanes by segment id. */
    int partitionedFiles() {
        return lastReplay == null ? 0 : lastReplay.partitionedFiles;
    }

    /** @return files the last {@link #recover()} replayed from a scan made ahead on the second thread. */
    int prescannedFiles() {
        return prescannedFiles;
    }

    /**
     * @param directory the log directory.
     * @return a builder with the defaults: {@link CorruptionPolicy#FAIL}, repairs on, an 8 MiB
     *         torn-write window, 1 MiB reads.
     */
    public static Builder builder(final Path directory) {
        return new Builder(directory);
    }

    /**
     * Runs recovery.
     *
     * @throws LogCorruptedException under {@link CorruptionPolicy#FAIL} if the log is corrupt;
     *                               always if a live segment's bytes are missing.
     * @throws IOException           if the directory or a file cannot be read or repaired.
     */
    public RecoveredLog recover() throws IOException {
        checkpointUsed = false;
        if (checkpoint) {
            RecoveryCheckpoint loaded = null;
            try {
                loaded = RecoveryCheckpoint.read(directory);
                if (loaded != null) {
                    final RecoveredLog log = recover(loaded);
                    checkpointUsed = true;
                    return log;
                }
                LOG.info("Log {}: no recovery checkpoint; scanning every file", directory);
            } catch (final RecoveryCheckpoint.Refused e) {
                discardAttempt();
                LOG.warn("Log {}: recovery checkpoint not used, scanning every file: {}", directory, e.getMessage());
            } catch (final LogCorruptedException e) {
                discardAttempt();
                // Nothing was changed on disk yet: the full scan finds the same and reports it as always.
                LOG.warn("Log {}: the files from the recovery checkpoint's fileNumber={} on do not replay on it ({}); scanning"
                    + " every file", directory, loaded.fileNumber(), e.getMessage());
            }
        }
        try {
            return recover(null);
        } catch (final RecoveryCheckpoint.Refused e) {
            throw new AssertionError("only a checkpoint is refused", e);
        }
    }

    /** Gives back the location indexes of a recovery from a checkpoint that was given up. */
    private void discardAttempt() {
        if (attempt != null) {
            attempt.clearLocations();
            attempt = null;
        }
    }

    /**
     * @param checkpoint null: replay every file; else start from it and replay only the files
     *                   from its file number on. With a checkpoint, nothing on disk changes
     *                   before it is accepted: anything that does not fit it throws
     *                   {@link RecoveryCheckpoint.Refused} (or the replay's
     *                   {@link LogCorruptedException}) and the caller scans everything.
     */
    private RecoveredLog recover(final RecoveryCheckpoint checkpoint) throws IOException, RecoveryCheckpoint.Refused {
        // The helper threads of the lanes and of the work after the replay: one set per recovery.
        try (RecoveryWorkers workers = new RecoveryWorkers(threads, owner, parallelScan ? parallelism : 1)) {
            return recover(checkpoint, workers);
        }
    }

    private RecoveredLog recover(final RecoveryCheckpoint checkpoint, final RecoveryWorkers workers)
        throws IOException, RecoveryCheckpoint.Refused {
        final long started = System.nanoTime();
        prescannedFiles = 0;
        lastReplay = null;
        final List<Long> numbers = listFileNumbers();
        if (checkpoint != null) {
            checkpoint.check(directory, numbers);
        }
        // Written by a clean close, removed when a writer opens: with it, the log must end exactly there.
        final CleanMark mark = CleanMark.read(directory);
        final LogScanner scanner = new LogScanner(chunkLength, tornWriteWindow);
        final List<Path> removed = new ArrayList<>();
        LogCorruptedException truncation = null;
        long bytesRead = 0;

        final List<Long> emptyTrailing = new ArrayList<>();
        final long[] trailingBytes = {0};
        final int tail = lastFileWithRecords(numbers, scanner, emptyTrailing, trailingBytes);
        bytesRead += trailingBytes[0];

        final LogReplay replay = new LogReplay(directory, checkpoint != null ? CorruptionPolicy.FAIL : corruptionPolicy,
            locationMemory != null ? locationMemory : new LocationMemory());
        replay.allowMissingFiles = allowMissingFiles;
        attempt = replay;
        lastReplay = replay;
        final List<LogFileScan> scans = new ArrayList<>();
        // With a checkpoint: the files before its file number come from it, the replay starts at it.
        int first = 0;
        if (checkpoint != null) {
            first = numbers.indexOf(checkpoint.fileNumber());
            if (first > tail) {
                throw new RecoveryCheckpoint.Refused("its fileNumber=" + checkpoint.fileNumber() + " holds no record: the log"
                    + " ends before it");
            }
            final Set<Long> present = new HashSet<>(numbers.subList(0, first));
            for (final RecoveryCheckpoint.CoveredFile file : checkpoint.restore(replay, present)) {
                scans.add(file.toScan());
            }
        }
        // The files whose SNAPSHOT is checked (each right after the one before it) are read and
        // validated ahead on a second thread; the others (the first, and each after a gap) the
        // replay scans itself, since their SNAPSHOT is applied, not checked.
        long maxEpoch = checkpoint != null ? checkpoint.maxEpoch() : -1;
        long maxEpochFile = checkpoint != null && first > 0 ? numbers.get(first - 1) : 0;
        int removeFrom = tail + 1;
        final List<Long> ahead = new ArrayList<>();
        for (int i = first; i <= tail; i++) {
            // The checkpoint's file is checked even when it is the oldest left (compaction deleted every covered file).
            if ((checkpoint != null && i == first) || (i > 0 && numbers.get(i) == numbers.get(i - 1) + 1)) {
                ahead.add(numbers.get(i));
            }
        }
        try (Prescanner prescanner = parallelScan && !ahead.isEmpty()
            ? new Prescanner(directory, ahead, chunkLength, tornWriteWindow, threads, owner) : null) {
            final LogRecordView view = new LogRecordView();
            for (int i = first; i <= tail; i++) {
                final long number = numbers.get(i);
                final Path path = path(number);
                // The checkpoint's file: its SNAPSHOT must equal the checkpoint's table.
                final LogReplay.SnapshotMode mode = checkpoint != null && i == first ? LogReplay.SnapshotMode.CHECK
                    : i == 0 ? LogReplay.SnapshotMode.APPLY
                    : numbers.get(i) == numbers.get(i - 1) + 1 ? LogReplay.SnapshotMode.CHECK : LogReplay.SnapshotMode.RESYNC;
                replay.beginFile(number, path, mode);
                final PrescannedFile prescanned = prescanner != null && mode == LogReplay.SnapshotMode.CHECK
                    ? prescanner.take(number) : null;
                final LogFileScan scan = replayFile(number, path, prescanned, replay, scanner, view, workers);
                bytesRead += scan.bytesRead();
                if (scan.epoch() >= 0 && scan.epoch() < maxEpoch) {
                    // Written by a writer that had lost its lock to a later one: two writers' records
                    // may be interleaved in the files, and no cut can separate them, so this always fails.
                    throw new LogCorruptedException(path, number, 0, "EPOCH=" + scan.epoch() + " is lower than EPOCH=" + maxEpoch
                        + " of fileNumber=" + maxEpochFile + " before it: the file was written by a writer that had lost the"
                        + " directory's lock to a later one (two writers on one log); no corruptionPolicy recovers this");
                }
                if (scan.epoch() > maxEpoch) {
                    maxEpoch = scan.epoch();
                    maxEpochFile = number;
                }
                final LogCorruptedException e = damage(scan, path, i == tail, mark != null, replay);
                if (e == null) {
                    scans.add(scan);
                    replay.endFile();
                    continue;
                }
                if (checkpoint != null || corruptionPolicy != CorruptionPolicy.TRUNCATE) {
                    throw e;
                }
                truncation = e;
                scans.add(scan);
                removeFrom = i + 1;
                replay.endFile();
                break;
            }
        }
        // A tail that keeps no record (cut at or before its SNAPSHOT) goes: the file before it is the tail.
        while (!scans.isEmpty() && scans.get(scans.size() - 1).end() != ScanEnd.END_OF_FILE
            && scans.get(scans.size() - 1).endPosition() <= FIRST_RECORD_POSITION) {
            scans.remove(scans.size() - 1);
            replay.fileEnds.remove(replay.fileEnds.size() - 1);
            removeFrom = scans.size();
        }
        if (checkpoint != null && scans.size() <= first) {
            throw new RecoveryCheckpoint.Refused("its fileNumber=" + checkpoint.fileNumber() + " keeps no record");
        }
        if (mark != null && truncation == null) {
            final LogCorruptedException e = checkCleanEnd(mark, scans.isEmpty() ? null : scans.get(scans.size() - 1));
            if (e != null) {
                if (checkpoint != null || corruptionPolicy != CorruptionPolicy.TRUNCATE) {
                    throw e;
                }
                truncation = e;
            }
        }
        if (truncation != null) {
            LOG.warn("Log {} cut at the corruption, later data lost: {}", directory, truncation.getMessage());
        }

        final LogReplay.Finished finished = scans.isEmpty() ? new LogReplay.Finished(List.of(), Map.of())
            : replay.finish(workers, workChunk);
        final List<RecoveredSegment> segments = finished.segments();
        final Map<Long, long[]> live = finished.liveLengths();
        if (checkpoint != null) {
            checkLocatedInFiles(live, scans);
        }

        for (int i = numbers.size() - 1; i >= removeFrom; i--) {
            removed.add(path(numbers.get(i)));
        }
        if (!emptyTrailing.isEmpty()) {
            LOG.info("Log {}: removing {} trailing file(s) holding no record: {}", directory, emptyTrailing.size(), emptyTrailing);
        }

        final LogFileScan tailScan = scans.isEmpty() ? null : scans.get(scans.size() - 1);
        final Tail end = tailScan != null ? cutTornTail(tailScan) : Tail.NONE;
        if (!readOnly) {
            removeFiles(removed);
        }

        // Per file: a file's data ends are thousands of segments (one miss each), so a file is a chunk.
        final List<RecoveredFile> files = recoveredFiles(scans, live, replay.fileEnds, workers);
        LOG.info("Log {}: recovered {} file(s), bytes={}, segments={} in {} ms ({} file(s) scanned ahead on a second thread,"
            + " {} SNAPSHOT(s) checked by digest, {} exactly, {} file(s) applied in lanes)", directory, scans.size(), bytesRead,
            segments.size(), (System.nanoTime() - started) / 1_000_000, prescannedFiles, replay.digestChecks, replay.exactChecks,
            replay.partitionedFiles);
        final long nextFileNumber = tailScan != null ? end.fileNumber + 1 : numbers.isEmpty() ? 1 : numbers.get(0);
        return new RecoveredLog(segments, files, removed, end.fileNumber, end.fileLength, end.endPosition, end.resumePosition,
            end.zeroEnd, nextFileNumber, replay.maxSegmentId + 1, truncation, bytesRead, mark != null, end.tornBytes);
    }

    /**
     * @param isTail     whether the file is the last one that holds records.
     * @param cleanClose whether the log was closed cleanly (a clean-close mark): then even the
     *                   tail must end without a torn write.
     * @return why the scan of a file shows damage, or null if it ended as a file may: at its
     *         end, in zeros, at stale bytes, or (the tail of a log not closed cleanly) at a torn write.
     */
    private LogCorruptedException damage(final LogFileScan scan, final Path path, final boolean isTail, final boolean cleanClose,
                                         final LogReplay replay) {
        final long number = scan.fileNumber();
        final ScanEnd end = scan.end();
        // A file shorter than its header says lost bytes: the writer creates files whole.
        final boolean shortFile = scan.fileLength() > 0 && scan.size() < scan.fileLength();
        final boolean fine = !shortFile && (end == ScanEnd.END_OF_FILE || end == ScanEnd.ZEROS || end == ScanEnd.STALE
            || (isTail && end == ScanEnd.TORN && !cleanClose)) && (isTail || scan.endPosition() > FIRST_RECORD_POSITION);
        if (fine) {
            return null;
        }
        return replay.failure != null ? replay.failure
            : shortFile ? new LogCorruptedException(path, number, scan.size(), "the file ends at size=" + scan.size()
                + ", before its header's FILE_LENGTH=" + scan.fileLength() + " (the writer creates files whole: bytes were lost)")
            : isTail && end == ScanEnd.TORN ? new LogCorruptedException(path, number, scan.endPosition(), scan.reason()
                + "; the log was closed cleanly (" + CleanMark.FILE_NAME + " mark), so this is damage, not a torn write")
            : new LogCorruptedException(path, number, scan.endPosition(), describe(scan, !isTail));
    }

    /**
     * Finds the last file that holds a record (or a SNAPSHOT), collecting the files after it,
     * which hold none, into {@code emptyTrailing} (newest first) and the bytes read into
     * {@code bytesRead[0]}.
     *
     * @return the index in {@code numbers} of that file, or -1 if none holds a record.
     */
    private int lastFileWithRecords(final List<Long> numbers, final LogScanner scanner, final List<Long> emptyTrailing,
                                    final long[] bytesRead) throws IOException {
        int tail = numbers.size() - 1;
        while (tail >= 0) {
            final long number = numbers.get(tail);
            try (FileChannel channel = FileChannel.open(path(number), StandardOpenOption.READ)) {
                if (scanner.hasSnapshot(channel, number)) {
                    break;
                }
                final LogFileScan scan = scanner.scan(channel, number, record -> true);
                bytesRead[0] += scan.bytesRead();
                if (scan.hasRecords()) {
                    break;
                }
            }
            emptyTrailing.add(number);
            tail--;
        }
        return tail;
    }

    /**
     * Replays one file begun in {@code replay}: from what the prescanner read ahead of it if that
     * is usable (its SNAPSHOT matches by digest), applied in lanes by segment id when the file
     * allows it ({@link LogReplay#applyPartitioned}); else by scanning it.
     *
     * @param prescanned the file as the prescanner read it, or null.
     * @return the file's scan.
     */
    private LogFileScan replayFile(final long number, final Path path, final PrescannedFile prescanned, final LogReplay replay,
                                   final LogScanner scanner, final LogRecordView view, final RecoveryWorkers workers)
        throws IOException {
        if (prescanned != null && prescanned.failure == null && prescanned.recordCount() > 0
            && replay.snapshotMatches(prescanned)) {
            // The SNAPSHOT (record 0) matched by its digest; the rest as the scan found them.
            final int stopped;
            // Four lanes per thread, claimed as threads come free: a thread the machine
            // holds back delays the file by one small lane, not by a fixed half of it.
            if (prescanned.recordCount() - 1 >= Math.min(workChunk, MIN_LANE_RECORDS) && workers.parallelism() > 1
                && replay.applyPartitioned(prescanned, 1, workers, 4 * workers.parallelism())) {
                stopped = prescanned.recordCount();
            } else {
                stopped = prescanned.replay(1, view, replay);
            }
            prescannedFiles++;
            if (stopped == prescanned.recordCount()) {
                return prescanned.scan;
            }
            // The replay stopped the scan (TRUNCATE policy): scan the file again, the
            // records before the stop already applied, so that the scan ends there.
            final int[] seen = {0};
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
                return scanner.scan(channel, number, record -> seen[0]++ < stopped || replay.onRecord(record));
            }
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            return scanner.scan(channel, number, replay);
        }
    }

    /** Where the log ends, as {@link RecoveredLog} takes it: the tail file and its positions. */
    private record Tail(long fileNumber, long fileLength, long endPosition, long resumePosition, long zeroEnd, long tornBytes) {
        static final Tail NONE = new Tail(0, 0, 0, 0, 0, 0);
    }

    /**
     * Cuts a torn write off the tail file (unless read-only): a write cut short (TORN), or
     * invalid bytes at a page boundary with something to zero after them (STALE: the torn first
     * page of a write, or a recycled file's old bytes).
     *
     * @return where the log ends.
     * @throws LogCorruptedException if there is a torn tail and the policy is
     *                               {@link CorruptionPolicy#FAIL_ON_TORN_TAIL}.
     */
    private Tail cutTornTail(final LogFileScan tailScan) throws IOException {
        final long fileNumber = tailScan.fileNumber();
        final long fileLength = tailScan.fileLength();
        final long endPosition = Math.min(tailScan.endPosition(), fileLength);
        final long resumePosition = Math.min(tailScan.resumePosition(), fileLength);
        final long zeroEnd = needsCut(tailScan) ? Math.min(tailScan.zeroEnd(), fileLength) : resumePosition;
        long tornBytes = 0;
        if (tailScan.end() == ScanEnd.TORN || (tailScan.end() == ScanEnd.STALE && zeroEnd > resumePosition)) {
            final Path tailPath = path(fileNumber);
            tornBytes = Math.max(zeroEnd, resumePosition) - endPosition;
            if (corruptionPolicy == CorruptionPolicy.FAIL_ON_TORN_TAIL) {
                throw new LogCorruptedException(tailPath, fileNumber, endPosition, "torn tail (" + tailScan.reason()
                    + "), bytes=" + tornBytes + " would be cut; corruptionPolicy=" + corruptionPolicy + " makes a torn tail an error");
            }
            LOG.warn("Log {}: torn tail in {} at position={}: cutting bytes={} (an unacknowledged write cut short, no clean-close"
                + " mark): {}", directory, tailPath, endPosition, tornBytes, tailScan.reason());
        }
        if (!readOnly) {
            cutTail(tailScan, zeroEnd);
        }
        return new Tail(fileNumber, fileLength, endPosition, resumePosition, zeroEnd, tornBytes);
    }

    /** Removes the files recovery dropped: recorded in CURRENT first (no longer live), unlinked after. */
    private void removeFiles(final List<Path> removed) throws IOException {
        if (removed.isEmpty()) {
            return;
        }
        final List<Long> numbersRemoved = new ArrayList<>();
        for (final Path path : removed) {
            numbersRemoved.add(LogFileDescriptor.fileNumber(path.getFileName().toString()));
        }
        CurrentFileRecord.forget(directory, numbersRemoved);
        for (final Path path : removed) {
            Files.deleteIfExists(path);
        }
        forceDirectory();
    }

    /**
     * Refuses a checkpoint after which a live byte is located in a file that is gone: compaction
     * deleted a covered file after the checkpoint was written, and no copy replayed since
     * relocates that byte (a full scan then decides what the files hold).
     */
    private static void checkLocatedInFiles(final Map<Long, long[]> live, final List<LogFileScan> scans)
        throws RecoveryCheckpoint.Refused {
        final Set<Long> files = new HashSet<>();
        for (final LogFileScan scan : scans) {
            files.add(scan.fileNumber());
        }
        for (final Map.Entry<Long, long[]> file : live.entrySet()) {
            if (file.getValue()[0] > 0 && !files.contains(file.getKey())) {
                throw new RecoveryCheckpoint.Refused("bytes=" + file.getValue()[0] + " of live segments are located in fileNumber="
                    + file.getKey() + ", which is gone");
            }
        }
    }

    /**
     * @return null if the log ends where the clean-close mark says, else the corruption: the
     *         mark's file is missing or holds less than it did.
     */
    private LogCorruptedException checkCleanEnd(final CleanMark mark, final LogFileScan tailScan) {
        final long tailNumber = tailScan == null ? 0 : tailScan.fileNumber();
        final long tailResume = tailScan == null ? 0 : Math.min(tailScan.resumePosition(), tailScan.fileLength());
        if (tailNumber == mark.fileNumber() && tailResume == mark.endPosition()) {
            return null;
        }
        if (mark.fileNumber() == 0) {
            return new LogCorruptedException(path(tailNumber), tailNumber, FIRST_RECORD_POSITION, "the log was closed cleanly with no"
                + " file written (" + CleanMark.FILE_NAME + " mark epoch=" + mark.epoch() + "), but this file holds records");
        }
        if (tailNumber == mark.fileNumber()) {
            return new LogCorruptedException(path(tailNumber), tailNumber, tailScan.endPosition(), "the records end at position="
                + tailScan.endPosition() + " (" + tailScan.end() + (tailScan.reason() != null ? ": " + tailScan.reason() : "")
                + "), but the log was closed cleanly ending at endPosition=" + mark.endPosition() + " (" + CleanMark.FILE_NAME
                + " mark epoch=" + mark.epoch() + "): acknowledged records are damaged or missing");
        }
        return new LogCorruptedException(path(mark.fileNumber()), mark.fileNumber(), 0, "the log was closed cleanly ending in"
            + " fileNumber=" + mark.fileNumber() + " at endPosition=" + mark.endPosition() + " (" + CleanMark.FILE_NAME + " mark epoch="
            + mark.epoch() + "), but the last file holding records is fileNumber=" + tailNumber + (Files.exists(path(mark.fileNumber()))
            ? ": this file's records are damaged or missing" : ": this file is missing"));
    }

    private static String describe(final LogFileScan scan, final boolean beforeTail) {
        if (scan.end() == ScanEnd.BAD_HEADER) {
            return "bad header: " + scan.reason();
        }
        if (beforeTail && scan.endPosition() <= FIRST_RECORD_POSITION) {
            return "the file holds no record (" + scan.reason() + "), but later files do";
        }
        if (beforeTail && scan.end() == ScanEnd.TORN) {
            return scan.reason() + "; in a file before the tail (later files hold records), so not a write cut short";
        }
        return scan.reason();
    }

    // ------------------------------------------------------------------------------------------
    // Files
    // ------------------------------------------------------------------------------------------

    private List<Long> listFileNumbers() throws IOException {
        return listFileNumbers(directory);
    }

    /**
     * @return the numbers of the log files in {@code directory}, in order.
     */
    static List<Long> listFileNumbers(final Path directory) throws IOException {
        final List<Long> numbers = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "log-*.log")) {
            for (final Path path : stream) {
                final long number = LogFileDescriptor.fileNumber(path.getFileName().toString());
                if (number >= 0 && Files.isRegularFile(path)) {
                    numbers.add(number);
                }
            }
        }
        numbers.sort(Long::compareUnsigned);
        return numbers;
    }

    private Path path(final long fileNumber) {
        return directory.resolve(LogFileDescriptor.fileName(fileNumber));
    }

    private static boolean needsCut(final LogFileScan scan) {
        return scan.end() != ScanEnd.END_OF_FILE && scan.end() != ScanEnd.ZEROS;
    }

    /**
     * Makes the tail end cleanly at its resume position: padding over the torn rest of the page,
     * zeros over everything a later scan could take for records, the file back to FILE_LENGTH.
     */
    private void cutTail(final LogFileScan scan, final long zeroEnd) throws IOException {
        final long fileLength = scan.fileLength();
        final long end = scan.endPosition();
        final long resume = scan.resumePosition();
        final boolean pad = needsCut(scan) && (end & (PAGE_LENGTH - 1)) != 0 && end < fileLength;
        final boolean extend = scan.size() < fileLength;
        if (!pad && zeroEnd <= resume && !extend) {
            return;
        }
        final Path path = path(scan.fileNumber());
        final ByteBuffer zeros = ByteBuffer.allocateDirect(chunkLength);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (pad) {
                final int gap = (int) (resume - end);
                final ByteBuffer padding = ByteBuffer.allocateDirect(gap).order(ByteOrder.LITTLE_ENDIAN);
                LogRecordDescriptor.putPadding(new UnsafeBuffer(padding), 0, gap);
                writeFully(channel, padding, end);
            }
            writeZeros(channel, zeros, resume, zeroEnd);
            if (extend) {
                writeZeros(channel, zeros, Math.max(resume, Math.min(scan.size(), fileLength)) & ~(long) (PAGE_LENGTH - 1),
                    fileLength);
            }
            channel.force(true);
        }
        LOG.info("Log {}: tail cut at position={} ({}: {}), writing resumes at position={}", path, end, scan.end(),
            scan.reason(), resume);
    }

    private static void writeZeros(final FileChannel channel, final ByteBuffer zeros, final long from, final long to)
        throws IOException {
        for (long position = from; position < to; ) {
            final int n = (int) Math.min(zeros.capacity(), to - position);
            zeros.clear().limit(n);
            writeFully(channel, zeros, position);
            position += n;
        }
    }

    private static void writeFully(final FileChannel channel, final ByteBuffer buffer, final long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
    }

    private void forceDirectory() {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (final IOException | UnsupportedOperationException e) {
            LOG.debug("Cannot force directory {}: {}", directory, e.toString());
        }
    }

    /**
     * Builds each file's {@link RecoveredFile} (its live segments' data ends in two arrays), the
     * files in chunks on {@code workers}: each file is its own.
     */
    private List<RecoveredFile> recoveredFiles(final List<LogFileScan> scans, final Map<Long, long[]> live,
                                               final List<FileEnds> fileEnds, final RecoveryWorkers workers) {
        final RecoveredFile[] files = new RecoveredFile[scans.size()];
        workers.run(files.length, 1, (chunk, from, to) -> {
            for (int i = from; i < to; i++) {
                files[i] = recoveredFile(scans.get(i), live, fileEnds.get(i));
            }
        });
        return List.of(files);
    }

    private RecoveredFile recoveredFile(final LogFileScan scan, final Map<Long, long[]> live, final FileEnds ends) {
        int count = 0;
        for (int j = 0; j < ends.size(); j++) {
            count += ends.segment(j).deleted ? 0 : 1;
        }
        final int[] ids = new int[count];
        final long[] endOffsets = new long[count];
        for (int j = 0, k = 0; j < ends.size(); j++) {
            if (!ends.segment(j).deleted) {
                ids[k] = ends.segment(j).id;
                endOffsets[k++] = ends.end(j);
            }
        }
        final DataEnds dataEnds = new DataEnds(ids, endOffsets);
        final long[] liveLength = live.get(scan.fileNumber());
        return new RecoveredFile(scan.fileNumber(), path(scan.fileNumber()), scan.fileLength(), scan.end(),
            scan.endPosition(), scan.recordCount(), scan.dataLength(), liveLength == null ? 0 : liveLength[0], dataEnds);
    }

    /**
     * Configures a {@link LogRecovery}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        private final Path directory;
        private CorruptionPolicy corruptionPolicy = CorruptionPolicy.FAIL;
        private boolean readOnly;
        private boolean allowMissingFiles;
        private long tornWriteWindow = LogScanner.TORN_WRITE_WINDOW_DEFAULT;
        private int chunkLength = LogScanner.CHUNK_LENGTH_DEFAULT;
        private boolean parallelScan = true;
        private int parallelism = RecoveryWorkers.defaultParallelism();
        private int workChunk = RecoveryWorkers.MIN_CHUNK_DEFAULT;
        private StreamcacheThreads threads = StreamcacheThreads.defaults();
        private String owner = "log";
        private boolean checkpoint;
        private LocationMemory locationMemory;

        private Builder(final Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /**
         * @param corruptionPolicy what to do on corruption before the tail; {@link CorruptionPolicy#FAIL} by default.
         */
        public Builder corruptionPolicy(final CorruptionPolicy corruptionPolicy) {
            this.corruptionPolicy = Objects.requireNonNull(corruptionPolicy, "corruptionPolicy");
            return this;
        }

        /**
         * @param allowMissingFiles if true, a segment whose bytes lay in a file that is gone opens
         *                          from where the log still holds them (WARN), as
         *                          {@code LogConfig.Builder.allowMissingFiles} accepts; else that
         *                          is a {@link io.streamcache.log.LogCorruptedException}.
         *                          False by default.
         */
        public Builder allowMissingFiles(final boolean allowMissingFiles) {
            this.allowMissingFiles = allowMissingFiles;
            return this;
        }

        /**
         * @param readOnly if true, change nothing on disk (no cut, no removal): the result says what
         *                 would have been done. False by default.
         */
        public Builder readOnly(final boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * @param tornWriteWindow the most bytes a crash can leave half-written: the writer's
         *                        largest write times its writes in flight (see {@link LogScanner});
         *                        8 MiB by default.
         */
        public Builder tornWriteWindow(final long tornWriteWindow) {
            this.tornWriteWindow = tornWriteWindow;
            return this;
        }

        /**
         * @param chunkLength bytes per read, a multiple of 4 KiB of at least 16 KiB; 1 MiB by default.
         */
        public Builder chunkLength(final int chunkLength) {
            this.chunkLength = chunkLength;
            return this;
        }

        /**
         * @param parallelScan if true (the default), the files whose SNAPSHOT is checked are read
         *                     and validated on a second thread ahead of the replay
         *                     ({@link Prescanner}); if false, the replay's thread scans every file.
         *                     The checks, their order of effect and the result are the same.
         */
        public Builder parallelScan(final boolean parallelScan) {
            this.parallelScan = parallelScan;
            return this;
        }

        /**
         * Tests: how the work after the replay is cut (with {@link #parallelScan(boolean)}).
         *
         * @param parallelism threads at most, the caller included; the processors (at most
         *                    {@link RecoveryWorkers#MAX_PARALLELISM}) by default.
         * @param workChunk   segments per chunk at least ({@link RecoveryWorkers#MIN_CHUNK_DEFAULT} by
         *                    default); 1 makes small test logs use the threads too.
         */
        Builder work(final int parallelism, final int workChunk) {
            if (parallelism < 1 || workChunk < 1) {
                throw new IllegalArgumentException("parallelism=" + parallelism + " workChunk=" + workChunk + " must be >= 1");
            }
            this.parallelism = parallelism;
            this.workChunk = workChunk;
            return this;
        }

        /**
         * @param checkpoint if true, start from the directory's recovery checkpoint
         *                   ({@link RecoveryCheckpoint}, written by a {@link Checkpointer}) when it
         *                   validates and matches the files, replaying only the files from its
         *                   file number on; otherwise (and if false, the default) replay every file.
         */
        public Builder checkpoint(final boolean checkpoint) {
            this.checkpoint = checkpoint;
            return this;
        }

        /**
         * @param threads creates the parallel scan's thread (role
         *                {@link StreamcacheThreads.Role#RECOVERY_SCAN}); {@link StreamcacheThreads#defaults()} by default.
         * @param owner   the owner named in that thread's name (the log's name).
         */
        public Builder threads(final StreamcacheThreads threads, final String owner) {
            this.threads = Objects.requireNonNull(threads, "threads");
            this.owner = Objects.requireNonNull(owner, "owner");
            return this;
        }

        /**
         * @param memory where the recovered location indexes are built: the store's, which adopts
         *               them. Default: a memory of the recovery's own, given back by the garbage
         *               collector once its indexes are unreachable.
         */
        public Builder locationMemory(final LocationMemory memory) {
            this.locationMemory = Objects.requireNonNull(memory, "memory");
            return this;
        }

        /**
         * @throws IllegalArgumentException if a setting is out of range.
         */
        public LogRecovery build() {
            if (chunkLength < 4 * PAGE_LENGTH || (chunkLength & (PAGE_LENGTH - 1)) != 0) {
                throw new IllegalArgumentException("chunkLength=" + chunkLength + " must be a multiple of " + PAGE_LENGTH
                    + " and at least " + 4 * PAGE_LENGTH);
            }
            if (tornWriteWindow < 0) {
                throw new IllegalArgumentException("tornWriteWindow=" + tornWriteWindow + " must be >= 0");
            }
            return new LogRecovery(this);
        }
    }
}
