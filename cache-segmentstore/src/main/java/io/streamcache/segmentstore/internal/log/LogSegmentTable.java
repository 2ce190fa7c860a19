package io.streamcache.segmentstore.internal.log;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
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
 * records: the writer's running table, with allocation-free maps, not a second model of it.
 *
 * <p>Per file it keeps the highest data end offset per segment; a file other than the current
 * one is dead once every segment with data in it is deleted or truncated at or past that offset
 * (data of a segment the table never saw created count as live).
 *
 * <p>The SNAPSHOT itself is kept encoded by a {@link SnapshotImage}, which every change to a
 * segment updates in place (a create appends an entry, a DATA, TRUNCATE or SEAL rewrites a field,
 * a delete leaves a hole compacted away at the next roll): writing it is one CRC and one write.
 */
final class LogSegmentTable {
    private static final long MISSING = -1;

    /** One segment. */
    static final class Entry {
        final int id;
        final byte[] name;
        long start;
        long length;
        boolean sealed;
        /** Where its entry is in the {@link SnapshotImage}. */
        int imageAt;

        Entry(final int id, final byte[] name) {
            this.id = id;
            this.name = name;
        }
    }

    private final Int2ObjectHashMap<Entry> segments = new Int2ObjectHashMap<>();
    /**
     * The SNAPSHOT of {@link #segments}, encoded and kept up to date with every change, so that a
     * roll writes it without walking 250,000 segments (issue 14).
     */
    private final SnapshotImage image = new SnapshotImage((id, at) -> segments.get(id).imageAt = at);
    /**
     * Whether {@link #image} holds every segment: false once the SNAPSHOT grew past
     * {@link #maxPayloadLength} (it could not be written anyway; the image is dropped rather than
     * grown without bound), until {@link #snapshotPayloadLength} finds it fits again and rebuilds it.
     */
    private boolean imageBuilt = true;
    /** Sum of the SNAPSHOT entry lengths of {@link #segments}, image or not. */
    private long snapshotEntriesLength;
    private final long maxPayloadLength;
    /** File number to (segment id to highest data end offset). */
    private final Long2ObjectHashMap<Long2LongHashMap> files = new Long2ObjectHashMap<>();
    private Long2LongHashMap current;
    private long currentNumber = -1;

    LogSegmentTable() {
        this(Integer.MAX_VALUE - LogRecordDescriptor.HEADER_LENGTH - LogFileDescriptor.PAGE_LENGTH);
    }

    /** @param maxPayloadLength the longest SNAPSHOT payload that can be written (tests make it short). */
    LogSegmentTable(final long maxPayloadLength) {
        this.maxPayloadLength = maxPayloadLength;
    }

    void restore(final int id, final String name, final long start, final long length, final boolean sealed) {
        final Entry entry = new Entry(id, name.getBytes(StandardCharsets.UTF_8));
        entry.start = start;
        entry.length = length;
        entry.sealed = sealed;
        put(entry);
    }

    /** Puts an entry (replacing one of the same id) and its SNAPSHOT entry. */
    private void put(final Entry entry) {
        final Entry replaced = segments.put(entry.id, entry);
        snapshotEntriesLength += LogFileDescriptor.snapshotEntryLength(entry.name.length);
        if (replaced != null) {
            snapshotEntriesLength -= LogFileDescriptor.snapshotEntryLength(replaced.name.length);
        }
        if (!imageBuilt) {
            return;
        }
        if (replaced != null) {
            image.remove(replaced.imageAt);
        }
        if (LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET + snapshotEntriesLength > maxPayloadLength) {
            image.clear();
            imageBuilt = false;
            return;
        }
        entry.imageAt = image.add(entry.id, entry.sealed, entry.start, entry.length, entry.name);
    }

    /**
     * Registers a file (recovered or new); data are then added with {@link #fileData}.
     */
    void file(final long fileNumber) {
        if (files.get(fileNumber) == null) {
            files.put(fileNumber, new Long2LongHashMap(MISSING));
        }
    }

    void fileData(final long fileNumber, final int id, final long end) {
        file(fileNumber);
        final Long2LongHashMap data = files.get(fileNumber);
        if (data.get(id) < end) {
            data.put(id, end);
        }
    }

    /**
     * Makes {@code fileNumber} the current file (registering it): records go there from now on.
     */
    void currentFile(final long fileNumber) {
        file(fileNumber);
        current = files.get(fileNumber);
        currentNumber = fileNumber;
    }

    long currentFileNumber() {
        return currentNumber;
    }

    // ------------------------------------------------------------------------------------------
    // Records
    // ------------------------------------------------------------------------------------------

    void create(final int id, final byte[] name) {
        put(new Entry(id, name));
    }

    void data(final int id, final long end) {
        final Entry entry = segments.get(id);
        if (entry != null && entry.length < end) {
            entry.length = end;
            if (imageBuilt) {
                image.length(entry.imageAt, end);
            }
        }
        if (current.get(id) < end) {
            current.put(id, end);
        }
    }

    /**
     * A compaction copy of a live segment's bytes ending at {@code end} went into the current
     * file: the file holds live data of the segment up to there (the segment's length is unchanged).
     */
    void copy(final int id, final long end) {
        if (segments.get(id) != null && current.get(id) < end) {
            current.put(id, end);
        }
    }

    /**
     * Forgets a file whose live data were copied elsewhere (compaction retires it).
     */
    void removeFile(final long fileNumber) {
        files.remove(fileNumber);
    }

    void seal(final int id) {
        final Entry entry = segments.get(id);
        if (entry != null && !entry.sealed) {
            entry.sealed = true;
            if (imageBuilt) {
                image.seal(entry.imageAt);
            }
        }
    }

    void truncate(final int id, final long start) {
        final Entry entry = segments.get(id);
        if (entry != null && entry.start < start) {
            entry.start = start;
            if (imageBuilt) {
                image.start(entry.imageAt, start);
            }
        }
    }

    /**
     * Deletes a segment, and forgets its data in every file: they are dead.
     */
    void delete(final int id) {
        final Entry removed = segments.remove(id);
        if (removed != null) {
            snapshotEntriesLength -= LogFileDescriptor.snapshotEntryLength(removed.name.length);
            if (imageBuilt) {
                image.remove(removed.imageAt);
            }
        }
        for (final Long2LongHashMap data : files.values()) {
            data.remove(id);
        }
    }

    Entry segment(final int id) {
        return segments.get(id);
    }

    int segmentCount() {
        return segments.size();
    }

    // ------------------------------------------------------------------------------------------
    // Snapshot
    // ------------------------------------------------------------------------------------------

    /**
     * @return the SNAPSHOT payload's length.
     */
    int snapshotPayloadLength() {
        final long length = LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET + snapshotEntriesLength;
        if (length > maxPayloadLength) {
            throw new IllegalStateException("segment table snapshot of length=" + length + " is too long for one record");
        }
        if (!imageBuilt) {
            // Deletes brought a table too long for a record back under the limit: encode it again, once.
            for (final Entry entry : segments.values()) {
                entry.imageAt = image.add(entry.id, entry.sealed, entry.start, entry.length, entry.name);
            }
            imageBuilt = true;
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
        for (final Long2ObjectHashMap<Long2LongHashMap>.EntryIterator it = files.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            final long number = it.getLongKey();
            if (number != currentNumber && isDead(it.getValue())) {
                dead.addLong(number);
                it.remove();
            }
        }
    }

    private boolean isDead(final Long2LongHashMap data) {
        for (final Long2LongHashMap.EntryIterator it = data.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            // A segment the table does not know (data written without a CREATE) counts as live:
            // a deleted segment's data were forgotten by delete().
            final Entry entry = segments.get((int)it.getLongKey());
            if (entry == null || entry.start < it.getLongValue()) {
                return false;
            }
        }
        return true;
    }

    int fileCount() {
        return files.size();
    }

    boolean hasFile(final long fileNumber) {
        return files.get(fileNumber) != null;
    }
}
