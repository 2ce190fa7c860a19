package io.streamcache.log.internal;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of a log file; stateless and thread-safe. All integers are little-endian.
 *
 * <p>A log directory holds files named {@code log-<16 hex digits of the file number>.log},
 * numbered from 1 upwards. Every file has the same length (configured, a multiple of
 * {@link #PAGE_LENGTH}) and is pre-written with zeros when created. Page 0 is the file header;
 * records start at {@link #FIRST_RECORD_POSITION}; the first record of every file is a
 * SNAPSHOT of the segment table, so that older files can be deleted once their data is dead.
 *
 * <pre>
 *  file:  +-----------+----------+---------+-----+---------+-------+---------+-- ... --+
 *         | header    | SNAPSHOT | DATA    | ... | PADDING | DATA  | ...     | zeros   |
 *         | (page 0)  | record   | record  |     | to 4 KB | ...   |         |         |
 *         +-----------+----------+---------+-----+---------+-------+---------+-- ... --+
 *         0           4096       ^ every write (batch) starts and ends on a 4 KB boundary
 *
 *  header (page 0; the rest of the page is zero):
 *   0               1               2               3
 *   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 *  +---------------------------------------------------------------+
 *  |                  FILE_MAGIC (u64) "SCLOG\0\0\1"               |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  VERSION (u32) = 2                            |  8
 *  +---------------------------------------------------------------+
 *  |                  PAGE_LENGTH (u32) = 4096                     |  12
 *  +---------------------------------------------------------------+
 *  |                  FILE_NUMBER (u64)                            |  16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  FILE_LENGTH (u64)                            |  24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  EPOCH (u64): the writer epoch of the writer  |  32
 *  |                  that created (or recycled) the file          |
 *  +---------------------------------------------------------------+
 *  |                  CRC (u32): CRC32C of bytes [0, 40)           |  40
 *  +---------------------------------------------------------------+
 *
 *  SNAPSHOT payload: COUNT (u32), then COUNT segment descriptions, each:
 *  +---------------------------------------------------------------+
 *  | SEGMENT_ID (u32) | FLAGS (u32; bit 0 sealed) | START (u64)    |
 *  | LENGTH (u64) | NAME_LENGTH (u32) | NAME (UTF-8) | zeros to 8   |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class LogFileDescriptor {
    /** SSD page: every write starts and ends on a multiple of it. */
    public static final int PAGE_LENGTH = 4096;
    /** "SCLOG\0\0\1" read as a little-endian long. */
    public static final long FILE_MAGIC = 0x0100_0047_4F4C_4353L;
    /** 2: EPOCH added (version 1 files are refused: a header without an epoch cannot be fenced). */
    public static final int VERSION = 2;

    public static final int FILE_MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = FILE_MAGIC_OFFSET + Long.BYTES;
    public static final int PAGE_LENGTH_OFFSET = VERSION_OFFSET + Integer.BYTES;
    public static final int FILE_NUMBER_OFFSET = PAGE_LENGTH_OFFSET + Integer.BYTES;
    public static final int FILE_LENGTH_OFFSET = FILE_NUMBER_OFFSET + Long.BYTES;
    public static final int EPOCH_OFFSET = FILE_LENGTH_OFFSET + Long.BYTES;
    public static final int HEADER_CRC_OFFSET = EPOCH_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH = HEADER_CRC_OFFSET + Integer.BYTES;

    /** Where the first record of a file starts. */
    public static final int FIRST_RECORD_POSITION = PAGE_LENGTH;

    public static final int SNAPSHOT_FLAG_SEALED = 1;

    // SNAPSHOT payload: offsets from the payload's first byte.
    public static final int SNAPSHOT_COUNT_OFFSET = 0;
    /** Where the first segment description starts in the payload. */
    public static final int SNAPSHOT_ENTRIES_OFFSET = SNAPSHOT_COUNT_OFFSET + Integer.BYTES;

    // One segment description: offsets from the description's first byte.
    public static final int SNAPSHOT_SEGMENT_ID_OFFSET = 0;
    public static final int SNAPSHOT_FLAGS_OFFSET = SNAPSHOT_SEGMENT_ID_OFFSET + Integer.BYTES;
    public static final int SNAPSHOT_START_OFFSET = SNAPSHOT_FLAGS_OFFSET + Integer.BYTES;
    public static final int SNAPSHOT_LENGTH_OFFSET = SNAPSHOT_START_OFFSET + Long.BYTES;
    public static final int SNAPSHOT_NAME_LENGTH_OFFSET = SNAPSHOT_LENGTH_OFFSET + Long.BYTES;
    public static final int SNAPSHOT_NAME_OFFSET = SNAPSHOT_NAME_LENGTH_OFFSET + Integer.BYTES;
    /** Segment descriptions are padded with zeros to a multiple of this length. */
    public static final int SNAPSHOT_ENTRY_ALIGNMENT = 8;

    private LogFileDescriptor() {
    }

    /**
     * @return the file name of log file {@code fileNumber}.
     */
    public static String fileName(final long fileNumber) {
        return String.format("log-%016x.log", fileNumber);
    }

    /**
     * @return the number of a log file name, or -1 if the name is not one.
     */
    public static long fileNumber(final String fileName) {
        if (fileName.length() != 24 || !fileName.startsWith("log-") || !fileName.endsWith(".log")) {
            return -1;
        }
        try {
            return Long.parseUnsignedLong(fileName.substring(4, 20), 16);
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    /**
     * @return bytes one segment description with a {@code nameLength}-byte name occupies in a
     *         SNAPSHOT payload: {@code SNAPSHOT_NAME_OFFSET + nameLength} rounded up to a multiple
     *         of {@link #SNAPSHOT_ENTRY_ALIGNMENT}. Descriptions follow each other from
     *         {@link #SNAPSHOT_ENTRIES_OFFSET}, each this long.
     */
    public static int snapshotEntryLength(final int nameLength) {
        return LogRecordDescriptor.align(SNAPSHOT_NAME_OFFSET + nameLength, SNAPSHOT_ENTRY_ALIGNMENT);
    }

    /**
     * Writes one segment description at {@code index} (zeros after the name to
     * {@link #snapshotEntryLength(int)}).
     *
     * @return bytes written: {@link #snapshotEntryLength(int)} of the name's length.
     */
    public static int putSnapshotEntry(final UnsafeBuffer buffer, final int index, final int segmentId, final boolean sealed,
                                       final long startOffset, final long length, final byte[] name) {
        final int entryLength = snapshotEntryLength(name.length);
        buffer.putInt(index + SNAPSHOT_SEGMENT_ID_OFFSET, segmentId, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + SNAPSHOT_FLAGS_OFFSET, sealed ? SNAPSHOT_FLAG_SEALED : 0, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SNAPSHOT_START_OFFSET, startOffset, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SNAPSHOT_LENGTH_OFFSET, length, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + SNAPSHOT_NAME_LENGTH_OFFSET, name.length, ByteOrder.LITTLE_ENDIAN);
        buffer.putBytes(index + SNAPSHOT_NAME_OFFSET, name);
        // At most SNAPSHOT_ENTRY_ALIGNMENT - 1 bytes of padding: byte stores, not a call to
        // Unsafe.setMemory per entry (most of the writer's time with 250,000 segments).
        for (int at = SNAPSHOT_NAME_OFFSET + name.length; at < entryLength; at++) {
            buffer.putByte(index + at, (byte) 0);
        }
        return entryLength;
    }

    /**
     * Writes the file header at {@code index} (the first {@link #HEADER_LENGTH} bytes of page 0,
     * CRC included); the caller zeroes the rest of the page.
     */
    public static void putHeader(final UnsafeBuffer buffer, final int index, final long fileNumber, final long fileLength,
                                 final long epoch) {
        buffer.putLong(index + FILE_MAGIC_OFFSET, FILE_MAGIC, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + VERSION_OFFSET, VERSION, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + PAGE_LENGTH_OFFSET, PAGE_LENGTH, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + FILE_NUMBER_OFFSET, fileNumber, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + FILE_LENGTH_OFFSET, fileLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + EPOCH_OFFSET, epoch, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + HEADER_CRC_OFFSET, headerCrc(buffer, index), ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @return the CRC32C of header bytes {@code [index, index + HEADER_CRC_OFFSET)}: compare it
     *         with the stored CRC to validate a header. Allocates (a copy and a {@link CRC32C}): not for hot paths.
     */
    public static int headerCrc(final UnsafeBuffer buffer, final int index) {
        final byte[] bytes = new byte[HEADER_CRC_OFFSET];
        buffer.getBytes(index, bytes);
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int)crc.getValue();
    }
}
