package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationList;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogRecoveryTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    // ------------------------------------------------------------------------------------------
    // Clean logs
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldRecoverSegmentsAndLocationsAcrossFiles() throws IOException {
        for (long seed = 1; seed <= 4; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("log-" + seed));
            final TestLogWriter writer = randomLog(dir, seed, 1500);
            assertTrue(writer.fileNumber() >= 4, "the workload spans several files: " + writer.fileNumber());

            final RecoveredLog log = LogRecovery.builder(dir).build().recover();

            assertRecovered(log, writer.model(), writer.records());
            assertEquals(writer.fileNumber(), log.tailFileNumber());
            assertEquals(writer.writePosition(), log.resumePosition());
            assertEquals(writer.writePosition(), log.tailEndPosition());
            assertEquals(writer.writePosition(), log.tailZeroEnd());
            assertEquals(FILE_LENGTH, log.tailFileLength());
            assertEquals(writer.fileNumber() + 1, log.nextFileNumber());
            assertEquals(writer.model().segments().size() + 1, log.nextSegmentId());
            assertEquals(writer.fileNumber(), log.files().size());
            assertNull(log.truncation());
            assertTrue(log.removedFiles().isEmpty());
            for (final RecoveredFile file : log.files()) {
                long dataLength = 0;
                for (final TestLogWriter.RecordInfo r : writer.records()) {
                    if (r.fileNumber() == file.fileNumber() && r.type() == LogRecordDescriptor.TYPE_DATA) {
                        dataLength += r.length();
                    }
                }
                assertEquals(dataLength, file.dataLength(), file.toString());
                assertTrue(file.liveLength() <= file.dataLength());
            }
        }
    }

    @Test
    void shouldRecoverAnEmptyDirectory() throws IOException {
        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        assertEquals(0, log.tailFileNumber());
        assertEquals(1, log.nextFileNumber());
        assertEquals(1, log.nextSegmentId());
        assertTrue(log.segments().isEmpty());
        assertTrue(log.files().isEmpty());
    }

    @Test
    void shouldReplayARolledFileThatEndsExactlyAtItsEnd() throws IOException {
        final long fileLength = 3 * PAGE_LENGTH;
        final TestLogWriter writer = new TestLogWriter(directory, fileLength, BATCH);
        writer.create(1, "a");
        writer.flush();
        // Fills page 2, the last of file 1, exactly; the next record rolls to file 2.
        writer.data(1, PAGE_LENGTH - LogRecordDescriptor.HEADER_LENGTH);
        writer.data(1, 100);
        writer.close();
        assertEquals(2, writer.fileNumber());

        final RecoveredLog log = LogRecovery.builder(directory).build().recover();

        assertRecovered(log, writer.model(), writer.records());
        assertEquals(ScanEnd.END_OF_FILE, log.files().get(0).end());
        assertEquals(2, log.tailFileNumber());
    }

    // ------------------------------------------------------------------------------------------
    // Torn tails
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldCutATornTailAtRandomBytesAndResume() throws IOException {
        final Path template = Files.createDirectory(directory.resolve("template"));
        final TestLogWriter original = randomLog(template, 11, 900);
        final List<TestLogWriter.RecordInfo> records = original.records();
        final long lastFile = original.fileNumber();
        final SplittableRandom random = new SplittableRandom(12);
        for (int round = 0; round < 24; round++) {
            final Path dir = copy(template, directory.resolve("round-" + round));
            final Path tail = dir.resolve(LogFileDescriptor.fileName(lastFile));
            final long cut = FIRST_RECORD_POSITION + random.nextLong(original.writePosition() - FIRST_RECORD_POSITION);
            if (round % 2 == 0) {
                // A shorter file is damage whatever was cut: never taken for a torn write.
                LogFiles.cut(tail, cut);
                final LogCorruptedException e = assertThrows(LogCorruptedException.class,
                    () -> LogRecovery.builder(dir).build().recover());
                assertEquals(lastFile, e.fileNumber(), e.getMessage());
                assertEquals(cut, e.position(), e.getMessage());
                continue;
            }
            LogFiles.zero(tail, cut, FILE_LENGTH);
            final int survivors = survivors(records, lastFile, cut);

            final RecoveredLog log = LogRecovery.builder(dir).build().recover();

            final TestLogWriter.Model expected = TestLogWriter.Model.replay(records, survivors);
            assertRecovered(log, expected, records.subList(0, survivors));
            assertCleanTail(log, dir);
            final long kept = survivors == 0 ? 0 : records.get(survivors - 1).end();
            if (log.tailFileNumber() == lastFile) {
                assertTrue(log.tailEndPosition() >= kept
                    && log.tailEndPosition() <= LogRecordDescriptor.align(Math.max(cut, kept), PAGE_LENGTH), "cut=" + cut + " " + log);
                assertEquals(LogRecordDescriptor.align(log.tailEndPosition(), PAGE_LENGTH), log.resumePosition());
            } else {
                assertTrue(cut < records.stream().filter(r -> r.fileNumber() == lastFile).findFirst().orElseThrow().end(),
                    "the tail lost its SNAPSHOT, so the file before it is the tail: " + log);
                assertEquals(List.of(tail), log.removedFiles());
                assertFalse(Files.exists(tail));
            }
            assertResumable(dir, log, expected, 300 + round);
        }
    }

    @Test
    void shouldDropALastRecordWhoseBytesWereZeroedInPart() throws IOException {
        final TestLogWriter writer = randomWriter(directory, 21, 400);
        writer.data(writer.model().segments().values().stream().filter(s -> !s.deleted && !s.sealed).findFirst().orElseThrow().id,
            3000);
        writer.close();
        final List<TestLogWriter.RecordInfo> records = writer.records();
        final TestLogWriter.RecordInfo last = records.get(records.size() - 1);
        final Path tail = writer.path(writer.fileNumber());
        for (final long[] range : new long[][] {{last.position() + 1000, last.position() + 1100},
            {last.position(), last.position() + 8}, {last.end() - 1, last.end()}}) {
            final Path dir = copy(directory, directory.getParent().resolve(directory.getFileName() + "-" + range[0] + "-" + range[1]));
            LogFiles.zero(dir.resolve(tail.getFileName()), range[0], range[1]);

            final RecoveredLog log = LogRecovery.builder(dir).build().recover();

            final TestLogWriter.Model expected = TestLogWriter.Model.replay(records, records.size() - 1);
            assertRecovered(log, expected, records.subList(0, records.size() - 1));
            assertEquals(last.position(), log.tailEndPosition());
            assertCleanTail(log, dir);
            if ((last.position() & (PAGE_LENGTH - 1)) != 0) {
                final ByteBuffer padding = ByteBuffer.wrap(LogFiles.read(dir.resolve(tail.getFileName()), last.position(), 8))
                    .order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(LogRecordDescriptor.MAGIC, padding.getShort(0));
                assertEquals(LogRecordDescriptor.TYPE_PADDING, padding.get(2), "the torn rest of the page became padding");
            }
            assertResumable(dir, log, expected, 5);
        }
    }

    @Test
    void shouldZeroValidRecordsOfATornWriteAfterTheCut() throws IOException {
        final TestLogWriter writer = randomWriter(directory, 31, 200);
        writer.roll();
        writer.flush();
        final long firstWrite = writer.writePosition();
        final int before = writer.records().size();
        final int id = writer.model().segments().values().stream().filter(s -> !s.deleted && !s.sealed).findFirst().orElseThrow().id;
        for (int i = 0; i < 20; i++) {
            writer.data(id, 700);
        }
        writer.flush();
        final long secondWrite = writer.writePosition();
        for (int i = 0; i < 20; i++) {
            writer.data(id, 700);
        }
        writer.close();
        assertEquals(writer.fileNumber(), writer.records().get(before).fileNumber(), "both writes in one file");
        // The first of two writes in flight lost a page; the second reached the disk.
        final Path tail = writer.path(writer.fileNumber());
        LogFiles.zero(tail, firstWrite + PAGE_LENGTH, firstWrite + 2 * PAGE_LENGTH);
        final int survivors = survivors(writer.records(), writer.fileNumber(), firstWrite + PAGE_LENGTH);

        final RecoveredLog log = LogRecovery.builder(directory).tornWriteWindow(1 << 20).build().recover();

        final TestLogWriter.Model expected = TestLogWriter.Model.replay(writer.records(), survivors);
        assertRecovered(log, expected, writer.records().subList(0, survivors));
        assertTrue(log.tailZeroEnd() >= writer.writePosition(), log.toString());
        assertTrue(LogFiles.isZero(tail, secondWrite, writer.writePosition()), "the second write's records are zeroed");
        assertCleanTail(log, directory);
        assertResumable(directory, log, expected, 7);
    }

    @Test
    void shouldChangeNothingWhenReadOnly() throws IOException {
        final TestLogWriter writer = randomLog(directory, 41, 300);
        final Path tail = writer.path(writer.fileNumber());
        LogFiles.zero(tail, writer.writePosition() - 1000, writer.writePosition());
        TestLogWriter.createFile(directory, writer.fileNumber() + 1, FILE_LENGTH).close();
        final byte[] before = Files.readAllBytes(tail);

        final RecoveredLog readOnly = LogRecovery.builder(directory).readOnly(true).build().recover();

        assertArrayEquals(before, Files.readAllBytes(tail));
        assertTrue(Files.exists(writer.path(writer.fileNumber() + 1)));
        final RecoveredLog repaired = LogRecovery.builder(directory).build().recover();
        assertEquals(readOnly.resumePosition(), repaired.resumePosition());
        assertEquals(readOnly.tailEndPosition(), repaired.tailEndPosition());
        assertEquals(readOnly.removedFiles(), repaired.removedFiles());
        assertFalse(Files.exists(writer.path(writer.fileNumber() + 1)));
        assertEquals(FILE_LENGTH, Files.size(tail));
    }

    @Test
    void shouldRemoveFilesAfterTheTailThatHoldNoRecord() throws IOException {
        final TestLogWriter writer = randomLog(directory, 51, 300);
        final long tail = writer.fileNumber();
        TestLogWriter.createFile(directory, tail + 1, FILE_LENGTH).close();
        TestLogWriter.createFile(directory, tail + 2, FILE_LENGTH).close();
        LogFiles.zero(writer.path(tail + 2), 0, PAGE_LENGTH);
        LogFiles.cut(writer.path(tail + 2), 10 * PAGE_LENGTH);

        final RecoveredLog log = LogRecovery.builder(directory).build().recover();

        assertRecovered(log, writer.model(), writer.records());
        assertEquals(tail, log.tailFileNumber());
        assertEquals(List.of(writer.path(tail + 2), writer.path(tail + 1)), log.removedFiles());
        assertFalse(Files.exists(writer.path(tail + 1)));
        assertFalse(Files.exists(writer.path(tail + 2)));
    }

    @Test
    void shouldReadARecycledTailWithoutItsStaleRecords() throws IOException {
        final TestLogWriter writer = randomWriter(directory, 61, 700);
        final long next = writer.fileNumber() + 1;
        writer.roll();
        writer.create(1000, "fresh");
        writer.data(1000, 123);
        writer.close();
        // Recycle: the old file 1's bytes behind file `next`'s fresh records.
        final long freshEnd = writer.writePosition();
        final byte[] old = LogFiles.read(writer.path(1), freshEnd, (int) (FILE_LENGTH - freshEnd));
        LogFiles.write(writer.path(next), freshEnd, ByteBuffer.wrap(old));

        final RecoveredLog log = LogRecovery.builder(directory).tornWriteWindow(32 << 10).build().recover();

        assertRecovered(log, writer.model(), writer.records());
        assertEquals(next, log.tailFileNumber());
        assertEquals(freshEnd, log.resumePosition());
        assertEquals(ScanEnd.STALE, log.files().get(log.files().size() - 1).end());
        assertTrue(LogFiles.isZero(writer.path(next), freshEnd, freshEnd + (32 << 10)), "stale pages in the window zeroed");
        assertResumable(directory, log, writer.model(), 9);
    }

    // ------------------------------------------------------------------------------------------
    // Corruption
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldFailOnAFlippedBitBeforeLaterRecordsNamingFileAndPosition() throws IOException {
        final TestLogWriter writer = randomLog(directory, 71, 1200);
        final TestLogWriter.RecordInfo victim = victim(writer.records(), 2);
        LogFiles.flipBit(writer.path(2), victim.position() + LogRecordDescriptor.HEADER_LENGTH + victim.length() / 2, 5);
        final Map<Path, byte[]> before = contents(directory);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).build().recover());

        assertEquals(writer.path(2), e.file());
        assertEquals(2, e.fileNumber());
        assertEquals(victim.position(), e.position());
        assertTrue(e.getMessage().contains(writer.path(2).toString()) && e.getMessage().contains("position=" + victim.position()),
            e.getMessage());
        assertTrue(e.getMessage().contains("CRC"), e.getMessage());
        assertContentsEqual(before, contents(directory));
    }

    @Test
    void shouldFailOnCorruptionInsideTheTailBeyondTheWindow() throws IOException {
        final TestLogWriter writer = randomLog(directory, 72, 1200);
        final long tail = writer.fileNumber();
        final TestLogWriter.RecordInfo victim = writer.records().stream()
            .filter(r -> r.fileNumber() == tail && r.type() == LogRecordDescriptor.TYPE_DATA).findFirst().orElseThrow();
        assertTrue(writer.writePosition() - victim.position() > 3 * PAGE_LENGTH);
        LogFiles.flipBit(writer.path(tail), victim.position() + 1, 0);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).tornWriteWindow(2 * PAGE_LENGTH).build().recover());

        assertEquals(tail, e.fileNumber());
        assertEquals(victim.position(), e.position());
        assertTrue(e.reason().contains("MAGIC"), e.reason());
    }

    @Test
    void shouldTruncateAtTheCorruptionWhenAskedKeepingWhatPrecedes() throws IOException {
        final TestLogWriter writer = randomLog(directory, 73, 1200);
        final List<TestLogWriter.RecordInfo> records = writer.records();
        final TestLogWriter.RecordInfo victim = victim(records, 2);
        LogFiles.flipBit(writer.path(2), victim.position() + LogRecordDescriptor.HEADER_LENGTH, 0);

        final RecoveredLog log = LogRecovery.builder(directory).corruptionPolicy(CorruptionPolicy.TRUNCATE).build().recover();

        final int survivors = records.indexOf(victim);
        final TestLogWriter.Model expected = TestLogWriter.Model.replay(records, survivors);
        assertRecovered(log, expected, records.subList(0, survivors));
        assertEquals(2, log.truncation().fileNumber());
        assertEquals(victim.position(), log.truncation().position());
        assertEquals(2, log.tailFileNumber());
        assertEquals(LogRecordDescriptor.align(victim.position(), PAGE_LENGTH), log.resumePosition());
        for (long n = 3; n <= writer.fileNumber(); n++) {
            assertFalse(Files.exists(writer.path(n)), "later file " + n + " deleted");
            assertTrue(log.removedFiles().contains(writer.path(n)));
        }
        assertCleanTail(log, directory);

        final RecoveredLog again = LogRecovery.builder(directory).build().recover();
        assertNull(again.truncation(), "the cut log is clean");
        assertRecovered(again, expected, records.subList(0, survivors));
        assertResumable(directory, again, expected, 13);
    }

    @Test
    void shouldTreatARecordThatBreaksTheHistoryAsCorruption() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 100);
        writer.flush();
        final long position = writer.writePosition();
        writer.raw(LogRecordDescriptor.TYPE_DATA, 1, 99, TestLogWriter.pattern(1, 99, 10));
        writer.data(1, 10);
        writer.close();

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).build().recover());
        assertEquals(position, e.position());
        assertTrue(e.reason().contains("offset=99") && e.reason().contains("length=100"), e.reason());

        final RecoveredLog log = LogRecovery.builder(directory).corruptionPolicy(CorruptionPolicy.TRUNCATE).build().recover();
        assertEquals(100, log.segment("a").length());
        assertEquals(position, log.resumePosition());
        assertTrue(LogFiles.isZero(writer.path(1), position, writer.writePosition()), "the records after the cut are zeroed");
        assertNull(LogRecovery.builder(directory).build().recover().truncation());
    }

    @Test
    void shouldCheckEverySnapshotAgainstTheRecordsBeforeIt() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 100);
        writer.roll();
        writer.close();
        // Rewrite file 2's SNAPSHOT: it says segment a is 99 bytes long.
        final TestLogWriter.RecordInfo snapshot = writer.records().get(writer.records().size() - 1);
        final byte[] payload = new byte[SnapshotCodec.encodedLength(List.of(new SnapshotCodec.Entry(1, false, 0, 99, "a")))];
        SnapshotCodec.encode(List.of(new SnapshotCodec.Entry(1, false, 0, 99, "a")), new org.agrona.concurrent.UnsafeBuffer(payload), 0);
        LogFiles.write(writer.path(2), snapshot.position(), LogFiles.record(2, LogRecordDescriptor.TYPE_SNAPSHOT, 0, 0, payload));

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).build().recover());
        assertEquals(2, e.fileNumber());
        assertEquals(FIRST_RECORD_POSITION, e.position());
        assertTrue(e.reason().contains("SNAPSHOT"), e.reason());
    }

    /**
     * Every kind of difference between a later file's SNAPSHOT and the records before it is
     * found, and named, whether or not the quick check that passes matching tables is taken.
     */
    @Test
    void shouldNameEachKindOfSnapshotDifference() throws IOException {
        final String[][] cases = {
            // the SNAPSHOT's entries (id:name:length:sealed), then what the message must say
            {"1:a:100:false,3:x:50:false", "SNAPSHOT lists"},          // x instead of c: wrong name
            {"1:a:100:true,3:c:50:false", "SNAPSHOT lists"},           // a said sealed
            {"1:a:100:false,1:c:50:false", "segmentId=1 twice"},       // an id twice
            {"1:a:100:false,2:b:50:false", "SNAPSHOT misses segmentId=3 name=c"},  // the deleted b instead of c
        };
        for (final String[] c : cases) {
            final Path dir = directory.resolve("case-" + c[1].hashCode() + "-" + c[0].hashCode());
            java.nio.file.Files.createDirectories(dir);
            final TestLogWriter writer = new TestLogWriter(dir, FILE_LENGTH, BATCH);
            writer.create(1, "a");
            writer.data(1, 100);
            writer.create(2, "b");
            writer.data(2, 50);
            writer.create(3, "c");
            writer.data(3, 50);
            writer.delete(2);
            writer.roll();
            writer.close();
            assertNull(LogRecovery.builder(dir).build().recover().truncation(), "the log as written recovers");
            final List<SnapshotCodec.Entry> entries = new java.util.ArrayList<>();
            for (final String e : c[0].split(",")) {
                final String[] f = e.split(":");
                entries.add(new SnapshotCodec.Entry(Integer.parseInt(f[0]), Boolean.parseBoolean(f[3]), 0, Long.parseLong(f[2]), f[1]));
            }
            final TestLogWriter.RecordInfo snapshot = writer.records().get(writer.records().size() - 1);
            final byte[] payload = new byte[SnapshotCodec.encodedLength(entries)];
            SnapshotCodec.encode(entries, new org.agrona.concurrent.UnsafeBuffer(payload), 0);
            LogFiles.write(writer.path(2), snapshot.position(), LogFiles.record(2, LogRecordDescriptor.TYPE_SNAPSHOT, 0, 0, payload));

            final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(dir).build().recover(),
                c[0]);
            assertEquals(2, e.fileNumber(), c[0]);
            assertTrue(e.reason().contains(c[1]), c[0] + ": " + e.reason());
        }
    }

    @Test
    void shouldFailOnAFileBeforeTheTailThatEndsTornOrHasABadHeader() throws IOException {
        final TestLogWriter writer = randomLog(directory, 81, 1000);
        final Map<Path, byte[]> pristine = contents(directory);
        final TestLogWriter.RecordInfo last = writer.records().stream().filter(r -> r.fileNumber() == 2)
            .reduce((a, b) -> b).orElseThrow();
        LogFiles.zero(writer.path(2), last.position() + 8, last.end());
        LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(directory).build().recover());
        assertEquals(2, e.fileNumber());
        assertEquals(last.position(), e.position());
        assertTrue(e.reason().contains("before the tail"), e.reason());

        restore(pristine);
        LogFiles.zero(writer.path(3), 0, 8);
        e = assertThrows(LogCorruptedException.class, () -> LogRecovery.builder(directory).build().recover());
        assertEquals(3, e.fileNumber());
        assertEquals(0, e.position());
        assertTrue(e.reason().contains("header"), e.reason());
    }

    // ------------------------------------------------------------------------------------------
    // Dead files
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldReportDeadFilesAndRecoverWithoutThem() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.create(2, "b");
        writer.create(3, "c");
        writer.data(1, 5000);
        writer.data(2, 5000);
        writer.roll();
        writer.data(2, 5000);
        writer.data(3, 5000);
        writer.roll();
        writer.data(3, 5000);
        writer.roll();
        writer.data(2, 5000);
        writer.data(3, 5000);
        writer.delete(1);
        writer.truncate(2, 10_000);
        writer.truncate(3, 10_000);
        writer.close();

        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();

        final Map<Long, Long> live = new TreeMap<>();
        log.files().forEach(f -> live.put(f.fileNumber(), f.liveLength()));
        assertEquals(Map.of(1L, 0L, 2L, 0L, 3L, 0L, 4L, 10_000L), live);
        assertEquals(List.of(1L, 2L, 3L), log.deletableFiles().stream().map(RecoveredFile::fileNumber).toList());
        assertEquals(Map.of(2, 5000L), log.files().get(0).dataEnds(), "a is deleted; b's data in file 1 end at 5000");
        assertEquals(Map.of(2, 10_000L, 3, 5000L), log.files().get(1).dataEnds());

        // The writer deletes any dead file: a gap in the middle, then the oldest.
        Files.delete(writer.path(2));
        final RecoveredLog withoutTwo = LogRecovery.builder(directory).build().recover();
        assertRecovered(withoutTwo, writer.model(), writer.records(), false);
        Files.delete(writer.path(1));
        Files.delete(writer.path(3));
        final RecoveredLog withoutThree = LogRecovery.builder(directory).build().recover();
        assertRecovered(withoutThree, writer.model(), writer.records(), false);
        assertEquals(10_000, withoutThree.segment("b").loggedFromOffset(), "b's length in file 4's SNAPSHOT");
    }

    @Test
    void shouldRecoverAfterAnyDeadFilesAreDeleted() throws IOException {
        int deleted = 0;
        for (long seed = 1; seed <= 6; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("dead-" + seed));
            final TestLogWriter writer = randomLog(dir, 100 + seed, 2000);
            final RecoveredLog before = LogRecovery.builder(dir).readOnly(true).build().recover();
            final SplittableRandom random = new SplittableRandom(seed);
            for (final RecoveredFile file : before.deletableFiles()) {
                assertTrue(file.fileNumber() < before.tailFileNumber());
                if (random.nextInt(3) > 0) {
                    Files.delete(file.path());
                    deleted++;
                }
            }

            final RecoveredLog after = LogRecovery.builder(dir).build().recover();

            assertRecovered(after, writer.model(), writer.records(), false);
            assertEquals(before.tailFileNumber(), after.tailFileNumber());
            assertEquals(before.resumePosition(), after.resumePosition());
            for (final RecoveredFile file : after.files()) {
                assertTrue(Files.exists(file.path()));
            }
        }
        assertTrue(deleted > 3, "the workloads leave dead files to delete: " + deleted);
    }

    @Test
    void shouldFailWhenAFileWithLiveDataIsMissing() throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 5000);
        writer.roll();
        writer.data(1, 5000);
        writer.roll();
        writer.data(1, 5000);
        writer.close();
        Files.delete(writer.path(2));

        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).corruptionPolicy(CorruptionPolicy.TRUNCATE).build().recover());
        assertEquals(3, e.fileNumber());
        assertTrue(e.reason().contains("deleted while its data were live"), e.reason());
    }

    // ------------------------------------------------------------------------------------------
    // Helpers
    // ------------------------------------------------------------------------------------------

    /**
     * A random history over a few segments: creates, appends of 1 B to 3 KB, seals, truncations,
     * deletions, batches cut by size and at random.
     */
    static TestLogWriter randomLog(final Path dir, final long seed, final int operations) throws IOException {
        final TestLogWriter writer = randomWriter(dir, seed, operations);
        writer.close();
        return writer;
    }

    /**
     * {@link #randomLog} left open.
     */
    static TestLogWriter randomWriter(final Path dir, final long seed, final int operations) throws IOException {
        final TestLogWriter writer = new TestLogWriter(dir, FILE_LENGTH, BATCH);
        final SplittableRandom random = new SplittableRandom(seed);
        final List<Integer> live = new ArrayList<>();
        int nextId = 1;
        for (int op = 0; op < operations; op++) {
            final int r = random.nextInt(100);
            if (live.size() < 2 || r < 4) {
                writer.create(nextId, "segment-" + nextId);
                live.add(nextId++);
                continue;
            }
            final TestLogWriter.SegmentModel segment = writer.model().segment(live.get(random.nextInt(live.size())));
            if (r < 88) {
                if (!segment.sealed) {
                    writer.data(segment.id, 1 + random.nextInt(random.nextBoolean() ? 3000 : 100));
                }
            } else if (r < 90) {
                writer.seal(segment.id);
            } else if (r < 97) {
                final long keep = random.nextBoolean() ? 0 : random.nextLong(segment.length - segment.start + 1);
                writer.truncate(segment.id, segment.length - keep);
            } else if (live.size() > 2) {
                writer.delete(segment.id);
                live.remove(Integer.valueOf(segment.id));
            }
            if (random.nextInt(20) == 0) {
                writer.flush();
            }
        }
        return writer;
    }

    /**
     * @return how many records (in log order) survive a cut of the last file at {@code cut}.
     */
    private static int survivors(final List<TestLogWriter.RecordInfo> records, final long lastFile, final long cut) {
        int survivors = 0;
        while (survivors < records.size()
            && (records.get(survivors).fileNumber() < lastFile || records.get(survivors).end() <= cut)) {
            survivors++;
        }
        // A last file that lost its SNAPSHOT is removed whole.
        if (survivors < records.size() && records.get(survivors).type() == LogRecordDescriptor.TYPE_SNAPSHOT
            && records.get(survivors).fileNumber() == lastFile) {
            return survivors;
        }
        return survivors;
    }

    private static TestLogWriter.RecordInfo victim(final List<TestLogWriter.RecordInfo> records, final long fileNumber) {
        final List<TestLogWriter.RecordInfo> data = records.stream()
            .filter(r -> r.fileNumber() == fileNumber && r.type() == LogRecordDescriptor.TYPE_DATA && r.length() > 100).toList();
        return data.get(data.size() / 3);
    }

    static void assertRecovered(final RecoveredLog log, final TestLogWriter.Model model,
                                final List<TestLogWriter.RecordInfo> records) {
        assertRecovered(log, model, records, true);
    }

    /**
     * @param allFiles whether every file is there: else segments created and deleted in deleted
     *                 files are unknown to recovery (the live ones must all be there).
     */
    static void assertRecovered(final RecoveredLog log, final TestLogWriter.Model model,
                                final List<TestLogWriter.RecordInfo> records, final boolean allFiles) {
        if (allFiles) {
            assertEquals(model.segments().size(), log.segments().size(), log.segments().toString());
        }
        assertEquals(model.segments().values().stream().filter(s -> !s.deleted).count(), log.liveSegments().size());
        for (final RecoveredSegment segment : log.segments()) {
            final TestLogWriter.SegmentModel expected = model.segment(segment.id());
            final String what = "segment " + expected;
            assertEquals(expected.name, segment.name(), what);
            assertEquals(expected.deleted, segment.deleted(), what);
            if (segment.deleted() && !allFiles) {
                // Deleted in a deleted file: recovery knows only that it is gone.
                continue;
            }
            assertEquals(expected.length, segment.length(), what);
            assertEquals(expected.start, segment.startOffset(), what);
            assertEquals(expected.sealed, segment.sealed(), what);
            if (segment.deleted()) {
                assertTrue(segment.locations().isCleared());
                continue;
            }
            assertEquals(segment.length(), segment.locations().endOffset(), what);
            final List<List<Long>> expectedLocations = new ArrayList<>();
            for (final TestLogWriter.RecordInfo r : records) {
                if (r.type() == LogRecordDescriptor.TYPE_DATA && r.segmentId() == segment.id() && r.length() > 0
                    && r.offset() + r.length() > Math.max(segment.startOffset(), segment.loggedFromOffset())) {
                    expectedLocations.add(List.of(r.offset(), (long) r.length(), r.fileNumber(), r.position()));
                }
            }
            final LocationList list = new LocationList();
            assertTrue(segment.locations().locate(0, Long.MAX_VALUE, list));
            final List<List<Long>> actual = new ArrayList<>();
            for (int i = 0; i < list.count(); i++) {
                actual.add(List.of(list.offset(i), (long) list.length(i), list.fileNumber(i), list.position(i)));
            }
            assertEquals(expectedLocations, actual, what);
        }
    }

    /**
     * The tail file is FILE_LENGTH long and zero from the resume position on; a second recovery
     * finds the same tail and nothing to cut.
     */
    private static void assertCleanTail(final RecoveredLog log, final Path dir) throws IOException {
        if (log.tailFileNumber() == 0) {
            return;
        }
        final Path tail = dir.resolve(LogFileDescriptor.fileName(log.tailFileNumber()));
        assertEquals(FILE_LENGTH, Files.size(tail));
        assertTrue(LogFiles.isZero(tail, log.resumePosition(), FILE_LENGTH), "zeros after resumePosition=" + log.resumePosition());
        final RecoveredLog again = LogRecovery.builder(dir).build().recover();
        assertEquals(log.tailFileNumber(), again.tailFileNumber());
        assertEquals(log.resumePosition(), again.resumePosition());
        assertTrue(again.files().get(again.files().size() - 1).end() == ScanEnd.ZEROS
            || again.files().get(again.files().size() - 1).end() == ScanEnd.END_OF_FILE, again.toString());
    }

    /**
     * Writes more where the recovered log resumes, then recovers again: everything, old and new.
     */
    private static void assertResumable(final Path dir, final RecoveredLog log, final TestLogWriter.Model model, final long seed)
        throws IOException {
        assertTrue(log.tailFileNumber() > 0);
        final TestLogWriter writer = TestLogWriter.resume(dir, FILE_LENGTH, BATCH, model, log);
        final SplittableRandom random = new SplittableRandom(seed);
        final int id = 10_000 + (int) seed;
        writer.create(id, "resumed-" + seed);
        for (int i = 0; i < 30; i++) {
            writer.data(id, 1 + random.nextInt(2000));
            if (random.nextInt(5) == 0) {
                writer.flush();
            }
        }
        writer.close();
        final RecoveredLog again = LogRecovery.builder(dir).build().recover();
        assertNull(again.truncation());
        final RecoveredSegment resumed = again.segment("resumed-" + seed);
        assertEquals(model.segment(id).length, resumed.length());
        for (final RecoveredSegment segment : again.liveSegments()) {
            assertEquals(model.segment(segment.id()).length, segment.length(), segment.toString());
            assertEquals(model.segment(segment.id()).start, segment.startOffset(), segment.toString());
        }
        assertEquals(model.segments().values().stream().filter(s -> !s.deleted).count(), again.liveSegments().size());
    }

    private static Path copy(final Path from, final Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (final Path file : files.toList()) {
                if (Files.isRegularFile(file)) {
                    Files.copy(file, to.resolve(file.getFileName()));
                }
            }
        }
        return to;
    }

    private static Map<Path, byte[]> contents(final Path dir) throws IOException {
        final Map<Path, byte[]> contents = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (final Path file : files.toList()) {
                if (Files.isRegularFile(file)) {
                    contents.put(file, Files.readAllBytes(file));
                }
            }
        }
        return contents;
    }

    private static void assertContentsEqual(final Map<Path, byte[]> expected, final Map<Path, byte[]> actual) {
        assertEquals(expected.keySet(), actual.keySet());
        for (final Map.Entry<Path, byte[]> entry : expected.entrySet()) {
            assertTrue(Arrays.equals(entry.getValue(), actual.get(entry.getKey())), "changed: " + entry.getKey());
        }
    }

    private static void restore(final Map<Path, byte[]> contents) throws IOException {
        for (final Map.Entry<Path, byte[]> entry : contents.entrySet()) {
            Files.write(entry.getKey(), entry.getValue());
        }
    }
}
