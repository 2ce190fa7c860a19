package io.streamcache.log.internal;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogRecordCodecTest {
    private static final long FILE = 7;
    /** The record under test sits at this file position (off a page boundary), at buffer index 0. */
    private static final long POSITION = 3 * PAGE_LENGTH + 64;
    private static final long LIMIT = 16 * PAGE_LENGTH;

    private final ByteBuffer buffer = ByteBuffer.allocateDirect(2 * PAGE_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final UnsafeBuffer ub = new UnsafeBuffer(buffer);
    private final CRC32C crc = new CRC32C();

    private void record(final byte type, final byte flags, final int length) {
        LogRecordDescriptor.putHeader(ub, 0, type, flags, length, 5, 1000);
        for (int i = 0; i < length; i++) {
            ub.putByte(HEADER_LENGTH + i, (byte) (i * 31));
        }
        ub.putInt(LogRecordDescriptor.CRC_OFFSET, LogRecordDescriptor.crc(crc, FILE, buffer.duplicate(), 0, length), ByteOrder.LITTLE_ENDIAN);
    }

    private String header() {
        return LogRecordCodec.checkHeader(buffer, 0, POSITION, LIMIT);
    }

    @Test
    void shouldAcceptAWellFormedRecordAndItsCrc() {
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 100);
        assertNull(header());
        assertTrue(LogRecordCodec.crcMatches(crc, FILE, buffer, 0, 100));
        buffer.clear();
        assertNull(LogRecordCodec.checkData(buffer, 0, 5, 1000, 100));
    }

    @Test
    void shouldComputeTheSameCrcInChunksAsWhole() {
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 1000);
        LogRecordCodec.startCrc(crc, FILE, buffer, 0);
        for (int at = HEADER_LENGTH; at < HEADER_LENGTH + 1000; at += 300) {
            buffer.limit(Math.min(HEADER_LENGTH + 1000, at + 300)).position(at);
            crc.update(buffer);
        }
        buffer.clear();
        assertEquals(LogRecordCodec.storedCrc(buffer, 0), (int) crc.getValue());
    }

    @Test
    void shouldRejectAFlippedBitOrAnotherFilesRecordByItsCrc() {
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 100);
        assertFalse(LogRecordCodec.crcMatches(crc, FILE + 1, buffer, 0, 100), "seeded with the file number");
        buffer.clear();
        ub.putByte(HEADER_LENGTH + 50, (byte) (ub.getByte(HEADER_LENGTH + 50) ^ 4));
        assertFalse(LogRecordCodec.crcMatches(crc, FILE, buffer, 0, 100));
    }

    @Test
    void shouldNameWhatIsWrongWithAHeader() {
        assertEquals(LogRecordCodec.ZEROS, header(), "zeros are the end of what was written");
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 10);
        ub.putShort(LogRecordDescriptor.MAGIC_OFFSET, (short) 0x1234, ByteOrder.LITTLE_ENDIAN);
        assertEquals(LogRecordCodec.BAD_MAGIC, header());
        record(LogRecordDescriptor.TYPE_SEAL, LogRecordDescriptor.FLAG_COPY, 0);
        assertEquals(LogRecordCodec.BAD_FLAGS, header(), "only DATA may be a copy");
        record(LogRecordDescriptor.TYPE_DATA, LogRecordDescriptor.FLAG_COPY, 10);
        assertNull(header(), "a compaction copy");
        record((byte) 42, (byte) 0, 0);
        assertEquals(LogRecordCodec.BAD_TYPE, header());
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 10);
        assertEquals(LogRecordCodec.BAD_LENGTH, LogRecordCodec.checkHeader(buffer, 0, POSITION, POSITION + HEADER_LENGTH + 9));
        assertNull(LogRecordCodec.checkHeader(buffer, 0, POSITION, POSITION + HEADER_LENGTH + 10));
        record(LogRecordDescriptor.TYPE_TRUNCATE, (byte) 0, 8);
        assertEquals(LogRecordCodec.BAD_EMPTY_LENGTH, header());
        record(LogRecordDescriptor.TYPE_SNAPSHOT, (byte) 0, 3);
        assertEquals(LogRecordCodec.BAD_SNAPSHOT_LENGTH, header());
    }

    @Test
    void shouldAcceptPaddingOnlyWhenItEndsAtTheNextPageBoundary() {
        final int gap = (int) (4 * PAGE_LENGTH - POSITION);
        LogRecordDescriptor.putPadding(ub, 0, gap);
        assertNull(header());
        assertEquals(LogRecordCodec.BAD_PADDING, LogRecordCodec.checkHeader(buffer, 0, POSITION + 8, LIMIT), "ends past the boundary");
        assertEquals(LogRecordCodec.BAD_PADDING, LogRecordCodec.checkHeader(buffer, 0, 4 * PAGE_LENGTH, LIMIT),
            "padding never starts a page");
        assertEquals(LogRecordCodec.BAD_PADDING, LogRecordCodec.checkHeader(buffer, 0, POSITION, 4 * PAGE_LENGTH - 8),
            "ends past the file's records");
    }

    @Test
    void shouldRejectARecordThatIsNotTheDataTheIndexPointsAt() {
        record(LogRecordDescriptor.TYPE_DATA, (byte) 0, 100);
        assertEquals(LogRecordCodec.NOT_THE_DATA, LogRecordCodec.checkData(buffer, 0, 6, 1000, 100), "another segment");
        assertEquals(LogRecordCodec.NOT_THE_DATA, LogRecordCodec.checkData(buffer, 0, 5, 1001, 100), "another offset");
        assertEquals(LogRecordCodec.NOT_THE_DATA, LogRecordCodec.checkData(buffer, 0, 5, 1000, 99), "another length");
        record(LogRecordDescriptor.TYPE_SEAL, (byte) 0, 0);
        assertEquals(LogRecordCodec.NOT_THE_DATA, LogRecordCodec.checkData(buffer, 0, 5, 1000, 0), "not DATA");
        buffer.putShort(0, (short) 0);
        assertEquals(LogRecordCodec.BAD_MAGIC, LogRecordCodec.checkData(buffer, 0, 5, 1000, 0));
    }
}
