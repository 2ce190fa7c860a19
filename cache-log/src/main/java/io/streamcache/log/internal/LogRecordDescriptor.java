package io.streamcache.log.internal;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of a record in a log file; stateless and thread-safe (a {@link CRC32C} is the
 * caller's). All integers are little-endian. Records start at 8-byte-aligned positions and
 * occupy {@link #alignedLength(int)} bytes.
 *
 * <pre>
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +-------------------------------+---------------+---------------+
 *  |        MAGIC (u16) 0x5C10     |   TYPE (u8)   |  FLAGS (u8)   |  0
 *  +-------------------------------+---------------+---------------+
 *  |                      LENGTH (u32)                             |  4
 *  +---------------------------------------------------------------+
 *  |                      SEGMENT_ID (u32)                         |  8
 *  +---------------------------------------------------------------+
 *  |                      CRC (u32): CRC32C                        |  12
 *  +---------------------------------------------------------------+
 *  |                      SEGMENT_OFFSET (u64)                     |  16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        payload: LENGTH bytes, then zeros to an 8-byte multiple |  24
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <b>Padding</b> is self-describing: a {@link #TYPE_PADDING} record is only the first 8 bytes
 * (MAGIC, TYPE, FLAGS = 0, LENGTH = bytes that follow it, all to be skipped), and it always ends
 * exactly at a {@link LogFileDescriptor#PAGE_LENGTH} boundary. Since records are 8-byte aligned,
 * the gap to the next page boundary is 0 or at least 8, so a padding record always fits. Recovery
 * checks both conditions, so it never mistakes padding for the end of the log.
 *
 * <p><b>CRC</b> is CRC32C over: the log file's number (8 bytes, little-endian), bytes [0, 12) and
 * [16, 24) of the header, and the LENGTH payload bytes. Seeding it with the file number means a
 * stale record left in a reused file never validates.
 *
 * <p>Record types and what SEGMENT_ID, SEGMENT_OFFSET and the payload mean:
 * <pre>
 *  type        segment id   segment offset           payload
 *  DATA        segment      offset of payload byte 0 the appended bytes
 *              (FLAGS bit 0, {@link #FLAG_COPY}: a copy of bytes the segment holds, by compaction)
 *  CREATE      segment      0                        the segment's name, UTF-8
 *  SEAL        segment      the final length         none
 *  TRUNCATE    segment      the new start offset     none
 *  DELETE      segment      0                        none
 *  SNAPSHOT    0            0                        segment table, see {@link LogFileDescriptor}
 * </pre>
 */
public final class LogRecordDescriptor {
    public static final short MAGIC = 0x5C10;

    public static final byte TYPE_PADDING = 0;
    public static final byte TYPE_DATA = 1;
    public static final byte TYPE_CREATE = 2;
    public static final byte TYPE_SEAL = 3;
    public static final byte TYPE_TRUNCATE = 4;
    public static final byte TYPE_DELETE = 5;
    public static final byte TYPE_SNAPSHOT = 6;

    /**
     * FLAGS bit 0 of a DATA record: a <em>copy</em> written by compaction (package
     * {@code log.compaction}) of bytes the segment already holds at SEGMENT_OFFSET, moved out of
     * an older file. It does not extend the segment; recovery indexes the bytes at the copy's
     * place instead of the original's (the newest copy wins), so the bytes count once whether
     * the original still exists or not. Every other record has FLAGS = 0.
     */
    public static final byte FLAG_COPY = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int TYPE_OFFSET = MAGIC_OFFSET + Short.BYTES;
    public static final int FLAGS_OFFSET = TYPE_OFFSET + Byte.BYTES;
    public static final int LENGTH_OFFSET = FLAGS_OFFSET + Byte.BYTES;
    /** Bytes of a padding record: everything up to and including LENGTH. */
    public static final int PADDING_HEADER_LENGTH = LENGTH_OFFSET + Integer.BYTES;
    public static final int SEGMENT_ID_OFFSET = PADDING_HEADER_LENGTH;
    public static final int CRC_OFFSET = SEGMENT_ID_OFFSET + Integer.BYTES;
    public static final int SEGMENT_OFFSET_OFFSET = CRC_OFFSET + Integer.BYTES;
    public static final int HEADER_LENGTH = SEGMENT_OFFSET_OFFSET + Long.BYTES;

    /** Records start at multiples of this. */
    public static final int RECORD_ALIGNMENT = 8;

    private LogRecordDescriptor() {
    }

    /**
     * @return bytes a record with {@code payloadLength} payload bytes occupies in the log.
     */
    public static int alignedLength(final int payloadLength) {
        return align(HEADER_LENGTH + payloadLength, RECORD_ALIGNMENT);
    }

    /**
     * @return {@code value} rounded up to a multiple of {@code alignment} (a power of two).
     */
    public static int align(final int value, final int alignment) {
        return (value + alignment - 1) & -alignment;
    }

    /**
     * @return {@code value} rounded up to a multiple of {@code alignment} (a power of two).
     */
    public static long align(final long value, final long alignment) {
        return (value + alignment - 1) & -alignment;
    }

    public static boolean isKnownType(final byte type) {
        return type >= TYPE_PADDING && type <= TYPE_SNAPSHOT;
    }

    /**
     * Writes a header (CRC not set) at {@code index}.
     */
    public static void putHeader(
        final UnsafeBuffer buffer, final int index, final byte type, final int length, final int segmentId, final long segmentOffset) {
        putHeader(buffer, index, type, (byte)0, length, segmentId, segmentOffset);
    }

    /**
     * Writes a header with FLAGS {@code flags} (CRC not set) at {@code index}.
     */
    public static void putHeader(final UnsafeBuffer buffer, final int index, final byte type, final byte flags, final int length,
                                 final int segmentId, final long segmentOffset) {
        buffer.putShort(index + MAGIC_OFFSET, MAGIC, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(index + TYPE_OFFSET, type);
        buffer.putByte(index + FLAGS_OFFSET, flags);
        buffer.putInt(index + LENGTH_OFFSET, length, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + SEGMENT_ID_OFFSET, segmentId, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + CRC_OFFSET, 0, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SEGMENT_OFFSET_OFFSET, segmentOffset, ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Writes a padding record at {@code index} that ends at {@code index + gap}.
     *
     * @param gap bytes to the next page boundary: a multiple of 8, at least 8.
     */
    public static void putPadding(final UnsafeBuffer buffer, final int index, final int gap) {
        if (gap < PADDING_HEADER_LENGTH || (gap & (RECORD_ALIGNMENT - 1)) != 0) {
            throw new IllegalArgumentException("gap=" + gap + " must be a multiple of 8 and at least 8");
        }
        buffer.putShort(index + MAGIC_OFFSET, MAGIC, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(index + TYPE_OFFSET, TYPE_PADDING);
        buffer.putByte(index + FLAGS_OFFSET, (byte)0);
        buffer.putInt(index + LENGTH_OFFSET, gap - PADDING_HEADER_LENGTH, ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Computes the CRC of the record at {@code index} of a buffer (header and payload in place)
     * written to file {@code fileNumber}. Allocates nothing.
     *
     * @param record a buffer whose bytes [index, index + HEADER_LENGTH + length) hold the record;
     *               its position and limit are changed.
     */
    public static int crc(final CRC32C crc, final long fileNumber, final ByteBuffer record, final int index, final int length) {
        crc.reset();
        // The file number, little-endian, one byte at a time: no allocation.
        for (int i = 0; i < Long.BYTES; i++) {
            crc.update((int)(fileNumber >>> (8 * i)) & 0xFF);
        }
        record.limit(index + CRC_OFFSET).position(index);
        crc.update(record);
        record.limit(index + HEADER_LENGTH + length).position(index + SEGMENT_OFFSET_OFFSET);
        crc.update(record);
        return (int)crc.getValue();
    }
}
