package io.streamcache.log.internal;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_COUNT_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_FLAGS_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_FLAG_SEALED;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_LENGTH_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_NAME_LENGTH_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_NAME_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_SEGMENT_ID_OFFSET;
import static io.streamcache.log.internal.LogFileDescriptor.SNAPSHOT_START_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.CRC_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.PADDING_HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_SNAPSHOT;
import static io.streamcache.log.internal.LogRecordDescriptor.align;
import static io.streamcache.log.internal.LogRecordDescriptor.alignedLength;

/**
 * The SNAPSHOT record of the writer's segment table, kept encoded off-heap and up to date entry
 * by entry, so that writing it at the head of a new file is a header, a CRC and one write, not
 * an encode of every live segment (with 250,000 segments the encode was ~70% of the
 * writer thread's CPU). Confined to the writer's thread, like {@link LogSegmentTable}, which
 * owns it and tells it every change.
 *
 * <p>The buffer holds the record exactly as {@link LogFileDescriptor} lays it out, from the
 * record header on; each live segment's entry is encoded once when it is created (or restored)
 * and its START, LENGTH and FLAGS are then rewritten in place. A deleted segment's entry stays
 * as a hole (marked with {@link #HOLE} in its in-memory FLAGS, never written out) until the next
 * {@link #record}, which first moves the entries after the first hole down over the holes
 * (telling the table each moved entry's new place) so that the entries are contiguous again.
 * The entries' order is creation order, not the table's: recovery matches a SNAPSHOT's entries
 * by id and name (and digests them order-free), so the order carries no meaning.
 * <pre>
 *  buffer (page-aligned, direct):
 *  +---------------+-----------+---------+------+---------+-----+------------------------+
 *  | record header | COUNT u32 | entry 0 | hole | entry 2 | ... | free (capacity - end)  |
 *  | (24 bytes)    |           |         |      |         |     |                        |
 *  +---------------+-----------+---------+------+---------+-----+------------------------+
 *  0               24          28 = ENTRIES_AT                  end
 *
 *  record(): compact holes away, then
 *  +---------------+-----------+---------+---------+-----+-------+-----------+----------+
 *  | header + CRC  | COUNT     | entry 0 | entry 2 | ... | 0 x 4 | PADDING   | zeros    |
 *  +---------------+-----------+---------+---------+-----+-------+-----------+----------+
 *  0                                                     end     ^ aligned   ^ page end = record length
 * </pre>
 * Memory: the encoded table (one entry per live segment plus holes until the next roll),
 * rounded up to a power of two; the buffer grows by doubling and never shrinks.
 */
final class SnapshotImage {
    /** In-memory FLAGS bit of a deleted segment's entry (never in a written SNAPSHOT). */
    static final int HOLE = 0x8000_0000;
    /** Where the first entry starts in the buffer: after the record header and COUNT. */
    static final int ENTRIES_AT = HEADER_LENGTH + SNAPSHOT_ENTRIES_OFFSET;
    private static final int INITIAL_CAPACITY = 64 * 1024;

    /** Told where an entry moved when holes are compacted away. */
    @FunctionalInterface
    interface MoveListener {
        void moved(int segmentId, int newAt);
    }

    private final MoveListener moves;
    private ByteBuffer bytes;
    private UnsafeBuffer buffer;
    /** End of the last entry (holes included). */
    private int end = ENTRIES_AT;
    private int count;
    private long holeBytes;
    /** Position of the first hole, or {@link Integer#MAX_VALUE} if none. */
    private int firstHole = Integer.MAX_VALUE;
    private int compactions;

    SnapshotImage(final MoveListener moves) {
        this.moves = moves;
        allocate(INITIAL_CAPACITY);
    }

    private void allocate(final int capacity) {
        final ByteBuffer grown = BufferUtil.allocateDirectAligned(capacity, PAGE_LENGTH);
        final UnsafeBuffer view = new UnsafeBuffer(grown);
        if (buffer != null) {
            view.putBytes(0, buffer, 0, end);
        }
        bytes = grown;
        buffer = view;
    }

    private void ensureCapacity(final long needed) {
        if (needed > buffer.capacity()) {
            if (needed > Integer.MAX_VALUE - PAGE_LENGTH) {
                throw new IllegalStateException("segment table snapshot of length=" + needed + " is too long for one record");
            }
            long capacity = buffer.capacity();
            while (capacity < needed) {
                capacity = Math.min(capacity * 2, (Integer.MAX_VALUE - PAGE_LENGTH) & -(long)PAGE_LENGTH);
            }
            allocate((int)capacity);
        }
    }

    /**
     * Appends a live segment's entry.
     *
     * @return where it starts: pass it to the setters and to {@link #remove}.
     */
    int add(final int segmentId, final boolean sealed, final long start, final long length, final byte[] name) {
        final int entryLength = LogFileDescriptor.snapshotEntryLength(name.length);
        ensureCapacity((long)end + entryLength);
        final int at = end;
        LogFileDescriptor.putSnapshotEntry(buffer, at, segmentId, sealed, start, length, name);
        end = at + entryLength;
        count++;
        return at;
    }

    void length(final int at, final long length) {
        buffer.putLong(at + SNAPSHOT_LENGTH_OFFSET, length, ByteOrder.LITTLE_ENDIAN);
    }

    void start(final int at, final long start) {
        buffer.putLong(at + SNAPSHOT_START_OFFSET, start, ByteOrder.LITTLE_ENDIAN);
    }

    void seal(final int at) {
        buffer.putInt(at + SNAPSHOT_FLAGS_OFFSET, SNAPSHOT_FLAG_SEALED, ByteOrder.LITTLE_ENDIAN);
    }

    long startAt(final int at) {
        return buffer.getLong(at + SNAPSHOT_START_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    long lengthAt(final int at) {
        return buffer.getLong(at + SNAPSHOT_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    boolean sealedAt(final int at) {
        return (buffer.getInt(at + SNAPSHOT_FLAGS_OFFSET, ByteOrder.LITTLE_ENDIAN) & SNAPSHOT_FLAG_SEALED) != 0;
    }

    /** @return a copy of the UTF-8 name of the entry at {@code at}. */
    byte[] nameAt(final int at) {
        final byte[] name = new byte[buffer.getInt(at + SNAPSHOT_NAME_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN)];
        buffer.getBytes(at + SNAPSHOT_NAME_OFFSET, name);
        return name;
    }

    /** @return bytes of the direct buffer (off-heap: given back when the image is garbage collected, with its writer). */
    int capacity() {
        return buffer == null ? 0 : buffer.capacity();
    }

    /** The segment at {@code at} is gone: its entry becomes a hole until the next compaction. */
    void remove(final int at) {
        buffer.putInt(at + SNAPSHOT_FLAGS_OFFSET, HOLE, ByteOrder.LITTLE_ENDIAN);
        holeBytes += entryLength(at);
        firstHole = Math.min(firstHole, at);
        count--;
    }

    private int entryLength(final int at) {
        return LogFileDescriptor.snapshotEntryLength(buffer.getInt(at + SNAPSHOT_NAME_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN));
    }

    /** Forgets every entry and gives the buffer back (the table stops keeping an image). */
    void clear() {
        buffer = null;
        bytes = null;
        end = ENTRIES_AT;
        count = 0;
        holeBytes = 0;
        firstHole = Integer.MAX_VALUE;
        allocate(INITIAL_CAPACITY);
    }

    int count() {
        return count;
    }

    /** @return bytes of the live entries (the payload is {@link LogFileDescriptor#SNAPSHOT_ENTRIES_OFFSET} more). */
    long entriesLength() {
        return end - ENTRIES_AT - holeBytes;
    }

    /** @return compactions so far (tests). */
    int compactions() {
        return compactions;
    }

    /**
     * Moves the live entries after the first hole down over the holes, in order, telling the
     * listener each moved entry's new place. A run of live entries moves with one copy.
     */
    void compact() {
        if (holeBytes == 0) {
            return;
        }
        int to = firstHole;
        int at = firstHole;
        while (at < end) {
            final int length = entryLength(at);
            if ((buffer.getInt(at + SNAPSHOT_FLAGS_OFFSET, ByteOrder.LITTLE_ENDIAN) & HOLE) != 0) {
                at += length;
                continue;
            }
            // A run of live entries: tell each its place, then move the run at once.
            final int runStart = at;
            int runEnd = at;
            int runLength = length;
            while (true) {
                moves.moved(buffer.getInt(runEnd + SNAPSHOT_SEGMENT_ID_OFFSET, ByteOrder.LITTLE_ENDIAN), to + (runEnd - runStart));
                runEnd += runLength;
                if (runEnd >= end || (buffer.getInt(runEnd + SNAPSHOT_FLAGS_OFFSET, ByteOrder.LITTLE_ENDIAN) & HOLE) != 0) {
                    break;
                }
                runLength = entryLength(runEnd);
            }
            buffer.putBytes(to, buffer, runStart, runEnd - runStart);
            to += runEnd - runStart;
            at = runEnd;
        }
        end = to;
        holeBytes = 0;
        firstHole = Integer.MAX_VALUE;
        compactions++;
    }

    /**
     * Copies the payload (COUNT and the live entries, holes compacted away) to {@code index}.
     *
     * @return bytes written.
     */
    int putPayload(final UnsafeBuffer out, final int index) {
        compact();
        out.putInt(index + SNAPSHOT_COUNT_OFFSET, count, ByteOrder.LITTLE_ENDIAN);
        out.putBytes(index + SNAPSHOT_ENTRIES_OFFSET, buffer, ENTRIES_AT, end - ENTRIES_AT);
        return SNAPSHOT_ENTRIES_OFFSET + end - ENTRIES_AT;
    }

    /**
     * Completes the SNAPSHOT record for file {@code fileNumber} in place: compacts, writes the
     * header, COUNT, the zeros to the record's 8-byte end, a PADDING record to the page end, and
     * the CRC.
     *
     * @return the record and its padding, positioned at 0 and limited at a page boundary, to be
     *         written at {@link LogFileDescriptor#FIRST_RECORD_POSITION}; valid until the next change.
     */
    ByteBuffer record(final long fileNumber, final CRC32C crc) {
        compact();
        final int payload = SNAPSHOT_ENTRIES_OFFSET + end - ENTRIES_AT;
        final int aligned = alignedLength(payload);
        final int total = align(aligned, PAGE_LENGTH);
        ensureCapacity(total);
        LogRecordDescriptor.putHeader(buffer, 0, TYPE_SNAPSHOT, payload, 0, 0);
        buffer.putInt(HEADER_LENGTH + SNAPSHOT_COUNT_OFFSET, count, ByteOrder.LITTLE_ENDIAN);
        // The free space past the entries may hold moved or removed entries' old bytes.
        buffer.setMemory(end, total - end, (byte)0);
        if (total > aligned) {
            LogRecordDescriptor.putPadding(buffer, aligned, total - aligned);
        }
        final ByteBuffer view = bytes.duplicate();
        buffer.putInt(CRC_OFFSET, LogRecordDescriptor.crc(crc, fileNumber, view, 0, payload), ByteOrder.LITTLE_ENDIAN);
        view.limit(total).position(0);
        return view;
    }
}
