package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block cache suite in JVM direct memory.
 */
class DirectRegionBlockCacheTest extends AbstractBlockCacheTest {
    @Override
    protected MemoryRegionFactory region() {
        return DirectMemoryRegion.factory();
    }

    @Test
    void shouldGiveItsDirectMemoryBackOnClose() {
        final BlockCache cache = track(builder().build());
        final long open = DirectMemoryRegion.usedDirectMemory();
        cache.insert(Unpooled.wrappedBuffer(new byte[3 * BLOCK]));
        cache.close();
        final long closed = DirectMemoryRegion.usedDirectMemory();
        assertTrue(open - closed >= (long)BUFFERS * BUFFER, "direct memory in use went from " + open + " to " + closed);
        assertTrue(cache.regionDescription().contains("direct"), cache.regionDescription());
    }
}
