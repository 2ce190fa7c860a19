package io.streamcache.core.cache;

import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.DirectMemoryRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block allocator on its own, over a real tier table of two tiers in direct memory (a fast
 * tier of two buffers, a slow one of one, 7 data blocks per buffer): chains linked backwards,
 * the fall-through between tiers, the one-tier allocation of relocations, the full handler and
 * the checks of freeing.
 */
class BlockAllocatorTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 8;
    private static final int BUFFER = BLOCKS * BLOCK;
    private static final int BITS = 3;

    private final AtomicInteger handlerCalls = new AtomicInteger();
    private final TierTable tiers = new TierTable(new CacheConfig("allocator", -1, BLOCK, BUFFER, 1 << 20,
        DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY), false,
        List.of(new CacheConfig.TierSpec("fast", 2L * BUFFER, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY)),
            new CacheConfig.TierSpec("slow", BUFFER, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY))),
        CacheFullHandler.NONE, Duration.ZERO, false), BITS);
    private final BlockTable table = new BlockTable(tiers.buffers(), BLOCK, BLOCKS);
    private final BlockAllocator allocator = new BlockAllocator("allocator", table, tiers.tiers(), blockCount -> {
        handlerCalls.incrementAndGet();
        return false;
    }, Duration.ZERO);

    @AfterEach
    void close() {
        for (final CacheBuffer buffer : table.buffers) {
            buffer.memory.release();
        }
        tiers.closeRegions();
    }

    private static int address(final int buffer, final int block) {
        return BlockAddressDescriptor.pack(buffer, block, BITS);
    }

    private long free(final int tier) {
        return tiers.freeBlocks(tiers.get(tier));
    }

    @Test
    void shouldLinkAChainBackwardsOfAdjacentBlocksFromAFreshBuffer() {
        final int last = allocator.allocateChain(3, BlockAddressDescriptor.NULL_ADDRESS, 0);
        assertEquals(address(0, 3), last, "ascending from block 1 of the first buffer");
        assertEquals(BlockMetadataDescriptor.usedWord(address(0, 2)), table.word(last), "used, not last: the caller writes the last word");
        assertEquals(address(0, 1), table.step(address(0, 2)));
        assertEquals(BlockMetadataDescriptor.usedWord(BlockAddressDescriptor.NULL_ADDRESS), table.word(address(0, 1)));
        assertEquals(2 * 7 - 3, free(0));
        final int next = allocator.allocateChain(2, last, 0);
        assertEquals(address(0, 5), next, "the same thread keeps filling its hint buffer");
        assertEquals(BlockMetadataDescriptor.usedWord(last), table.word(address(0, 4)));
    }

    @Test
    void shouldFallThroughToTheNextTierWithRoomFastestFirst() {
        final int fast = allocator.allocateChain(14, BlockAddressDescriptor.NULL_ADDRESS, 0);
        assertEquals(0, free(0));
        final int spilled = allocator.allocateChain(1, fast, 0);
        assertEquals(1, table.tierOf(spilled), "tier 0 is full: the chain goes on in tier 1");
        allocator.freeChain(spilled, fast);
        allocator.freeChain(fast, BlockAddressDescriptor.NULL_ADDRESS);
        final int slow = allocator.allocateChain(2, BlockAddressDescriptor.NULL_ADDRESS, 1);
        assertEquals(1, table.tierOf(slow), "the preferred tier first, even when a faster one has room");
        assertEquals(0, handlerCalls.get());
    }

    @Test
    void shouldTakeBlocksOfOneTierOnlyAndNothingWhenItIsShort() {
        final int last = allocator.allocateInTier(tiers.get(1), 7);
        assertEquals(1, table.tierOf(last));
        assertEquals(0, free(1));
        final CacheFullException e = assertThrows(CacheFullException.class, () -> allocator.allocateInTier(tiers.get(1), 1));
        assertTrue(e.getMessage().startsWith("tier slow of cache allocator has not 1 free blocks"), e.getMessage());
        allocator.freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
        assertThrows(CacheFullException.class, () -> allocator.allocateInTier(tiers.get(1), 8));
        assertEquals(7, free(1), "a short tier gives back the blocks it took");
        assertEquals(14, free(0), "and never falls through to another tier");
        assertEquals(0, handlerCalls.get(), "nor calls the full handler");
    }

    @Test
    void shouldCallTheFullHandlerOnlyWhenEveryTierIsFullAndFailWhenItFreesNothing() {
        allocator.allocateChain(20, BlockAddressDescriptor.NULL_ADDRESS, 0);
        assertEquals(0, handlerCalls.get());
        final int one = allocator.allocateChain(1, BlockAddressDescriptor.NULL_ADDRESS, 0);
        assertEquals(0, handlerCalls.get(), "the last free block, in any tier, is had without the handler");
        final CacheFullException e = assertThrows(CacheFullException.class,
            () -> allocator.allocateChain(1, BlockAddressDescriptor.NULL_ADDRESS, 0));
        assertTrue(e.getMessage().endsWith("the full handler freed nothing"), e.getMessage());
        assertEquals(1, handlerCalls.get());
        assertEquals(1, allocator.fullHandlerCalls());
        assertEquals(1, allocator.fullFailures());
        allocator.freeChain(one, BlockAddressDescriptor.NULL_ADDRESS);
    }

    @Test
    void shouldRetryOnceTheFullHandlerHasFreedBlocks() {
        final int held = allocator.allocateChain(21, BlockAddressDescriptor.NULL_ADDRESS, 0);
        allocator.fullHandler(blockCount -> {
            handlerCalls.incrementAndGet();
            allocator.freeChain(held, BlockAddressDescriptor.NULL_ADDRESS);
            return true;
        });
        final int last = allocator.allocateChain(2, BlockAddressDescriptor.NULL_ADDRESS, 0);
        assertEquals(0, table.tierOf(last));
        assertEquals(1, handlerCalls.get());
        assertEquals(1, allocator.fullHandlerCalls());
        assertEquals(0, allocator.fullFailures());
    }

    @Test
    void shouldRejectAChainLongerThanTheWholeCacheWithoutCallingTheHandler() {
        assertEquals(21, allocator.totalBlocks());
        final CacheFullException e = assertThrows(CacheFullException.class,
            () -> allocator.allocateChain(22, BlockAddressDescriptor.NULL_ADDRESS, 0));
        assertTrue(e.getMessage().contains("cannot hold 22 blocks: it has 21"), e.getMessage());
        assertEquals(0, handlerCalls.get());
        assertEquals(1, allocator.fullFailures());
    }

    @Test
    void shouldFreeAChainUpToItsStopBlockAcrossBuffers() {
        final int first = allocator.allocateChain(6, BlockAddressDescriptor.NULL_ADDRESS, 0);
        final int last = allocator.allocateChain(3, first, 0);
        assertEquals(1, last >>> BITS, "the chain went on in the second buffer");
        allocator.freeChain(last, first);
        assertEquals(14 - 6, free(0), "only the blocks after the stop block are freed");
        assertEquals(BlockMetadataDescriptor.usedWord(address(0, 5)), table.word(first));
        allocator.freeChain(first, BlockAddressDescriptor.NULL_ADDRESS);
        assertEquals(14, free(0));
    }

    @Test
    void shouldRefuseToFreeAFreeBlockAndKeepTheFreeList() {
        final CacheCorruptedException e = assertThrows(CacheCorruptedException.class,
            () -> allocator.freeChain(address(0, 5), BlockAddressDescriptor.NULL_ADDRESS));
        assertTrue(e.getMessage().endsWith("which is free"), e.getMessage());
        assertEquals(14, free(0));
        assertEquals(address(0, 1), allocator.allocateChain(1, BlockAddressDescriptor.NULL_ADDRESS, 0));
    }
}
