package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.streamcache.core.cache.TestBytes.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block cache suite in memory-mapped files under a temporary directory, one file per cache.
 */
class MappedFileRegionBlockCacheTest extends AbstractBlockCacheTest {
    private final AtomicInteger files = new AtomicInteger();

    @TempDir
    Path directory;

    @Override
    protected MemoryRegionFactory region() {
        return MappedFileRegion.factory(directory.resolve("cache-" + files.incrementAndGet() + ".map"));
    }

    private long mapFileCount() throws IOException {
        try (Stream<Path> listing = Files.list(directory)) {
            return listing.filter(path -> path.getFileName().toString().endsWith(".map")).count();
        }
    }

    @Test
    void shouldKeepItsFileWhileOpenAndDeleteItOnClose() throws IOException {
        final BlockCache cache = builder().build();
        final Path file = directory.resolve("cache-" + files.get() + ".map");
        assertTrue(Files.isRegularFile(file));
        assertEquals((long)BUFFERS * BUFFER, Files.size(file));
        assertTrue(cache.regionDescription().contains(file.toString()), cache.regionDescription());
        final byte[] data = pattern(1, 3 * BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(data)), data);
        cache.close();
        assertFalse(Files.exists(file), "the file is deleted when the cache closes");
        assertEquals(0, mapFileCount());
    }

    @Test
    void shouldWorkInAPrivateMapping() {
        final Path file = directory.resolve("private.map");
        final BlockCache cache = track(builder().region(MappedFileRegion.factory(file, MappedFileRegion.Mode.PRIVATE, true)).build());
        final byte[] data = pattern(1, 20 * BLOCK + 3);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        assertEntry(cache, address, data);
        final byte[] more = pattern(2, 5000);
        assertEntry(cache, cache.append(address, Unpooled.wrappedBuffer(more)), TestBytes.concat(data, more));
        assertEveryFreeBlockAllocatable(cache);
    }
}
