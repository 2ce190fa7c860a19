package io.streamcache.log.internal;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.DirectIoMode;
import io.streamcache.log.LogFile;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@Timeout(60)
class FileChannelLogFileTest {
    @TempDir
    Path directory;

    private static boolean directIoWorks(final Path directory) {
        try (FileChannelLogFile file = FileChannelLogFile.open(directory.resolve("probe"), true)) {
            return file.isDirectIo();
        } catch (final IOException e) {
            return false;
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldWriteReadForceAndResizeWithAnyBufferAndRange(final boolean directIo) throws Exception {
        assumeTrue(!directIo || directIoWorks(directory), "the file system refuses O_DIRECT");
        final byte[] bytes = new byte[4 * PAGE_LENGTH];
        new Random(1).nextBytes(bytes);
        try (FileChannelLogFile file = FileChannelLogFile.open(directory.resolve("f"), directIo)) {
            assertEquals(directIo, file.isDirectIo());
            // An aligned direct buffer: written as is.
            final ByteBuffer aligned = BufferUtil.allocateDirectAligned(2 * PAGE_LENGTH, PAGE_LENGTH);
            aligned.put(bytes, 0, 2 * PAGE_LENGTH).flip();
            file.write(aligned, 0);
            assertFalse(aligned.hasRemaining());
            // A heap buffer at an aligned range: through an aligned copy with direct I/O.
            file.write(ByteBuffer.wrap(bytes, 2 * PAGE_LENGTH, 2 * PAGE_LENGTH), 2 * PAGE_LENGTH);
            file.force();
            assertEquals(4 * PAGE_LENGTH, file.length());
            // Unaligned reads of any length, also across the end of the file.
            final ByteBuffer middle = ByteBuffer.allocate(5000);
            assertEquals(5000, file.read(middle, 3001));
            assertArrayEquals(java.util.Arrays.copyOfRange(bytes, 3001, 8001), middle.array());
            final ByteBuffer pastEnd = ByteBuffer.allocate(1000);
            assertEquals(300, file.read(pastEnd, 4 * PAGE_LENGTH - 300));
            file.setLength(16 * PAGE_LENGTH);
            assertEquals(16 * PAGE_LENGTH, file.length());
            file.setLength(PAGE_LENGTH);
            assertEquals(PAGE_LENGTH, file.length());
        }
        assertArrayEquals(java.util.Arrays.copyOf(bytes, PAGE_LENGTH), Files.readAllBytes(directory.resolve("f")));
    }

    @Test
    void shouldRefuseAnUnalignedDirectWriteClearly() throws Exception {
        assumeTrue(directIoWorks(directory), "the file system refuses O_DIRECT");
        try (FileChannelLogFile file = FileChannelLogFile.open(directory.resolve("f"), true)) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> file.write(ByteBuffer.allocate(100), 0));
            assertTrue(e.getMessage().contains("not aligned"), e.getMessage());
        }
    }

    @Test
    void shouldFailClearlyOrFallBackWhereTheFileSystemRefusesDirectIo() throws Exception {
        final Path shm = Paths.get("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no tmpfs at /dev/shm");
        final Path tmpfs = Files.createTempDirectory(shm, "streamcache-directio-");
        try {
            assumeTrue(!directIoWorks(tmpfs), "this tmpfs accepts O_DIRECT");
            final IOException refused = assertThrows(FileChannelLogFile.DirectIoRefusedException.class,
                () -> FileChannelLogFile.factory(DirectIoMode.REQUIRED).open(tmpfs.resolve("a")));
            assertTrue(refused.getMessage().contains("refuses direct I/O"), refused.getMessage());
            assertTrue(refused.getMessage().contains("directIo=OFF or PREFERRED"), refused.getMessage());
            try (LogFile file = FileChannelLogFile.factory(DirectIoMode.PREFERRED).open(tmpfs.resolve("b"))) {
                assertFalse(file.isDirectIo());
            }
        } finally {
            try (var files = Files.list(tmpfs)) {
                for (final Path file : (Iterable<Path>)files::iterator) {
                    Files.delete(file);
                }
            }
            Files.delete(tmpfs);
        }
    }

    @Test
    void shouldReportOtherOpenErrorsAsTheyAreInEveryMode() {
        for (final DirectIoMode mode : DirectIoMode.values()) {
            final IOException e = assertThrows(IOException.class,
                () -> FileChannelLogFile.factory(mode).open(directory.resolve("missing").resolve("f")));
            assertFalse(e instanceof FileChannelLogFile.DirectIoRefusedException, () -> mode + ": " + e);
        }
    }

    @Test
    void shouldRunTheWriterOverDirectIo() throws Exception {
        assumeTrue(directIoWorks(directory), "the file system refuses O_DIRECT");
        final List<TestLogs.Ack> acks = new ArrayList<>();
        try (LogDirectory logDirectory = LogDirectory.open(TestLogs.small(directory).directIo(DirectIoMode.REQUIRED).preWrite(true)
                 .build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory)) {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, 1, "direct", null).get(10, TimeUnit.SECONDS);
            long offset = 0;
            for (int i = 0; i < 60; i++) {
                final int length = 1 + 97 * i;
                writer.append(epoch, 1, offset, TestLogs.data(1, offset, length), null).get(10, TimeUnit.SECONDS);
                acks.add(new TestLogs.Ack(1, offset, length));
                offset += length;
            }
            final ByteBuffer back = ByteBuffer.allocate(97);
            assertEquals(97, logDirectory.read(logDirectory.fileNumbers()[0], LogFileDescriptor.FIRST_RECORD_POSITION, back));
        }
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
    }
}
