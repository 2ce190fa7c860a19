package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block cache suite in JVM direct memory, the default region: buffers allocated as the
 * cache first needs them ({@link DirectMemoryRegion.Commit#ON_DEMAND}).
 */
class DirectRegionBlockCacheTest extends AbstractBlockCacheTest {
    @Override
    protected MemoryRegionFactory region() {
        return DirectMemoryRegion.factory();
    }

    @Test
    void shouldGiveItsDirectMemoryBackOnClose() {
        final BlockCache cache = track(builder().build());
        final long empty = DirectMemoryRegion.usedDirectMemory();
        cache.insert(Unpooled.wrappedBuffer(new byte[3 * BLOCK]));
        final long one = DirectMemoryRegion.usedDirectMemory();
        assertTrue(one - empty >= BUFFER, "the JDK counts the buffer the insert needed: " + empty + " -> " + one);
        cache.close();
        final long closed = DirectMemoryRegion.usedDirectMemory();
        assertTrue(one - closed >= BUFFER, "direct memory in use went from " + one + " to " + closed);
        assertTrue(cache.regionDescription().contains("direct"), cache.regionDescription());
    }

    @Test
    void shouldAllocateABufferOnlyWhenTheOnesItHasAreFull() {
        final BlockCache cache = track(builder().build());
        assertEquals(0, cache.allocatedBufferCount(), "nothing is allocated at build");
        assertEquals(DATA_BLOCKS, cache.stats().freeBlockCount(), "buffers without memory count as free");
        assertEquals((long)BUFFERS * BUFFER, cache.capacity());
        final int first = cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK]));
        assertEquals(1, cache.allocatedBufferCount());
        assertEquals(DATA_BLOCKS - 1, cache.stats().freeBlockCount());
        // Fill the first buffer exactly: no second buffer yet.
        cache.insert(Unpooled.wrappedBuffer(new byte[(DATA_BLOCKS_PER_BUFFER - 1) * BLOCK]));
        assertEquals(1, cache.allocatedBufferCount());
        final int second = cache.insert(Unpooled.wrappedBuffer(new byte[10]));
        assertEquals(2, cache.allocatedBufferCount());
        assertEquals(first >>> 4, 0);
        assertTrue(second >>> 4 == 1, "the second buffer is the next one: 0x" + Integer.toHexString(second));
        // An address in a buffer the cache has not needed yet names a free block, not a shrunk buffer.
        final int unallocated = (BUFFERS - 1) << 4 | 1;
        assertEquals(InvalidAddressException.Reason.FREED_BLOCK,
            assertThrows(InvalidAddressException.class, () -> cache.length(unallocated)).reason());
        assertEquals(InvalidAddressException.Reason.METADATA_BLOCK,
            assertThrows(InvalidAddressException.class, () -> cache.length((BUFFERS - 1) << 4)).reason());
        // Freed buffers keep their memory until close, as Pravega's DirectMemoryCache does.
        cache.delete(first);
        assertEquals(2, cache.allocatedBufferCount());
    }
}
