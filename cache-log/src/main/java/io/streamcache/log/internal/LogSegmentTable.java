package io.streamcache.log.internal;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.UnsafeBuffer;

import io.streamcache.log.internal.recovery.RecoveredFile;
import io.streamcache.log.internal.recovery.RecoveredSegment;

import java.nio.ByteBuffer;
import java.util.List;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The segment table as the log defines it, and which files hold live data: confined to the
 * aggregating writer's thread (built on the starting thread before the writer thread starts).
 *
 * <p>Updated from records as they become durable (never from requests still in flight), so the
 * SNAPSHOT written at the head of a new file describes exactly the log before it: the segments
 * created and not deleted, their start (truncation) offsets, their lengths (end of their last
 * DATA record) and seals. A store's own view differs from it while requests are in flight
 * (offsets reserved, not yet written), which is why the writer keeps this table rather than ask
 * the store at roll time. It is seeded once from the recovered state (the recovery package's
 * {@code RecoveredLog}, the one model of what recovery found) and then only advanced by durable
 * records: the writer's running table, not a second model of it.
 *
 * <p>A file other than the current one is dead once every segment with data in it is deleted or
 * truncated at or past the end of its data there (data of a segment the table never saw created
 * count as live).
 *
 * <p><b>Layout</b> (no object, name copy or map per segment or per file). The SNAPSHOT
 * is kept encoded by a {@link SnapshotImage}, which every change to a segment updates in place (a
 * create appends an entry, a DATA, TRUNCATE or SEAL rewrites a field, a delete leaves a hole
 * compacted away at the next roll): writing it is one CRC and one write, and the image is also
 * where the table reads a segment's start, length, seal and name. What else the table keeps is
 * rows of primitive columns indexed by segment id ({@link SegmentRows}) and a pool of list nodes
 * ({@link FileDataNodes}):
 * <pre>
 *  rows by id          state                     head
 *                      0: no row                 first node of the segment's live data per file
 *                      1: data, never created    (files in decreasing order: the current file first)
 *                      2 + at: live, SNAPSHOT entry at {@code at} in the image
 *
 *  id 7:  state 2 + 4132 --&gt; image entry: | id 7 | flags | start | length | name length | name |
 *         head ----------&gt; node (file 12, end 90 112) --&gt; node (file 9, end 40 000) --&gt; none
 *
 *  files: file number --&gt; live nodes in it      (a file is dead at 0; one map for all files)
 * </pre>
 * A node exists exactly while it is live: the segment is not deleted and (it was never created or
 * its start is below the node's end). DATA and copies update the current file's node (the head)
 * or push one; TRUNCATE drops the nodes it makes dead, DELETE all of the segment's; each change
 * moves the file's count, so finding the dead files reads one counter per file. Heap: 8 bytes per
 * row (in pages of 1,024 ids, a page dropped with its last row), the map of files; off-heap
 * (direct buffers): the image and the nodes, 20 bytes per node (so that a DATA record that adds
 * a node allocates nothing on the heap).
 *
 * <p>A create or restore of an id the table holds replaces the segment: its nodes are kept where
 * they are live against the new start; nodes a truncation of the replaced segment dropped stay
 * dropped (ids are never reused by the store: this happens only in tests).
 */
final class LogSegmentTable {
    private static final long MISSING = -1;
    /** {@link SegmentRows} state of an id with data but no CREATE. */
    private static final int UNKNOWN = 1;
    /** {@link SegmentRows} state of a live segment: this plus where its entry is in the image. */
    private static final int LIVE = 2;

    /** A segment as the table describes it: a copy, made per call (tests and compaction). */
    static final class Entry {
        final int id;
        final byte[] name;
        final long start;
        final long length;
        final boolean sealed;

        Entry(final int id, final byte[] name, final long start, final long length, final boolean sealed) {
            this.id = id;
            this.name = name;
            this.start = start;
            this.length = length;
            this.sealed = sealed;
        }
    }

    private final SegmentRows rows = new SegmentRows();
    private final FileDataNodes nodes = new FileDataNodes();
    /**
     * The SNAPSHOT of the live segments, encoded and kept up to date with every change, so that a
     * roll writes it without walking 250,000 segments.
     */
    private final SnapshotImage image = new SnapshotImage((id, at) -> rows.state(id, LIVE + at));
    private final long maxPayloadLength;
    /** File number to the number of live nodes in it. */
    private final Long2LongHashMap files = new Long2LongHashMap(MISSING);
    private long currentNumber = -1;

    LogSegmentTable() {
        this(Integer.MAX_VALUE - LogRecordDescriptor.HEADER_LENGTH - LogFileDescriptor.PAGE_LENGTH);
    }

    /** @param maxPayloadLength the longest SNAPSHOT payload that can be written (tests make it short). */
    LogSegmentTable(final long maxPayloadLength) {
        this.maxPayloadLength = maxPayloadLength;
    }

    void restore(final int id, final String name, final long start, final long length, final boolean sealed) {
        put(id, name.getBytes(StandardCharsets.UTF_8), start, length, sealed);
    }

    /**
     * Puts a segment (replacing one of the same id) and its SNAPSHOT entry.
     *
     * @throws IllegalStateException if the image would pass the largest direct buffer (~2 GiB of
     *         SNAPSHOT entries: a SNAPSHOT that could not be written anyway).
     */
    private void put(final int id, final byte[] name, final long start, final long length, final boolean sealed) {
        final int state = rows.state(id);
        final int at = image.add(id, sealed, start, length, name);
        if (state >= LIVE) {
            image.remove(state - LIVE);
        }
        rows.state(id, LIVE + at);
        dropDead(id, start);
    }

    /**
     * Seeds the table at the writer's start with what recovery found: the live segments
     * ({@link #restore}), then every recovered file and its data ends ({@link #file},
     * {@link #fileData}), with the same result as those calls in that order, faster.
     *
     * <p><b>Segment-major</b> (at 250,000 segments and 71 files, 1.1 million data ends
     * made the writer's start a visible part of an open, each {@code fileData} a map lookup, a
     * row and an image entry of a random segment). The data ends are first sorted by segment id
     * (a counting sort: two passes over the ends, the files in order within each id), then each
     * segment's row and image entry is read once, its ends taken in increasing file order (each
     * new node is the list's head: no walk), and each file's count of live nodes is written once.
     * Ids far above the number of ends (a sparse table) take the per-call path.
     */
    void seed(final List<RecoveredSegment> live, final List<RecoveredFile> recoveredFiles) {
        for (final RecoveredSegment segment : live) {
            restore(segment.id(), segment.name(), segment.startOffset(), segment.length(), segment.sealed());
        }
        long total = 0;
        final int[] range = {Integer.MAX_VALUE, -1};
        for (final RecoveredFile file : recoveredFiles) {
            file(file.fileNumber());
            total += file.dataEnds().size();
            file.forEachDataEnd((id, end) -> {
                range[0] = Math.min(range[0], id);
                range[1] = Math.max(range[1], id);
            });
        }
        if (total == 0) {
            return;
        }
        final int maxId = range[1];
        if (range[0] < 0 || total > Integer.MAX_VALUE - 8 || maxId > 4 * total + 4096) {
            for (final RecoveredFile file : recoveredFiles) {
                file.forEachDataEnd((id, end) -> fileData(file.fileNumber(), id, end));
            }
            return;
        }
        // Counting sort of the ends by id: starts[id] .. starts[id + 1] once filled.
        final int[] starts = new int[maxId + 2];
        for (final RecoveredFile file : recoveredFiles) {
            file.forEachDataEnd((id, end) -> starts[id + 1]++);
        }
        for (int id = 0; id <= maxId; id++) {
            starts[id + 1] += starts[id];
        }
        final int[] fileIndex = new int[(int) total];
        final long[] ends = new long[(int) total];
        final int[] cursor = java.util.Arrays.copyOf(starts, maxId + 1);
        for (int f = 0; f < recoveredFiles.size(); f++) {
            final int index = f;
            recoveredFiles.get(f).forEachDataEnd((id, end) -> {
                final int at = cursor[id]++;
                fileIndex[at] = index;
                ends[at] = end;
            });
        }
        final long[] added = new long[recoveredFiles.size()];
        final long[] numbers = new long[recoveredFiles.size()];
        boolean ascending = true;
        for (int f = 0; f < numbers.length; f++) {
            numbers[f] = recoveredFiles.get(f).fileNumber();
            ascending &= f == 0 || numbers[f] > numbers[f - 1];
        }
        for (int id = 0; id <= maxId; id++) {
            final int from = starts[id];
            final int to = starts[id + 1];
            if (from == to) {
                continue;
            }
            int state = rows.state(id);
            if (state == 0) {
                state = UNKNOWN;
                rows.state(id, UNKNOWN);
            }
            if (!ascending || rows.head(id) != 0) {
                // Not the fresh, ordered case: the general insertion.
                for (int i = from; i < to; i++) {
                    addData(id, state, numbers[fileIndex[i]], ends[i]);
                }
                continue;
            }
            final long start = state >= LIVE ? image.startAt(state - LIVE) : Long.MIN_VALUE;
            int head = FileDataNodes.NIL;
            for (int i = from; i < to; i++) {
                if (state >= LIVE && start >= ends[i]) {
                    continue;
                }
                head = nodes.allocate(numbers[fileIndex[i]], ends[i], head);
                added[fileIndex[i]]++;
            }
            rows.head(id, head + 1);
        }
        for (int f = 0; f < numbers.length; f++) {
            if (added[f] > 0) {
                files.put(numbers[f], files.get(numbers[f]) + added[f]);
            }
        }
    }

    /**
     * Registers a file (recovered or new); data are then added with {@link #fileData}.
     */
    void file(final long fileNumber) {
        if (files.get(fileNumber) == MISSING) {
            files.put(fileNumber, 0);
        }
    }

    void fileData(final long fileNumber, final int id, final long end) {
        file(fileNumber);
        int state = rows.state(id);
        if (state == 0) {
            state = UNKNOWN;
            rows.state(id, UNKNOWN);
        }
        addData(id, state, fileNumber, end);
    }

    /**
     * Makes {@code fileNumber} the current file (registering it): records go there from now on.
     */
    void currentFile(final long fileNumber) {
        file(fileNumber);
        currentNumber = fileNumber;
    }

    long currentFileNumber() {
        return currentNumber;
    }

    // ------------------------------------------------------------------------------------------
    // Records
    // ------------------------------------------------------------------------------------------

    void create(final int id, final byte[] name) {
        put(id, name, 0, 0, false);
    }

    void data(final int id, final long end) {
        int state = rows.state(id);
        if (state >= LIVE) {
            final int at = state - LIVE;
            if (image.lengthAt(at) < end) {
                image.length(at, end);
            }
        } else if (state == 0) {
            state = UNKNOWN;
            rows.state(id, UNKNOWN);
        }
        addData(id, state, currentNumber, end);
    }

    /**
     * A compaction copy of a live segment's bytes ending at {@code end} went into the current
     * file: the file holds live data of the segment up to there (the segment's length is unchanged).
     */
    void copy(final int id, final long end) {
        final int state = rows.state(id);
        if (state >= LIVE) {
            addData(id, state, currentNumber, end);
        }
    }

    /**
     * The segment has data up to {@code end} in file {@code fileNumber}: raises the file's node
     * or adds one if the data are live. The list is in decreasing file order, so the current
     * file's node, if any, is the head.
     */
    private void addData(final int id, final int state, final long fileNumber, final long end) {
        final int head = rows.head(id) - 1;
        int previous = FileDataNodes.NIL;
        int node = head;
        while (node != FileDataNodes.NIL && nodes.file(node) > fileNumber) {
            previous = node;
            node = nodes.next(node);
        }
        if (node != FileDataNodes.NIL && nodes.file(node) == fileNumber) {
            if (nodes.end(node) < end) {
                nodes.end(node, end);
            }
            return;
        }
        if (state >= LIVE && image.startAt(state - LIVE) >= end) {
            return;
        }
        final long count = files.get(fileNumber);
        if (count == MISSING) {
            throw new IllegalStateException("file " + fileNumber + " is not registered in the segment table (segment id=" + id + ")");
        }
        final int added = nodes.allocate(fileNumber, end, node);
        if (previous == FileDataNodes.NIL) {
            rows.head(id, added + 1);
        } else {
            nodes.next(previous, added);
        }
        files.put(fileNumber, count + 1);
    }

    /** Drops the segment's nodes whose data end at or before {@code start}. */
    private void dropDead(final int id, final long start) {
        int previous = FileDataNodes.NIL;
        int node = rows.head(id) - 1;
        while (node != FileDataNodes.NIL) {
            final int next = nodes.next(node);
            if (nodes.end(node) <= start) {
                unlink(id, previous, node, next);
            } else {
                previous = node;
            }
            node = next;
        }
    }

    private void unlink(final int id, final int previous, final int node, final int next) {
        if (previous == FileDataNodes.NIL) {
            rows.head(id, next + 1);
        } else {
            nodes.next(previous, next);
        }
        final long fileNumber = nodes.file(node);
        final long count = files.get(fileNumber);
        if (count > 0) {
            files.put(fileNumber, count - 1);
        }
        nodes.free(node);
    }

    /**
     * Forgets a file whose live data were copied elsewhere (compaction retires it), and its nodes:
     * one pass over the rows, on the rare retiring of a file, so that no node outlives its file.
     */
    void removeFile(final long fileNumber) {
        if (files.remove(fileNumber) == MISSING) {
            return;
        }
        rows.forEachHead((id, head) -> {
            int previous = FileDataNodes.NIL;
            int node = head - 1;
            while (node != FileDataNodes.NIL && nodes.file(node) >= fileNumber) {
                final int next = nodes.next(node);
                if (nodes.file(node) == fileNumber) {
                    unlink(id, previous, node, next);
                    if (rows.head(id) == 0 && rows.state(id) == UNKNOWN) {
                        rows.state(id, 0);
                    }
                    return;
                }
                previous = node;
                node = next;
            }
        });
    }

    void seal(final int id) {
        final int state = rows.state(id);
        if (state >= LIVE && !image.sealedAt(state - LIVE)) {
            image.seal(state - LIVE);
        }
    }

    void truncate(final int id, final long start) {
        final int state = rows.state(id);
        if (state >= LIVE && image.startAt(state - LIVE) < start) {
            image.start(state - LIVE, start);
            dropDead(id, start);
        }
    }

    /**
     * Deletes a segment, and forgets its data in every file: they are dead.
     */
    void delete(final int id) {
        final int state = rows.state(id);
        if (state == 0) {
            return;
        }
        if (state >= LIVE) {
            image.remove(state - LIVE);
        }
        int node = rows.head(id) - 1;
        while (node != FileDataNodes.NIL) {
            final int next = nodes.next(node);
            unlink(id, FileDataNodes.NIL, node, next);
            node = next;
        }
        rows.state(id, 0);
    }

    /** @return a copy of the segment's description, or null if it is not live: allocates (tests, compaction). */
    Entry segment(final int id) {
        final int state = rows.state(id);
        if (state < LIVE) {
            return null;
        }
        final int at = state - LIVE;
        return new Entry(id, image.nameAt(at), image.startAt(at), image.lengthAt(at), image.sealedAt(at));
    }

    /** @return whether the segment is live (created, not deleted). */
    boolean contains(final int id) {
        return rows.state(id) >= LIVE;
    }

    /** @return the live segment's start offset; the segment must be live ({@link #contains}). */
    long start(final int id) {
        return image.startAt(liveAt(id));
    }

    /** @return the live segment's length; the segment must be live ({@link #contains}). */
    long length(final int id) {
        return image.lengthAt(liveAt(id));
    }

    private int liveAt(final int id) {
        final int state = rows.state(id);
        if (state < LIVE) {
            throw new IllegalArgumentException("segment id=" + id + " is not in the log's segment table");
        }
        return state - LIVE;
    }

    int segmentCount() {
        return image.count();
    }

    /** @return file nodes in use (tests). */
    int nodeCount() {
        return nodes.live();
    }

    /** @return row pages held (tests). */
    int rowPages() {
        return rows.pages();
    }

    /** @return heap bytes of the rows and the nodes' directories (arrays' contents, headers excluded). */
    long heapBytes() {
        return rows.bytes() + nodes.heapBytes();
    }

    /**
     * @return bytes of the SNAPSHOT image's direct buffer and the file nodes' pages (outside the
     *         cache's capacity; given back when the table is garbage collected).
     */
    long offHeapBytes() {
        return image.capacity() + nodes.offHeapBytes();
    }

    // ------------------------------------------------------------------------------------------
    // Snapshot
    // ------------------------------------------------------------------------------------------

    /**
     * @return the SNAPSHOT payload's length.
     */
    int snapshotPayloadLength() {
        final long length = LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET + image.entriesLength();
        if (length > maxPayloadLength) {
            throw new IllegalStateException("segment table snapshot of length=" + length + " is too long for one record");
        }
        return (int)length;
    }

    /**
     * Writes the SNAPSHOT payload at {@code index}.
     *
     * @return bytes written: {@link #snapshotPayloadLength()}.
     */
    int putSnapshot(final UnsafeBuffer buffer, final int index) {
        snapshotPayloadLength();
        return image.putPayload(buffer, index);
    }

    /**
     * The SNAPSHOT record for file {@code fileNumber}, header, CRC and padding to a page
     * included, in the table's own buffer ({@link SnapshotImage#record}): valid until the next change.
     */
    ByteBuffer snapshotRecord(final long fileNumber, final CRC32C crc) {
        snapshotPayloadLength();
        return image.record(fileNumber, crc);
    }

    SnapshotImage snapshotImage() {
        return image;
    }

    // ------------------------------------------------------------------------------------------
    // Dead files
    // ------------------------------------------------------------------------------------------

    /**
     * Removes the dead files other than the current one from the table and adds their numbers to
     * {@code dead}.
     */
    void takeDeadFiles(final LongArrayList dead) {
        for (final Long2LongHashMap.EntryIterator it = files.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            final long number = it.getLongKey();
            if (number != currentNumber && it.getLongValue() == 0) {
                dead.addLong(number);
                it.remove();
            }
        }
    }

    int fileCount() {
        return files.size();
    }

    boolean hasFile(final long fileNumber) {
        return files.get(fileNumber) != MISSING;
    }
}
