package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resizable regions ({@link ResizableDirectRegion}, {@link ResizableMappedFileRegion}):
 * buffers online and offline one by one, their memory usable and page-aligned, the counts, the
 * misuses refused, the direct-memory count and the file's length following the online buffers,
 * and close.
 */
class ResizableRegionTest {
    private static final int BUFFER = 64 << 10;

    @TempDir
    Path directory;

    private ResizableRegion open(final String kind, final int online, final int max) {
        return switch (kind) {
            case "lazy" -> DirectMemoryRegion.factory().openResizable(online, max, BUFFER);
            case "eager" -> DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER).openResizable(online, max, BUFFER);
            case "mapped" -> MappedFileRegion.factory(directory.resolve("region")).openResizable(online, max, BUFFER);
            default -> throw new IllegalArgumentException(kind);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"lazy", "eager", "mapped"})
    void buffersGoOnlineAndOfflineOneByOne(final String kind) {
        try (ResizableRegion region = open(kind, 2, 6)) {
            assertEquals(6, region.bufferCount());
            assertEquals(BUFFER, region.bufferLength());
            assertEquals(2, region.onlineCount());
            assertTrue(region.isOnline(0) && region.isOnline(1) && !region.isOnline(2));
            assertThrows(IllegalStateException.class, () -> region.buffer(4));
            final ByteBuffer four = region.online(4);
            assertEquals(3, region.onlineCount());
            assertEquals(BUFFER, four.capacity());
            assertEquals(0, BufferUtil.address(four) & 4095, "page-aligned");
            four.putLong(BUFFER - 8, 42L);
            assertEquals(42L, region.buffer(4).getLong(BUFFER - 8));
            assertThrows(IllegalStateException.class, () -> region.online(4), "online twice");
            region.offline(4);
            assertFalse(region.isOnline(4));
            assertThrows(IllegalStateException.class, () -> region.offline(4), "offline twice");
            assertThrows(IndexOutOfBoundsException.class, () -> region.online(6));
            assertEquals(2, region.onlineCount());
            assertTrue(region.description().contains("2 of 6"), region.description());
            assertEquals(kind.equals("mapped"), region.releasesFromTheEnd());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lazy", "eager"})
    void directMemoryInUseFollowsTheOnlineBuffers(final String kind) {
        final long before = DirectMemoryRegion.usedDirectMemory();
        final ResizableRegion region = open(kind, 1, 4);
        try {
            region.online(1);
            region.online(2);
            assertTrue(DirectMemoryRegion.usedDirectMemory() - before >= 3L * BUFFER);
            region.offline(1);
            region.offline(2);
            final long one = DirectMemoryRegion.usedDirectMemory() - before;
            assertTrue(one >= BUFFER && one < 2L * BUFFER, "one buffer online: " + one);
        } finally {
            region.close();
        }
        assertTrue(DirectMemoryRegion.usedDirectMemory() - before < BUFFER, "closed: all given back");
    }

    @Test
    void aBufferBeyondMaxDirectMemorySizeIsRefusedAndChangesNothing() {
        // A region larger than the JVM's direct-memory limit cannot bring its last buffers online.
        final int buffers = (int)(DirectMemoryRegion.maxDirectMemory() / (1 << 20)) + 16;
        try (ResizableRegion region = DirectMemoryRegion.factory().openResizable(1, buffers, 1 << 20)) {
            final CacheConfigurationException e = assertThrows(CacheConfigurationException.class, () -> {
                for (int i = 1; i < buffers; i++) {
                    region.online(i);
                }
            });
            assertTrue(e.getMessage().contains("MaxDirectMemorySize"), e.getMessage());
            final int online = region.onlineCount();
            assertTrue(online > 1 && online < buffers);
            assertFalse(region.isOnline(online), "the refused buffer stays offline");
        }
    }

    @Test
    void theFileIsAsLongAsTheHighestOnlineBuffer() throws Exception {
        final Path file = directory.resolve("region");
        try (ResizableRegion region = open("mapped", 2, 6)) {
            assertEquals(2L * BUFFER, Files.size(file));
            region.online(5);
            assertEquals(6L * BUFFER, Files.size(file));
            region.offline(1);
            assertEquals(6L * BUFFER, Files.size(file), "a buffer below the highest keeps its pages");
            region.offline(5);
            assertEquals(BUFFER, Files.size(file), "truncated to the highest online buffer, buffer 0");
        }
        assertFalse(Files.exists(file), "deleted on close");
    }
}
