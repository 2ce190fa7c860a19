package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationIndex;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recovery from a {@link RecoveryCheckpoint} yields what recovery of every file yields (the live
 * segments, their locations, the files and the tail), also with compaction copies and files
 * deleted after the checkpoint; a checkpoint that is damaged, of another version, of another
 * log, or whose files were rewritten is refused and every file is scanned, with the same result
 * or the same error as without it.
 */
class CheckpointRecoveryTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    private static long checkpoint(final Path dir, final long target) throws Exception {
        return Checkpointer.checkpoint(dir, new LogScanner(64 << 10, 64 << 10), target, () -> false);
    }

    private static RecoveredLog full(final Path dir) throws IOException {
        return LogRecovery.builder(dir).readOnly(true).build().recover();
    }

    /** Recovers with the checkpoint and says whether it was used. */
    private static RecoveredLog fromCheckpoint(final Path dir, final boolean expectUsed) throws IOException {
        final LogRecovery recovery = LogRecovery.builder(dir).readOnly(true).checkpoint(true).build();
        final RecoveredLog log = recovery.recover();
        assertEquals(expectUsed, recovery.checkpointUsed(), "checkpoint used");
        return log;
    }

    @Test
    void shouldRecoverFromACheckpointWhatAFullScanRecoversForEveryFileItMayStartAt() throws Exception {
        for (long seed = 1; seed <= 5; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("log-" + seed));
            final TestLogWriter writer = LogRecoveryTest.randomLog(dir, 500 + seed, 2500);
            assertTrue(writer.fileNumber() >= 5, "several files: " + writer.fileNumber());
            final RecoveredLog expected = full(dir);
            final SplittableRandom random = new SplittableRandom(seed);
            long previous = 1;
            for (long target = 2; target <= writer.fileNumber(); target++) {
                if (random.nextBoolean()) {
                    // Sometimes a fresh checkpoint, sometimes one continuing the last.
                    Files.deleteIfExists(dir.resolve(RecoveryCheckpoint.FILE_NAME));
                }
                assertTrue(checkpoint(dir, target) > 0, "written before file " + target + " (previous " + previous + ")");
                previous = target;
                final RecoveredLog log = fromCheckpoint(dir, true);
                assertSameLive(expected, log);
                LogRecoveryTest.assertRecovered(log, writer.model(), writer.records(), false);
            }
        }
    }

    @Test
    void shouldRelocateToCopiesAfterTheCheckpointAndAcceptDeletedCoveredFilesWhoseDataWereCopied() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.create(2, "b");
        writer.data(1, 500);
        writer.data(2, 100);
        writer.roll();
        writer.data(1, 700);
        writer.roll();
        writer.flush();
        assertTrue(checkpoint(directory, 3) > 0);
        // Compaction after the checkpoint: file 2's live record copied into file 3, then file 2 deleted.
        writer.copy(1, 500, 700);
        writer.data(1, 300);
        writer.roll();
        writer.data(1, 50);
        writer.close();
        Files.delete(writer.path(2));

        final RecoveredLog log = fromCheckpoint(directory, true);
        assertSameLive(full(directory), log);
        final List<Long> files = new ArrayList<>();
        log.segment("a").locations().forEach((offset, length, file, position) -> files.add(file));
        assertEquals(List.of(1L, 3L, 3L, 4L), files);

        // A checkpoint written after the deletion (its replay resynchronizes across the gap) too.
        assertTrue(checkpoint(directory, 4) > 0);
        assertSameLive(full(directory), fromCheckpoint(directory, true));
    }

    @Test
    void shouldContinueFromTheStateItWroteWithTheResultOfAFullScan() throws Exception {
        for (long seed = 1; seed <= 4; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("memory-" + seed));
            final TestLogWriter writer = LogRecoveryTest.randomLog(dir, 700 + seed, 2500);
            assertTrue(writer.fileNumber() >= 5, "several files: " + writer.fileNumber());
            final RecoveredLog expected = full(dir);
            final Checkpointer.Retained retained = new Checkpointer.Retained();
            for (long target = 2; target <= writer.fileNumber(); target++) {
                assertTrue(Checkpointer.checkpoint(dir, new LogScanner(64 << 10, 64 << 10), target, () -> false, retained) > 0);
                assertTrue(retained.holds());
                assertEquals(target - 2, retained.continued, "every checkpoint after the first continues in memory");
                final RecoveredLog log = fromCheckpoint(dir, true);
                assertSameLive(expected, log);
                LogRecoveryTest.assertRecovered(log, writer.model(), writer.records(), false);
            }
        }
    }

    @Test
    void shouldContinueInMemoryAcrossCoveredFilesDeletedByCompactionButNotFromAnotherCheckpoint() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.create(2, "b");
        writer.data(1, 500);
        writer.data(2, 100);
        writer.roll();
        writer.data(1, 700);
        writer.roll();
        writer.flush();
        final Checkpointer.Retained retained = new Checkpointer.Retained();
        final LogScanner scanner = new LogScanner(64 << 10, 64 << 10);
        assertTrue(Checkpointer.checkpoint(directory, scanner, 3, () -> false, retained) > 0);
        writer.copy(1, 500, 700);
        writer.data(1, 300);
        writer.roll();
        writer.data(1, 50);
        writer.roll();
        writer.flush();
        Files.delete(writer.path(2));
        assertTrue(Checkpointer.checkpoint(directory, scanner, 4, () -> false, retained) > 0);
        assertEquals(1, retained.continued, "continued in memory without the deleted file");
        assertSameLive(full(directory), fromCheckpoint(directory, true));

        // Another checkpoint on disk than the one held (here: none): the state in memory is not used.
        Files.delete(directory.resolve(RecoveryCheckpoint.FILE_NAME));
        assertTrue(Checkpointer.checkpoint(directory, scanner, 5, () -> false, retained) > 0);
        assertEquals(1, retained.continued);
        writer.close();
        assertSameLive(full(directory), fromCheckpoint(directory, true));
    }

    @Test
    void shouldReportDamageInACoveredFileByFileAndPositionAfterTheOpen() throws Exception {
        final TestLogWriter writer = LogRecoveryTest.randomLog(directory, 808, 2500);
        assertTrue(writer.fileNumber() >= 5, "several files: " + writer.fileNumber());
        assertTrue(checkpoint(directory, 4) > 0);
        final LogScanner scanner = new LogScanner(64 << 10, 64 << 10);
        final CoveredFilesVerifier clean = new CoveredFilesVerifier();
        assertTrue(clean.verify(directory, scanner, RecoveryCheckpoint.read(directory), () -> false));
        assertEquals(List.of(), clean.damage());
        assertEquals(3, clean.filesChecked());

        // One flipped bit in the middle of file 2's records: the open from the checkpoint does not read it, the check does.
        final RecoveryCheckpoint.CoveredFile file2 = RecoveryCheckpoint.read(directory).coveredFiles().get(1);
        assertEquals(2, file2.number());
        final long at = file2.endPosition() / 2;
        try (FileChannel channel = FileChannel.open(writer.path(2),
            StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x10)).rewind();
            channel.write(one, at);
        }
        fromCheckpoint(directory, true);
        final LogCorruptedException expected = assertThrows(LogCorruptedException.class, () -> full(directory));
        final CoveredFilesVerifier verifier = new CoveredFilesVerifier();
        assertTrue(verifier.verify(directory, scanner, RecoveryCheckpoint.read(directory), () -> false));
        assertEquals(1, verifier.damage().size(), verifier.damage().toString());
        final CoveredFilesVerifier.Damage damage = verifier.damage().get(0);
        assertEquals(2, damage.fileNumber());
        assertEquals(expected.fileNumber(), damage.fileNumber());
        assertEquals(expected.position(), damage.position(), "the position the full scan names: " + expected.getMessage());
        assertTrue(damage.position() <= at, damage.toString());
    }

    @Test
    void shouldOpenFromACheckpointWhoseFileIsTheOldestLeftAfterCompactionDeletedEveryCoveredFile() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 500);
        writer.roll();
        writer.data(1, 200);
        writer.roll();
        writer.flush();
        assertTrue(checkpoint(directory, 3) > 0);
        // Compaction: every live byte of files 1 and 2 copied into file 3, then both deleted.
        writer.copy(1, 0, 500);
        writer.copy(1, 500, 200);
        writer.data(1, 40);
        writer.roll();
        writer.data(1, 60);
        writer.close();
        Files.delete(writer.path(1));
        Files.delete(writer.path(2));

        // The checkpoint's file, the oldest now, is still checked against the checkpoint (and prescanned as such).
        for (final boolean parallel : new boolean[] {true, false}) {
            final LogRecovery recovery = LogRecovery.builder(directory).readOnly(true).checkpoint(true).parallelScan(parallel)
                .build();
            final RecoveredLog log = recovery.recover();
            assertTrue(recovery.checkpointUsed());
            assertSameLive(full(directory), log);
        }
    }

    @Test
    void shouldRefuseACheckpointWhoseCoveredFileWasDeletedWithLiveDataAndReportWhatAFullScanFinds() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        writer.create(1, "a");
        writer.data(1, 500);
        writer.roll();
        writer.data(1, 600);
        writer.roll();
        writer.flush();
        assertTrue(checkpoint(directory, 3) > 0);
        writer.data(1, 10);
        writer.close();
        Files.delete(writer.path(1));

        final LogCorruptedException expected = assertThrows(LogCorruptedException.class, () -> full(directory));
        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).readOnly(true).checkpoint(true).build().recover());
        assertEquals(expected.getMessage(), e.getMessage());
        assertEquals(expected.fileNumber(), e.fileNumber());
        assertEquals(expected.position(), e.position());
    }

    @Test
    void shouldFallBackToAFullScanOnADamagedTruncatedOrOtherVersionCheckpoint() throws Exception {
        final TestLogWriter writer = LogRecoveryTest.randomLog(directory, 42, 2000);
        final RecoveredLog expected = full(directory);
        final Path file = directory.resolve(RecoveryCheckpoint.FILE_NAME);
        assertTrue(checkpoint(directory, writer.fileNumber() - 1) > 0);
        final byte[] good = Files.readAllBytes(file);
        assertSameLive(expected, fromCheckpoint(directory, true));

        final SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 20; trial++) {
            final byte[] bad = good.clone();
            bad[random.nextInt(bad.length)] ^= (byte) (1 << random.nextInt(8));
            Files.write(file, bad);
            assertSameLive(expected, fromCheckpoint(directory, false));
        }
        Files.write(file, java.util.Arrays.copyOf(good, good.length - 1 - random.nextInt(good.length - 1)));
        assertSameLive(expected, fromCheckpoint(directory, false));

        final ByteBuffer other = ByteBuffer.wrap(good.clone()).order(ByteOrder.LITTLE_ENDIAN);
        other.putInt(RecoveryCheckpoint.VERSION_OFFSET, RecoveryCheckpoint.VERSION + 1);
        final CRC32C crc = new CRC32C();
        crc.update(other.array(), 0, RecoveryCheckpoint.HEADER_CRC_OFFSET);
        other.putInt(RecoveryCheckpoint.HEADER_CRC_OFFSET, (int) crc.getValue());
        Files.write(file, other.array());
        assertSameLive(expected, fromCheckpoint(directory, false));

        Files.write(file, good);
        assertSameLive(expected, fromCheckpoint(directory, true));
    }

    @Test
    void shouldRefuseACheckpointWhoseFileWasWrittenAgainUnderAnotherEpoch() throws Exception {
        final TestLogWriter writer = LogRecoveryTest.randomLog(directory, 43, 2000);
        final long last = writer.fileNumber();
        assertTrue(checkpoint(directory, last) > 0);
        final RecoveredLog expected = full(directory);
        // The tail file's header rewritten with a later epoch: a file by that number written again.
        try (FileChannel channel = FileChannel.open(writer.path(last), StandardOpenOption.WRITE)) {
            channel.write(TestLogWriter.header(last, FILE_LENGTH, 99), 0);
        }
        assertSameLive(expected, fromCheckpoint(directory, false));
    }

    @Test
    void shouldRefuseTheCheckpointOfAnotherLog() throws Exception {
        final Path one = Files.createDirectory(directory.resolve("one"));
        final Path two = Files.createDirectory(directory.resolve("two"));
        final TestLogWriter a = LogRecoveryTest.randomLog(one, 44, 2000);
        LogRecoveryTest.randomLog(two, 45, 2000);
        assertTrue(checkpoint(one, a.fileNumber() - 1) > 0);
        Files.copy(one.resolve(RecoveryCheckpoint.FILE_NAME), two.resolve(RecoveryCheckpoint.FILE_NAME));
        // Same file numbers and epochs, other contents: the first replayed SNAPSHOT disagrees.
        assertSameLive(full(two), fromCheckpoint(two, false));
    }

    @Test
    void shouldReportCorruptionAfterTheCheckpointExactlyAsAFullScanDoes() throws Exception {
        final Path template = Files.createDirectory(directory.resolve("template"));
        final TestLogWriter writer = LogRecoveryTest.randomLog(template, 46, 3000);
        assertTrue(writer.fileNumber() >= 6, "several files: " + writer.fileNumber());
        assertTrue(checkpoint(template, 3) > 0);
        // A flipped bit in a DATA record of file 4, after the checkpoint, long before the tail.
        final TestLogWriter.RecordInfo victim = writer.records().stream()
            .filter(r -> r.fileNumber() == 4 && r.type() == io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA
                && r.length() > 16)
            .findFirst().orElseThrow();
        LogFiles.flipBit(writer.path(4), victim.position() + io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH
            + 7, 3);

        final Path a = copy(template, directory.resolve("a"));
        final LogCorruptedException expected = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(a).build().recover());
        final Path b = copy(template, directory.resolve("b"));
        final LogCorruptedException e = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(b).checkpoint(true).build().recover());
        assertEquals(expected.getMessage().replace(a.toString(), b.toString()), e.getMessage());
        assertEquals(4, e.fileNumber());

        final RecoveredLog cutA = LogRecovery.builder(a).corruptionPolicy(CorruptionPolicy.TRUNCATE).build().recover();
        final LogRecovery recovery = LogRecovery.builder(b).corruptionPolicy(CorruptionPolicy.TRUNCATE).checkpoint(true).build();
        final RecoveredLog cutB = recovery.recover();
        assertFalse(recovery.checkpointUsed(), "a cut is made by the full scan");
        assertSameLive(cutA, cutB);
        assertEquals(cutA.truncation().position(), cutB.truncation().position());
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

    /** Same live segments (bounds, seal, locations), files and tail; deleted segments and bytes read may differ. */
    static void assertSameLive(final RecoveredLog one, final RecoveredLog two) {
        final List<RecoveredSegment> a = one.liveSegments();
        final List<RecoveredSegment> b = two.liveSegments();
        assertEquals(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            final RecoveredSegment x = a.get(i);
            final RecoveredSegment y = b.get(i);
            assertEquals(List.of(x.id(), x.name(), x.startOffset(), x.length(), x.sealed(), x.loggedFromOffset()),
                List.of(y.id(), y.name(), y.startOffset(), y.length(), y.sealed(), y.loggedFromOffset()));
            assertEquals(locations(x.locations()), locations(y.locations()), x.name());
        }
        assertEquals(one.files().size(), two.files().size(), one.files() + " / " + two.files());
        for (int i = 0; i < one.files().size(); i++) {
            final RecoveredFile x = one.files().get(i);
            final RecoveredFile y = two.files().get(i);
            assertEquals(List.of(x.fileNumber(), x.fileLength(), x.end(), x.endPosition(), x.recordCount(), x.dataLength(),
                x.liveLength(), x.dataEnds()), List.of(y.fileNumber(), y.fileLength(), y.end(), y.endPosition(), y.recordCount(),
                y.dataLength(), y.liveLength(), y.dataEnds()));
        }
        assertEquals(List.of(one.tailFileNumber(), one.tailEndPosition(), one.resumePosition(), one.tailZeroEnd(),
            one.nextFileNumber(), one.nextSegmentId(), one.tornTailBytes()),
            List.of(two.tailFileNumber(), two.tailEndPosition(), two.resumePosition(), two.tailZeroEnd(), two.nextFileNumber(),
                two.nextSegmentId(), two.tornTailBytes()));
    }

    private static List<List<Long>> locations(final LocationIndex index) {
        final List<List<Long>> all = new ArrayList<>();
        index.forEach((offset, length, fileNumber, position) -> all.add(List.of(offset, (long) length, fileNumber, position)));
        return all;
    }
}
