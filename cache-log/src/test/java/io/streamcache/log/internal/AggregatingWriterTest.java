package io.streamcache.log.internal;

import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;
import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.testing.TestLogs.BATCH;
import static io.streamcache.log.testing.TestLogs.awaitTrue;
import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class AggregatingWriterTest {
    @TempDir
    Path directory;

    private static AggregatingWriter start(final LogDirectory logDirectory, final LogRecordListener listener) throws Exception {
        return AggregatingWriter.start(logDirectory, listener, RecoveredLog.empty());
    }

    // ------------------------------------------------------------------------------------------
    // Records

    @Test
    void shouldWriteEveryRecordWithItsCrcAndReportWhereItLanded() throws Exception {
        final TestLogs.RecordingListener listener = new TestLogs.RecordingListener();
        final List<Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = start(logDirectory, listener)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 3, "s3", null).get(10, TimeUnit.SECONDS);
            final List<CompletableFuture<Long>> futures = new ArrayList<>();
            long offset = 0;
            final Random random = new Random(1);
            for (int i = 0; i < 200; i++) {
                final int length = 1 + random.nextInt(3000);
                futures.add(writer.append(epoch, 3, offset, data(3, offset, length), null));
                acks.add(new Ack(3, offset, length));
                offset += length;
            }
            for (int i = 0; i < futures.size(); i++) {
                assertEquals(acks.get(i).offset(), futures.get(i).get(10, TimeUnit.SECONDS));
            }
            assertEquals(offset, writer.seal(epoch, 3, offset, null).get(10, TimeUnit.SECONDS));
            writer.truncate(epoch, 3, 100, null).get(10, TimeUnit.SECONDS);
            writer.delete(epoch, 4, null).get(10, TimeUnit.SECONDS);
            assertEquals(204, writer.stats().requests());
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        final List<TestLogScanner.Record> records = new ArrayList<>();
        for (final TestLogScanner.Record record : TestLogScanner.records(directory)) {
            if (record.type() != LogRecordDescriptor.TYPE_SNAPSHOT) {
                records.add(record);
            }
        }
        assertEquals(204, records.size());
        assertEquals(LogRecordDescriptor.TYPE_CREATE, records.get(0).type());
        assertArrayEquals(TestLogs.utf8("s3"), records.get(0).payload());
        assertEquals(LogRecordDescriptor.TYPE_SEAL, records.get(201).type());
        assertEquals(LogRecordDescriptor.TYPE_TRUNCATE, records.get(202).type());
        assertEquals(100, records.get(202).segmentOffset());
        assertEquals(LogRecordDescriptor.TYPE_DELETE, records.get(203).type());
        // The listener saw every record, in log order, where the scanner found it.
        assertEquals(records.size(), listener.records.size());
        for (int i = 0; i < records.size(); i++) {
            final long[] seen = listener.records.get(i);
            assertEquals(records.get(i).type(), (byte)seen[0]);
            assertEquals(records.get(i).segmentOffset(), seen[2]);
            assertEquals(records.get(i).fileNumber(), seen[4]);
            assertEquals(records.get(i).position(), seen[5]);
        }
    }

    @Test
    void shouldLetGoOfCompletedRequests() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = start(logDirectory, LogRecordListener.NONE)) {
            long offset = 0;
            // A caller that keeps its first future must not keep every later request alive through it.
            final CompletableFuture<Long> kept = writer.append(6, offset, data(6, offset, 100));
            offset += 100;
            final List<WeakReference<CompletableFuture<Long>>> done = new ArrayList<>();
            CompletableFuture<Long> last = kept;
            for (int i = 0; i < 2_000; i++) {
                last = writer.append(6, offset, data(6, offset, 100));
                done.add(new WeakReference<>(last));
                offset += 100;
            }
            last.get(10, TimeUnit.SECONDS);
            last = null;
            kept.get(10, TimeUnit.SECONDS);
            // Later appends move the writer's and the completer's ends past the requests above.
            for (int i = 0; i < 3; i++) {
                writer.append(6, offset, data(6, offset, 100)).get(10, TimeUnit.SECONDS);
                offset += 100;
            }
            int alive = Integer.MAX_VALUE;
            for (int attempt = 0; attempt < 10 && alive > 0; attempt++) {
                System.gc();
                alive = 0;
                for (final WeakReference<CompletableFuture<Long>> reference : done) {
                    alive += reference.get() == null ? 0 : 1;
                }
            }
            assertEquals(0, alive, "completed requests still reachable: " + alive + " of " + done.size());
            assertEquals(0L, kept.get());
        }
    }

    @Test
    void shouldReadRecordsBackThroughTheDirectoryWhereTheListenerSaidTheyAre() throws Exception {
        final TestLogs.RecordingListener listener = new TestLogs.RecordingListener();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = start(logDirectory, listener)) {
            long offset = 0;
            final List<CompletableFuture<Long>> futures = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                futures.add(writer.append(5, offset, data(5, offset, 1000 + i)));
                offset += 1000 + i;
            }
            CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
            for (final long[] record : listener.records) {
                final ByteBuffer payload = ByteBuffer.allocate((int)record[3]);
                logDirectory.read(record[4], record[5] + LogRecordDescriptor.HEADER_LENGTH, payload);
                assertArrayEquals(TestLogs.bytes(5, record[2], (int)record[3]), payload.array());
            }
            assertTrue(listener.records.size() >= 50);
        }
    }

    @Test
    void shouldRejectAppendsLongerThanOneRecordAndLongNames() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            assertEquals(LogConfig.maxAppendLengthFor(TestLogs.FILE), writer.maxAppendLength(), "half a file: longer than a batch");
            final ByteBuf tooLong = data(1, 0, writer.maxAppendLength() + 1);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> writer.append(1, 0, tooLong));
            assertTrue(e.getMessage().contains("maxAppendLength=" + writer.maxAppendLength()), e.getMessage());
            assertEquals(0L, writer.append(1, 0, data(1, 0, writer.maxAppendLength())).get(10, TimeUnit.SECONDS));
            assertThrows(IllegalArgumentException.class,
                () -> writer.create(writer.healthyEpoch(), 2, "n".repeat(AggregatingWriter.MAX_NAME_LENGTH + 1), null));
        }
    }

    @Test
    void shouldCopyDirectHeapCompositeAndReadOnlyBuffersAlike() throws Exception {
        final List<Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final byte[] bytes = TestLogs.bytes(4, 0, 4000);
            final ByteBuf direct = io.netty.buffer.Unpooled.directBuffer(1100).writeZero(100).writeBytes(bytes, 0, 1000);
            direct.readerIndex(100);
            final ByteBuf heap = data(4, 1000, 1000);
            final ByteBuf composite = io.netty.buffer.Unpooled.wrappedBuffer(
                io.netty.buffer.Unpooled.wrappedBuffer(bytes, 2000, 300), io.netty.buffer.Unpooled.wrappedBuffer(bytes, 2300, 700));
            final ByteBuf readOnly = io.netty.buffer.Unpooled.wrappedBuffer(bytes, 3000, 1000).asReadOnly();
            long offset = 0;
            for (final ByteBuf buffer : List.of(direct, heap, composite, readOnly)) {
                final int index = buffer.readerIndex();
                writer.append(4, offset, buffer).get(10, TimeUnit.SECONDS);
                assertEquals(index, buffer.readerIndex(), "the producer's indices are not moved");
                acks.add(new Ack(4, offset, 1000));
                offset += 1000;
            }
            direct.release();
        }
        TestLogs.assertContains(directory, acks);
    }

    @Test
    void shouldCompleteAnEmptyAppendWithoutARecord() throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            assertEquals(7L, writer.append(1, 7, TestLogs.empty()).get(10, TimeUnit.SECONDS));
            assertEquals(0, writer.stats().batches());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Alignment

    @ParameterizedTest
    @EnumSource(AlignmentPolicy.class)
    void shouldStartAndEndEveryWriteOnA4KBoundaryWithWellFormedPadding(final AlignmentPolicy alignment) throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final List<Ack> acks = new ArrayList<>();
        final WriterStats stats;
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).alignment(alignment).fileFactory(hooks).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final List<Thread> threads = new ArrayList<>();
            final List<Ack> shared = java.util.Collections.synchronizedList(acks);
            for (int t = 1; t <= 4; t++) {
                final int segment = t;
                threads.add(new Thread(() -> {
                    final Random random = new Random(segment);
                    long offset = 0;
                    for (int i = 0; i < 100; i++) {
                        final int length = 1 + random.nextInt(i % 10 == 0 ? 12_000 : 700);
                        writer.append(segment, offset, data(segment, offset, length)).join();
                        shared.add(new Ack(segment, offset, length));
                        offset += length;
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads) {
                thread.join();
            }
            stats = writer.stats();
        }
        TestLogs.assertAlignedWrites(hooks);
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        long padding = 0;
        for (final TestLogScanner.FileScan scan : TestLogScanner.scanDirectory(directory).values()) {
            for (final long[] pad : scan.paddings()) {
                assertEquals(0, pad[1] % PAGE_LENGTH);
                padding += pad[1] - pad[0];
            }
        }
        // Padding after each SNAPSHOT is written by the roll, not counted as batch padding.
        assertTrue(stats.paddingBytes() <= padding, () -> "stats " + stats);
        if (alignment == AlignmentPolicy.PAD) {
            assertTrue(stats.paddingBytes() > 0);
        }
        assertEquals(400, stats.requests());
    }

    /**
     * A gated file holds each write until the test lets it go, so the batches are known: every
     * batch here is cut at its last 4 KB boundary, and the record straddling it waits, its
     * request incomplete, until the write that carries the rest; the next request is queued
     * while each write is held, so the tail always has a batch to join, until the last one,
     * which is written padded at once (the burst is over).
     *
     * <pre>
     *  write 1: [A (5024 bytes): cut at 4096                  carried: 928 bytes of A
     *  write 2: [..A][B1 3024][B2 3024][B3..  cut at 8192     carried: 1808 bytes of B3
     *  write 3: [..B3][C (3024)..             cut at 4096     carried: 736 bytes of C
     *  write 4: [..C][padding]                                nothing waits behind C
     * </pre>
     */
    @ParameterizedTest
    @EnumSource(value = AlignmentPolicy.class, names = {"CUT", "ADAPTIVE"})
    void shouldCarryTheCutTailIntoTheNextBatchAndCompleteItsRequestsWithIt(final AlignmentPolicy alignment) throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final TestLogs.RecordingListener listener = new TestLogs.RecordingListener();
        final List<Ack> acks = new ArrayList<>();
        final Semaphore gate = new Semaphore(0);
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).alignment(alignment).cutThreshold(PAGE_LENGTH)
                 .fileFactory(hooks).build());
             AggregatingWriter writer = start(logDirectory, listener)) {
            try {
                hooks.gate = gate;
                final int before = hooks.writes.size();
                final CompletableFuture<Long> a = writer.append(1, 0, data(1, 0, 5000));
                acks.add(new Ack(1, 0, 5000));
                awaitTrue(() -> hooks.gateWaiting.get() == 1, "write 1 at the gate");
                final List<CompletableFuture<Long>> b = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    final long offset = 5000 + 3000L * i;
                    b.add(writer.append(1, offset, data(1, offset, 3000)));
                    acks.add(new Ack(1, offset, 3000));
                }
                awaitTrue(() -> writer.stats().queueDepth() == 3, "B1..B3 queued");
                gate.release();
                awaitTrue(() -> hooks.gateWaiting.get() == 1 && hooks.writes.size() == before + 1, "write 2 at the gate");
                assertFalse(a.isDone(), "A completed though its tail was carried");
                final CompletableFuture<Long> c = writer.append(1, 14_000, data(1, 14_000, 3000));
                acks.add(new Ack(1, 14_000, 3000));
                awaitTrue(() -> writer.stats().queueDepth() == 1, () -> "C queued: " + writer.stats() + " waiting="
                    + hooks.gateWaiting.get() + " writes=" + hooks.writes.stream().map(java.util.Arrays::toString).toList());
                gate.release();
                a.get(10, TimeUnit.SECONDS);
                b.get(0).get(10, TimeUnit.SECONDS);
                b.get(1).get(10, TimeUnit.SECONDS);
                awaitTrue(() -> hooks.gateWaiting.get() == 1 && hooks.writes.size() == before + 2, "write 3 at the gate");
                assertFalse(b.get(2).isDone(), "B3 completed though its tail was carried");
                gate.release();
                b.get(2).get(10, TimeUnit.SECONDS);
                awaitTrue(() -> hooks.gateWaiting.get() == 1 && hooks.writes.size() == before + 3, "write 4 at the gate");
                assertFalse(c.isDone(), "C completed though its tail was carried");
                gate.release();
                assertEquals(14_000L, c.get(10, TimeUnit.SECONDS));
                final long[] first = hooks.writes.get(before);
                final long[] second = hooks.writes.get(before + 1);
                final long[] third = hooks.writes.get(before + 2);
                final long[] fourth = hooks.writes.get(before + 3);
                assertEquals(PAGE_LENGTH, first[1]);
                assertEquals(first[0] + first[1], second[0]);
                assertEquals(2 * PAGE_LENGTH, second[1]);
                assertEquals(second[0] + second[1], third[0]);
                assertEquals(PAGE_LENGTH, third[1]);
                assertEquals(third[0] + third[1], fourth[0]);
                assertEquals(PAGE_LENGTH, fourth[1]);
                assertEquals(4, writer.stats().batches());
            } finally {
                hooks.gate = null;
                gate.release(1000);
            }
        }
        TestLogs.assertAlignedWrites(hooks);
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        assertEquals(5, listener.records.size());
        // Only the last write was padded: the cuts saved the rest.
        final TestLogScanner.FileScan scan = TestLogScanner.scanDirectory(directory).firstEntry().getValue();
        assertEquals(2, scan.paddings().size(), "the SNAPSHOT's padding and the last write's");
    }

    @ParameterizedTest
    @EnumSource(AlignmentPolicy.class)
    void shouldWriteALoneProducersAppendWithoutASecondOne(final AlignmentPolicy alignment) throws Exception {
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).alignment(alignment)
                 .maxDelay(Duration.ofMillis(5)).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            for (int i = 0; i < 3; i++) {
                // One small append at a time, nothing after it: it completes on its own.
                assertEquals(i * 100L, writer.append(1, i * 100L, data(1, i * 100L, 100)).get(10, TimeUnit.SECONDS));
            }
            final WriterStats stats = writer.stats();
            assertEquals(3, stats.requests());
            assertTrue(stats.paddingBytes() > 0, () -> "a lone small append is padded in the end: " + stats);
        }
        TestLogs.assertContains(directory, List.of(new Ack(1, 0, 100), new Ack(1, 100, 100), new Ack(1, 200, 100)));
    }

    // ------------------------------------------------------------------------------------------
    // Files

    @Test
    void shouldRollFilesWithASnapshotOfTheSegmentTableFirst() throws Exception {
        final List<Ack> acks = new ArrayList<>();
        final LogDirectory files = LogDirectory.open(TestLogs.small(directory).spareFiles(2).preWrite(true).build());
        try (LogDirectory logDirectory = files;
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "one", null).join();
            writer.create(epoch, 2, "two", null).join();
            long offset = 0;
            for (int i = 0; i < 120; i++) {
                final int segment = 1 + i % 2;
                final long at = segment == 1 ? offset : offset + 1_000_000;
                writer.append(epoch, segment, at, data(segment, at, 2000), null).join();
                acks.add(new Ack(segment, at, 2000));
                if (segment == 2) {
                    offset += 2000;
                }
            }
            writer.seal(epoch, 2, 1_000_000 + offset, null).join();
            final long rolled = writer.stats().filesRolled();
            while (writer.stats().filesRolled() == rolled) {
                writer.append(epoch, 1, offset, data(1, offset, 8000), null).join();
                acks.add(new Ack(1, offset, 8000));
                offset += 8000;
            }
            assertTrue(writer.stats().filesRolled() >= 2, () -> "" + writer.stats());
        }
        assertTrue(files.filesCreated() >= 3);
        assertEquals(files.filesCreated() * TestLogs.FILE, files.bytesPreWritten());
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        // Every file after the first starts with a snapshot of both segments; the last knows 2 is sealed.
        final TreeMap<Long, TestLogScanner.FileScan> scans = TestLogScanner.scanDirectory(directory);
        assertTrue(scans.size() >= 3, "the spares are deleted at close, the used files stay");
        final TestLogScanner.FileScan last = scans.lastEntry().getValue();
        final Map<Integer, long[]> bounds = new TreeMap<>();
        final Map<Integer, String> names = new TreeMap<>();
        final Map<Integer, Boolean> sealed = new TreeMap<>();
        TestLogs.readSnapshot(last.records().get(0).payload(), bounds, names, sealed);
        assertEquals("one", names.get(1));
        assertEquals("two", names.get(2));
        assertTrue(sealed.get(2));
        assertFalse(sealed.get(1));
        assertTrue(bounds.get(1)[1] > 0);
        for (final TestLogScanner.FileScan scan : scans.values()) {
            assertEquals(TestLogs.FILE, Files.size(LogDirectoryFiles.path(directory, scan.fileNumber())));
        }
    }

    @Test
    void shouldRetireAFileOnceEverySegmentWithDataInItIsTruncatedPastOrDeleted() throws Exception {
        final TestLogs.RecordingListener listener = new TestLogs.RecordingListener();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).build());
             AggregatingWriter writer = start(logDirectory, listener)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "a", null).join();
            writer.create(epoch, 2, "b", null).join();
            // File 1: data of both segments. Then fill more files with segment 1 only.
            writer.append(epoch, 2, 0, data(2, 0, 500), null).join();
            long offset = 0;
            while (writer.stats().filesRolled() < 2) {
                writer.append(epoch, 1, offset, data(1, offset, 4000), null).join();
                offset += 4000;
            }
            final long[] files = logDirectory.fileNumbers();
            assertEquals(3, files.length);
            // Truncating segment 1 past everything kills file 2, not file 1 (segment 2 lives there).
            writer.truncate(epoch, 1, offset, null).join();
            awaitTrue(() -> listener.retired.contains(files[1]), "file 2 retired");
            assertFalse(listener.retired.contains(files[0]));
            awaitTrue(() -> !Files.exists(logDirectory.filePath(files[1])), "file 2 deleted");
            assertTrue(Files.exists(logDirectory.filePath(files[0])));
            // Deleting segment 2 kills file 1; the current file stays.
            writer.delete(epoch, 2, null).join();
            awaitTrue(() -> !Files.exists(logDirectory.filePath(files[0])), "file 1 deleted");
            assertTrue(Files.exists(logDirectory.filePath(files[2])));
            assertEquals(List.of(files[1], files[0]), listener.retired);
            assertEquals(2, writer.stats().filesRetired());
        }
    }

    @Test
    void shouldRecycleDeadFilesIntoSparesWhenAsked() throws Exception {
        final List<Ack> last = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).spareFiles(1).recycleFiles(true).preWrite(true)
                 .build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "a", null).join();
            long offset = 0;
            for (int round = 0; round < 6; round++) {
                final long rolled = writer.stats().filesRolled();
                while (writer.stats().filesRolled() == rolled) {
                    writer.append(epoch, 1, offset, data(1, offset, 4000), null).join();
                    offset += 4000;
                }
                writer.truncate(epoch, 1, offset, null).join();
                awaitTrue(() -> logDirectory.spareCount() >= 1, "a spare ready");
            }
            assertTrue(logDirectory.filesRecycled() >= 3, () -> "recycled=" + logDirectory.filesRecycled());
            assertTrue(logDirectory.filesCreated() < 6, () -> "created=" + logDirectory.filesCreated());
            last.add(new Ack(1, offset, 300));
            writer.append(epoch, 1, offset, data(1, offset, 300), null).join();
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, last);
    }

    // ------------------------------------------------------------------------------------------
    // Resume, close

    @Test
    void shouldResumeAtARecoveredTailAndRewriteItsPage() throws Exception {
        final LogConfig config = TestLogs.small(directory).alignment(AlignmentPolicy.CUT).build();
        final List<Ack> acks = new ArrayList<>();
        long offset = 0;
        try (LogDirectory logDirectory = LogDirectory.open(config);
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "a", null).join();
            for (int i = 0; i < 7; i++) {
                writer.append(epoch, 1, offset, data(1, offset, 1111), null).join();
                acks.add(new Ack(1, offset, 1111));
                offset += 1111;
            }
        }
        // Garbage after the tail, as a torn batch could leave: a valid-looking record of the same file.
        final RecoveredLog recovered = TestLogs.recover(directory);
        final Path last = LogDirectoryFiles.path(directory, recovered.tailFileNumber());
        final byte[] junk = new byte[3 * PAGE_LENGTH];
        new Random(3).nextBytes(junk);
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(last, java.nio.file.StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(junk), (recovered.tailEndPosition() & -PAGE_LENGTH) + PAGE_LENGTH);
        }
        assertEquals(1, recovered.segments().size());
        assertEquals(offset, recovered.segments().get(0).length());
        try (LogDirectory logDirectory = LogDirectory.open(config);
             AggregatingWriter writer = AggregatingWriter.start(logDirectory, LogRecordListener.NONE, recovered)) {
            final long epoch = writer.healthyEpoch();
            for (int i = 0; i < 3; i++) {
                writer.append(epoch, 1, offset, data(1, offset, 50), null).join();
                acks.add(new Ack(1, offset, 50));
                offset += 50;
            }
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        final TestLogScanner.FileScan scan = TestLogScanner.scanDirectory(directory).lastEntry().getValue();
        assertEquals("zero", scan.stop(), "the junk after the old tail was zeroed");
        assertEquals(1 + 1 + 7 + 3, scan.records().size());
    }

    @Test
    void shouldWriteWhatWasSubmittedBeforeCloseAndRejectWhatComesAfter() throws Exception {
        final List<CompletableFuture<Long>> futures = new ArrayList<>();
        final LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).alignment(AlignmentPolicy.CUT)
            .maxDelay(Duration.ofSeconds(30)).build());
        final AggregatingWriter writer = AggregatingWriter.start(logDirectory);
        long offset = 0;
        for (int i = 0; i < 20; i++) {
            futures.add(writer.append(1, offset, data(1, offset, 333)));
            offset += 333;
        }
        writer.close();
        logDirectory.close();
        for (final CompletableFuture<Long> future : futures) {
            assertTrue(future.isDone() && !future.isCompletedExceptionally());
        }
        assertThrows(CacheClosedException.class, () -> writer.append(1, 0, data(1, 0, 1)));
        assertTrue(writer.recover().isCompletedExceptionally());
        writer.close();
    }
}
