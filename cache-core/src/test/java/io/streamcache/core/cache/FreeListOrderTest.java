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
 * a thread keeps filling its current buffer while it holds the whole of each request, and
 * otherwise takes the next blocks from the buffer it last freed an entry into.
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

    /** 15 data blocks per buffer: five 3-block entries fill one. */
    private static BlockCache smallBuffers() {
        return BlockCache.builder().capacity(4 * 64 * 1024).bufferLength(64 * 1024).name("hint").registerMBean(false).build();
    }

    private static int bufferOf(final int address) {
        return address >>> Integer.numberOfTrailingZeros(64 * 1024 / BLOCK);
    }

    @Test
    void aThreadWhoseBufferIsFullTakesNextTheBlocksItFreedLastInAnother() {
        try (BlockCache cache = smallBuffers()) {
            final int[] entries = insertAll(cache, 10);
            assertEquals(bufferOf(entries[0]), bufferOf(entries[4]), "the first five entries fill one buffer");
            assertEquals(bufferOf(entries[5]), bufferOf(entries[9]), "the next five fill another: the thread's hint, full");
            assertNotEquals(bufferOf(entries[0]), bufferOf(entries[5]));
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 10; i++) {
                    cache.delete(entries[i]);
                    final int again = insertAll(cache, 1)[0];
                    assertEquals(entries[i], again, "the delete's blocks come back to the next insert (entry " + i + ")");
                    assertEquals(1, cache.view(again).nioBufferCount(), "one run of adjacent blocks");
                }
            }
            assertEquals(10 * 3, cache.stats().usedBlockCount());
        }
    }

    @Test
    void aThreadWhoseBufferHasRoomKeepsFillingItBeforeTheBlocksItFreedInAnother() {
        // The order of Pravega's DirectMemoryCache: the current buffer until it is full.
        try (BlockCache cache = smallBuffers()) {
            final int[] entries = insertAll(cache, 6);
            assertNotEquals(bufferOf(entries[0]), bufferOf(entries[5]), "the sixth opens a second buffer: the thread's hint");
            cache.delete(entries[1]);
            cache.delete(entries[3]);
            final int[] next = insertAll(cache, 3);
            for (int i = 0; i < next.length; i++) {
                assertEquals(entries[5] + 3 * (i + 1), next[i], "insert " + i + " goes on in the hint, not into the freed blocks");
            }
            final int[] after = insertAll(cache, 2);
            assertEquals(bufferOf(entries[5]), bufferOf(after[0]), "the hint's last 3 blocks");
            assertEquals(entries[3], after[1], "the hint is full: the blocks freed last come back");
            assertEquals(1, cache.view(after[1]).nioBufferCount(), "one run of adjacent blocks");
        }
    }

    @Test
    void aChurnOfDeletesAndInsertsOfOneSizeKeepsEachEntryInOneRun() {
        // 1,000 entries of 3 blocks in 2 MB buffers of 511 data blocks: the last buffer keeps
        // room after the fill, and a few entries straddle two buffers (two runs by nature).
        try (BlockCache cache = BlockCache.builder().capacity(16L << 20).name("churn").registerMBean(false).build()) {
            final int[] entries = insertAll(cache, 1000);
            final long splitAfterFill = splitEntries(cache, entries);
            final ByteBuf data = Unpooled.wrappedBuffer(new byte[ENTRY]);
            for (int op = 0; op < 3000; op++) {
                final int key = op % entries.length;
                cache.delete(entries[key]);
                entries[key] = cache.insert(data);
            }
            assertEquals(splitAfterFill, splitEntries(cache, entries),
                "entries in more than one run: as many as the fill left, none made by the churn");
        }
    }

    private static long splitEntries(final BlockCache cache, final int[] entries) {
        return Arrays.stream(entries).filter(a -> cache.view(a).nioBufferCount() > 1).count();
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
