package io.streamcache.log.internal.recovery;

import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recovery of compaction copies (DATA records with FLAG_COPY): a copy is a new place of bytes
 * the segment holds, never new bytes; it fills what a retired file held; dead copies are ignored.
 */
class LogRecoveryCopyTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    /** One record as the location index gives it. */
    private record Loc(long offset, int length, long fileNumber, long position) {
    }

    private static List<Loc> locations(final RecoveredSegment segment) {
        final List<Loc> out = new ArrayList<>();
        segment.locations().forEach((offset, length, file, position) -> out.add(new Loc(offset, length, file, position)));
        return out;
    }

    /** Reads every indexed record of a segment from the files and checks its bytes, header and CRC. */
    private void assertBytes(final RecoveredSegment segment) throws IOException {
        long expected = -1;
        for (final Loc loc : locations(segment)) {
            assertTrue(expected < 0 || loc.offset() == expected, "contiguous at " + loc);
            expected = loc.offset() + loc.length();
            try (FileChannel channel = FileChannel.open(directory.resolve(String.format("log-%016x.log", loc.fileNumber())),
                StandardOpenOption.READ)) {
                final ByteBuffer record = ByteBuffer.allocate(LogRecordDescriptor.HEADER_LENGTH + loc.length())
                    .order(ByteOrder.LITTLE_ENDIAN);
                channel.read(record, loc.position());
                assertEquals(LogRecordDescriptor.TYPE_DATA, record.get(LogRecordDescriptor.TYPE_OFFSET));
                assertEquals(loc.offset(), record.getLong(LogRecordDescriptor.SEGMENT_OFFSET_OFFSET));
                final byte[] payload = new byte[loc.length()];
                record.position(LogRecordDescriptor.HEADER_LENGTH);
                record.get(payload);
                assertArrayEquals(TestLogWriter.pattern(segment.id(), loc.offset(), loc.length()), payload, loc.toString());
            }
        }
        assertEquals(segment.length(), expected, "indexed to the end");
    }

    @Test
    void shouldTakeACopyAsTheNewPlaceOfBytesWhoseOriginalStillExists() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 100);
        writer.data(1, 200);
        writer.data(1, 300);
        writer.roll();
        writer.copy(1, 100, 200);
        writer.copy(1, 100, 200);
        writer.close();

        final RecoveredSegment a = LogRecovery.builder(directory).build().recover().segment("a");
        assertEquals(600, a.length(), "a copy adds no byte, however often it is there");
        final List<Loc> locations = locations(a);
        assertEquals(3, locations.size());
        assertEquals(1, locations.get(0).fileNumber());
        assertEquals(2, locations.get(1).fileNumber(), "the newest copy wins");
        assertEquals(1, locations.get(2).fileNumber());
        assertBytes(a);
    }

    @Test
    void shouldFillTheBytesOfARetiredOldestFileFromTheirCopies() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "idle");
        writer.create(2, "busy");
        writer.data(1, 1000);
        writer.data(1, 500);
        writer.data(2, 5000);
        writer.roll();
        writer.data(2, 5000);
        writer.copy(1, 0, 1000);
        writer.copy(1, 1000, 500);
        writer.truncate(2, 10_000);
        writer.roll();
        writer.data(2, 100);
        writer.close();
        Files.delete(writer.path(1));

        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        final RecoveredSegment idle = log.segment("idle");
        assertEquals(0, idle.startOffset());
        assertEquals(1500, idle.length());
        assertEquals(List.of(new Loc(0, 1000, 2, locations(idle).get(0).position()),
            new Loc(1000, 500, 2, locations(idle).get(1).position())), locations(idle));
        assertBytes(idle);
        assertEquals(10_100, log.segment("busy").length());
        final RecoveredFile file2 = log.files().get(0);
        assertEquals(2, file2.fileNumber());
        assertEquals(1500, file2.liveLength(), "the copies are live data of file 2");
    }

    @Test
    void shouldFillTheBytesOfARetiredFileInTheMiddleKeepingWhatOlderFilesHold() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 500);
        writer.roll();
        writer.data(1, 700);
        writer.roll();
        writer.copy(1, 500, 700);
        writer.data(1, 300);
        writer.roll();
        writer.data(1, 50);
        writer.close();
        Files.delete(writer.path(2));

        final RecoveredSegment a = LogRecovery.builder(directory).build().recover().segment("a");
        assertEquals(0, a.startOffset());
        assertEquals(1550, a.length());
        final List<Loc> locations = locations(a);
        assertEquals(List.of(1L, 3L, 3L, 4L), locations.stream().map(Loc::fileNumber).toList());
        assertBytes(a);
    }

    @Test
    void shouldStillFailWhenACopyIsMissing() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 500);
        writer.data(1, 600);
        writer.roll();
        writer.copy(1, 500, 600);
        writer.close();
        Files.delete(writer.path(1));

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(directory).build().recover());
        assertTrue(e.reason().contains("deleted while its data were live"), e.reason());
    }

    @Test
    void shouldIgnoreCopiesOfDeletedSegmentsAndOfTruncatedBytes() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.create(2, "b");
        writer.data(1, 400);
        writer.data(2, 400);
        writer.data(2, 400);
        writer.truncate(2, 400);
        writer.copy(2, 0, 400);
        writer.delete(1);
        writer.copy(1, 0, 400);
        writer.close();

        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        assertEquals(null, log.segment("a"));
        final RecoveredSegment b = log.segment("b");
        assertEquals(400, b.startOffset());
        assertEquals(1, locations(b).size());
        assertEquals(400, locations(b).get(0).offset());
        assertFalse(log.files().isEmpty());
    }

    @Test
    void shouldCallACopyPastTheSegmentsLengthCorruption() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 400);
        writer.copy(1, 200, 400);
        writer.data(1, 100);
        writer.close();

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(directory).build().recover());
        assertTrue(e.reason().contains("a copy holds bytes the segment has"), e.reason());
    }

    @Test
    void shouldAcceptTheCopyFlagOnDataOnly() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 400);
        writer.copy(1, 0, 400);
        writer.rawFlags(LogRecordDescriptor.TYPE_SEAL, LogRecordDescriptor.FLAG_COPY, 1, 400, new byte[0]);
        writer.close();
        final List<Byte> flags = new ArrayList<>();
        final LogFileScan scan;
        try (FileChannel channel = FileChannel.open(writer.path(1), StandardOpenOption.READ)) {
            scan = new LogScanner(64 << 10, 64 << 10).scan(channel, 1, record -> {
                flags.add(record.flags());
                return true;
            });
        }
        assertEquals(List.of((byte) 0, (byte) 0, (byte) 0, LogRecordDescriptor.FLAG_COPY), flags, "SNAPSHOT, CREATE, DATA, copy");
        assertEquals(ScanEnd.TORN, scan.end(), "a SEAL with FLAG_COPY is invalid: " + scan);

        final Path other = Files.createDirectory(directory.resolve("other"));
        final TestLogWriter second = new TestLogWriter(other, FILE_LENGTH, BATCH);
        second.create(1, "a");
        second.rawFlags(LogRecordDescriptor.TYPE_DATA, (byte) 2, 1, 0, new byte[8]);
        second.close();
        try (FileChannel channel = FileChannel.open(second.path(1), StandardOpenOption.READ)) {
            final LogFileScan bad = new LogScanner(64 << 10, 64 << 10).scan(channel, 1, record -> true);
            assertTrue(bad.reason().contains("FLAGS"), bad.toString());
        }
    }
}
