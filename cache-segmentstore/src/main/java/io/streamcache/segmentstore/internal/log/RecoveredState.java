package io.streamcache.segmentstore.internal.log;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What recovery found in a log directory, handed from the {@link RecoveryHook} to the segment
 * store and the aggregating writer: not thread-safe; filled and read on the thread that builds
 * the store, before the writer starts.
 *
 * <ul>
 *   <li>{@link #segment} restores a segment's state without its data: the store creates it with
 *       its id, name and bounds, every byte in {@code [startOffset, length)} a NOT_CACHED gap
 *       (the bytes are in the log); the writer's segment table (for the SNAPSHOT records of the
 *       next files) starts from the same states.</li>
 *   <li>{@link #file} and {@link #fileData} tell the writer which files hold records and the
 *       highest data offset of each segment in each, so it can delete a file once all its data
 *       are dead (truncated or deleted). A file recovery does not register is never deleted by
 *       the writer.</li>
 *   <li>{@link #tail} is where the log continues: the end of the last valid record of the last
 *       file (or a page boundary, if recovery already cut the torn page itself). Before its first
 *       batch the writer zeros, and forces, the span a torn batch may have reached after it
 *       (keeping the valid bytes of the page holding it), so no stale or torn record can follow
 *       the new ones; its first batch then rewrites that page: the same valid bytes, then the new
 *       records.</li>
 * </ul>
 */
public final class RecoveredState {
    /**
     * One segment's recovered state; an immutable value.
     *
     * @param segmentId   the id its records carry.
     * @param name        its name.
     * @param startOffset its first offset still held.
     * @param length      its length (end offset).
     * @param sealed      whether it is sealed.
     */
    public record SegmentState(int segmentId, String name, long startOffset, long length, boolean sealed) {
        public SegmentState {
            Objects.requireNonNull(name, "name");
            if (segmentId <= 0 || startOffset < 0 || length < startOffset) {
                throw new IllegalArgumentException("segmentId=" + segmentId + " startOffset=" + startOffset + " length=" + length
                    + ": need segmentId > 0 and 0 <= startOffset <= length (segment=" + name + ")");
            }
        }
    }

    private final Map<Integer, SegmentState> segments = new LinkedHashMap<>();
    private final TreeMap<Long, Map<Integer, Long>> files = new TreeMap<>();
    private long tailFileNumber;
    private long tailPosition = -1;
    private int nextSegmentId = 1;

    /**
     * Restores (or replaces) a segment's state.
     */
    public void segment(final int segmentId, final String name, final long startOffset, final long length, final boolean sealed) {
        segments.put(segmentId, new SegmentState(segmentId, name, startOffset, length, sealed));
    }

    /**
     * Registers a file that holds records (data or metadata), so the writer may delete it once
     * its data are dead.
     */
    public void file(final long fileNumber) {
        files.computeIfAbsent(fileNumber, n -> new LinkedHashMap<>());
    }

    /**
     * Records that file {@code fileNumber} holds data of the segment up to {@code endOffset}
     * (keeps the highest); registers the file.
     */
    public void fileData(final long fileNumber, final int segmentId, final long endOffset) {
        files.computeIfAbsent(fileNumber, n -> new LinkedHashMap<>()).merge(segmentId, endOffset, Math::max);
    }

    /**
     * Sets where the log continues: {@code position} (8-byte aligned, at least
     * {@link LogFileDescriptor#FIRST_RECORD_POSITION}) is the end of the last valid record of file
     * {@code fileNumber}, the last file holding records.
     */
    public void tail(final long fileNumber, final long position) {
        if (fileNumber <= 0 || position < LogFileDescriptor.FIRST_RECORD_POSITION
            || (position & (LogRecordDescriptor.RECORD_ALIGNMENT - 1)) != 0) {
            throw new IllegalArgumentException("fileNumber=" + fileNumber + " position=" + position + ": need fileNumber > 0 and an "
                + "8-byte aligned position >= " + LogFileDescriptor.FIRST_RECORD_POSITION);
        }
        this.tailFileNumber = fileNumber;
        this.tailPosition = position;
    }

    /**
     * @return the restored segments, in the order restored.
     */
    public List<SegmentState> segments() {
        return Collections.unmodifiableList(new ArrayList<>(segments.values()));
    }

    /**
     * @return the registered files (ascending) with each one's highest data offset per segment.
     */
    public Map<Long, Map<Integer, Long>> files() {
        return Collections.unmodifiableMap(files);
    }

    /**
     * @return whether a tail was set (else the writer starts a new file).
     */
    public boolean hasTail() {
        return tailPosition >= 0;
    }

    public long tailFileNumber() {
        return tailFileNumber;
    }

    public long tailPosition() {
        return tailPosition;
    }

    /**
     * Sets the lowest id new segments may take (recovery knows ids of deleted segments too):
     * new segments take ids from the larger of this and {@link #maxSegmentId()} + 1.
     */
    public void nextSegmentId(final int nextSegmentId) {
        if (nextSegmentId <= 0) {
            throw new IllegalArgumentException("nextSegmentId=" + nextSegmentId + " must be > 0");
        }
        this.nextSegmentId = nextSegmentId;
    }

    /**
     * @return the id the next new segment takes: above every restored id and at least what
     *         {@link #nextSegmentId(int)} set.
     */
    public int nextSegmentId() {
        return Math.max(nextSegmentId, maxSegmentId() + 1);
    }

    /**
     * @return the highest segment id restored, 0 if none: new segments take ids above it.
     */
    public int maxSegmentId() {
        int max = 0;
        for (final int id : segments.keySet()) {
            max = Math.max(max, id);
        }
        return max;
    }

    @Override
    public String toString() {
        return "RecoveredState{segments=" + segments.size() + ", files=" + files.keySet() + ", tail=" + tailFileNumber + ":" + tailPosition + '}';
    }
}
