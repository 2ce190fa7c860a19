package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The order in which a buffer hands out its free blocks: ascending when fresh and again once it
 * is wholly free, so that entries inserted one after another lie forwards in memory, each one
 * run of adjacent blocks; LIFO while it is partly used (the blocks freed last are the warmest);
 * and a thread that frees an entry takes the next blocks from that entry's buffer.
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
    void aThreadTakesNextTheBlocksItFreedLastEvenFromAnotherBufferThanItsHint() {
        // 15 data blocks per buffer: five 3-block entries fill the first buffer, the sixth opens the second.
        try (BlockCache cache = BlockCache.builder().capacity(4 * 64 * 1024).bufferLength(64 * 1024).name("hint")
            .registerMBean(false).build()) {
            final int[] entries = insertAll(cache, 6);
            final int bits = Integer.numberOfTrailingZeros(64 * 1024 / BLOCK);
            assertEquals(entries[0] >>> bits, entries[4] >>> bits, "the first five entries fill one buffer");
            assertNotEquals(entries[0] >>> bits, entries[5] >>> bits, "the sixth is in another buffer: the thread's hint");
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 5; i++) {
                    cache.delete(entries[i]);
                    final int again = insertAll(cache, 1)[0];
                    assertEquals(entries[i], again, "the delete's blocks come back to the next insert (entry " + i + ")");
                    assertEquals(1, cache.view(again).nioBufferCount(), "one run of adjacent blocks");
                }
            }
            assertEquals(6 * 3, cache.stats().usedBlockCount());
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
