package io.streamcache.core.cache;

import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One cache buffer on its own, over real direct memory: its metadata words, the header word
 * (free count and free-list head) and the free list as {@link BlockCache} takes blocks from it
 * and gives them back (the helpers below do what BlockAllocator.takeBlocks and freeChain do under the
 * monitor).
 */
class CacheBufferTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 8;

    private static ByteBuffer direct(final int blocks) {
        return ByteBuffer.allocateDirect(blocks * BLOCK);
    }

    /** The free list from the header's head, following each free block's word. */
    private static int[] freeList(final CacheBuffer buffer) {
        final int count = BlockMetadataDescriptor.freeCount(buffer.header());
        final int[] list = new int[count];
        int block = BlockMetadataDescriptor.freeHeadIndex(buffer.header());
        for (int i = 0; i < count; i++) {
            assertTrue(block > 0 && block < buffer.blocksPerBuffer, "block " + block + " at position " + i);
            assertFalse(BlockMetadataDescriptor.isUsed(buffer.word(block)), "block " + block + " is free");
            list[i] = block;
            block = BlockMetadataDescriptor.nextFreeIndex(buffer.word(block));
        }
        assertEquals(0, block, "the list ends after the free count");
        return list;
    }

    /** Takes the head block, as BlockAllocator.takeBlocks does. */
    private static int take(final CacheBuffer buffer) {
        buffer.lock();
        try {
            final long header = buffer.header();
            final int block = BlockMetadataDescriptor.freeHeadIndex(header);
            final int next = BlockMetadataDescriptor.nextFreeIndex(buffer.word(block));
            buffer.word(block, BlockMetadataDescriptor.usedWord(0));
            buffer.headerRelease(BlockMetadataDescriptor.headerWord(BlockMetadataDescriptor.freeCount(header) - 1, next));
            return block;
        } finally {
            buffer.unlock();
        }
    }

    /** Gives a block back to the head of the list, as BlockAllocator.freeChain does. */
    private static void give(final CacheBuffer buffer, final int block) {
        buffer.lock();
        try {
            final long header = buffer.header();
            final int free = BlockMetadataDescriptor.freeCount(header) + 1;
            final int head = BlockMetadataDescriptor.freeHeadIndex(header);
            buffer.word(block, BlockMetadataDescriptor.freeWord(head));
            buffer.freeListAscending &= head == 0 ? block == buffer.blocksPerBuffer - 1 : block + 1 == head;
            if (free == buffer.blocksPerBuffer - 1 && !buffer.freeListAscending) {
                buffer.resetFreeList();
            } else {
                buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, block));
            }
        } finally {
            buffer.unlock();
        }
    }

    @Test
    void aNewBufferHasEveryBlockButTheMetadataFreeInAscendingOrder() {
        final ByteBuffer memory = direct(BLOCKS);
        final CacheBuffer buffer = new CacheBuffer(3, 1, memory, BLOCKS);
        assertEquals(3, buffer.index);
        assertEquals(1, buffer.tier);
        assertEquals(BufferUtil.address(memory), buffer.address);
        assertEquals(BLOCKS * BLOCK, buffer.memory.capacity());
        assertEquals(BLOCKS - 1, buffer.freeCountVolatile());
        assertEquals(BlockMetadataDescriptor.headerWord(BLOCKS - 1, 1), buffer.header());
        assertEquals(Arrays.toString(new int[] {1, 2, 3, 4, 5, 6, 7}), Arrays.toString(freeList(buffer)));
        assertEquals(0, buffer.word(BLOCKS - 1), "the last free block ends the list");
        assertTrue(buffer.freeListAscending);
        assertTrue(buffer.inQueue, "a new buffer starts in the queue of buffers with free blocks");
    }

    @Test
    void aBufferOfOneDataBlockHasAListOfOne() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(2), 2);
        assertEquals(1, buffer.freeCountVolatile());
        assertEquals(BlockMetadataDescriptor.headerWord(1, 1), buffer.header());
        assertEquals(0, buffer.word(1));
        assertEquals(1, take(buffer));
        assertEquals(0, buffer.freeCountVolatile());
        assertEquals(0, BlockMetadataDescriptor.freeHeadIndex(buffer.header()), "empty list: head 0");
    }

    @Test
    void wordsAreNativeOrderLongsInBlockZero() {
        final ByteBuffer memory = direct(BLOCKS).order(ByteOrder.nativeOrder());
        final CacheBuffer buffer = new CacheBuffer(0, 0, memory, BLOCKS);
        final long word = BlockMetadataDescriptor.lastWord(0x1234_5678, 1000);
        buffer.word(5, word);
        assertEquals(word, buffer.word(5));
        assertEquals(word, memory.getLong(BlockMetadataDescriptor.wordOffset(5)), "block 5's word is at byte 40");
        assertEquals(BlockMetadataDescriptor.freeWord(5), memory.getLong(BlockMetadataDescriptor.wordOffset(4)), "its neighbours untouched");
        assertEquals(BlockMetadataDescriptor.freeWord(7), memory.getLong(BlockMetadataDescriptor.wordOffset(6)));
        assertEquals(buffer.header(), memory.getLong(0), "the header is word 0");
    }

    @Test
    void theMemoryViewAndTheAddressAreTheSameBytes() {
        final ByteBuffer memory = direct(BLOCKS);
        final CacheBuffer buffer = new CacheBuffer(0, 0, memory, BLOCKS);
        buffer.memory.setByte(3 * BLOCK + 17, 0x42);
        assertEquals(0x42, memory.get(3 * BLOCK + 17));
        memory.put(BLOCKS * BLOCK - 1, (byte)0x24);
        assertEquals(0x24, buffer.memory.getByte(BLOCKS * BLOCK - 1));
    }

    @Test
    void theVolatileFreeCountIsTheHeadersFreeCount() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        buffer.headerRelease(BlockMetadataDescriptor.headerWord(3, 6));
        assertEquals(BlockMetadataDescriptor.headerWord(3, 6), buffer.header());
        assertEquals(3, buffer.freeCountVolatile());
        buffer.headerRelease(BlockMetadataDescriptor.headerWord(0, 0));
        assertEquals(0, buffer.freeCountVolatile());
        buffer.headerRelease(BlockMetadataDescriptor.headerWord((int)BlockMetadataDescriptor.FREE_COUNT_MASK, 1));
        assertEquals(Integer.MAX_VALUE, buffer.freeCountVolatile(), "31 bits of free count");
    }

    @Test
    void blocksAreTakenInAscendingOrderAndStayAscending() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        assertEquals(1, take(buffer));
        assertEquals(2, take(buffer));
        assertEquals(3, take(buffer));
        assertEquals(BLOCKS - 4, buffer.freeCountVolatile());
        assertEquals(Arrays.toString(new int[] {4, 5, 6, 7}), Arrays.toString(freeList(buffer)));
        assertTrue(BlockMetadataDescriptor.isUsed(buffer.word(2)));
        assertTrue(buffer.freeListAscending);
    }

    @Test
    void givingBlocksBackInReverseKeepsTheListAscending() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        take(buffer);
        take(buffer);
        give(buffer, 2);
        give(buffer, 1);
        assertTrue(buffer.freeListAscending);
        assertEquals(Arrays.toString(new int[] {1, 2, 3, 4, 5, 6, 7}), Arrays.toString(freeList(buffer)));
    }

    @Test
    void aPartlyUsedBufferIsLifo() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        for (int i = 0; i < 4; i++) {
            take(buffer);
        }
        give(buffer, 2);
        give(buffer, 3);
        assertFalse(buffer.freeListAscending);
        assertEquals(Arrays.toString(new int[] {3, 2, 5, 6, 7}), Arrays.toString(freeList(buffer)));
        assertEquals(3, take(buffer), "the block given back last comes out first");
        assertEquals(2, take(buffer));
    }

    @Test
    void aWhollyFreeBufferOutOfOrderIsResetToAscending() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        for (int i = 1; i < BLOCKS; i++) {
            assertEquals(i, take(buffer));
        }
        assertEquals(0, buffer.freeCountVolatile());
        for (int i = 1; i < BLOCKS; i++) {
            give(buffer, i); // forwards: each goes after the head, not before it
        }
        assertTrue(buffer.freeListAscending, "reset once the last block came back");
        assertEquals(BLOCKS - 1, buffer.freeCountVolatile());
        assertEquals(Arrays.toString(new int[] {1, 2, 3, 4, 5, 6, 7}), Arrays.toString(freeList(buffer)));
    }

    @Test
    void resetFreeListOverwritesEveryWordAndTheHeader() {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        for (int i = 1; i < BLOCKS; i++) {
            buffer.word(i, BlockMetadataDescriptor.lastWord(i, 1));
        }
        buffer.headerRelease(BlockMetadataDescriptor.headerWord(0, 0));
        buffer.freeListAscending = false;
        buffer.resetFreeList();
        assertTrue(buffer.freeListAscending);
        assertEquals(BLOCKS - 1, buffer.freeCountVolatile());
        assertEquals(Arrays.toString(new int[] {1, 2, 3, 4, 5, 6, 7}), Arrays.toString(freeList(buffer)));
    }

    @Test
    void resetFreeListLeavesTheDataBlocksAlone() {
        final ByteBuffer memory = direct(BLOCKS);
        final CacheBuffer buffer = new CacheBuffer(0, 0, memory, BLOCKS);
        memory.putLong(BLOCK, 0x0102_0304_0506_0708L);
        memory.putLong(BLOCKS * BLOCK - 8, -1L);
        buffer.resetFreeList();
        assertEquals(0x0102_0304_0506_0708L, memory.getLong(BLOCK));
        assertEquals(-1L, memory.getLong(BLOCKS * BLOCK - 8));
    }

    /**
     * The buffer's lock under contention: threads (more than this machine's cores, so that a
     * holder is preempted now and then) take and give blocks, one at a time, through the same
     * helpers the allocator's sections mirror, and bump a plain counter under the lock; every
     * increment must survive and the free list must end whole.
     */
    @Test
    void shouldExcludeThreadsAndPublishWhatTheyWroteUnderTheLock() throws Exception {
        final CacheBuffer buffer = new CacheBuffer(0, 0, direct(BLOCKS), BLOCKS);
        final int threads = 6;
        final int rounds = 20_000;
        final long[] counter = new long[1];
        final Thread[] workers = new Thread[threads];
        final Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        final int block = take(buffer);
                        buffer.lock();
                        try {
                            counter[0]++;
                        } finally {
                            buffer.unlock();
                        }
                        give(buffer, block);
                    }
                } catch (final Throwable e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            });
            workers[t].start();
        }
        for (final Thread worker : workers) {
            worker.join();
        }
        assertEquals(null, failure[0]);
        buffer.lock();
        try {
            assertEquals((long)threads * rounds, counter[0], "no increment lost");
            assertEquals(BLOCKS - 1, BlockMetadataDescriptor.freeCount(buffer.header()), "every block given back");
        } finally {
            buffer.unlock();
        }
        assertEquals(BLOCKS - 1, buffer.freeCountVolatile());
    }
}
