package io.streamcache.log.internal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.CRC_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.FLAGS_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.LENGTH_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.MAGIC_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.PADDING_HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.SEGMENT_ID_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.SEGMENT_OFFSET_OFFSET;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_OFFSET;

/**
 * The checks a record read back from a log file must pass, in one place for recovery
 * ({@code LogScanner}) and historical reads ({@code HistoricalReader}): stateless and
 * thread-safe (a {@link CRC32C} is the caller's). Allocates nothing: a failed check returns one
 * of the reason constants below, a passed one null. The layout is {@link LogRecordDescriptor}'s.
 *
 * <ol>
 *   <li>{@link #checkHeader}: MAGIC (all-zero first 8 bytes are {@link #ZEROS}, not
 *       {@link #BAD_MAGIC}: the end of what was written); FLAGS 0, or
 *       {@link LogRecordDescriptor#FLAG_COPY} on DATA; a PADDING record starts off a page
 *       boundary and ends exactly at the next one, within the file; a known TYPE; LENGTH within
 *       the file; no payload for SEAL, TRUNCATE, DELETE; a SNAPSHOT at least its COUNT. Reads
 *       only the first 8 bytes.</li>
 *   <li>{@link #checkData}: what a historical read expects where the location index points: a
 *       DATA record of that segment, offset and length.</li>
 *   <li>{@link #crcMatches} (a record whole in the buffer), or {@link #startCrc} then the payload
 *       chunk by chunk then {@link #storedCrc} (a record longer than the buffer): the CRC32C
 *       seeded with the file number, so a stale record of another file never validates.</li>
 * </ol>
 * Buffers are little-endian views of the file; positions and limits of a buffer passed to a CRC
 * method are changed (the caller clears them).
 */
public final class LogRecordCodec {
    public static final String ZEROS = "zeros where a record should start";
    public static final String BAD_MAGIC = "MAGIC is not 0x5C10";
    public static final String BAD_FLAGS = "FLAGS is not 0";
    public static final String BAD_TYPE = "unknown TYPE";
    public static final String BAD_PADDING = "PADDING does not end at the next page boundary";
    public static final String BAD_LENGTH = "LENGTH reaches past the end of the file";
    public static final String BAD_EMPTY_LENGTH = "LENGTH of a SEAL, TRUNCATE or DELETE is not 0";
    public static final String BAD_SNAPSHOT_LENGTH = "SNAPSHOT shorter than its COUNT";
    public static final String BAD_CRC = "CRC mismatch";
    public static final String NOT_THE_DATA = "not the DATA record the location index points at";

    private LogRecordCodec() {
    }

    /**
     * Checks the header of the record at {@code position} of a file whose records end by
     * {@code limit}; its first {@link LogRecordDescriptor#PADDING_HEADER_LENGTH} bytes are at
     * {@code index} of {@code buffer}.
     *
     * @return null if it is valid, else the reason.
     */
    public static String checkHeader(final ByteBuffer buffer, final int index, final long position, final long limit) {
        final short magic = buffer.getShort(index + MAGIC_OFFSET);
        final byte type = buffer.get(index + TYPE_OFFSET);
        final byte flags = buffer.get(index + FLAGS_OFFSET);
        final int length = buffer.getInt(index + LENGTH_OFFSET);
        if (magic != LogRecordDescriptor.MAGIC) {
            return magic == 0 && type == 0 && flags == 0 && length == 0 ? ZEROS : BAD_MAGIC;
        }
        if (flags != 0 && (flags != LogRecordDescriptor.FLAG_COPY || type != LogRecordDescriptor.TYPE_DATA)) {
            return BAD_FLAGS;
        }
        if (type == LogRecordDescriptor.TYPE_PADDING) {
            final long end = (position + PAGE_LENGTH) & -(long) PAGE_LENGTH;
            if ((position & (PAGE_LENGTH - 1)) == 0 || position + PADDING_HEADER_LENGTH + Integer.toUnsignedLong(length) != end
                || end > limit) {
                return BAD_PADDING;
            }
            return null;
        }
        if (!LogRecordDescriptor.isKnownType(type)) {
            return BAD_TYPE;
        }
        if (length < 0 || HEADER_LENGTH + (long) length > limit - position) {
            return BAD_LENGTH;
        }
        switch (type) {
            case LogRecordDescriptor.TYPE_SEAL, LogRecordDescriptor.TYPE_TRUNCATE, LogRecordDescriptor.TYPE_DELETE -> {
                if (length != 0) {
                    return BAD_EMPTY_LENGTH;
                }
            }
            case LogRecordDescriptor.TYPE_SNAPSHOT -> {
                if (length < Integer.BYTES) {
                    return BAD_SNAPSHOT_LENGTH;
                }
            }
            default -> {
            }
        }
        return null;
    }

    /**
     * Checks that the record whose header is at {@code index} is the DATA record (original or
     * copy) of {@code segmentId} at {@code segmentOffset} with {@code length} payload bytes.
     *
     * @return null if it is, else the reason.
     */
    public static String checkData(final ByteBuffer buffer, final int index, final int segmentId, final long segmentOffset,
                                   final int length) {
        if (buffer.getShort(index + MAGIC_OFFSET) != LogRecordDescriptor.MAGIC) {
            return BAD_MAGIC;
        }
        final byte flags = buffer.get(index + FLAGS_OFFSET);
        if (flags != 0 && flags != LogRecordDescriptor.FLAG_COPY) {
            return BAD_FLAGS;
        }
        if (buffer.get(index + TYPE_OFFSET) != LogRecordDescriptor.TYPE_DATA || buffer.getInt(index + LENGTH_OFFSET) != length
            || buffer.getInt(index + SEGMENT_ID_OFFSET) != segmentId || buffer.getLong(index + SEGMENT_OFFSET_OFFSET) != segmentOffset) {
            return NOT_THE_DATA;
        }
        return null;
    }

    /**
     * @return whether the CRC stored in the record at {@code index} (header and {@code length}
     *         payload bytes in the buffer) matches the record, written to file {@code fileNumber}.
     */
    public static boolean crcMatches(final CRC32C crc, final long fileNumber, final ByteBuffer buffer, final int index,
                                     final int length) {
        final int stored = storedCrc(buffer, index);
        return LogRecordDescriptor.crc(crc, fileNumber, buffer, index, length) == stored;
    }

    /**
     * Starts the CRC of the record whose header is at {@code index}: the seed and the header's
     * covered bytes; the caller adds the payload, then compares with {@link #storedCrc}.
     */
    public static void startCrc(final CRC32C crc, final long fileNumber, final ByteBuffer buffer, final int index) {
        crc.reset();
        // The file number, little-endian, one byte at a time: no allocation.
        for (int i = 0; i < Long.BYTES; i++) {
            crc.update((int) (fileNumber >>> (8 * i)) & 0xFF);
        }
        buffer.limit(index + CRC_OFFSET).position(index);
        crc.update(buffer);
        buffer.limit(index + HEADER_LENGTH).position(index + SEGMENT_OFFSET_OFFSET);
        crc.update(buffer);
    }

    /**
     * @return the CRC stored in the header at {@code index}.
     */
    public static int storedCrc(final ByteBuffer buffer, final int index) {
        return buffer.getInt(index + CRC_OFFSET);
    }
}
