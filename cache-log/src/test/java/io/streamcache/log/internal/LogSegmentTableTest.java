package io.streamcache.log.internal;

import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer's segment table on its own: how records change the segments, the SNAPSHOT payload
 * it writes (decoded here field by field as docs/log-format.md lays it out), and which files it
 * finds dead.
 */
class LogSegmentTableTest {
    private static byte[] utf8(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static LogSegmentTable withCurrentFile(final long number) {
        final LogSegmentTable table = new LogSegmentTable();
        table.currentFile(number);
        return table;
    }

    private static LongArrayList dead(final LogSegmentTable table) {
        final LongArrayList dead = new LongArrayList();
        table.takeDeadFiles(dead);
        return dead;
    }

    // ------------------------------------------------------------------------------------------
    // Records
    // ------------------------------------------------------------------------------------------

    @Test
    void theSnapshotLengthFollowsCreatesRestoresAndDeletesAndPaddingIsZero() {
        final LogSegmentTable table = withCurrentFile(1);
        table.restore(1, "one", 0, 10, false);
        table.create(2, utf8("a-name-of-17-byte"));
        table.create(3, utf8("x"));
        table.restore(1, "one-restored-again", 0, 10, true);
        table.delete(3);
        table.delete(99);
        table.create(4, utf8("four"));
        final int length = table.snapshotPayloadLength();
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length + 64]);
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        assertEquals(length, table.putSnapshot(buffer, 0));
        int expected = LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET;
        for (final String name : new String[] {"one-restored-again", "a-name-of-17-byte", "four"}) {
            expected += LogFileDescriptor.snapshotEntryLength(utf8(name).length);
        }
        assertEquals(expected, length);
        // Every entry's padding after its name is zero, whatever the buffer held.
        int at = LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET;
        for (int i = 0; i < 3; i++) {
            final int nameLength = buffer.getInt(at + LogFileDescriptor.SNAPSHOT_NAME_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
            final int entryLength = LogFileDescriptor.snapshotEntryLength(nameLength);
            for (int b = LogFileDescriptor.SNAPSHOT_NAME_OFFSET + nameLength; b < entryLength; b++) {
                assertEquals(0, buffer.getByte(at + b), "padding byte " + b + " of entry " + i);
            }
            at += entryLength;
        }
        assertEquals(length, at);
    }

    @Test
    void aCreatedSegmentIsEmptyUnsealedAndStartsAtZero() {
        final LogSegmentTable table = withCurrentFile(1);
        assertEquals(0, table.segmentCount());
        table.create(7, utf8("seven"));
        final LogSegmentTable.Entry entry = table.segment(7);
        assertNotNull(entry);
        assertEquals(7, entry.id);
        assertArrayEquals(utf8("seven"), entry.name);
        assertEquals(0, entry.start);
        assertEquals(0, entry.length);
        assertFalse(entry.sealed);
        assertEquals(1, table.segmentCount());
        assertNull(table.segment(8));
    }

    @Test
    void restoreKeepsEveryFieldAndEncodesTheNameAsUtf8() {
        final LogSegmentTable table = new LogSegmentTable();
        table.restore(3, "é-ü", 100, 250, true);
        final LogSegmentTable.Entry entry = table.segment(3);
        assertEquals(3, entry.id);
        assertArrayEquals(utf8("é-ü"), entry.name);
        assertEquals(5, entry.name.length, "two 2-byte characters and a dash");
        assertEquals(100, entry.start);
        assertEquals(250, entry.length);
        assertTrue(entry.sealed);
    }

    @Test
    void dataOnlyEverLengthensASegment() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("a"));
        table.data(1, 100);
        assertEquals(100, table.segment(1).length);
        table.data(1, 40);
        assertEquals(100, table.segment(1).length, "an older record's end does not shorten it");
        table.data(1, 100);
        table.data(1, 101);
        assertEquals(101, table.segment(1).length);
    }

    @Test
    void dataNeedsACurrentFile() {
        final LogSegmentTable table = new LogSegmentTable();
        table.create(1, utf8("a"));
        assertEquals(-1, table.currentFileNumber());
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> table.data(1, 10));
        assertTrue(e.getMessage().contains("file -1 is not registered"), e.getMessage());
    }

    @Test
    void sealAndTruncateOfAnUnknownSegmentChangeNothing() {
        final LogSegmentTable table = withCurrentFile(1);
        table.seal(9);
        table.truncate(9, 10);
        table.delete(9);
        assertEquals(0, table.segmentCount());
        assertNull(table.segment(9));
    }

    @Test
    void sealMarksTheSegmentAndKeepsItsLength() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("a"));
        table.data(1, 10);
        table.seal(1);
        assertTrue(table.segment(1).sealed);
        assertEquals(10, table.segment(1).length);
    }

    @Test
    void truncateOnlyEverMovesTheStartForward() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("a"));
        table.truncate(1, 50);
        assertEquals(50, table.segment(1).start);
        table.truncate(1, 20);
        assertEquals(50, table.segment(1).start);
        table.truncate(1, 51);
        assertEquals(51, table.segment(1).start);
    }

    @Test
    void deleteForgetsTheSegmentAndOnlyIt() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("a"));
        table.create(2, utf8("b"));
        table.delete(1);
        assertNull(table.segment(1));
        assertNotNull(table.segment(2));
        assertEquals(1, table.segmentCount());
    }

    @Test
    void aSegmentIdCreatedAgainStartsOver() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("old"));
        table.data(1, 10);
        table.delete(1);
        table.create(1, utf8("new"));
        assertEquals(0, table.segment(1).length);
        assertArrayEquals(utf8("new"), table.segment(1).name);
    }

    // ------------------------------------------------------------------------------------------
    // Files
    // ------------------------------------------------------------------------------------------

    @Test
    void filesAreRegisteredOnce() {
        final LogSegmentTable table = new LogSegmentTable();
        assertEquals(0, table.fileCount());
        assertFalse(table.hasFile(1));
        table.file(1);
        table.file(1);
        table.fileData(2, 5, 10);
        assertEquals(2, table.fileCount());
        assertTrue(table.hasFile(1));
        assertTrue(table.hasFile(2));
        table.currentFile(2);
        assertEquals(2, table.currentFileNumber());
        assertEquals(2, table.fileCount(), "making a known file current does not add one");
        table.currentFile(3);
        assertEquals(3, table.currentFileNumber());
        assertEquals(3, table.fileCount());
    }

    @Test
    void aFileIsDeadOnceItsSegmentIsTruncatedAtOrPastItsData() {
        final LogSegmentTable table = new LogSegmentTable();
        table.create(1, utf8("a"));
        table.currentFile(1);
        table.data(1, 100);
        table.currentFile(2);
        table.data(1, 200);

        table.truncate(1, 99);
        assertEquals(0, dead(table).size(), "one byte of file 1 is still live");
        assertTrue(table.hasFile(1));

        table.truncate(1, 100);
        final LongArrayList dead = dead(table);
        assertEquals(1, dead.size(), "truncated exactly at the end of its data in file 1");
        assertEquals(1, dead.getLong(0));
        assertFalse(table.hasFile(1), "a dead file is taken out of the table");
        assertEquals(1, table.fileCount());
        assertEquals(0, dead(table).size(), "and reported once");
    }

    @Test
    void theHighestDataEndInAFileDecidesWhetherItIsDead() {
        final LogSegmentTable table = new LogSegmentTable();
        table.create(1, utf8("a"));
        table.currentFile(1);
        table.data(1, 300);
        table.data(1, 100);
        table.currentFile(2);
        table.truncate(1, 200);
        assertEquals(0, dead(table).size(), "data up to 300 are in file 1");
        table.fileData(3, 1, 500);
        table.fileData(3, 1, 50);
        table.truncate(1, 300);
        final LongArrayList dead = dead(table);
        assertEquals(1, dead.size());
        assertEquals(1, dead.getLong(0));
        assertTrue(table.hasFile(3), "recovered file 3 holds data up to 500");
    }

    @Test
    void aFileIsDeadOnlyOnceEverySegmentInItIsDead() {
        final LogSegmentTable table = new LogSegmentTable();
        table.create(1, utf8("a"));
        table.create(2, utf8("b"));
        table.currentFile(1);
        table.data(1, 10);
        table.data(2, 10);
        table.currentFile(2);
        table.truncate(1, 10);
        assertEquals(0, dead(table).size(), "segment 2 still has live data in file 1");
        table.delete(2);
        assertEquals(1, dead(table).getLong(0));
    }

    @Test
    void deletingASegmentKillsItsDataInEveryFile() {
        final LogSegmentTable table = new LogSegmentTable();
        table.create(1, utf8("a"));
        table.fileData(1, 1, 10);
        table.fileData(2, 1, 20);
        table.currentFile(3);
        table.data(1, 30);
        table.delete(1);
        final LongArrayList dead = dead(table);
        dead.sort(Long::compare);
        assertEquals(2, dead.size());
        assertEquals(1, dead.getLong(0));
        assertEquals(2, dead.getLong(1));
        assertTrue(table.hasFile(3), "the current file is never dead");
        table.create(1, utf8("a again"));
        table.truncate(1, 1000);
        assertEquals(0, dead(table).size(), "still the current file");
    }

    @Test
    void dataOfASegmentTheTableNeverSawCreatedCountAsLive() {
        final LogSegmentTable table = new LogSegmentTable();
        table.fileData(1, 42, 10);
        table.currentFile(2);
        assertEquals(0, dead(table).size());
        assertTrue(table.hasFile(1));
    }

    @Test
    void aFileWithoutDataIsDeadUnlessCurrent() {
        final LogSegmentTable table = new LogSegmentTable();
        table.file(1);
        table.currentFile(2);
        final LongArrayList dead = dead(table);
        assertEquals(1, dead.size());
        assertEquals(1, dead.getLong(0));
        assertTrue(table.hasFile(2));
    }

    @Test
    void takeDeadFilesAppendsToTheList() {
        final LogSegmentTable table = new LogSegmentTable();
        table.file(5);
        table.currentFile(6);
        final LongArrayList dead = new LongArrayList();
        dead.addLong(99);
        table.takeDeadFiles(dead);
        assertEquals(2, dead.size());
        assertEquals(99, dead.getLong(0));
        assertEquals(5, dead.getLong(1));
    }

    // ------------------------------------------------------------------------------------------
    // Snapshot
    // ------------------------------------------------------------------------------------------

    private record Decoded(int id, boolean sealed, long start, long length, String name) {
    }

    /** Decodes a SNAPSHOT payload as docs/log-format.md describes it, checking its padding. */
    private static Map<Integer, Decoded> decode(final UnsafeBuffer buffer, final int index, final int payloadLength) {
        final int count = buffer.getInt(index, ByteOrder.LITTLE_ENDIAN);
        final Map<Integer, Decoded> entries = new HashMap<>();
        int at = index + 4;
        for (int i = 0; i < count; i++) {
            final int id = buffer.getInt(at, ByteOrder.LITTLE_ENDIAN);
            final int flags = buffer.getInt(at + 4, ByteOrder.LITTLE_ENDIAN);
            final long start = buffer.getLong(at + 8, ByteOrder.LITTLE_ENDIAN);
            final long length = buffer.getLong(at + 16, ByteOrder.LITTLE_ENDIAN);
            final int nameLength = buffer.getInt(at + 24, ByteOrder.LITTLE_ENDIAN);
            final byte[] name = new byte[nameLength];
            buffer.getBytes(at + 28, name);
            assertTrue(flags == 0 || flags == 1, "flags=" + flags);
            int end = at + 28 + nameLength;
            while ((end - at) % 8 != 0) {
                assertEquals(0, buffer.getByte(end), "padding after the name is zeros");
                end++;
            }
            entries.put(id, new Decoded(id, flags == 1, start, length, new String(name, StandardCharsets.UTF_8)));
            at = end;
        }
        assertEquals(payloadLength, at - index, "the payload ends after the last description");
        return entries;
    }

    @Test
    void anEmptyTableWritesACountOfZero() {
        final LogSegmentTable table = new LogSegmentTable();
        assertEquals(4, table.snapshotPayloadLength());
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
        buffer.setMemory(0, 16, (byte)0x5A);
        assertEquals(4, table.putSnapshot(buffer, 8));
        assertEquals(0, buffer.getInt(8, ByteOrder.LITTLE_ENDIAN));
        assertEquals(0x5A5A5A5A, buffer.getInt(4), "nothing written before the index");
        assertEquals(0x5A, buffer.getByte(12), "nor after the payload");
    }

    @Test
    void theSnapshotDescribesEverySegmentAsTheRecordsLeftIt() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8(""));
        table.create(2, utf8("orders-0"));
        table.create(3, utf8("naïve/分区"));
        table.restore(4, "restored", 7, 9, true);
        table.create(5, utf8("deleted"));
        table.data(2, 4096);
        table.truncate(2, 1000);
        table.seal(2);
        table.data(3, 12);
        table.delete(5);

        // 28 bytes of fields then the name, each rounded up to 8: 32, 40, 48 (13-byte name), 40.
        final int expectedLength = 4 + 32 + 40 + 48 + 40;
        assertEquals(expectedLength, table.snapshotPayloadLength());

        final int index = 24;
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[index + expectedLength + 16]);
        buffer.setMemory(0, buffer.capacity(), (byte)0x7F);
        assertEquals(expectedLength, table.putSnapshot(buffer, index));
        assertEquals(0x7F, buffer.getByte(index - 1));
        assertEquals(0x7F, buffer.getByte(index + expectedLength));

        final Map<Integer, Decoded> entries = decode(buffer, index, expectedLength);
        assertEquals(4, entries.size());
        assertEquals(new Decoded(1, false, 0, 0, ""), entries.get(1));
        assertEquals(new Decoded(2, true, 1000, 4096, "orders-0"), entries.get(2));
        assertEquals(new Decoded(3, false, 0, 12, "naïve/分区"), entries.get(3));
        assertEquals(new Decoded(4, true, 7, 9, "restored"), entries.get(4));
    }

    @Test
    void aSnapshotTooLongForOneRecordIsRefusedAndWrittenAgainOnceDeletesShortenIt() {
        // The real limit is ~2 GB of entries: the same rule with a limit of 1,000 bytes.
        final LogSegmentTable table = new LogSegmentTable(1_000);
        table.currentFile(1);
        final byte[] name = new byte[100];
        int id = 0;
        while (table.snapshotPayloadLength() + LogFileDescriptor.snapshotEntryLength(name.length) <= 1_000) {
            table.create(id++, name);
        }
        table.create(id, name);
        table.data(id, 10);
        table.seal(3);
        final IllegalStateException e = assertThrows(IllegalStateException.class, table::snapshotPayloadLength);
        assertTrue(e.getMessage().contains("too long"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> table.putSnapshot(new UnsafeBuffer(new byte[4096]), 0));

        table.delete(0);
        final int length = table.snapshotPayloadLength();
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length]);
        assertEquals(length, table.putSnapshot(buffer, 0));
        final Map<Integer, Decoded> entries = decode(buffer, 0, length);
        assertEquals(id, entries.size());
        assertNull(entries.get(0));
        assertEquals(new Decoded(id, false, 0, 10, new String(name, StandardCharsets.UTF_8)), entries.get(id));
        assertTrue(entries.get(3).sealed());
    }

    @Test
    void shouldKeepAFileWithALiveCopyAndForgetACopyOfADeletedSegment() {
        final LogSegmentTable table = withCurrentFile(1);
        table.create(1, utf8("a"));
        table.create(2, utf8("b"));
        table.data(1, 100);
        table.currentFile(2);
        table.copy(1, 100);
        table.delete(2);
        table.copy(2, 50);
        assertEquals(100, table.segment(1).length, "a copy does not extend the segment");
        table.currentFile(3);
        table.removeFile(1);
        assertFalse(table.hasFile(1), "compaction retired file 1");
        assertEquals(0, dead(table).size(), "file 2 holds the live copy of a; the copy of deleted b counts for nothing");
        table.truncate(1, 100);
        assertEquals(2L, dead(table).getLong(0), "once a is truncated past it, the copy is dead");
    }

    @Test
    void theImageIsCountedOffHeapAndTheRowsOnHeap() {
        final LogSegmentTable table = withCurrentFile(1);
        assertEquals(64 * 1024, table.offHeapBytes(), "the image's first buffer");
        final byte[] name = new byte[100];
        for (int id = 0; id < 1000; id++) {
            table.create(id, name);
        }
        assertEquals(128 * 1024, table.offHeapBytes(), "1,000 entries of 128 bytes after 28 of header and COUNT: doubled once from 64 KiB");
        // One page of rows (two int columns of 1,024) and its directory slot; no file node yet.
        assertEquals(2 * 1024 * 4 + 20, table.heapBytes());
    }
}
