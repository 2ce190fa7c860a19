package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.core.memory.PmemRegion;
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
 * The block cache suite in llpl memory pools on regular files under a temporary directory (no
 * PMEM needed: libpmem maps a regular file the same way), one pool per cache.
 */
class PmemRegionBlockCacheTest extends AbstractBlockCacheTest {
    private final AtomicInteger files = new AtomicInteger();

    @TempDir
    Path directory;

    @Override
    protected MemoryRegionFactory region() {
        return PmemRegion.factory(directory.resolve("cache-" + files.incrementAndGet() + ".pool"));
    }

    private long poolFileCount() throws IOException {
        try (Stream<Path> listing = Files.list(directory)) {
            return listing.filter(path -> path.getFileName().toString().endsWith(".pool")).count();
        }
    }

    @Test
    void shouldKeepItsPoolWhileOpenAndDeleteItOnClose() throws IOException {
        final BlockCache cache = builder().build();
        final Path file = directory.resolve("cache-" + files.get() + ".pool");
        assertTrue(Files.isRegularFile(file));
        assertEquals((long)BUFFERS * BUFFER, Files.size(file));
        assertTrue(cache.regionDescription().contains("PMEM"), cache.regionDescription());
        assertTrue(cache.regionDescription().contains(file.toString()), cache.regionDescription());
        final byte[] data = pattern(1, 3 * BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(data)), data);
        cache.close();
        assertFalse(Files.exists(file), "the pool file is deleted when the cache closes");
        assertEquals(0, poolFileCount());
    }
}
