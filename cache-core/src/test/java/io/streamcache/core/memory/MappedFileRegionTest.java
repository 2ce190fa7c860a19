package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link MappedFileRegion}: the file's life cycle, both mapping modes, and failures at open.
 */
class MappedFileRegionTest {
    private static final int BUFFER = 64 * 1024;

    @TempDir
    Path directory;

    private static byte[] readFile(final Path file, final long position, final int length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final ByteBuffer bytes = ByteBuffer.allocate(length);
            while (bytes.hasRemaining() && channel.read(bytes, position + bytes.position()) > 0) {
                continue;
            }
            return bytes.array();
        }
    }

    @Test
    void shouldCreateAFileOfTheRegionLengthAndDeleteItOnClose() throws IOException {
        final Path file = directory.resolve("region.map");
        final MemoryRegion region = MappedFileRegion.factory(file).open(3, BUFFER);
        try {
            assertTrue(Files.isRegularFile(file));
            assertEquals(3L * BUFFER, Files.size(file));
            assertEquals(3, region.bufferCount());
            assertEquals(BUFFER, region.bufferLength());
            assertTrue(region.description().contains(file.toString()), region.description());
            assertEquals(file, ((MappedFileRegion)region).path());
            for (int i = 0; i < 3; i++) {
                final ByteBuffer buffer = region.buffer(i);
                assertTrue(buffer.isDirect());
                assertEquals(0, buffer.position());
                assertEquals(BUFFER, buffer.limit());
                assertEquals(BUFFER, buffer.capacity());
                assertEquals(ByteOrder.nativeOrder(), buffer.order());
            }
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(3));
        } finally {
            region.close();
        }
        assertFalse(Files.exists(file), "the file is deleted on close");
        region.close();
    }

    @Test
    void shouldKeepTheFileWhenAskedNotToDeleteIt() throws IOException {
        final Path file = directory.resolve("kept.map");
        final MemoryRegion region = MappedFileRegion.factory(file, MappedFileRegion.Mode.SHARED, false).open(2, BUFFER);
        region.buffer(1).put(10, (byte)42);
        region.close();
        assertTrue(Files.exists(file), "deleteOnClose=false keeps the file");
        assertEquals(2L * BUFFER, Files.size(file));
        assertEquals(42, readFile(file, BUFFER + 10, 1)[0], "a shared mapping writes through to the file");
    }

    @Test
    void shouldKeepWritesOfAPrivateMappingOutOfTheFile() throws IOException {
        final Path file = directory.resolve("private.map");
        final MemoryRegion region = MappedFileRegion.factory(file, MappedFileRegion.Mode.PRIVATE, false).open(2, BUFFER);
        try {
            region.buffer(0).put(7, (byte)42);
            assertEquals(42, region.buffer(0).get(7));
            assertEquals(0, readFile(file, 7, 1)[0], "a private mapping is copy-on-write");
        } finally {
            region.close();
        }
        assertTrue(Files.exists(file));
    }

    @Test
    void shouldTruncateAndZeroAnExistingFile() throws IOException {
        final Path file = directory.resolve("existing.map");
        final byte[] junk = new byte[5 * BUFFER];
        java.util.Arrays.fill(junk, (byte)0x77);
        Files.write(file, junk);
        final MemoryRegion region = MappedFileRegion.factory(file, MappedFileRegion.Mode.SHARED, false).open(2, BUFFER);
        try {
            assertEquals(2L * BUFFER, Files.size(file));
            final byte[] contents = new byte[BUFFER];
            region.buffer(1).duplicate().get(contents);
            assertArrayEquals(new byte[BUFFER], contents, "old contents do not show through");
        } finally {
            region.close();
        }
    }

    @Test
    void shouldCreateMissingParentDirectories() {
        final Path file = directory.resolve("a/b/c/region.map");
        final MemoryRegion region = MappedFileRegion.factory(file).open(1, BUFFER);
        try {
            assertTrue(Files.isRegularFile(file));
        } finally {
            region.close();
        }
    }

    @Test
    void shouldFailWithAConfigurationExceptionWhenTheFileCannotBeCreated() throws IOException {
        final Path notADirectory = Files.createFile(directory.resolve("plain-file"));
        final Path file = notADirectory.resolve("region.map");
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> MappedFileRegion.factory(file).open(2, BUFFER));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.getCause() instanceof IOException, String.valueOf(e.getCause()));
        assertTrue(Files.isRegularFile(notADirectory));

        final CacheConfigurationException built = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder()
            .capacity(2 * BUFFER).bufferLength(BUFFER).registerMBean(false).region(MappedFileRegion.factory(file, MappedFileRegion.Mode.SHARED, false))
            .build());
        assertTrue(built.getMessage().contains("could not be created"), built.getMessage());
    }

    /**
     * Asks for more than the file system holds. The check comes before a byte is written; the
     * timeout bounds the damage (the write is interruptible) should it ever stop doing so.
     */
    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldFailWithAConfigurationExceptionWhenTheFileSystemLacksSpace() throws IOException {
        final long usable = Files.getFileStore(directory).getUsableSpace();
        final int buffer = BlockCache.Builder.BUFFER_LENGTH_DEFAULT;
        final long count = usable / buffer + 1024;
        assumeTrue(count < Integer.MAX_VALUE, "the file system is too large to exceed with one region");
        final Path file = directory.resolve("huge.map");
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> MappedFileRegion.factory(file).open((int)count, buffer));
        assertTrue(e.getMessage().contains("usable"), e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertFalse(Files.exists(file), "a failed open leaves no file behind");
    }
}
