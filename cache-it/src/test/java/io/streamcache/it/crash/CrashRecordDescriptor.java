package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.zip.CRC32C;

/**
 * Layout of the records the {@link CrashWorkload} appends, and the function that gives every
 * payload byte: stateless, thread-safe. A record's bytes are a deterministic function of its
 * segment's index, its segment offset and its length, so a reader can check any record (and
 * every byte of it) with no second copy of the data: a record that was never appended, bytes at
 * the wrong offset, zeros or stale bytes all fail the check.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                           MAGIC                               |  0
 *  +---------------------------------------------------------------+
 *  |                 LENGTH (whole record, bytes)                  |  4
 *  +---------------------------------------------------------------+
 *  |                                                               |  8
 *  +              OFFSET (segment offset of byte 0)                +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                      SEGMENT (index)                          | 16
 *  +---------------------------------------------------------------+
 *  |   payload: byte at segment offset o is payloadByte(segment, o) | 20
 *  |                             ...                               |
 *  +---------------------------------------------------------------+
 *  |          CRC32C of bytes [0, LENGTH - 4) of the record        | LENGTH - 4
 *  +---------------------------------------------------------------+
 * </pre>
 * Big-endian (netty's default).
 */
final class CrashRecordDescriptor {
    static final int MAGIC = 0x5C0C_4A5E;
    static final int MAGIC_OFFSET = 0;
    static final int LENGTH_OFFSET = MAGIC_OFFSET + Integer.BYTES;
    static final int OFFSET_OFFSET = LENGTH_OFFSET + Integer.BYTES;
    static final int SEGMENT_OFFSET = OFFSET_OFFSET + Long.BYTES;
    static final int HEADER_LENGTH = SEGMENT_OFFSET + Integer.BYTES;
    static final int TRAILER_LENGTH = Integer.BYTES;
    /** Shortest record: a header, one payload byte and the CRC. */
    static final int MIN_RECORD_LENGTH = HEADER_LENGTH + 1 + TRAILER_LENGTH;
    /** Longest record the workload writes: 64 KiB, well under the log's batch length. */
    static final int MAX_RECORD_LENGTH = 64 << 10;

    private CrashRecordDescriptor() {
    }

    /**
     * @return the payload byte at segment offset {@code offset} of segment {@code segment}: a
     *         64-bit mix of both (SplitMix64's finalizer), one byte of it.
     */
    static byte payloadByte(final int segment, final long offset) {
        long z = (offset >>> 3) * 0x9E37_79B9_7F4A_7C15L + (segment + 1L) * 0xD1B5_4A32_D192_ED03L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        z ^= z >>> 31;
        return (byte) (z >>> ((offset & 7) << 3));
    }

    /**
     * Writes the record of {@code length} bytes that starts at segment offset {@code offset} of
     * segment {@code segment} at {@code buffer}'s writer index.
     */
    static void encode(final int segment, final long offset, final int length, final ByteBuf buffer) {
        if (length < MIN_RECORD_LENGTH || length > MAX_RECORD_LENGTH) {
            throw new IllegalArgumentException("length=" + length + " must be in [" + MIN_RECORD_LENGTH + ", " + MAX_RECORD_LENGTH + "]");
        }
        final byte[] record = new byte[length];
        final ByteBuf view = Unpooled.wrappedBuffer(record);
        view.setInt(MAGIC_OFFSET, MAGIC);
        view.setInt(LENGTH_OFFSET, length);
        view.setLong(OFFSET_OFFSET, offset);
        view.setInt(SEGMENT_OFFSET, segment);
        final int payloadEnd = length - TRAILER_LENGTH;
        for (int i = HEADER_LENGTH; i < payloadEnd; i++) {
            record[i] = payloadByte(segment, offset + i);
        }
        view.setInt(payloadEnd, crc(record, payloadEnd));
        buffer.writeBytes(record);
    }

    /**
     * Checks the record found at segment offset {@code offset}: {@code record} holds its
     * {@code length} bytes (the length its header gave).
     *
     * @return null if it is the record the workload writes there, else what is wrong.
     */
    static String check(final int segment, final long offset, final byte[] record, final int length) {
        final ByteBuf view = Unpooled.wrappedBuffer(record, 0, length);
        if (view.getInt(MAGIC_OFFSET) != MAGIC) {
            return "magic=0x" + Integer.toHexString(view.getInt(MAGIC_OFFSET)) + " is not 0x" + Integer.toHexString(MAGIC);
        }
        if (view.getInt(LENGTH_OFFSET) != length) {
            return "header length=" + view.getInt(LENGTH_OFFSET) + " but record length=" + length;
        }
        if (view.getLong(OFFSET_OFFSET) != offset) {
            return "header offset=" + view.getLong(OFFSET_OFFSET) + " but the record is at offset=" + offset;
        }
        if (view.getInt(SEGMENT_OFFSET) != segment) {
            return "header segment=" + view.getInt(SEGMENT_OFFSET) + " but the record is in segment=" + segment;
        }
        final int payloadEnd = length - TRAILER_LENGTH;
        for (int i = HEADER_LENGTH; i < payloadEnd; i++) {
            if (record[i] != payloadByte(segment, offset + i)) {
                return "payload byte at offset=" + (offset + i) + " is " + record[i] + ", expected " + payloadByte(segment, offset + i);
            }
        }
        if (view.getInt(payloadEnd) != crc(record, payloadEnd)) {
            return "crc=0x" + Integer.toHexString(view.getInt(payloadEnd)) + " does not match the bytes' 0x"
                + Integer.toHexString(crc(record, payloadEnd));
        }
        return null;
    }

    /**
     * @return the length a record header announces, or -1 if {@code header} (at least
     *         {@link #HEADER_LENGTH} bytes) is not a record header.
     */
    static int recordLength(final byte[] header) {
        final ByteBuf view = Unpooled.wrappedBuffer(header);
        final int length = view.getInt(LENGTH_OFFSET);
        if (view.getInt(MAGIC_OFFSET) != MAGIC || length < MIN_RECORD_LENGTH || length > MAX_RECORD_LENGTH) {
            return -1;
        }
        return length;
    }

    private static int crc(final byte[] bytes, final int length) {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }
}
