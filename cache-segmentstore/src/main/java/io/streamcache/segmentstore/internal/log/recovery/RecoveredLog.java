package io.streamcache.segmentstore.internal.log.recovery;

import io.streamcache.segmentstore.log.CorruptionPolicy;
import io.streamcache.segmentstore.log.LogCorruptedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What {@link LogRecovery} rebuilt from a log directory, an immutable value (its location
 * indexes are thread-safe and meant to be handed over): the segments with their location
 * indexes, the files, where the writer resumes, and what was cut or removed.
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
}
