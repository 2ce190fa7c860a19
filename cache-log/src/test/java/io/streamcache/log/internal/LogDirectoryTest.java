package io.streamcache.log.internal;

import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogConfig;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class LogDirectoryTest {
    @TempDir
    Path directory;

    @Test
    void shouldCreateWholeFilesWithAHeaderPreWrittenOrExtended() throws Exception {
        for (final boolean preWrite : new boolean[] {true, false}) {
            final Path sub = directory.resolve("pre-" + preWrite);
            try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(sub).preWrite(preWrite).build())) {
                final LogDirectory.NumberedFile first = logDirectory.nextFile();
                final LogDirectory.NumberedFile second = logDirectory.nextFile();
                assertEquals(1, first.number());
                assertEquals(2, second.number());
                first.file().close();
                second.file().close();
                assertArrayEquals(new long[] {1, 2}, logDirectory.fileNumbers());
                assertEquals(TestLogs.FILE, Files.size(logDirectory.filePath(1)));
                assertEquals(preWrite ? 2 * TestLogs.FILE : 0, logDirectory.bytesPreWritten());
                assertEquals(2, logDirectory.filesCreated());
                final byte[] page = new byte[PAGE_LENGTH];
                assertEquals(PAGE_LENGTH, logDirectory.read(2, 0, ByteBuffer.wrap(page)));
                assertTrue(TestLogScanner.headerValid(ByteBuffer.wrap(page).order(java.nio.ByteOrder.LITTLE_ENDIAN), 2));
                assertEquals("log-0000000000000002.log", logDirectory.filePath(2).getFileName().toString());
            }
        }
    }

    @Test
    void shouldNumberAfterExistingFilesAndKeepSparesOutOfTheList() throws Exception {
        final LogConfig config = TestLogs.small(directory).spareFiles(2).build();
        try (LogDirectory logDirectory = LogDirectory.open(config)) {
            logDirectory.nextFile().file().close();
            logDirectory.nextFile().file().close();
        }
        Files.createFile(directory.resolve("not-a-log.txt"));
        try (LogDirectory logDirectory = LogDirectory.open(config)) {
            assertArrayEquals(new long[] {1, 2}, logDirectory.fileNumbers());
            logDirectory.prepareSpares(3);
            assertEquals(3, logDirectory.spareCount());
            assertArrayEquals(new long[] {1, 2}, logDirectory.fileNumbers(), "spares are not log files yet");
            final LogDirectory.NumberedFile next = logDirectory.nextFile();
            next.file().close();
            assertEquals(3, next.number(), "spares are taken in number order");
            assertArrayEquals(new long[] {1, 2, 3}, logDirectory.fileNumbers());
            logDirectory.deleteFile(1);
            assertFalse(Files.exists(logDirectory.filePath(1)));
            assertThrows(NoSuchFileException.class, () -> logDirectory.read(1, 0, ByteBuffer.allocate(8)));
            assertArrayEquals(new long[] {2, 3}, logDirectory.fileNumbers());
        }
        // Spares are deleted at close.
        assertFalse(Files.exists(directory.resolve(LogFileDescriptor.fileName(4))));
        assertFalse(Files.exists(directory.resolve(LogFileDescriptor.fileName(5))));
    }

    @Test
    void preparedFilesAreReadyWhenTheWriterStartsAndItsFilesComeFromThem() throws Exception {
        final LogConfig config = TestLogs.small(directory).preWrite(true).preparedFiles(3).build();
        try (LogDirectory logDirectory = LogDirectory.open(config)) {
            final AggregatingWriter writer = AggregatingWriter.start(logDirectory);
            try {
                // File 1 (the writer's first, made by the starting thread) and the pool of 3,
                // pre-written before the writer took an append; the background thread, which
                // keeps spareFiles=1 ready, has nothing to add.
                assertEquals(4, logDirectory.filesCreated());
                assertEquals(3, logDirectory.spareCount());
                assertEquals(4 * TestLogs.FILE, logDirectory.bytesPreWritten());
                assertArrayEquals(new long[] {1}, logDirectory.fileNumbers());
            } finally {
                writer.close();
            }
        }
        assertThrows(io.streamcache.core.CacheConfigurationException.class,
            () -> TestLogs.small(directory).preparedFiles(-1).build());
        assertThrows(io.streamcache.core.CacheConfigurationException.class,
            () -> TestLogs.small(directory).preparedFiles(LogConfig.PREPARED_FILES_MAX + 1).build());
        assertEquals(0, TestLogs.small(directory).build().preparedFiles(), "none by default");
    }

    @Test
    void shouldWriteAndValidateHeadersAndSnapshotEntriesRoundTrip() {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[PAGE_LENGTH]);
        LogFileDescriptor.putHeader(buffer, 0, 0x1234_5678_9ABCL, 64L << 20, 0x7766_5544_3322_1100L);
        assertEquals(0x7766_5544_3322_1100L, buffer.getLong(LogFileDescriptor.EPOCH_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(LogFileDescriptor.HEADER_CRC_OFFSET + Integer.BYTES, LogFileDescriptor.HEADER_LENGTH);
        assertEquals(LogFileDescriptor.FILE_MAGIC, buffer.getLong(0, java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(0x1234_5678_9ABCL, buffer.getLong(LogFileDescriptor.FILE_NUMBER_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(64L << 20, buffer.getLong(LogFileDescriptor.FILE_LENGTH_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(LogFileDescriptor.headerCrc(buffer, 0), buffer.getInt(LogFileDescriptor.HEADER_CRC_OFFSET,
            java.nio.ByteOrder.LITTLE_ENDIAN));
        buffer.putByte(LogFileDescriptor.FILE_NUMBER_OFFSET, (byte)0);
        assertFalse(LogFileDescriptor.headerCrc(buffer, 0) == buffer.getInt(LogFileDescriptor.HEADER_CRC_OFFSET,
            java.nio.ByteOrder.LITTLE_ENDIAN), "a changed header fails its CRC");

        for (int nameLength = 0; nameLength < 20; nameLength++) {
            final byte[] name = "n".repeat(nameLength).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            final UnsafeBuffer entry = new UnsafeBuffer(new byte[64]);
            entry.setMemory(0, 64, (byte)0x7F);
            final int length = LogFileDescriptor.putSnapshotEntry(entry, 0, 42, nameLength % 2 == 0, 7, 99, name);
            assertEquals(LogFileDescriptor.snapshotEntryLength(nameLength), length);
            assertEquals(0, length % LogFileDescriptor.SNAPSHOT_ENTRY_ALIGNMENT);
            assertTrue(length >= LogFileDescriptor.SNAPSHOT_NAME_OFFSET + nameLength && length < LogFileDescriptor.SNAPSHOT_NAME_OFFSET
                + nameLength + 8);
            final java.util.Map<Integer, long[]> bounds = new java.util.TreeMap<>();
            final java.util.Map<Integer, String> names = new java.util.TreeMap<>();
            final java.util.Map<Integer, Boolean> sealed = new java.util.TreeMap<>();
            final byte[] payload = new byte[4 + length];
            payload[0] = 1;
            entry.getBytes(0, payload, 4, length);
            TestLogs.readSnapshot(payload, bounds, names, sealed);
            assertEquals(new String(name, java.nio.charset.StandardCharsets.UTF_8), names.get(42));
            assertArrayEquals(new long[] {7, 99}, bounds.get(42));
            assertEquals(nameLength % 2 == 0, sealed.get(42));
            for (int i = LogFileDescriptor.SNAPSHOT_NAME_OFFSET + nameLength; i < length; i++) {
                assertEquals(0, entry.getByte(i), "zeros after the name");
            }
        }
    }
}
