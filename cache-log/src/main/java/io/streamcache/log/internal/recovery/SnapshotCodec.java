package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Encodes and decodes the payload of a SNAPSHOT record (the segment table at roll time, see
 * {@link LogFileDescriptor}); stateless and thread-safe. All integers little-endian.
 *
 * <pre>
 *  payload:  COUNT (u32) | entry 0 | entry 1 | ... | entry COUNT-1
 *
 *  entry (its length a multiple of 8: {@link #entryLength(int)}):
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +---------------------------------------------------------------+
 *  |                      SEGMENT_ID (u32)                         |  0
 *  +---------------------------------------------------------------+
 *  |                      FLAGS (u32): bit 0 sealed                |  4
 *  +---------------------------------------------------------------+
 *  |                      START (u64): start offset                |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                      LENGTH (u64): logged length              |  16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                      NAME_LENGTH (u32)                        |  24
 *  +---------------------------------------------------------------+
 *  |     NAME: NAME_LENGTH bytes of UTF-8, then zeros to a multiple of 8 of the entry
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The table lists the live (not deleted) segments as the log stands where the SNAPSHOT is
 * written: LENGTH is the segment's length as logged by the records before it (every DATA record
 * of the segment in older files ends at or before it; the next one starts at it), START its
 * start offset as logged (the last TRUNCATE before it).
 */
public final class SnapshotCodec {
    public static final int COUNT_OFFSET = 0;
    public static final int ENTRIES_OFFSET = COUNT_OFFSET + Integer.BYTES;

    public static final int SEGMENT_ID_OFFSET = 0;
    public static final int FLAGS_OFFSET = SEGMENT_ID_OFFSET + Integer.BYTES;
    public static final int START_OFFSET = FLAGS_OFFSET + Integer.BYTES;
    public static final int LENGTH_OFFSET = START_OFFSET + Long.BYTES;
    public static final int NAME_LENGTH_OFFSET = LENGTH_OFFSET + Long.BYTES;
    public static final int NAME_OFFSET = NAME_LENGTH_OFFSET + Integer.BYTES;
    /** Entries are padded to multiples of this. */
    public static final int ENTRY_ALIGNMENT = 8;

    private SnapshotCodec() {
    }

    /**
     * One segment of the table; an immutable value.
     *
     * @param segmentId   the segment's id.
     * @param sealed      whether it is sealed.
     * @param startOffset its start offset.
     * @param length      its logged length.
     * @param name        its name.
     */
    public record Entry(int segmentId, boolean sealed, long startOffset, long length, String name) {
    }

    /**
     * Receives the entries of a table as {@link #decode} reads them.
     */
    @FunctionalInterface
    public interface EntryVisitor {
        void onEntry(int segmentId, boolean sealed, long startOffset, long length, String name);
    }

    /**
     * @return bytes an entry with a name of {@code nameLength} UTF-8 bytes takes.
     */
    public static int entryLength(final int nameLength) {
        return LogRecordDescriptor.align(NAME_OFFSET + nameLength, ENTRY_ALIGNMENT);
    }

    /**
     * @return bytes the payload of a table of these entries takes.
     */
    public static int encodedLength(final List<Entry> entries) {
        long length = ENTRIES_OFFSET;
        for (final Entry entry : entries) {
            length += entryLength(entry.name().getBytes(StandardCharsets.UTF_8).length);
        }
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("snapshot length=" + length + " does not fit a record");
        }
        return (int) length;
    }

    /**
     * Writes the payload at {@code index}; allocates the names' bytes.
     *
     * @return bytes written: {@link #encodedLength(List)}.
     */
    public static int encode(final List<Entry> entries, final MutableDirectBuffer buffer, final int index) {
        buffer.putInt(index + COUNT_OFFSET, entries.size(), ByteOrder.LITTLE_ENDIAN);
        int at = index + ENTRIES_OFFSET;
        for (final Entry entry : entries) {
            if (entry.startOffset() < 0 || entry.startOffset() > entry.length()) {
                throw new IllegalArgumentException("startOffset=" + entry.startOffset() + " length=" + entry.length()
                    + " of segment " + entry.name() + ": need 0 <= startOffset <= length");
            }
            final byte[] name = entry.name().getBytes(StandardCharsets.UTF_8);
            final int entryLength = entryLength(name.length);
            buffer.setMemory(at, entryLength, (byte) 0);
            buffer.putInt(at + SEGMENT_ID_OFFSET, entry.segmentId(), ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(at + FLAGS_OFFSET, entry.sealed() ? LogFileDescriptor.SNAPSHOT_FLAG_SEALED : 0, ByteOrder.LITTLE_ENDIAN);
            buffer.putLong(at + START_OFFSET, entry.startOffset(), ByteOrder.LITTLE_ENDIAN);
            buffer.putLong(at + LENGTH_OFFSET, entry.length(), ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(at + NAME_LENGTH_OFFSET, name.length, ByteOrder.LITTLE_ENDIAN);
            buffer.putBytes(at + NAME_OFFSET, name);
            at += entryLength;
        }
        return at - index;
    }

    /**
     * Receives the entries of a table as {@link #decodeRaw} reads them, the name as bytes in the
     * payload (nothing allocated).
     */
    @FunctionalInterface
    public interface RawEntryVisitor {
        /**
         * @return false to stop reading.
         */
        boolean onEntry(int segmentId, boolean sealed, long startOffset, long length, DirectBuffer payload, int nameOffset,
                        int nameLength);
    }

    /**
     * Reads a payload of {@code length} bytes at index 0 of {@code payload}; allocates the names.
     * Up to 7 zero bytes may follow the last entry.
     *
     * @return the number of entries.
     * @throws IllegalArgumentException if the payload is malformed (the message says how).
     */
    public static int decode(final DirectBuffer payload, final int length, final EntryVisitor visitor) {
        return decodeRaw(payload, length, (id, sealed, start, segmentLength, buffer, nameOffset, nameLength) -> {
            final byte[] name = new byte[nameLength];
            buffer.getBytes(nameOffset, name);
            visitor.onEntry(id, sealed, start, segmentLength, new String(name, StandardCharsets.UTF_8));
            return true;
        });
    }

    /**
     * Reads a payload like {@link #decode}, with the same checks, but hands each name over as
     * its place in the payload and allocates nothing: for recovery's check of a SNAPSHOT against
     * the table it replayed, which reads every file's table.
     *
     * @return the number of entries, or -1 if the visitor stopped the reading.
     * @throws IllegalArgumentException if the payload is malformed (the message says how).
     */
    public static int decodeRaw(final DirectBuffer payload, final int length, final RawEntryVisitor visitor) {
        if (length < ENTRIES_OFFSET) {
            throw new IllegalArgumentException("snapshot length=" + length + " is shorter than its COUNT");
        }
        final int count = payload.getInt(COUNT_OFFSET, ByteOrder.LITTLE_ENDIAN);
        if (count < 0 || (long) count * NAME_OFFSET > length - ENTRIES_OFFSET) {
            throw new IllegalArgumentException("snapshot COUNT=" + Integer.toUnsignedString(count) + " entries cannot fit length="
                + length);
        }
        int at = ENTRIES_OFFSET;
        for (int i = 0; i < count; i++) {
            if (length - at < NAME_OFFSET) {
                throw new IllegalArgumentException("snapshot entry " + i + " at " + at + " overruns length=" + length);
            }
            final int segmentId = payload.getInt(at + SEGMENT_ID_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final int flags = payload.getInt(at + FLAGS_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final long start = payload.getLong(at + START_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final long segmentLength = payload.getLong(at + LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final int nameLength = payload.getInt(at + NAME_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if ((flags & ~LogFileDescriptor.SNAPSHOT_FLAG_SEALED) != 0) {
                throw new IllegalArgumentException("snapshot entry " + i + " segmentId=" + segmentId + " has unknown FLAGS=0x"
                    + Integer.toHexString(flags));
            }
            if (start < 0 || start > segmentLength) {
                throw new IllegalArgumentException("snapshot entry " + i + " segmentId=" + segmentId + " has START=" + start
                    + " LENGTH=" + segmentLength + ": need 0 <= START <= LENGTH");
            }
            if (nameLength < 0 || nameLength > length - at - NAME_OFFSET) {
                throw new IllegalArgumentException("snapshot entry " + i + " segmentId=" + segmentId + " has NAME_LENGTH="
                    + Integer.toUnsignedString(nameLength) + " outside [0, " + (length - at - NAME_OFFSET) + "]");
            }
            final int entryLength = entryLength(nameLength);
            if (entryLength > length - at) {
                throw new IllegalArgumentException("snapshot entry " + i + " segmentId=" + segmentId + " padding overruns length="
                    + length);
            }
            if (!visitor.onEntry(segmentId, (flags & LogFileDescriptor.SNAPSHOT_FLAG_SEALED) != 0, start, segmentLength, payload,
                at + NAME_OFFSET, nameLength)) {
                return -1;
            }
            at += entryLength;
        }
        if (length - at >= ENTRY_ALIGNMENT) {
            throw new IllegalArgumentException("snapshot of COUNT=" + count + " entries ends at " + at + ", length=" + length);
        }
        for (; at < length; at++) {
            if (payload.getByte(at) != 0) {
                throw new IllegalArgumentException("snapshot has nonzero bytes after its last entry at " + at);
            }
        }
        return count;
    }
}
