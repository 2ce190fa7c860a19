package io.streamcache.segmentstore;

import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogLock;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogLockedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log on disk is safe by construction: one writer per directory (an OS lock, an epoch), a
 * clean close leaves a mark after which any damage is an error, a file shorter than its header
 * says is damage, and every error names the damaged file.
 */
@Timeout(60)
class LogSafetyTest {
    private static final int APPEND = 700;

    @TempDir
    Path root;

    @RegisterExtension
    final Closer closer = new Closer();

    private SegmentStore open(final Path directory, final CorruptionPolicy policy) {
        final BlockCache cache = TestSegments.cache(8 << 20);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            // Damage found by the open itself: every file read at open, no recovery checkpoint (with one, the
            // files before it are checked after the open; CheckpointRecoveryTest covers that).
            .log(TestLogs.small(directory).checkpointFiles(0).build())
            .logCorruptionPolicy(policy)
            .build();
        closer.add(store);
        return store;
    }

    /** A cleanly closed store in {@code directory} with {@code count} acknowledged appends to "s". */
    private void cleanStore(final Path directory, final int count) {
        final SegmentStore store = open(directory, CorruptionPolicy.FAIL);
        store.create("s");
        for (int i = 0; i < count; i++) {
            store.append("s", TestSegments.buffer(7, (long) i * APPEND, APPEND));
        }
        store.close();
    }

    private static void assertAllThere(final SegmentStore store, final int count) {
        final long length = (long) count * APPEND;
        assertEquals(length, store.info("s").length());
        for (long offset = 0; offset < length; offset += 10_000) {
            final int n = (int) Math.min(10_000, length - offset);
            try (ReadResult result = store.readThrough("s", offset, n).join()) {
                assertArrayEquals(TestSegments.pattern(7, offset, n), TestSegments.bytes(result), "offset=" + offset);
            }
        }
    }

    private static TreeSet<Long> fileNumbers(final Path directory) throws IOException {
        final TreeSet<Long> numbers = new TreeSet<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "log-*.log")) {
            for (final Path file : stream) {
                numbers.add(LogFileDescriptor.fileNumber(file.getFileName().toString()));
            }
        }
        return numbers;
    }

    private static void truncate(final Path file, final long size) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(size);
        }
    }

    private static void zero(final Path file, final long from, final int length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            final ByteBuffer zeros = ByteBuffer.allocate(length);
            while (zeros.hasRemaining()) {
                channel.write(zeros, from + zeros.position());
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // One writer per directory
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldRefuseASecondStoreOnTheSameDirectoryAndLeaveTheFirstIntact() {
        final Path directory = root.resolve("log");
        final SegmentStore first = open(directory, CorruptionPolicy.FAIL);
        first.create("s");
        for (int i = 0; i < 50; i++) {
            first.append("s", TestSegments.buffer(7, (long) i * APPEND, APPEND));
        }

        final LogLockedException e = assertThrows(LogLockedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertTrue(e.getMessage().contains("directory=" + directory), e.getMessage());
        assertTrue(e.getMessage().contains("pid=" + ProcessHandle.current().pid()), e.getMessage());
        assertEquals(directory, e.directory());

        for (int i = 50; i < 100; i++) {
            first.append("s", TestSegments.buffer(7, (long) i * APPEND, APPEND));
        }
        assertAllThere(first, 100);
        first.close();
        assertAllThere(open(directory, CorruptionPolicy.FAIL), 100);
    }

    @Test
    void shouldIncrementThePersistedEpochOnEveryAcquisitionAndReleaseAtClose() throws IOException {
        final Path directory = root.resolve("log");
        final long first;
        try (LogLock lock = LogLock.acquire(directory)) {
            first = lock.epoch();
            assertTrue(lock.isHeld());
            assertThrows(LogLockedException.class, () -> LogLock.acquire(directory));
            final String content = Files.readString(directory.resolve(LogLock.FILE_NAME), StandardCharsets.US_ASCII);
            assertTrue(content.contains("epoch=" + first + "\n") && content.contains("pid=" + ProcessHandle.current().pid() + "\n"),
                content);
        }
        try (LogLock lock = LogLock.acquire(directory)) {
            assertEquals(first + 1, lock.epoch());
        }
        try (LogDirectory opened = LogDirectory.open(TestLogs.small(directory).build())) {
            assertEquals(first + 2, opened.epoch());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Clean-close mark
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldWriteTheCleanMarkAtCloseAndRemoveItWhileOpen() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 100);
        final CleanMark mark = CleanMark.read(directory);
        assertNotNull(mark);
        assertEquals(fileNumbers(directory).last(), mark.fileNumber());
        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();
        assertTrue(log.cleanlyClosed());
        assertEquals(log.resumePosition(), mark.endPosition());

        final SegmentStore store = open(directory, CorruptionPolicy.FAIL);
        assertFalse(Files.exists(directory.resolve(CleanMark.FILE_NAME)), "a writer removes the mark before writing");
        assertAllThere(store, 100);
        store.close();
        assertNotNull(CleanMark.read(directory));
    }

    @Test
    void shouldRoundTripTheCleanMarkAndRejectADamagedOne() {
        final CleanMark mark = new CleanMark(5, 17, 8192);
        final byte[] bytes = mark.encode().array();
        assertEquals(mark, CleanMark.decode(bytes));
        for (int i = 0; i < bytes.length; i++) {
            final byte[] damaged = bytes.clone();
            damaged[i] ^= 1;
            assertEquals(null, CleanMark.decode(damaged), "bit flipped in byte " + i);
        }
    }

    /** The repro: a cleanly closed store, the last file truncated, reopened: records were gone silently. */
    @Test
    void shouldFailTheOpenWhenTheLastFileOfACleanLogIsTruncated() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final long last = fileNumbers(directory).last();
        final Path file = directory.resolve(LogFileDescriptor.fileName(last));
        truncate(file, CleanMark.read(directory).endPosition() - 3 * 4096 - 100);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertEquals(last, e.fileNumber(), e.getMessage());
    }

    @Test
    void shouldFailTheOpenWhenTheLastPageOfACleanLogIsZeroed() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final CleanMark mark = CleanMark.read(directory);
        final Path file = directory.resolve(LogFileDescriptor.fileName(mark.fileNumber()));
        zero(file, mark.endPosition() - 4096, 4096);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertEquals(mark.fileNumber(), e.fileNumber(), e.getMessage());
    }

    @Test
    void shouldFailTheOpenWhenTheLastFileOfACleanLogIsDeleted() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final long last = fileNumbers(directory).last();
        Files.delete(directory.resolve(LogFileDescriptor.fileName(last)));

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertEquals(last, e.fileNumber(), e.getMessage());
    }

    @Test
    void shouldNameTheTruncatedFileNotTheNextWhenAnEarlierFileIsCutAtAPageBoundary() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final TreeSet<Long> numbers = fileNumbers(directory);
        assertTrue(numbers.size() >= 3, numbers.toString());
        final long victim = numbers.first() + 1;
        // Past the SNAPSHOT, at a page boundary: the scan sees a clean end of the file's records.
        truncate(directory.resolve(LogFileDescriptor.fileName(victim)), 5 * 4096);

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertEquals(victim, e.fileNumber(), e.getMessage());
        assertEquals(5 * 4096, e.position(), e.getMessage());
    }

    @Test
    void shouldGiveEveryFileTheEpochOfItsWriterAndRefuseAFileOfALowerEpochAfterAHigherOne() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 100);
        final long firstWriterFiles = fileNumbers(directory).last();
        final SegmentStore second = open(directory, CorruptionPolicy.FAIL);
        for (int i = 100; i < 300; i++) {
            second.append("s", TestSegments.buffer(7, (long) i * APPEND, APPEND));
        }
        second.close();
        final TreeSet<Long> numbers = fileNumbers(directory);
        assertTrue(numbers.last() > firstWriterFiles + 1, numbers.toString());
        for (final long number : numbers) {
            assertEquals(number <= firstWriterFiles ? 1 : 2, epoch(directory, number), "fileNumber=" + number);
        }
        final SegmentStore reopened = open(directory, CorruptionPolicy.FAIL);
        assertAllThere(reopened, 300);
        reopened.close();

        // The last file as if a writer of epoch 1, which lost its lock, had created it after epoch 2's files.
        final long last = fileNumbers(directory).last();
        final Path file = directory.resolve(LogFileDescriptor.fileName(last));
        final org.agrona.concurrent.UnsafeBuffer header = new org.agrona.concurrent.UnsafeBuffer(new byte[LogFileDescriptor.HEADER_LENGTH]);
        LogFileDescriptor.putHeader(header, 0, last, Files.size(file), 1);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(header.byteArray()), 0);
        }
        for (final CorruptionPolicy policy : CorruptionPolicy.values()) {
            final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, policy));
            assertEquals(last, e.fileNumber(), e.getMessage());
            assertTrue(e.getMessage().contains("EPOCH=1 is lower than EPOCH=2"), e.getMessage());
        }
    }

    private static long epoch(final Path directory, final long number) throws IOException {
        final ByteBuffer header = ByteBuffer.allocate(LogFileDescriptor.HEADER_LENGTH).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        try (FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(number)), StandardOpenOption.READ)) {
            channel.read(header, 0);
        }
        return header.getLong(LogFileDescriptor.EPOCH_OFFSET);
    }

    /** Before: a flipped bit in the last batch of a log that was not closed cleanly was cut as a torn write. */
    @Test
    void shouldFailTheOpenOnAFlippedBitInTheLastBatchOfALogNotClosedCleanly() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final CleanMark mark = CleanMark.read(directory);
        Files.delete(directory.resolve(CleanMark.FILE_NAME));
        final Path file = directory.resolve(LogFileDescriptor.fileName(mark.fileNumber()));
        // In the payload of the last record (one append per page: the store appends one at a time).
        final long position = mark.endPosition() - 4096 + 300;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, position);
            one.put(0, (byte) (one.get(0) ^ 0x10)).rewind();
            channel.write(one, position);
        }

        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(directory, CorruptionPolicy.FAIL));
        assertEquals(mark.fileNumber(), e.fileNumber(), e.getMessage());
        assertEquals(mark.endPosition() - 4096, e.position(), e.getMessage());
    }

    @Test
    void shouldStillCutATornTailOfALogThatWasNotClosedCleanlyAndReportIt() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final CleanMark mark = CleanMark.read(directory);
        Files.delete(directory.resolve(CleanMark.FILE_NAME));
        // The last write cut short in its last page: what a crash during an unacknowledged write leaves.
        final Path file = directory.resolve(LogFileDescriptor.fileName(mark.fileNumber()));
        zero(file, mark.endPosition() - 4096 + 24, 4096 - 24);

        final LogCorruptedException strict = assertThrows(LogCorruptedException.class,
            () -> LogRecovery.builder(directory).corruptionPolicy(CorruptionPolicy.FAIL_ON_TORN_TAIL).build().recover());
        assertEquals(mark.fileNumber(), strict.fileNumber(), strict.getMessage());

        final RecoveredLog log = LogRecovery.builder(directory).readOnly(true).build().recover();
        assertFalse(log.cleanlyClosed());
        assertTrue(log.tornTailBytes() > 0, log.toString());
        final SegmentStore store = open(directory, CorruptionPolicy.FAIL);
        final long length = store.info("s").length();
        assertTrue(length < 300L * APPEND && length % APPEND == 0, "length=" + length);
    }

    @Test
    void shouldReopenALogClosedCleanlyAfterItsTornTailWasCut() throws IOException {
        final Path directory = root.resolve("log");
        cleanStore(directory, 300);
        final CleanMark mark = CleanMark.read(directory);
        Files.delete(directory.resolve(CleanMark.FILE_NAME));
        final Path file = directory.resolve(LogFileDescriptor.fileName(mark.fileNumber()));
        // The last page lost: the record that runs into it fails its CRC, and the tail is cut at that
        // record's start, in the middle of a page. The writer resumes there and rewrites the page.
        // The last record header of the last page (the batch's PADDING) and everything after it
        // zeroed: a torn tail in the middle of a page, where the writer resumes and rewrites the page.
        final byte[] page = new byte[4096];
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file)) {
            channel.read(java.nio.ByteBuffer.wrap(page), mark.endPosition() - 4096);
        }
        int last = -1;
        for (int i = 8; i + 1 < page.length; i++) {
            if ((short) ((page[i] & 0xFF) | (page[i + 1] << 8)) == io.streamcache.log.internal.LogRecordDescriptor.MAGIC) {
                last = i;
            }
        }
        assertTrue(last > 0, "a record header in the last page");
        zero(file, mark.endPosition() - 4096 + last, 4096 - last);
        final long length;
        try (SegmentStore store = open(directory, CorruptionPolicy.FAIL)) {
            length = store.info("s").length();
        }
        // Closed cleanly after the cut, with nothing appended: the next open must accept it.
        try (SegmentStore store = open(directory, CorruptionPolicy.FAIL)) {
            assertEquals(length, store.info("s").length());
            store.append("s", io.netty.buffer.Unpooled.wrappedBuffer(new byte[APPEND]));
        }
        try (SegmentStore store = open(directory, CorruptionPolicy.FAIL)) {
            assertEquals(length + APPEND, store.info("s").length());
        }
    }
}
