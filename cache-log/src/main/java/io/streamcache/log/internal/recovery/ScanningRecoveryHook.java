package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationMemory;

import io.streamcache.core.StreamcacheThreads;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The default {@link RecoveryHook} of a segment store with a log, not thread-safe: used once, on
 * the thread that builds the store ({@link #scan} before the {@link LogDirectory} opens, then
 * {@link #recover}); the location indexes it hands over are thread-safe. It runs a
 * {@link LogRecovery} scan and hands its {@link RecoveredLog} over, keeping each live segment's
 * {@link LocationIndex} for historical reads.
 *
 * <h2>Recovery procedure</h2>
 * <ol>
 *   <li><b>Scan and repair, before the directory opens</b> ({@link #scan(LogConfig)}): a
 *       {@link LogRecovery} with this hook's {@link CorruptionPolicy} and a torn-write window
 *       derived from the durability policy ({@link #tornWriteWindow(LogConfig)}: one batch plus
 *       a page when every batch is forced, since only the last, unforced, write can be torn;
 *       the whole file length (at least 8 MiB) when batches are forced at an interval or never,
 *       since any write not yet forced can be lost). It lists the files, finds the tail, replays
 *       every record oldest file first (SNAPSHOT, CREATE, DATA, SEAL, TRUNCATE, DELETE), judges
 *       how each file ends, checks that every live segment's bytes are all in the files, then
 *       cuts the tail at its first invalid byte (a PADDING record to the page boundary, zeros
 *       after it, a force) and deletes the empty files after the tail. Run first because it
 *       deletes files: the directory must list only what is left.</li>
 *   <li><b>Corruption</b>: bytes a torn write cannot explain (an invalid record with valid
 *       records after it beyond the window, a damaged file before the tail, a record that
 *       breaks a segment's history) throw a {@link LogCorruptedException} naming the file and
 *       position under {@link CorruptionPolicy#FAIL} (the default; nothing on disk changes and
 *       the store is not built), or cut the log there under {@link CorruptionPolicy#TRUNCATE}
 *       ({@link RecoveredLog#truncation()} reports it).</li>
 *   <li><b>Segments</b> ({@link #recover} returns the scan's {@link RecoveredLog}): the store
 *       re-creates each of {@link RecoveredLog#liveSegments()} with its bytes
 *       {@code [startOffset, length)} as NOT_CACHED gaps, and new segments take ids from
 *       {@link RecoveredLog#nextSegmentId()} (above every id the log ever used, deleted ones
 *       included); the writer's segment table starts from the same segments.</li>
 *   <li><b>Files</b>: the writer registers every replayed file with the end of each segment's
 *       data in it ({@link RecoveredFile#dataEnds()}), so it retires a file once all its data
 *       are dead.</li>
 *   <li><b>Tail</b>: the writer continues file {@link RecoveredLog#tailFileNumber()} at
 *       {@link RecoveredLog#tailEndPosition()} (it rewrites the page holding it: the same valid
 *       bytes, then the new records), or rolls to a new file when the tail is full
 *       ({@code resumePosition == tailFileLength}) or there is no log yet.</li>
 *   <li><b>Locations</b>: the per-segment location indexes (segment offset to file position,
 *       one entry per DATA record) are handed to the store by {@link #locations()}; from then on
 *       the store feeds them from the writer's {@code LogRecordListener} as records become
 *       durable, and historical reads use them to read evicted or never-cached bytes back.</li>
 * </ol>
 */
public final class ScanningRecoveryHook implements RecoveryHook {
    private final CorruptionPolicy corruptionPolicy;
    private RecoveredLog recoveredLog;
    private Map<Integer, LocationIndex> locations = Collections.emptyMap();
    /** Where the scan builds the location indexes; null: a memory of the scan's own. */
    private LocationMemory locationMemory;

    /**
     * @param corruptionPolicy what to do with corruption before the tail.
     */
    public ScanningRecoveryHook(final CorruptionPolicy corruptionPolicy) {
        this.corruptionPolicy = Objects.requireNonNull(corruptionPolicy, "corruptionPolicy");
    }

    /**
     * @return the torn-write window for a log written with {@code config}: the longest write
     *         (a batch, or a page and the longest append) plus a page when every batch is forced; otherwise the larger of the file length and
     *         {@link LogScanner#TORN_WRITE_WINDOW_DEFAULT}.
     */
    public static long tornWriteWindow(final LogConfig config) {
        if (config.durability().kind() == DurabilityPolicy.Kind.EVERY_BATCH) {
            // One batch, or one long append written with the records before it (see AggregatingWriter).
            final long longRecord = LogRecordDescriptor.align(LogRecordDescriptor.alignedLength(config.maxAppendLength()),
                LogFileDescriptor.PAGE_LENGTH);
            return Math.max(config.batchLength(), longRecord) + LogFileDescriptor.PAGE_LENGTH;
        }
        return Math.max(config.fileLength(), LogScanner.TORN_WRITE_WINDOW_DEFAULT);
    }

    /**
     * Scans and repairs the log in {@code config.directory()} (step 1 of the procedure); call it
     * before a {@link LogDirectory} is opened on the directory. A missing or empty directory
     * yields an empty log.
     *
     * @throws LogCorruptedException under {@link CorruptionPolicy#FAIL} if the log is corrupt;
     *                               always if a live segment's bytes are missing.
     * @throws IOException           if the files cannot be read or repaired.
     */
    public RecoveredLog scan(final LogConfig config) throws IOException {
        return scan(config, StreamcacheThreads.defaults(), config.name() != null ? config.name() : "log");
    }

    /**
     * Scans and repairs like {@link #scan(LogConfig)}, with the thread that reads files ahead of
     * the replay made by {@code threads} (role {@link StreamcacheThreads.Role#RECOVERY_SCAN}, for
     * {@code owner}: the store's name).
     */
    public RecoveredLog scan(final LogConfig config, final StreamcacheThreads threads, final String owner) throws IOException {
        Objects.requireNonNull(config, "config");
        final RecoveredLog log = LogRecovery.builder(config.directory())
            .corruptionPolicy(corruptionPolicy)
            .allowMissingFiles(config.allowMissingFiles())
            .tornWriteWindow(tornWriteWindow(config))
            .checkpoint(config.checkpointFiles() > 0)
            .threads(threads, owner)
            .locationMemory(locationMemory != null ? locationMemory : new LocationMemory())
            .build()
            .recover();
        this.recoveredLog = log;
        // The map by id is built when asked for (the store takes the indexes from the live segments).
        this.locations = null;
        return log;
    }

    /**
     * Has the next {@link #scan} build the location indexes in {@code memory} (the store's, which
     * adopts them and gives the memory back at its close) instead of a memory of its own.
     */
    public void locationMemory(final LocationMemory memory) {
        this.locationMemory = Objects.requireNonNull(memory, "memory");
    }

    /**
     * @return the scan's result (steps 3 to 5 read it: {@link RecoveredLog} is what the store and
     *         the writer start from).
     * @throws IllegalStateException if {@link #scan} was not called first.
     */
    @Override
    public RecoveredLog recover(final LogDirectory directory) {
        final RecoveredLog log = recoveredLog;
        if (log == null) {
            throw new IllegalStateException("scan(LogConfig) must run before recover(directory=" + (directory != null ? directory.path() : null)
                + "): it repairs files, so it runs before the directory opens");
        }
        return log;
    }

    /**
     * @return the scan's result, or null before {@link #scan}.
     */
    public RecoveredLog recoveredLog() {
        return recoveredLog;
    }

    /**
     * @return every live segment's location index by segment id (empty before {@link #scan}).
     */
    public Map<Integer, LocationIndex> locations() {
        if (locations == null) {
            final Map<Integer, LocationIndex> byId = new HashMap<>();
            for (final RecoveredSegment segment : recoveredLog.liveSegments()) {
                byId.put(segment.id(), segment.locations());
            }
            locations = byId;
        }
        return Collections.unmodifiableMap(locations);
    }

    public CorruptionPolicy corruptionPolicy() {
        return corruptionPolicy;
    }

    @Override
    public String toString() {
        return "ScanningRecoveryHook{corruptionPolicy=" + corruptionPolicy + ", recoveredLog=" + recoveredLog + '}';
    }
}
