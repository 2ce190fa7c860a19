package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogScannerTest {
    private static final long FILE_LENGTH = 256 << 10;
    private static final int CHUNK = 16 << 10;

    @TempDir
    Path directory;

    /** A record as the scanner reported it. */
    private record Seen(byte type, int segmentId, long offset, long position, int length) {
    }

    @Test
    void shouldReportEveryRecordOfACleanFileAndEndAtZeros() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 8 << 10);
        writer.create(1, "one");
        writer.create(2, "two");
        for (int i = 0; i < 200; i++) {
            writer.data(1 + i % 2, 1 + (i * 37) % 700);
        }
        writer.seal(2);
        writer.truncate(1, 100);
        writer.close();

        final List<Seen> seen = new ArrayList<>();
        final LogFileScan scan = scan(writer.path(1), 1, seen);

        assertEquals(expected(writer, 1), seen);
        assertEquals(ScanEnd.ZEROS, scan.end(), scan.toString());
        assertEquals(writer.writePosition(), scan.endPosition());
        assertEquals(writer.writePosition(), scan.resumePosition());
        assertTrue(scan.headerValid());
        assertEquals(FILE_LENGTH, scan.fileLength());
        assertEquals(200, scan.dataRecordCount());
        assertTrue(scan.paddingCount() > 0, "batches end with padding: " + scan);
        assertEquals(-1, scan.laterRecordPosition());
    }

    @Test
    void shouldSkipPaddingAndNeverTakeItForTheEnd() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 64 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 30; i++) {
            writer.data(1, 10 + i);
            writer.flush();
        }
        writer.close();

        final List<Seen> seen = new ArrayList<>();
        final LogFileScan scan = scan(writer.path(1), 1, seen);

        assertEquals(expected(writer, 1), seen);
        assertEquals(30, scan.paddingCount(), "one padding per batch");
        assertEquals(ScanEnd.ZEROS, scan.end());
        assertEquals(FIRST_RECORD_POSITION + 30L * PAGE_LENGTH, scan.endPosition());
    }

    @Test
    void shouldEndAtEndOfFileWhenTheRecordsFillIt() throws IOException {
        final long fileLength = 3 * PAGE_LENGTH;
        final Path file = newFile(1, fileLength);
        final ByteBuffer snapshot = LogFiles.record(1, LogRecordDescriptor.TYPE_SNAPSHOT, 0, 0, new byte[4]);
        LogFiles.write(file, FIRST_RECORD_POSITION, snapshot);
        final int payload = (int) (fileLength - FIRST_RECORD_POSITION - snapshot.capacity() - LogRecordDescriptor.HEADER_LENGTH);
        final byte[] create = "s".getBytes();
        final ByteBuffer createRecord = LogFiles.record(1, LogRecordDescriptor.TYPE_CREATE, 1, 0, create);
        LogFiles.write(file, FIRST_RECORD_POSITION + snapshot.capacity(), createRecord);
        final long dataPosition = FIRST_RECORD_POSITION + snapshot.capacity() + createRecord.capacity();
        LogFiles.write(file, dataPosition, LogFiles.record(1, LogRecordDescriptor.TYPE_DATA, 1, 0,
            TestLogWriter.pattern(1, 0, payload - createRecord.capacity())));

        final List<Seen> seen = new ArrayList<>();
        final LogFileScan scan = scan(file, 1, seen);

        assertEquals(3, seen.size());
        assertEquals(ScanEnd.END_OF_FILE, scan.end(), scan.toString());
        assertEquals(fileLength, scan.endPosition());
    }

    @Test
    void shouldCallARecordCutShortAtTheTailTorn() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 64 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 20; i++) {
            writer.data(1, 500);
        }
        writer.close();
        final TestLogWriter.RecordInfo last = writer.records().get(writer.records().size() - 1);
        LogFiles.zero(writer.path(1), last.position() + 100, last.end());

        final List<Seen> seen = new ArrayList<>();
        final LogFileScan scan = scan(writer.path(1), 1, seen);

        final List<Seen> expected = expected(writer, 1);
        assertEquals(expected.subList(0, expected.size() - 1), seen);
        assertEquals(ScanEnd.TORN, scan.end(), scan.toString());
        assertEquals(last.position(), scan.endPosition());
        assertTrue(scan.reason().contains("CRC"), scan.reason());
        assertEquals(LogRecordDescriptor.align(last.position(), PAGE_LENGTH), scan.resumePosition());
        assertTrue(scan.zeroEnd() >= scan.resumePosition());
    }

    @Test
    void shouldCallInvalidBytesFollowedByValidRecordsBeyondTheWindowCorrupt() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 4 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 300; i++) {
            writer.data(1, 300);
        }
        writer.close();
        final TestLogWriter.RecordInfo victim = writer.records().get(40);
        LogFiles.flipBit(writer.path(1), victim.position() + LogRecordDescriptor.HEADER_LENGTH + 17, 3);

        final List<Seen> seen = new ArrayList<>();
        final LogFileScan scan = new LogScanner(CHUNK, 16 << 10).scan(open(writer.path(1)), 1, collect(seen));

        assertEquals(ScanEnd.CORRUPT, scan.end(), scan.toString());
        assertEquals(victim.position(), scan.endPosition());
        assertEquals(40, seen.size());
        assertTrue(scan.laterRecordPosition() > victim.position());
        assertEquals(LogRecordDescriptor.align(writer.writePosition(), 8), LogRecordDescriptor.align(scan.laterRecordEnd(), PAGE_LENGTH),
            "the probe follows the later records to their end");

        // The same damage with a window that covers everything after it: a torn write would be
        // possible by position, but one flipped bit explains the CRC, so it is still corruption
        // (before, it was cut as a torn tail, losing every record after it).
        final LogFileScan flipped = new LogScanner(CHUNK, FILE_LENGTH).scan(open(writer.path(1)), 1, record -> true);
        assertEquals(ScanEnd.CORRUPT, flipped.end(), flipped.toString());
        assertEquals(victim.position(), flipped.endPosition());
        assertTrue(flipped.reason().contains("one flipped bit"), flipped.reason());
    }

    @Test
    void shouldCallPagesOfTheLastWritesLostOutOfOrderTorn() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 64 << 10);
        writer.create(1, "one");
        writer.flush();
        final long firstBatch = writer.writePosition();
        for (int i = 0; i < 50; i++) {
            writer.data(1, 400);
        }
        writer.flush();
        final long secondBatch = writer.writePosition();
        for (int i = 0; i < 50; i++) {
            writer.data(1, 400);
        }
        writer.close();
        // Two writes in flight at the crash: page 3 of the first never reached the disk, the second did.
        LogFiles.zero(writer.path(1), firstBatch + 3 * PAGE_LENGTH, firstBatch + 4 * PAGE_LENGTH);

        final LogFileScan scan = new LogScanner(CHUNK, 64 << 10).scan(open(writer.path(1)), 1, record -> true);

        assertEquals(ScanEnd.TORN, scan.end(), scan.toString());
        assertTrue(scan.endPosition() < firstBatch + 3 * PAGE_LENGTH && scan.endPosition() > firstBatch + 2 * PAGE_LENGTH,
            scan.toString());
        assertEquals(secondBatch, scan.laterRecordPosition(), "found at the page boundary where the second write starts");
        assertEquals(writer.writePosition(), LogRecordDescriptor.align(scan.laterRecordEnd(), PAGE_LENGTH));
        assertEquals(writer.writePosition(), scan.zeroEnd(), "a cut zeroes every later valid record");

        // Records of the first write after the hole start inside pages: no page boundary reaches
        // them, so neither can a later scan; with a window too small for the second write, corrupt.
        final LogFileScan small = new LogScanner(CHUNK, 16 << 10).scan(open(writer.path(1)), 1, record -> true);
        assertEquals(ScanEnd.CORRUPT, small.end(), small.toString());
    }

    @Test
    void shouldNeverValidateStaleRecordsOfAnotherFileNumber() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 8 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 50; i++) {
            writer.data(1, 333);
        }
        writer.close();
        // A recycled file: file 1's records under file 2's header.
        final Path recycled = directory.resolve(LogFileDescriptor.fileName(2));
        Files.copy(writer.path(1), recycled, StandardCopyOption.REPLACE_EXISTING);
        LogFiles.write(recycled, 0, TestLogWriter.header(2, FILE_LENGTH));

        final LogFileScan scan = scan(recycled, 2, new ArrayList<>());

        assertTrue(scan.headerValid());
        assertEquals(0, scan.recordCount());
        assertEquals(-1, scan.laterRecordPosition(), "no stale record validates anywhere");
        assertEquals(ScanEnd.STALE, scan.end());
        assertEquals(FIRST_RECORD_POSITION, scan.endPosition());
        assertFalse(scan.hasRecords());

        // The recycled file's new records, then the stale ones after them: they end the scan.
        final ByteBuffer snapshot = LogFiles.record(2, LogRecordDescriptor.TYPE_SNAPSHOT, 0, 0, new byte[4]);
        LogFiles.write(recycled, FIRST_RECORD_POSITION, snapshot);
        LogFiles.write(recycled, FIRST_RECORD_POSITION + snapshot.capacity(), LogFiles.padding(PAGE_LENGTH - snapshot.capacity()));
        final LogFileScan reused = scan(recycled, 2, new ArrayList<>());
        assertEquals(1, reused.recordCount());
        assertEquals(ScanEnd.STALE, reused.end(), reused.toString());
        assertEquals(FIRST_RECORD_POSITION + PAGE_LENGTH, reused.endPosition());
        assertTrue(reused.dirtyEnd() > reused.endPosition(), "stale pages noted for zeroing");
    }

    @Test
    void shouldRejectABadHeaderAndProbeForRecords() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 8 << 10);
        writer.create(1, "one");
        writer.data(1, 100);
        writer.close();

        final Path copy = directory.resolve(LogFileDescriptor.fileName(5));
        Files.copy(writer.path(1), copy);
        final LogFileScan wrongNumber = scan(copy, 5, new ArrayList<>());
        assertEquals(ScanEnd.BAD_HEADER, wrongNumber.end());
        assertTrue(wrongNumber.reason().contains("FILE_NUMBER=1"), wrongNumber.reason());
        assertFalse(wrongNumber.hasRecords(), "records seeded with file number 1 do not validate as file 5's");

        LogFiles.zero(writer.path(1), 0, PAGE_LENGTH);
        final LogFileScan zeroHeader = scan(writer.path(1), 1, new ArrayList<>());
        assertEquals(ScanEnd.BAD_HEADER, zeroHeader.end());
        assertFalse(zeroHeader.headerValid());
        assertTrue(zeroHeader.reason().contains("zeros"), zeroHeader.reason());
        assertEquals(FIRST_RECORD_POSITION, zeroHeader.laterRecordPosition(), "the records behind a lost header are found");

        LogFiles.cut(copy, 100);
        assertEquals(ScanEnd.BAD_HEADER, scan(copy, 5, new ArrayList<>()).end());
    }

    @Test
    void shouldCallAMisplacedValidRecordCorrupt() throws IOException {
        final Path file = newFile(1, FILE_LENGTH);
        final ByteBuffer create = LogFiles.record(1, LogRecordDescriptor.TYPE_CREATE, 1, 0, "x".getBytes());
        LogFiles.write(file, FIRST_RECORD_POSITION, create);
        LogFiles.write(file, FIRST_RECORD_POSITION + create.capacity(), LogFiles.padding(PAGE_LENGTH - create.capacity()));

        final LogFileScan scan = scan(file, 1, new ArrayList<>());

        assertEquals(ScanEnd.CORRUPT, scan.end());
        assertEquals(FIRST_RECORD_POSITION, scan.endPosition());
        assertTrue(scan.reason().contains("not a SNAPSHOT"), scan.reason());
        assertTrue(scan.hasRecords());
    }

    @Test
    void shouldStopWhereTheVisitorSays() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 8 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 10; i++) {
            writer.data(1, 100);
        }
        writer.close();
        final int[] count = {0};

        final LogFileScan scan = new LogScanner(CHUNK, 0).scan(open(writer.path(1)), 1, record -> ++count[0] < 5);

        assertEquals(ScanEnd.STOPPED, scan.end());
        assertEquals(writer.records().get(4).position(), scan.endPosition());
        assertEquals(4, scan.recordCount());
        assertEquals(scan.endPosition(), scan.laterRecordPosition());
        assertEquals(writer.writePosition(), LogRecordDescriptor.align(scan.laterRecordEnd(), PAGE_LENGTH));
    }

    @Test
    void shouldStreamRecordsLongerThanTheBuffer() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, 1 << 20, 256 << 10);
        final String longName = "n".repeat(40_000);
        writer.create(1, longName);
        writer.data(1, 100_000);
        writer.data(1, 10);
        writer.close();
        final List<String> names = new ArrayList<>();
        final List<Boolean> hasPayload = new ArrayList<>();

        final LogFileScan scan = new LogScanner(CHUNK, 0).scan(open(writer.path(1)), 1, record -> {
            hasPayload.add(record.hasPayload());
            if (record.type() == LogRecordDescriptor.TYPE_CREATE) {
                names.add(record.payloadAsString());
            }
            return true;
        });

        assertEquals(ScanEnd.ZEROS, scan.end(), scan.toString());
        assertEquals(List.of(longName), names);
        assertEquals(List.of(true, true, false, true), hasPayload, "snapshot, create loaded; the long DATA record streamed");

        final TestLogWriter.RecordInfo big = writer.records().get(2);
        LogFiles.flipBit(writer.path(1), big.position() + 90_000, 0);
        final LogFileScan damaged = new LogScanner(CHUNK, 1 << 20).scan(open(writer.path(1)), 1, record -> true);
        assertEquals(ScanEnd.TORN, damaged.end(), damaged.toString());
        assertEquals(big.position(), damaged.endPosition());
    }

    @Test
    void shouldClassifyAFileCutShort() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, 8 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 40; i++) {
            writer.data(1, 250);
        }
        writer.close();
        final TestLogWriter.RecordInfo record = writer.records().get(20);
        LogFiles.cut(writer.path(1), record.position() + 30);

        final LogFileScan scan = scan(writer.path(1), 1, new ArrayList<>());

        assertEquals(ScanEnd.TORN, scan.end(), scan.toString());
        assertEquals(record.position(), scan.endPosition());
        assertEquals(20, scan.recordCount());
    }

    @Test
    void shouldNotAllocatePerRecord() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, 8 << 20, 256 << 10);
        writer.create(1, "one");
        for (int i = 0; i < 50_000; i++) {
            writer.data(1, 40);
        }
        writer.close();
        final LogScanner scanner = new LogScanner();
        final long[] sum = {0};
        final LogRecordVisitor visitor = record -> {
            sum[0] += record.segmentOffset() + record.payload().getByte(0);
            return true;
        };
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (FileChannel channel = open(writer.path(1))) {
            for (int warm = 0; warm < 3; warm++) {
                scanner.scan(channel, 1, visitor);
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            final LogFileScan scan = scanner.scan(channel, 1, visitor);
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertEquals(50_002, scan.recordCount());
            assertTrue(allocated < 50_000, "allocated=" + allocated + " bytes scanning 50,002 records");
        }
    }

    // ------------------------------------------------------------------------------------------

    private Path newFile(final long number, final long fileLength) throws IOException {
        TestLogWriter.createFile(directory, number, fileLength).close();
        return directory.resolve(LogFileDescriptor.fileName(number));
    }

    private static FileChannel open(final Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.READ);
    }

    private static LogFileScan scan(final Path file, final long number, final List<Seen> seen) throws IOException {
        try (FileChannel channel = open(file)) {
            return new LogScanner(CHUNK, 64 << 10).scan(channel, number, collect(seen));
        }
    }

    private static LogRecordVisitor collect(final List<Seen> seen) {
        return record -> {
            seen.add(new Seen(record.type(), record.segmentId(), record.segmentOffset(), record.position(), record.length()));
            if (record.type() == LogRecordDescriptor.TYPE_DATA) {
                final byte[] payload = new byte[record.length()];
                record.payload().getBytes(0, payload);
                assertArrayEquals(TestLogWriter.pattern(record.segmentId(), record.segmentOffset(), record.length()), payload);
            }
            return true;
        };
    }

    private static List<Seen> expected(final TestLogWriter writer, final long fileNumber) {
        final List<Seen> expected = new ArrayList<>();
        for (final TestLogWriter.RecordInfo r : writer.records()) {
            if (r.fileNumber() == fileNumber) {
                expected.add(new Seen(r.type(), r.segmentId(), r.offset(), r.position(), r.length()));
            }
        }
        return expected;
    }
}
