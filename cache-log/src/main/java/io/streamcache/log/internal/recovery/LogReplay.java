package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationRows;
import io.streamcache.log.internal.location.LocationMemory;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;

import org.agrona.collections.Long2LongHashMap;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;

/**
 * The replay half of {@link LogRecovery}: applies every valid record of the files, oldest first,
 * to a per-segment state (bounds, seal, deletion, location index), checks each file's SNAPSHOT
 * against what was replayed before it, and finally yields the {@link RecoveredSegment}s. One
 * thread, once per recovery; {@link LogRecovery} owns the files, the tail and the cut. Applies
 * the records to the segment table; under {@link CorruptionPolicy#FAIL} throws at the
 * first record that breaks a rule, else stops the scan there and keeps the exception.
 */
final class LogReplay implements LogRecordVisitor {
    /** What a file's SNAPSHOT does to the table. */
    enum SnapshotMode {
        /** The oldest file: the table starts from it. */
        APPLY,
        /** A file right after the previous one: it must equal the table replayed so far. */
        CHECK,
        /** A file after a gap: the table re-synchronizes to it. */
        RESYNC
    }

    /**
     * What the records of one segment change besides the segment: the table digest (a sum, so
     * lanes add their deltas) and the file's data ends. The replay's own lane folds its delta
     * into the digest after every record; {@link #applyPartitioned} gives each thread one.
     */
    static final class Lane {
        long digestDelta;
        FileEnds ends;
        final LogRecordView view = new LogRecordView();
        /** The index of the first record that broke a rule in this lane, and why; -1 if none. */
        int failedAt = -1;
        String problem;
    }

    private final Path directory;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LogReplay.class);
    private final CorruptionPolicy corruptionPolicy;
    private final LocationMemory memory;
    /** The lane of the records applied on the replay's thread. */
    private final Lane own = new Lane();
    /** Every segment replayed, live or deleted, by id (dense: no hash probe per record). */
    private final SegmentStates byId = new SegmentStates();
    private Map<String, SegmentState> liveByName = new HashMap<>();
    private final List<SnapshotCodec.Entry> snapshotEntries = new ArrayList<>();
    /** Per file replayed, in order: each segment's DATA end offset in it. */
    final List<FileEnds> fileEnds = new ArrayList<>();
    private FileEnds currentEnds;
    private long fileNumber;
    private Path path;
    private SnapshotMode snapshotMode;
    long maxSegmentId = 0;
    private String snapshotProblem;
    private int snapshotSerial;
    /** {@link TableDigest} of the live segments as replayed so far. */
    private long digest;
    /** SNAPSHOTs checked by their digest alone, and those that needed the exact check. */
    int digestChecks;
    int exactChecks;
    /** Files whose records {@link #applyPartitioned} applied in lanes (or tried to, up to a broken rule). */
    int partitionedFiles;
    LogCorruptedException failure;

    /** Whether a segment whose bytes lay in a file that is gone opens from where the log holds them (WARN). */
    boolean allowMissingFiles;

    /**
     * A replay whose location indexes are in a {@link LocationMemory} of its own, given back to
     * the system by the garbage collector once the replay and its indexes are unreachable (the
     * checkpointer's replays, which it keeps or drops as it goes).
     */
    LogReplay(final Path directory, final CorruptionPolicy corruptionPolicy) {
        this(directory, corruptionPolicy, new LocationMemory());
    }

    /**
     * @param directory        the log directory (for the paths in errors).
     * @param corruptionPolicy under {@link CorruptionPolicy#TRUNCATE} a broken rule stops the scan
     *                         and is kept in {@link #failure}; otherwise it is thrown.
     * @param memory           where the location indexes are built: the store's, which adopts them.
     */
    LogReplay(final Path directory, final CorruptionPolicy corruptionPolicy, final LocationMemory memory) {
        this.directory = directory;
        this.corruptionPolicy = corruptionPolicy;
        this.memory = memory;
    }

    /** Clears every segment's location index: the replay is given up. */
    void clearLocations() {
        byId.forEachInIdOrder(segment -> {
            LocationRows.free(memory, segment.locations);
            segment.locations = 0;
        });
    }

    /** Where this replay's location indexes are. */
    LocationMemory memory() {
        return memory;
    }

    private Path path(final long fileNumber) {
        return directory.resolve(LogFileDescriptor.fileName(fileNumber));
    }

    void beginFile(final long fileNumber, final Path path, final SnapshotMode snapshotMode) {
        this.fileNumber = fileNumber;
        this.path = path;
        this.snapshotMode = snapshotMode;
        this.currentEnds = new FileEnds();
        own.ends = currentEnds;
    }

    void endFile() {
        fileEnds.add(currentEnds);
    }

    @Override
    public boolean onRecord(final LogRecordView record) {
        final String problem = apply(record);
        if (problem == null) {
            return true;
        }
        failure = new LogCorruptedException(path, fileNumber, record.position(), problem);
        if (corruptionPolicy != CorruptionPolicy.TRUNCATE) {
            throw failure;
        }
        return false;
    }

    private String apply(final LogRecordView record) {
        final String problem = apply(record, own);
        digest += own.digestDelta;
        own.digestDelta = 0;
        return problem;
    }

    /**
     * Applies one record. Only DATA (not a copy), SEAL and TRUNCATE may come through a lane other
     * than {@link #own}: they change their own segment, the lane's digest delta and its file ends,
     * nothing else (see {@link #applyPartitioned}).
     */
    private String apply(final LogRecordView record, final Lane lane) {
        final int id = record.segmentId();
        final long offset = record.segmentOffset();
        final SegmentState segment = byId.get(id);
        final boolean live = segment != null && !segment.deleted;
        switch (record.type()) {
            case LogRecordDescriptor.TYPE_SNAPSHOT:
                return snapshot(record);
            case LogRecordDescriptor.TYPE_CREATE: {
                if (live) {
                    return "CREATE of segmentId=" + Integer.toUnsignedString(id) + ", which exists (name=" + segment.name + ")";
                }
                final String name = record.payloadAsString();
                final SegmentState other = liveByName.get(name);
                if (other != null) {
                    return "CREATE of segmentId=" + Integer.toUnsignedString(id) + " name=" + name + ", a name segmentId="
                        + Integer.toUnsignedString(other.id) + " holds";
                }
                put(new SegmentState(id, name, 0, 0, false, fileNumber, memory));
                return null;
            }
            case LogRecordDescriptor.TYPE_DATA: {
                if (record.isCopy()) {
                    return copy(record, segment, live);
                }
                if (!live) {
                    return "DATA of segmentId=" + Integer.toUnsignedString(id) + (segment == null ? ", never created"
                        : ", deleted");
                }
                if (segment.sealed) {
                    return "DATA of segmentId=" + Integer.toUnsignedString(id) + " name=" + segment.name + " after its SEAL";
                }
                if (offset != segment.length) {
                    return "DATA of segmentId=" + Integer.toUnsignedString(id) + " name=" + segment.name + " at offset=" + offset
                        + ", but its length=" + segment.length + " (offsets must be contiguous)";
                }
                if (record.length() > 0) {
                    LocationRows.add(memory, segment.locations, offset, record.length(), fileNumber, record.position());
                    lane.digestDelta -= segment.hash();
                    segment.length += record.length();
                    lane.digestDelta += segment.hash();
                    lane.ends.note(segment, segment.length);
                }
                return null;
            }
            case LogRecordDescriptor.TYPE_SEAL: {
                if (!live) {
                    return "SEAL of segmentId=" + Integer.toUnsignedString(id) + ", which is not live";
                }
                if (offset != segment.length) {
                    return "SEAL of segmentId=" + Integer.toUnsignedString(id) + " name=" + segment.name + " at length=" + offset
                        + ", but its length=" + segment.length;
                }
                lane.digestDelta -= segment.hash();
                segment.sealed = true;
                lane.digestDelta += segment.hash();
                return null;
            }
            case LogRecordDescriptor.TYPE_TRUNCATE: {
                if (!live) {
                    return "TRUNCATE of segmentId=" + Integer.toUnsignedString(id) + ", which is not live";
                }
                if (offset > segment.length) {
                    return "TRUNCATE of segmentId=" + Integer.toUnsignedString(id) + " name=" + segment.name + " to offset="
                        + offset + ", past its length=" + segment.length;
                }
                if (offset > segment.start) {
                    lane.digestDelta -= segment.hash();
                    segment.start = offset;
                    lane.digestDelta += segment.hash();
                    LocationRows.truncate(memory, segment.locations, offset);
                }
                return null;
            }
            case LogRecordDescriptor.TYPE_DELETE: {
                if (!live) {
                    return "DELETE of segmentId=" + Integer.toUnsignedString(id) + ", which is not live";
                }
                delete(segment);
                return null;
            }
            default:
                return "unexpected record type=" + record.type();
        }
    }

    /**
     * Applies the records {@code [from, recordCount())} of a prescanned file in lanes by segment
     * id on {@code workers} (each lane claimed by a free thread), if they allow it; otherwise applies nothing.
     *
     * <p><b>Why it is exact.</b> DATA (not a copy), SEAL and TRUNCATE records change only their
     * own segment's state and index, plus two things every record adds to: the table digest (a
     * sum: each lane keeps its delta) and the file's data ends (each lane its own, merged after).
     * A file whose records are all of these kinds is applied by lanes that each take the records
     * of their segments in log order, so every segment sees exactly the sequence of records it
     * sees in a sequential replay, and the segment states are not added to or removed from while
     * the lanes run (no CREATE, DELETE or SNAPSHOT). A record that breaks a rule is the first in
     * its lane; the first of them in log order is the one the sequential replay throws at, with
     * the same words (they depend on its segment's state only). Records after it in other lanes
     * were applied too, which does not matter: the replay is given up (this runs only when a
     * broken rule throws, not under {@link CorruptionPolicy#TRUNCATE}, which stops at it).
     *
     * @return whether the records were applied (else nothing was, and the caller replays them in order).
     * @throws LogCorruptedException at the first record that breaks a rule, as {@link #onRecord}.
     */
    boolean applyPartitioned(final PrescannedFile file, final int from, final RecoveryWorkers workers, final int lanes) {
        if (lanes < 2 || corruptionPolicy == CorruptionPolicy.TRUNCATE || !file.onlyOwnSegmentRecords(from)) {
            return false;
        }
        partitionedFiles++;
        final Lane[] all = new Lane[lanes];
        for (int k = 0; k < lanes; k++) {
            all[k] = new Lane();
            all[k].ends = new FileEnds(Math.max(64, (file.recordCount() - from) / lanes));
        }
        workers.run(lanes, 1, (chunk, first, end) -> {
            for (int k = first; k < end; k++) {
                final Lane lane = all[k];
                for (int i = from; i < file.recordCount(); i++) {
                    if (Integer.remainderUnsigned(file.segmentId(i), lanes) != k) {
                        continue;
                    }
                    file.view(i, lane.view);
                    final String problem = apply(lane.view, lane);
                    if (problem != null) {
                        lane.failedAt = i;
                        lane.problem = problem;
                        break;
                    }
                }
            }
        });
        Lane failed = null;
        for (final Lane lane : all) {
            digest += lane.digestDelta;
            if (lane.failedAt >= 0 && (failed == null || lane.failedAt < failed.failedAt)) {
                failed = lane;
            }
        }
        if (failed != null) {
            failure = new LogCorruptedException(path, fileNumber, file.position(failed.failedAt), failed.problem);
            throw failure;
        }
        final boolean fresh = currentEnds.size() == 0;
        for (final Lane lane : all) {
            if (fresh) {
                currentEnds.appendDisjoint(lane.ends);
            } else {
                for (int j = 0; j < lane.ends.size(); j++) {
                    currentEnds.note(lane.ends.segment(j), lane.ends.end(j));
                }
            }
        }
        return true;
    }

    /**
     * A compaction copy: the segment's bytes at the copy's offset are read from the copy from
     * now on (the newest copy wins); it does not extend the segment. A copy of a segment that
     * is not live or of bytes truncated away is dead and ignored (the writer may write a copy
     * after a DELETE or TRUNCATE that was not durable yet when it took the copy).
     */
    private String copy(final LogRecordView record, final SegmentState segment, final boolean live) {
        if (!live) {
            return null;
        }
        final long offset = record.segmentOffset();
        final int length = record.length();
        final long end = offset + length;
        if (length <= 0 || end > segment.length) {
            return "copied DATA of segmentId=" + Integer.toUnsignedString(segment.id) + " name=" + segment.name + " at offset="
                + offset + " length=" + length + ", but its length=" + segment.length + " (a copy holds bytes the segment has)";
        }
        if (end <= segment.start) {
            return null;
        }
        if (!LocationRows.relocate(memory, segment.locations, offset, length, fileNumber, record.position())) {
            if (segment.below == null) {
                segment.below = new TreeMap<>();
            }
            segment.below.put(offset, new long[] {length, fileNumber, record.position()});
        }
        currentEnds.note(segment, end);
        return null;
    }

    private String snapshot(final LogRecordView record) {
        if (snapshotMode == SnapshotMode.CHECK) {
            if (matchesDigest(record)) {
                digestChecks++;
                return null;
            }
            exactChecks++;
            if (listsExactlyTheLiveSegments(record)) {
                // The exact check is the authority: a digest that disagrees with it is rebuilt.
                digest = 0;
                for (final SegmentState segment : liveByName.values()) {
                    digest += segment.hash();
                }
                return null;
            }
        }
        snapshotEntries.clear();
        try {
            SnapshotCodec.decode(record.payload(), record.length(),
                (id, sealed, start, length, name) -> snapshotEntries.add(new SnapshotCodec.Entry(id, sealed, start, length, name)));
        } catch (final IllegalArgumentException e) {
            return "malformed SNAPSHOT: " + e.getMessage();
        }
        final Map<Integer, SnapshotCodec.Entry> byEntryId = new HashMap<>();
        final Map<String, SnapshotCodec.Entry> byEntryName = new HashMap<>();
        for (final SnapshotCodec.Entry entry : snapshotEntries) {
            if (byEntryId.put(entry.segmentId(), entry) != null) {
                return "SNAPSHOT lists segmentId=" + Integer.toUnsignedString(entry.segmentId()) + " twice";
            }
            if (byEntryName.put(entry.name(), entry) != null) {
                return "SNAPSHOT lists name=" + entry.name() + " twice";
            }
        }
        return switch (snapshotMode) {
            case APPLY -> {
                for (final SnapshotCodec.Entry entry : snapshotEntries) {
                    put(new SegmentState(entry.segmentId(), entry.name(), entry.startOffset(), entry.length(), entry.sealed(),
                        fileNumber, memory));
                }
                yield null;
            }
            case CHECK -> check(byEntryId);
            case RESYNC -> resync(byEntryId);
        };
    }

    /**
     * The check of a SNAPSHOT against the replayed table by its {@link TableDigest}: decodes the
     * entries in payload order (with the codec's checks), sums their hashes and compares the sum
     * and the count with the table's. Reads only the SNAPSHOT's bytes, sequentially; touches no
     * segment's state.
     *
     * @return whether the SNAPSHOT's digest and count equal the table's (false also if it is malformed).
     */
    private boolean matchesDigest(final LogRecordView record) {
        final long[] sum = snapshotSum;
        sum[0] = 0;
        final int entries;
        try {
            entries = SnapshotCodec.decodeRaw(record.payload(), record.length(),
                (id, sealed, start, length, payload, nameAt, nameLength) -> {
                sum[0] += TableDigest.entry(id, sealed, start, length, TableDigest.nameHash(payload, nameAt, nameLength));
                return true;
            });
        } catch (final IllegalArgumentException e) {
            return false;
        }
        return entries == liveByName.size() && sum[0] == digest;
    }

    private final long[] snapshotSum = new long[1];

    /**
     * The check of a CHECK file's SNAPSHOT by the digest a {@link Prescanner} computed of it: the
     * same comparison as {@link #matchesDigest}, with the decoding done on the prescan's thread.
     *
     * @return whether it matches; if not, the caller scans the file itself, so the SNAPSHOT goes
     *         through {@link #onRecord} and the exact check names the difference.
     */
    boolean snapshotMatches(final PrescannedFile file) {
        if (snapshotMode == SnapshotMode.CHECK && file.snapshotDecoded && file.snapshotEntries == liveByName.size()
            && file.snapshotDigest == digest) {
            digestChecks++;
            return true;
        }
        return false;
    }

    SnapshotMode snapshotMode() {
        return snapshotMode;
    }

    /**
     * The check of a SNAPSHOT against the replayed table, without allocating: every entry must
     * name a distinct live segment with the same name and bounds, and there must be as many
     * entries as live segments. Every file but the first has a SNAPSHOT of the whole table, so
     * with 250,000 segments the map-building check below cost most of an open; it now runs
     * only when this one finds a difference, to name it.
     *
     * @return whether the SNAPSHOT matches (false also if it is malformed).
     */
    private boolean listsExactlyTheLiveSegments(final LogRecordView record) {
        final int serial = ++snapshotSerial;
        final int entries;
        try {
            entries = SnapshotCodec.decodeRaw(record.payload(), record.length(),
                (id, sealed, start, length, payload, nameAt, nameLength) -> {
                final SegmentState segment = byId.get(id);
                if (segment == null || segment.deleted || segment.listedIn == serial || segment.start != start
                    || segment.length != length || segment.sealed != sealed || !segment.nameIs(payload, nameAt, nameLength)) {
                    return false;
                }
                segment.listedIn = serial;
                return true;
            });
        } catch (final IllegalArgumentException e) {
            return false;
        }
        return entries == liveByName.size();
    }

    /**
     * @return null if the SNAPSHOT lists exactly the live segments as replayed, else the first difference.
     */
    private String check(final Map<Integer, SnapshotCodec.Entry> entries) {
        for (final SegmentState segment : liveByName.values()) {
            final SnapshotCodec.Entry entry = entries.get(segment.id);
            if (entry == null) {
                return "SNAPSHOT misses segmentId=" + Integer.toUnsignedString(segment.id) + " name=" + segment.name
                    + ", which the records before it leave live";
            }
            if (!entry.name().equals(segment.name) || entry.startOffset() != segment.start || entry.length() != segment.length
                || entry.sealed() != segment.sealed) {
                return "SNAPSHOT lists " + entry + ", but the records before it leave segmentId="
                    + Integer.toUnsignedString(segment.id) + " name=" + segment.name + " startOffset=" + segment.start
                    + " length=" + segment.length + " sealed=" + segment.sealed;
            }
        }
        if (entries.size() != liveByName.size()) {
            for (final SnapshotCodec.Entry entry : entries.values()) {
                final SegmentState segment = byId.get(entry.segmentId());
                if (segment == null || segment.deleted) {
                    return "SNAPSHOT lists " + entry + ", which the records before it do not leave live";
                }
            }
        }
        return null;
    }

    /**
     * Takes the SNAPSHOT of a file after deleted ones as the table.
     */
    private String resync(final Map<Integer, SnapshotCodec.Entry> entries) {
        for (final SnapshotCodec.Entry entry : snapshotEntries) {
            final SegmentState segment = byId.get(entry.segmentId());
            if (segment != null && !segment.deleted && entry.name().equals(segment.name)
                && (entry.length() < segment.length || entry.startOffset() < segment.start || (segment.sealed && !entry.sealed()))) {
                return "SNAPSHOT lists " + entry + ", behind what the records before it leave: segmentId="
                    + Integer.toUnsignedString(segment.id) + " startOffset=" + segment.start + " length=" + segment.length
                    + " sealed=" + segment.sealed;
            }
        }
        // Checked: now apply, so that a cut here leaves the table as the files before left it.
        for (final SegmentState segment : new ArrayList<>(liveByName.values())) {
            final SnapshotCodec.Entry entry = entries.get(segment.id);
            if (entry == null || !entry.name().equals(segment.name)) {
                delete(segment);
            }
        }
        for (final SnapshotCodec.Entry entry : snapshotEntries) {
            final SegmentState segment = byId.get(entry.segmentId());
            if (segment == null || segment.deleted) {
                put(new SegmentState(entry.segmentId(), entry.name(), entry.startOffset(), entry.length(), entry.sealed(),
                    fileNumber, memory));
                continue;
            }
            digest -= segment.hash();
            if (entry.length() > segment.length) {
                // Keep what the index held: compaction copies may fill the gap up to the new start.
                final SegmentState kept = segment;
                LocationRows.forEach(segment.locations, (offset, length, file, position) -> {
                    if (kept.below == null) {
                        kept.below = new TreeMap<>();
                    }
                    kept.below.put(offset, new long[] {length, file, position});
                });
                LocationRows.free(memory, segment.locations);
                segment.locations = 0;
                segment.locations = LocationRows.allocate(memory, entry.length());
                segment.loggedFrom = entry.length();
                segment.loggedFromFile = fileNumber;
                segment.length = entry.length();
            }
            if (entry.startOffset() > segment.start) {
                segment.start = entry.startOffset();
                LocationRows.truncate(memory, segment.locations, entry.startOffset());
            }
            segment.sealed = entry.sealed();
            digest += segment.hash();
        }
        return null;
    }

    private void put(final SegmentState segment) {
        byId.put(segment);
        liveByName.put(segment.name, segment);
        digest += segment.hash();
        maxSegmentId = Math.max(maxSegmentId, Integer.toUnsignedLong(segment.id));
    }

    private void delete(final SegmentState segment) {
        digest -= segment.hash();
        segment.deleted = true;
        LocationRows.free(memory, segment.locations);
        segment.locations = 0;
        segment.below = null;
        liveByName.remove(segment.name, segment);
    }

    /**
     * Prepends to a segment's index the records before {@code loggedFrom} that compaction
     * copies (or files before a RESYNC) hold, if they cover {@code [start, loggedFrom)} without a
     * gap; otherwise leaves the segment as it is (the caller reports the missing bytes).
     */
    private void fillFromBelow(final SegmentState segment) {
        final Map.Entry<Long, long[]> first = segment.below.floorEntry(segment.start);
        if (first == null || first.getKey() + first.getValue()[0] <= segment.start) {
            return;
        }
        final long index = LocationRows.allocate(memory, first.getKey());
        long at = first.getKey();
        while (at < segment.loggedFrom) {
            final long[] location = segment.below.get(at);
            if (location == null) {
                LocationRows.free(memory, index);
                return;
            }
            LocationRows.add(memory, index, at, (int) location[0], location[1], location[2]);
            at += location[0];
        }
        if (at != segment.loggedFrom) {
            LocationRows.free(memory, index);
            return;
        }
        LocationRows.forEach(segment.locations, (offset, length, file, position) ->
            LocationRows.add(memory, index, offset, length, file, position));
        LocationRows.truncate(memory, index, segment.start);
        LocationRows.free(memory, segment.locations);
        segment.locations = index;
        segment.loggedFrom = first.getKey();
        segment.below = null;
    }

    // ------------------------------------------------------------------------------------------
    // Recovery checkpoint (RecoveryCheckpoint): the state between two files, saved and restored
    // ------------------------------------------------------------------------------------------

    /**
     * Sizes the tables for {@code segments} segments before a checkpoint restores them (no
     * rehashing while 250,000 go in). Only on a replay that holds none yet.
     */
    void reserve(final int segments) {
        if (byId.isEmpty() && liveByName.isEmpty()) {
            byId.reserve(segments);
            liveByName = new HashMap<>(Math.max(16, (int) (segments / 0.75f) + 1));
        }
    }

    /**
     * @return the live segments' states, in no particular order (for writing a checkpoint).
     */
    Iterable<SegmentState> liveStates() {
        return liveByName.values();
    }

    /**
     * @return the live state of segment {@code id}, or null.
     */
    SegmentState liveState(final int id) {
        final SegmentState segment = byId.get(id);
        return segment == null || segment.deleted ? null : segment;
    }

    /**
     * Puts a live segment as a checkpoint saved it: bounds, where its logged bytes begin, its
     * location index and the locations held aside for {@link #finish()}.
     */
    void restoreSegment(final int id, final String name, final long start, final long length, final boolean sealed,
                        final long loggedFrom, final long loggedFromFile, final long locations,
                        final TreeMap<Long, long[]> below) {
        final SegmentState segment = new SegmentState(id, name, start, length, sealed, loggedFromFile, memory);
        LocationRows.free(memory, segment.locations);
        segment.loggedFrom = loggedFrom;
        segment.locations = locations;
        segment.below = below;
        put(segment);
    }

    /**
     * @param maxSegmentId the highest segment id the checkpointed files ever used (deleted ones included).
     */
    void restoreMaxSegmentId(final long maxSegmentId) {
        this.maxSegmentId = Math.max(this.maxSegmentId, maxSegmentId);
    }

    /**
     * What {@link #finish} yields: every segment in id order, and per file the bytes of live
     * segments located in it.
     *
     * @param segments    the segments (live and deleted), in unsigned id order.
     * @param liveLengths per file number, the live bytes located in it (in a one-element array).
     */
    record Finished(List<RecoveredSegment> segments, Map<Long, long[]> liveLengths) {
    }

    /** {@link #finish(RecoveryWorkers, int)} on the calling thread alone. */
    Finished finish() {
        return finish(new RecoveryWorkers(null, null, 1), 1);
    }

    /**
     * Completes every segment (locations held aside put back, the check that its bytes from its
     * start are in the files, its index trimmed) and counts the live bytes per file, in chunks of
     * segments on {@code workers}: each segment is its own, so the chunks share nothing but the
     * (thread-safe) location memory. Deterministic: the segments come out in id order, the counts
     * are sums, and a segment whose bytes are missing throws the error of the first such segment
     * in id order, as a sequential loop would.
     */
    Finished finish(final RecoveryWorkers workers, final int minChunk) {
        // In id order straight from the dense table: no sort.
        final SegmentState[] states = byId.toArrayInIdOrder();
        final RecoveredSegment[] segments = new RecoveredSegment[states.length];
        final Long2LongHashMap[] live = new Long2LongHashMap[Math.max(1, workers.chunks(states.length, minChunk))];
        workers.run(states.length, minChunk, (chunk, from, to) -> {
            final Long2LongHashMap counts = new Long2LongHashMap(0);
            final LiveCounter counter = new LiveCounter(counts);
            for (int i = from; i < to; i++) {
                final SegmentState segment = states[i];
                segments[i] = finish(segment);
                if (!segment.deleted) {
                    counter.start = segment.start;
                    LocationRows.forEach(segment.locations, counter);
                }
            }
            counter.flush();
            live[chunk] = counts;
        });
        final Map<Long, long[]> liveLengths = new HashMap<>();
        for (final Long2LongHashMap counts : live) {
            if (counts != null) {
                counts.forEachLong((file, bytes) -> liveLengths.computeIfAbsent(file, n -> new long[1])[0] += bytes);
            }
        }
        return new Finished(java.util.Arrays.asList(segments), liveLengths);
    }

    private RecoveredSegment finish(final SegmentState segment) {
        if (!segment.deleted && segment.start < segment.loggedFrom && segment.below != null) {
            fillFromBelow(segment);
        }
        if (!segment.deleted && segment.start < segment.loggedFrom && allowMissingFiles) {
            LOG.warn("Log {}: segmentId={} name={} opens from offset={}, not its startOffset={}: its bytes before it were in a"
                + " file that is gone (allowMissingFiles)", directory, Integer.toUnsignedString(segment.id), segment.name,
                segment.loggedFrom, segment.start);
            segment.start = segment.loggedFrom;
        }
        if (!segment.deleted && segment.start < segment.loggedFrom) {
            throw new LogCorruptedException(path(segment.loggedFromFile), segment.loggedFromFile, FIRST_RECORD_POSITION,
                "segmentId=" + Integer.toUnsignedString(segment.id) + " name=" + segment.name + " holds offsets from startOffset="
                    + segment.start + ", but the log holds its bytes only from offset=" + segment.loggedFrom
                    + " (this file's SNAPSHOT; the files before it are gone): a file was deleted while its data were live");
        }
        LocationRows.trimToSize(memory, segment.locations);
        return new RecoveredSegment(segment.id, segment.name, segment.start, segment.length, segment.sealed,
            segment.deleted, segment.loggedFrom, segment.locations, memory);
    }

    /**
     * Sums the live bytes of a chunk's segments per file. A segment's consecutive records mostly
     * lie in one file: the running file's sum is kept aside, so the map is touched once per run
     * of records in one file, not per record.
     */
    private static final class LiveCounter implements LocationIndex.RecordVisitor {
        private final Long2LongHashMap counts;
        long start;
        private long file = -1;
        private long bytes;

        LiveCounter(final Long2LongHashMap counts) {
            this.counts = counts;
        }

        @Override
        public void onRecord(final long offset, final int length, final long fileNumber, final long position) {
            final long liveLength = offset + length - Math.max(offset, start);
            if (liveLength > 0) {
                if (fileNumber != file) {
                    flush();
                    file = fileNumber;
                }
                bytes += liveLength;
            }
        }

        void flush() {
            if (bytes > 0) {
                counts.put(file, counts.get(file) + bytes);
            }
            bytes = 0;
        }
    }
}
