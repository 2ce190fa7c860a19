package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SnapshotCodecTest {
    @Test
    void shouldLayOutEntriesAsTheFileDescriptorDraws() {
        assertEquals(4, SnapshotCodec.ENTRIES_OFFSET);
        assertEquals(0, SnapshotCodec.SEGMENT_ID_OFFSET);
        assertEquals(4, SnapshotCodec.FLAGS_OFFSET);
        assertEquals(8, SnapshotCodec.START_OFFSET);
        assertEquals(16, SnapshotCodec.LENGTH_OFFSET);
        assertEquals(24, SnapshotCodec.NAME_LENGTH_OFFSET);
        assertEquals(28, SnapshotCodec.NAME_OFFSET);
        assertEquals(32, SnapshotCodec.entryLength(1));
        assertEquals(32, SnapshotCodec.entryLength(4));
        assertEquals(40, SnapshotCodec.entryLength(5));
        assertEquals(32, SnapshotCodec.entryLength(0));

        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocate(256));
        final int length = SnapshotCodec.encode(List.of(new SnapshotCodec.Entry(7, true, 3, 10, "abcde")), buffer, 0);
        assertEquals(4 + 40, length);
        assertEquals(1, buffer.getInt(0, ByteOrder.LITTLE_ENDIAN));
        assertEquals(7, buffer.getInt(4, ByteOrder.LITTLE_ENDIAN));
        assertEquals(LogFileDescriptor.SNAPSHOT_FLAG_SEALED, buffer.getInt(8, ByteOrder.LITTLE_ENDIAN));
        assertEquals(3, buffer.getLong(12, ByteOrder.LITTLE_ENDIAN));
        assertEquals(10, buffer.getLong(20, ByteOrder.LITTLE_ENDIAN));
        assertEquals(5, buffer.getInt(28, ByteOrder.LITTLE_ENDIAN));
        assertEquals('a', buffer.getByte(32));
    }

    @Test
    void shouldRoundTripRandomTables() {
        final SplittableRandom random = new SplittableRandom(3);
        for (int round = 0; round < 200; round++) {
            final List<SnapshotCodec.Entry> entries = new ArrayList<>();
            final int count = random.nextInt(0, 20);
            for (int i = 0; i < count; i++) {
                final long length = random.nextLong(1L << 40);
                final StringBuilder name = new StringBuilder();
                final int nameLength = random.nextInt(0, 40);
                for (int c = 0; c < nameLength; c++) {
                    name.append(c % 7 == 3 ? 'é' : (char) ('a' + random.nextInt(26)));
                }
                entries.add(new SnapshotCodec.Entry(random.nextInt(), random.nextBoolean(), random.nextLong(length + 1), length,
                    name.toString() + i));
            }
            final int encodedLength = SnapshotCodec.encodedLength(entries);
            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocate(encodedLength + 16));
            buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
            assertEquals(encodedLength, SnapshotCodec.encode(entries, buffer, 8));
            final List<SnapshotCodec.Entry> decoded = new ArrayList<>();
            final UnsafeBuffer payload = new UnsafeBuffer(buffer, 8, encodedLength);
            assertEquals(count, SnapshotCodec.decode(payload, encodedLength,
                (id, sealed, start, length, name) -> decoded.add(new SnapshotCodec.Entry(id, sealed, start, length, name))));
            assertEquals(entries, decoded);
        }
    }

    @Test
    void shouldRejectMalformedPayloads() {
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocate(256));
        final int length = SnapshotCodec.encode(List.of(new SnapshotCodec.Entry(1, false, 0, 10, "name")), buffer, 0);
        final SnapshotCodec.EntryVisitor ignore = (id, sealed, start, segmentLength, name) -> { };
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, 3, ignore), "shorter than COUNT");
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, length - 8, ignore), "entry overruns");
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, length + 8, ignore), "bytes left over");

        buffer.putInt(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.FLAGS_OFFSET, 2, ByteOrder.LITTLE_ENDIAN);
        final IllegalArgumentException flags = assertThrows(IllegalArgumentException.class,
            () -> SnapshotCodec.decode(buffer, length, ignore));
        assertTrue(flags.getMessage().contains("FLAGS"), flags.getMessage());
        buffer.putInt(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.FLAGS_OFFSET, 0, ByteOrder.LITTLE_ENDIAN);

        buffer.putLong(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.START_OFFSET, 11, ByteOrder.LITTLE_ENDIAN);
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, length, ignore), "start past length");
        buffer.putLong(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.START_OFFSET, 0, ByteOrder.LITTLE_ENDIAN);

        buffer.putInt(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.NAME_LENGTH_OFFSET, 1000, ByteOrder.LITTLE_ENDIAN);
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, length, ignore), "name overruns");
        buffer.putInt(SnapshotCodec.ENTRIES_OFFSET + SnapshotCodec.NAME_LENGTH_OFFSET, 4, ByteOrder.LITTLE_ENDIAN);

        buffer.putInt(SnapshotCodec.COUNT_OFFSET, -1, ByteOrder.LITTLE_ENDIAN);
        assertThrows(IllegalArgumentException.class, () -> SnapshotCodec.decode(buffer, length, ignore), "count");
        buffer.putInt(SnapshotCodec.COUNT_OFFSET, 1, ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, SnapshotCodec.decode(buffer, length, ignore));

        assertThrows(IllegalArgumentException.class,
            () -> SnapshotCodec.encode(List.of(new SnapshotCodec.Entry(1, false, 11, 10, "x")), buffer, 0));
    }
}
