package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The order in which a buffer hands out its free blocks: ascending when fresh and again once it
 * is wholly free, so that entries inserted one after another lie forwards in memory, each one
 * run of adjacent blocks; LIFO while it is partly used (the blocks freed last are the warmest).
 */
class FreeListOrderTest {
    private static final int BLOCK = 4096;
    private static final int ENTRY = 3 * BLOCK - 100;

    private static BlockCache oneBuffer() {
        return BlockCache.builder().capacity(2L << 20).name("order").registerMBean(false).build();
    }

    private static int[] insertAll(final BlockCache cache, final int count) {
        final ByteBuf data = Unpooled.wrappedBuffer(new byte[ENTRY]);
        final int[] addresses = new int[count];
        for (int i = 0; i < count; i++) {
            addresses[i] = cache.insert(data);
        }
        return addresses;
    }

    @Test
    void aBulkEmptiedBufferLaysEntriesOutForwardsAgain() {
        try (BlockCache cache = oneBuffer()) {
            final int[] fresh = insertAll(cache, 100);
            for (int i = 1; i < fresh.length; i++) {
                assertEquals(fresh[i - 1] + 3, fresh[i], "fresh entries follow each other, 3 blocks apart");
            }
            for (final int address : fresh) {
                cache.delete(address);
            }
            assertArrayEquals(fresh, insertAll(cache, 100), "after every entry was deleted, the same ascending layout");
        }
    }

    @Test
    void aPartlyUsedBufferReusesTheBlocksFreedLast() {
        try (BlockCache cache = oneBuffer()) {
            final int[] entries = insertAll(cache, 4);
            final int keep = entries[0];
            cache.delete(entries[1]);
            cache.delete(entries[2]);
            final int[] again = insertAll(cache, 2);
            assertEquals(entries[2], again[0], "LIFO while the buffer is in use: the entry deleted last comes back first");
            assertEquals(entries[1], again[1]);
            assertEquals(ENTRY, cache.length(keep), "the entry kept is untouched");
            for (final int address : again) {
                cache.delete(address);
            }
            cache.delete(keep);
            cache.delete(entries[3]);
            final int[] reset = insertAll(cache, 4);
            assertArrayEquals(Arrays.copyOf(entries, 4), reset, "wholly free again: ascending from block 1");
        }
    }
}
