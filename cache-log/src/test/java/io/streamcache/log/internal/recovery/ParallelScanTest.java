package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationIndex;

import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recovery with the files scanned ahead on a second thread ({@link Prescanner}) yields exactly
 * what recovery scanning every file itself yields: the same segments, locations, files, tail and
 * cut, and the same error at the same file and position.
 */
class ParallelScanTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    @Test
    void shouldRecoverTheSameAsAScanOnOneThread() throws IOException {
        for (long seed = 1; seed <= 6; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("log-" + seed));
            final TestLogWriter writer = LogRecoveryTest.randomLog(dir, 300 + seed, 2000);
            assertTrue(writer.fileNumber() >= 4, "several files: " + writer.fileNumber());

            final LogRecovery sequential = LogRecovery.builder(dir).parallelScan(false).readOnly(true).build();
            final RecoveredLog one = sequential.recover();
            final LogRecovery parallel = LogRecovery.builder(dir).parallelScan(true).readOnly(true).build();
            final RecoveredLog two = parallel.recover();

            assertEquals(0, sequential.prescannedFiles());
            assertEquals(writer.fileNumber() - 1, parallel.prescannedFiles(), "every file after the first was scanned ahead");
            assertSame(one, two);
            LogRecoveryTest.assertRecovered(two, writer.model(), writer.records());
        }
    }

    @Test
    void shouldFailAtTheSameFileAndPositionOnASnapshotThatDiffers() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 100);
        writer.roll();
        writer.data(1, 10);
        writer.roll();
        writer.close();
        // File 3's SNAPSHOT says a is 100 bytes long: the records before it leave 110.
        final TestLogWriter.RecordInfo snapshot = writer.records().get(writer.records().size() - 1);
        final List<SnapshotCodec.Entry> entries = List.of(new SnapshotCodec.Entry(1, false, 0, 100, "a"));
        final byte[] payload = new byte[SnapshotCodec.encodedLength(entries)];
        SnapshotCodec.encode(entries, new org.agrona.concurrent.UnsafeBuffer(payload), 0);
        LogFiles.write(writer.path(3), snapshot.position(), LogFiles.record(3, LogRecordDescriptor.TYPE_SNAPSHOT, 0, 0, payload));

        final LogCorruptedException one = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).parallelScan(false).build().recover());
        final LogCorruptedException two = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).parallelScan(true).build().recover());
        assertEquals(3, two.fileNumber());
        assertEquals(one.fileNumber(), two.fileNumber());
        assertEquals(one.position(), two.position());
        assertEquals(one.getMessage(), two.getMessage());
        assertTrue(two.reason().contains("length=110"), two.reason());
    }

    @Test
    void shouldCutAtTheSameRecordWhenALaterFileBreaksTheHistory() throws IOException {
        final Path template = Files.createDirectory(directory.resolve("template"));
        final TestLogWriter writer = new TestLogWriter(template, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.create(2, "b");
        writer.data(1, 100);
        writer.roll();
        writer.data(2, 100);
        writer.roll();
        writer.data(1, 50);
        writer.data(2, 50);
        writer.flush();
        final long position = writer.writePosition();
        // Validates, but a's length is 150: a record that breaks the history, in the middle of file 3.
        writer.raw(LogRecordDescriptor.TYPE_DATA, 1, 140, TestLogWriter.pattern(1, 140, 10));
        writer.data(2, 10);
        writer.roll();
        writer.data(1, 10);
        writer.close();

        final List<RecoveredLog> logs = new ArrayList<>();
        for (final boolean parallel : new boolean[] {false, true}) {
            final Path dir = copy(template, directory.resolve("parallel-" + parallel));
            assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(dir).parallelScan(parallel).build().recover());
            final RecoveredLog log = LogRecovery.builder(dir).parallelScan(parallel).corruptionPolicy(CorruptionPolicy.TRUNCATE)
                .build().recover();
            assertNotNull(log.truncation());
            assertEquals(3, log.truncation().fileNumber());
            assertEquals(position, log.truncation().position());
            assertEquals(3, log.tailFileNumber());
            assertEquals(position, log.resumePosition());
            assertEquals(150, log.segment("a").length());
            assertEquals(150, log.segment("b").length());
            logs.add(log);
        }
        assertSame(logs.get(0), logs.get(1));
    }

    @Test
    void shouldStopTheScanningThreadWhenRecoveryFails() throws IOException {
        final TestLogWriter writer = LogRecoveryTest.randomLog(directory, 77, 3000);
        assertTrue(writer.fileNumber() >= 6, "several files: " + writer.fileNumber());
        // A flipped bit in the middle of file 2: corruption long before the tail.
        final Path file = writer.path(2);
        final byte[] bytes = Files.readAllBytes(file);
        final int at = 3 * 4096 + 100;
        bytes[at] ^= 0x10;
        Files.write(file, bytes);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).parallelScan(true).build().recover());
        assertEquals(2, e.fileNumber());
        for (final Thread thread : Thread.getAllStackTraces().keySet()) {
            assertTrue(!thread.getName().equals("streamcache-recovery-scan") || !thread.isAlive(),
                "the prescan thread ends with the recovery: " + thread);
        }
    }

    private static Path copy(final Path from, final Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (final Path p : files.toList()) {
                Files.copy(p, to.resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return to;
    }

    /** The two results hold the same segments, locations, files and tail (paths aside). */
    static void assertSame(final RecoveredLog one, final RecoveredLog two) {
        assertEquals(one.segments().size(), two.segments().size());
        for (int i = 0; i < one.segments().size(); i++) {
            final RecoveredSegment a = one.segments().get(i);
            final RecoveredSegment b = two.segments().get(i);
            assertEquals(List.of(a.id(), a.name(), a.startOffset(), a.length(), a.sealed(), a.deleted(), a.loggedFromOffset()),
                List.of(b.id(), b.name(), b.startOffset(), b.length(), b.sealed(), b.deleted(), b.loggedFromOffset()));
            assertEquals(locations(a.locations()), locations(b.locations()), a.name());
        }
        assertEquals(one.files().size(), two.files().size());
        for (int i = 0; i < one.files().size(); i++) {
            final RecoveredFile a = one.files().get(i);
            final RecoveredFile b = two.files().get(i);
            assertEquals(List.of(a.fileNumber(), a.fileLength(), a.end(), a.endPosition(), a.recordCount(), a.dataLength(),
                a.liveLength(), a.dataEnds()), List.of(b.fileNumber(), b.fileLength(), b.end(), b.endPosition(), b.recordCount(),
                b.dataLength(), b.liveLength(), b.dataEnds()));
        }
        assertEquals(List.of(one.tailFileNumber(), one.tailEndPosition(), one.resumePosition(), one.tailZeroEnd(),
            one.nextFileNumber(), one.nextSegmentId(), one.bytesRead(), one.tornTailBytes()),
            List.of(two.tailFileNumber(), two.tailEndPosition(), two.resumePosition(), two.tailZeroEnd(), two.nextFileNumber(),
                two.nextSegmentId(), two.bytesRead(), two.tornTailBytes()));
    }

    private static List<List<Long>> locations(final LocationIndex index) {
        final List<List<Long>> all = new ArrayList<>();
        index.forEach((offset, length, fileNumber, position) -> all.add(List.of(offset, (long) length, fileNumber, position)));
        return all;
    }
}
