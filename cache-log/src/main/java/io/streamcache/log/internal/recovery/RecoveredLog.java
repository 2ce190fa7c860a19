package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationRows;
import io.streamcache.log.internal.location.LocationMemory;

import io.streamcache.log.internal.PreparedSegmentTable;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What recovery found in a log directory, an immutable value (its location indexes are
 * thread-safe and meant to be handed over): the segments with their location indexes, the files,
 * where the writer resumes, and what was cut or removed. Built by {@link LogRecovery} from a scan,
 * or by hand through {@link #builder()} (a {@link RecoveryHook} of its own, tests).
 *
 * <h2>The one model of recovered state</h2>
 * The store re-creates its segments from {@link #liveSegments()} and takes new ids from
 * {@link #nextSegmentId()}; the aggregating writer seeds its segment table from the same
 * segments and each file's {@link RecoveredFile#dataEnds()}, and continues the tail
 * ({@link #hasTail()}). There used to be a second, mutable model for that hand-over
 * ({@code RecoveredState}) filled from this one field by field: the same segments and data ends
 * twice, and a place for them to disagree. This class is kept rather than that one because it
 * is the richer (deleted segments, location indexes, where the log was cut, what was removed:
 * what recovery reports and its tests check) and immutable. The writer's {@code LogSegmentTable}
 * is not a third model of it: it is the writer's running table, seeded from this once and then
 * advanced by every durable record (allocation-free maps, confined to the writer thread), and
 * LogReplay's per-segment state is the scan's accumulator that becomes the
 * {@link RecoveredSegment}s.
 *
 * <h2>Resuming</h2>
 * If {@link #tailFileNumber()} is 0 the directory holds no log: the writer creates file
 * {@link #nextFileNumber()} (1) and starts it with a SNAPSHOT. Otherwise it opens file
 * {@link #tailFileNumber()} and writes at {@link #resumePosition()} (a page boundary; everything
 * from there to the end of the file is zeros), or, if that is {@link #tailFileLength()}, rolls to
 * {@link #nextFileNumber()}.
 */
public final class RecoveredLog {
    private final List<RecoveredSegment> segments;
    private final List<RecoveredFile> files;
    private final List<Path> removedFiles;
    private final long tailFileNumber;
    private final long tailFileLength;
    private final long tailEndPosition;
    private final long resumePosition;
    private final long tailZeroEnd;
    private final long nextFileNumber;
    private final long nextSegmentId;
    private final LogCorruptedException truncation;
    private final long bytesRead;
    private final boolean cleanlyClosed;
    private final long tornTailBytes;
    private final boolean hasTail;
    /** The writer's table seeded from this recovery beside the store's restore, until the writer takes it. */
    private final java.util.concurrent.atomic.AtomicReference<PreparedSegmentTable> writerTable =
        new java.util.concurrent.atomic.AtomicReference<>();

    RecoveredLog(final List<RecoveredSegment> segments, final List<RecoveredFile> files, final List<Path> removedFiles,
                 final long tailFileNumber, final long tailFileLength, final long tailEndPosition, final long resumePosition,
                 final long tailZeroEnd, final long nextFileNumber,
                 final long nextSegmentId, final LogCorruptedException truncation, final long bytesRead,
                 final boolean cleanlyClosed, final long tornTailBytes) {
        this.segments = Collections.unmodifiableList(new ArrayList<>(segments));
        this.files = Collections.unmodifiableList(new ArrayList<>(files));
        this.removedFiles = Collections.unmodifiableList(new ArrayList<>(removedFiles));
        this.tailFileNumber = tailFileNumber;
        this.tailFileLength = tailFileLength;
        this.tailEndPosition = tailEndPosition;
        this.resumePosition = resumePosition;
        this.tailZeroEnd = tailZeroEnd;
        this.nextFileNumber = nextFileNumber;
        this.nextSegmentId = nextSegmentId;
        this.truncation = truncation;
        this.bytesRead = bytesRead;
        this.cleanlyClosed = cleanlyClosed;
        this.tornTailBytes = tornTailBytes;
        this.hasTail = tailFileNumber > 0 && resumePosition < tailFileLength;
    }

    /**
     * @return an empty log: no segment, no file; the writer starts file 1.
     */
    public static RecoveredLog empty() {
        return builder().build();
    }

    /**
     * @return a builder for a recovered state made by hand (a recovery hook other than the
     *         scanning one): segments, files with their data ends, the tail.
     */
    /**
     * Hands the writer a segment table seeded from this recovery ({@link PreparedSegmentTable#seed(List, List)}),
     * for the writer started from it to take instead of seeding its own. Replaces one not taken.
     */
    public void prepareWriterTable(final PreparedSegmentTable table) {
        writerTable.set(table);
    }

    /** @return the table {@link #prepareWriterTable} left, once (null if none or already taken). */
    public PreparedSegmentTable takeWriterTable() {
        return writerTable.getAndSet(null);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * @return whether the writer continues the tail file at {@link #tailEndPosition()} (it
     *         rewrites the page holding it); otherwise it starts a new file (there is no log, or
     *         the tail is full).
     */
    public boolean hasTail() {
        return hasTail;
    }

    /**
     * @return whether the log carried a valid clean-close mark: then it was checked to end exactly
     *         where the mark says, and nothing was taken for a torn write.
     */
    public boolean cleanlyClosed() {
        return cleanlyClosed;
    }

    /**
     * @return bytes of a torn tail cut by this recovery (from {@link #tailEndPosition()} to the
     *         end of what was zeroed; 0 if the tail was not torn): never acknowledged, logged at WARN.
     */
    public long tornTailBytes() {
        return tornTailBytes;
    }

    /**
     * @return every segment the log knows, by id: the live ones, and the deleted ones whose
     *         records are in the files (a segment created and deleted in files since deleted is
     *         unknown; a deleted segment's bounds are as last logged).
     */
    public List<RecoveredSegment> segments() {
        return segments;
    }

    /**
     * @return the segments not deleted, by id: those the store re-creates.
     */
    public List<RecoveredSegment> liveSegments() {
        final List<RecoveredSegment> live = new ArrayList<>();
        for (final RecoveredSegment segment : segments) {
            if (!segment.deleted()) {
                live.add(segment);
            }
        }
        return live;
    }

    /**
     * @return the live segment of that name, or null.
     */
    public RecoveredSegment segment(final String name) {
        for (final RecoveredSegment segment : segments) {
            if (!segment.deleted() && segment.name().equals(name)) {
                return segment;
            }
        }
        return null;
    }

    /**
     * @return the log files replayed, oldest first; the last is the tail.
     */
    public List<RecoveredFile> files() {
        return files;
    }

    /**
     * @return the files that may be deleted: every file but the tail whose data are all dead
     *         (truncated, or of deleted segments). Any of them, not only the oldest: the SNAPSHOT
     *         at the head of the next file carries the segment table past the gap (see
     *         {@link LogRecovery}).
     */
    public List<RecoveredFile> deletableFiles() {
        final List<RecoveredFile> deletable = new ArrayList<>();
        for (int i = 0; i < files.size() - 1; i++) {
            if (files.get(i).liveLength() == 0) {
                deletable.add(files.get(i));
            }
        }
        return deletable;
    }

    /**
     * @return files recovery deleted (or, read-only, would have): files after the tail that hold
     *         no record (spares, a roll cut short), and under {@link CorruptionPolicy#TRUNCATE}
     *         the files after the corruption.
     */
    public List<Path> removedFiles() {
        return removedFiles;
    }

    /**
     * @return the number of the file writing resumes in, or 0 if there is none.
     */
    public long tailFileNumber() {
        return tailFileNumber;
    }

    /**
     * @return FILE_LENGTH of the tail file, or 0 if there is none.
     */
    public long tailFileLength() {
        return tailFileLength;
    }

    /**
     * @return where the valid records of the tail file end (8-byte aligned): the first byte
     *         recovery did not accept; 0 if there is no tail.
     */
    public long tailEndPosition() {
        return tailEndPosition;
    }

    /**
     * @return where writing resumes in the tail file: {@link #tailEndPosition()} rounded up to a
     *         page boundary, or the file length if the tail is full; 0 if there is no tail.
     */
    public long resumePosition() {
        return resumePosition;
    }

    /**
     * @return the end of the span after {@link #resumePosition()} that the cut zeroes (so that no
     *         record found there can follow what the writer writes next); equal to
     *         {@link #resumePosition()} if there is nothing to zero. Done by recovery unless
     *         read-only; then the bytes {@code [tailEndPosition, resumePosition)} also need a
     *         PADDING record.
     */
    public long tailZeroEnd() {
        return tailZeroEnd;
    }

    /**
     * @return the number of the next file to create.
     */
    public long nextFileNumber() {
        return nextFileNumber;
    }

    /**
     * @return one more than the highest segment id the log ever used (deleted segments included).
     */
    public long nextSegmentId() {
        return nextSegmentId;
    }

    /**
     * @return under {@link CorruptionPolicy#TRUNCATE}, the corruption the log was cut at (what
     *         {@link CorruptionPolicy#FAIL} would have thrown); null if there was none.
     */
    public LogCorruptedException truncation() {
        return truncation;
    }

    /**
     * @return bytes recovery read from the files.
     */
    public long bytesRead() {
        return bytesRead;
    }

    @Override
    public String toString() {
        return "RecoveredLog{segments=" + segments.size() + ", files=" + files.size() + ", removedFiles=" + removedFiles
            + ", tailFileNumber=" + tailFileNumber + ", tailEndPosition=" + tailEndPosition + ", resumePosition=" + resumePosition
            + ", tailZeroEnd=" + tailZeroEnd + ", nextFileNumber=" + nextFileNumber
            + ", nextSegmentId=" + nextSegmentId + ", truncation=" + truncation + ", cleanlyClosed=" + cleanlyClosed
            + ", tornTailBytes=" + tornTailBytes + '}';
    }

    /**
     * Builds a {@link RecoveredLog} by hand, for a recovery other than {@link LogRecovery}'s; not
     * thread-safe. What such a recovery does not know is zero or empty: files have no path, scan
     * end or counts, only their data ends; segments have empty location indexes (in a
     * {@link LocationMemory} of the builder's, given back by the garbage collector).
     */
    public static final class Builder {
        private LocationMemory memory;
        private final Map<Integer, RecoveredSegment> segments = new LinkedHashMap<>();
        private final TreeMap<Long, Map<Integer, Long>> files = new TreeMap<>();
        private long tailFileNumber;
        private long tailPosition;
        private long nextSegmentId = 1;

        private LocationMemory memory() {
            if (memory == null) {
                memory = new LocationMemory();
            }
            return memory;
        }

        private Builder() {
        }

        /**
         * Restores (or replaces) a live segment.
         *
         * @throws IllegalArgumentException unless {@code segmentId > 0} and {@code 0 <= startOffset <= length}.
         */
        public Builder segment(final int segmentId, final String name, final long startOffset, final long length,
                               final boolean sealed) {
            Objects.requireNonNull(name, "name");
            if (segmentId <= 0 || startOffset < 0 || length < startOffset) {
                throw new IllegalArgumentException("segmentId=" + segmentId + " startOffset=" + startOffset + " length=" + length
                    + ": need segmentId > 0 and 0 <= startOffset <= length (segment=" + name + ")");
            }
            final RecoveredSegment old = segments.put(segmentId, new RecoveredSegment(segmentId, name, startOffset, length, sealed,
                false, startOffset, LocationRows.allocate(memory(), startOffset), memory()));
            if (old != null) {
                LocationRows.free(old.locationMemory(), old.locationsRow());
            }
            return this;
        }

        /**
         * Registers a file that holds records, so the writer may retire it once its data are dead.
         */
        public Builder file(final long fileNumber) {
            files.computeIfAbsent(fileNumber, n -> new LinkedHashMap<>());
            return this;
        }

        /**
         * Records that file {@code fileNumber} holds data of the segment up to {@code endOffset}
         * (keeps the highest); registers the file.
         */
        public Builder fileData(final long fileNumber, final int segmentId, final long endOffset) {
            files.computeIfAbsent(fileNumber, n -> new LinkedHashMap<>()).merge(segmentId, endOffset, Math::max);
            return this;
        }

        /**
         * Sets where the log continues: {@code position} (8-byte aligned, at least
         * {@link LogFileDescriptor#FIRST_RECORD_POSITION}) is the end of the last valid record of
         * file {@code fileNumber}.
         *
         * @throws IllegalArgumentException if the file number or position is out of range.
         */
        public Builder tail(final long fileNumber, final long position) {
            if (fileNumber <= 0 || position < LogFileDescriptor.FIRST_RECORD_POSITION
                || (position & (LogRecordDescriptor.RECORD_ALIGNMENT - 1)) != 0) {
                throw new IllegalArgumentException("fileNumber=" + fileNumber + " position=" + position + ": need fileNumber > 0 and"
                    + " an 8-byte aligned position >= " + LogFileDescriptor.FIRST_RECORD_POSITION);
            }
            this.tailFileNumber = fileNumber;
            this.tailPosition = position;
            return this;
        }

        /**
         * Sets the lowest id new segments may take (a recovery knows ids of deleted segments too);
         * they take ids from the larger of this and the highest segment id + 1.
         *
         * @throws IllegalArgumentException if it is not positive.
         */
        public Builder nextSegmentId(final long nextSegmentId) {
            if (nextSegmentId <= 0) {
                throw new IllegalArgumentException("nextSegmentId=" + nextSegmentId + " must be > 0");
            }
            this.nextSegmentId = nextSegmentId;
            return this;
        }

        public RecoveredLog build() {
            long next = nextSegmentId;
            for (final int id : segments.keySet()) {
                next = Math.max(next, id + 1L);
            }
            final List<RecoveredFile> recoveredFiles = new ArrayList<>();
            files.forEach((number, ends) -> recoveredFiles.add(new RecoveredFile(number, null, 0, ScanEnd.END_OF_FILE, 0, 0, 0, 0,
                ends)));
            final long lastFile = files.isEmpty() ? 0 : files.lastKey();
            // A hand-made tail is always continued: it is "full" only past Long.MAX_VALUE.
            final long tailLength = tailFileNumber > 0 ? Long.MAX_VALUE : 0;
            final long resume = tailFileNumber > 0 ? LogRecordDescriptor.align(tailPosition, LogFileDescriptor.PAGE_LENGTH) : 0;
            return new RecoveredLog(new ArrayList<>(segments.values()), recoveredFiles, List.of(), tailFileNumber, tailLength,
                tailPosition, resume, resume, Math.max(tailFileNumber, lastFile) + 1, next, null, 0, false, 0);
        }
    }
}
