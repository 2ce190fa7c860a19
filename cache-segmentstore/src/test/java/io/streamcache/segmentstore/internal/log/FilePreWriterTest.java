package io.streamcache.segmentstore.internal.log;

import io.streamcache.segmentstore.log.LogFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static io.streamcache.segmentstore.internal.log.LogFileDescriptor.PAGE_LENGTH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Pre-writing a new log file: whichever way the zeros go (around the page cache or through the
 * file's own writes), every byte of the file reads as zero afterwards, also where the file held
 * other bytes before and through a channel that cached them.
 */
@Timeout(60)
class FilePreWriterTest {
    @TempDir
    Path directory;

    private static final long LENGTH = 3L * FilePreWriter.CHUNK_LENGTH + 5 * PAGE_LENGTH;

    @Test
    void everyByteReadsAsZeroAfterADirectPreWrite() throws IOException {
        check(new FilePreWriter(LENGTH, true), true);
    }

    @Test
    void everyByteReadsAsZeroAfterABufferedPreWrite() throws IOException {
        check(new FilePreWriter(LENGTH, false), false);
    }

    private void check(final FilePreWriter preWriter, final boolean direct) throws IOException {
        final Path path = directory.resolve("log-" + direct);
        try (FileChannelLogFile file = FileChannelLogFile.open(path, false)) {
            // Bytes that are not zero, read once so the page cache holds them.
            final byte[] junk = new byte[(int)LENGTH];
            Arrays.fill(junk, (byte)0x5A);
            file.write(ByteBuffer.wrap(junk), 0);
            final ByteBuffer before = ByteBuffer.allocate((int)LENGTH);
            assertEquals(LENGTH, file.read(before, 0));

            final boolean wentDirect = preWriter.preWrite(file, LENGTH);
            assertEquals(direct && directIoWorks(), wentDirect, "around the page cache exactly when asked and allowed");
            file.force();
            assertEquals(LENGTH, file.length());
            assertZeros(file);
        }
        // And through a channel opened afterwards.
        final byte[] onDisk = Files.readAllBytes(path);
        assertEquals(LENGTH, onDisk.length);
        for (int i = 0; i < onDisk.length; i++) {
            if (onDisk[i] != 0) {
                throw new AssertionError("byte " + i + " is " + onDisk[i]);
            }
        }
    }

    @Test
    void aFileOfAnotherKindIsWrittenThroughItsOwnWrites() throws IOException {
        final Path path = directory.resolve("hooked");
        try (FileChannelLogFile inner = FileChannelLogFile.open(path, false)) {
            final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
            assertFalse(new FilePreWriter(LENGTH, true).preWrite(new HookedLogFile(hooks, inner), LENGTH));
            assertEquals(4, hooks.writes.size(), "three 1 MiB chunks and the rest, through the file's own writes");
            assertZeros(inner);
        }
    }

    private boolean directIoWorks() {
        try (FileChannelLogFile probe = FileChannelLogFile.open(directory.resolve("probe"), true)) {
            return probe.isDirectIo();
        } catch (final IOException e) {
            return false;
        }
    }

    private static void assertZeros(final LogFile file) throws IOException {
        final ByteBuffer read = ByteBuffer.allocate((int)LENGTH);
        assertEquals(LENGTH, file.read(read, 0));
        for (int i = 0; i < LENGTH; i++) {
            if (read.get(i) != 0) {
                throw new AssertionError("byte " + i + " is " + read.get(i));
            }
        }
    }
}
