package io.streamcache.core.cache;

import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block table on its own, over two buffers of real direct memory in two tiers: the geometry
 * arithmetic, the address checks every cache operation starts with, and the backward step along
 * a chain with its corruption checks. Words are written by hand, as the allocator and the entry
 * writer would.
 */
class BlockTableTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 8;
    /** Block index bits for 8 blocks per buffer. */
    private static final int BITS = 3;

    private static BlockTable table() {
        final CacheBuffer[] buffers = {
            new CacheBuffer(0, 0, ByteBuffer.allocateDirect(BLOCKS * BLOCK), BLOCKS),
            new CacheBuffer(1, 1, ByteBuffer.allocateDirect(BLOCKS * BLOCK), BLOCKS),
        };
        return new BlockTable(buffers, BLOCK, BLOCKS);
    }

    private static int address(final int buffer, final int block) {
        return BlockAddressDescriptor.pack(buffer, block, BITS);
    }

    @Test
    void shouldDeriveTheGeometryFromBlockLengthAndBlocksPerBuffer() {
        final BlockTable table = table();
        assertEquals(12, table.blockShift);
        assertEquals(BITS, table.blockIndexBits);
        assertEquals(BLOCKS - 1, table.blockIndexMask);
        assertEquals(3 * BLOCK, table.blockOffset(address(1, 3)));
    }

    @Test
    void shouldCountTheBlocksOfALengthAndWhereTheyStart() {
        final BlockTable table = table();
        assertEquals(1, table.blockCount(0), "an empty entry has one block");
        assertEquals(1, table.blockCount(1));
        assertEquals(1, table.blockCount(BLOCK));
        assertEquals(2, table.blockCount(BLOCK + 1));
        assertEquals(3, table.blockCount(3 * BLOCK));
        assertEquals(0, table.blockStartOf(BLOCK - 1));
        assertEquals(BLOCK, table.blockStartOf(BLOCK));
        assertEquals(0, table.lastBlockStart(0));
        assertEquals(0, table.lastBlockStart(BLOCK));
        assertEquals(BLOCK, table.lastBlockStart(BLOCK + 1));
        assertEquals(2 * BLOCK, table.lastBlockStart(3 * BLOCK));
    }

    @Test
    void shouldReadTheBufferAndTierOffTheAddress() {
        final BlockTable table = table();
        assertSame(table.buffers[1], table.bufferOf(address(1, 5)));
        assertEquals(0, table.tierOf(address(0, 7)));
        assertEquals(1, table.tierOf(address(1, 1)));
        assertEquals(1, table.checkedBufferIndex(address(1, 1)));
    }

    @Test
    void shouldAcceptOnlyTheLastBlockOfALiveEntry() {
        final BlockTable table = table();
        final int first = address(0, 1);
        final int last = address(1, 2);
        table.setWord(first, BlockMetadataDescriptor.usedWord(BlockAddressDescriptor.NULL_ADDRESS));
        table.setWord(last, BlockMetadataDescriptor.lastWord(first, BLOCK + 10));
        assertEquals(BLOCK + 10, BlockMetadataDescriptor.entryLength(table.lastWordOf(last)));
        assertEquals(table.word(last), table.lastWordOf(last));

        assertReason(InvalidAddressException.Reason.NULL_ADDRESS, table, BlockAddressDescriptor.NULL_ADDRESS);
        assertReason(InvalidAddressException.Reason.OUT_OF_RANGE, table, address(2, 1));
        assertReason(InvalidAddressException.Reason.METADATA_BLOCK, table, address(1, 0));
        assertReason(InvalidAddressException.Reason.FREED_BLOCK, table, address(0, 2));
        assertReason(InvalidAddressException.Reason.NOT_LAST_BLOCK, table, first);
    }

    private static void assertReason(final InvalidAddressException.Reason reason, final BlockTable table, final int address) {
        final InvalidAddressException e = assertThrows(InvalidAddressException.class, () -> table.lastWordOf(address));
        assertEquals(reason, e.reason(), e.getMessage());
        assertEquals(address, e.address());
    }

    @Test
    void shouldRejectAnAddressOutsideTheCacheWhenAskedForItsBuffer() {
        final BlockTable table = table();
        final InvalidAddressException e = assertThrows(InvalidAddressException.class, () -> table.checkedBufferIndex(address(5, 1)));
        assertEquals(InvalidAddressException.Reason.OUT_OF_RANGE, e.reason());
        assertTrue(e.getMessage().contains("bufferIndex=5 bufferCount=2"), e.getMessage());
    }

    @Test
    void shouldStepBackAlongAChainAcrossBuffers() {
        final BlockTable table = table();
        final int first = address(0, 4);
        final int middle = address(1, 6);
        final int last = address(0, 5);
        table.setWord(first, BlockMetadataDescriptor.usedWord(BlockAddressDescriptor.NULL_ADDRESS));
        table.setWord(middle, BlockMetadataDescriptor.usedWord(first));
        table.setWord(last, BlockMetadataDescriptor.lastWord(middle, 2 * BLOCK + 1));
        assertEquals(middle, table.step(last));
        assertEquals(first, table.step(middle));
        final CacheCorruptedException end = assertThrows(CacheCorruptedException.class, () -> table.step(first));
        assertTrue(end.getMessage().contains("ends early"), end.getMessage());
    }

    @Test
    void shouldReportALinkToAFreeOrALastBlockAsCorruption() {
        final BlockTable table = table();
        final int free = address(0, 3);
        final int otherLast = address(1, 3);
        final int toFree = address(0, 6);
        final int toLast = address(1, 7);
        table.setWord(otherLast, BlockMetadataDescriptor.lastWord(BlockAddressDescriptor.NULL_ADDRESS, 1));
        table.setWord(toFree, BlockMetadataDescriptor.lastWord(free, BLOCK + 1));
        table.setWord(toLast, BlockMetadataDescriptor.lastWord(otherLast, BLOCK + 1));
        final CacheCorruptedException e1 = assertThrows(CacheCorruptedException.class, () -> table.step(toFree));
        assertTrue(e1.getMessage().endsWith("which is free"), e1.getMessage());
        final CacheCorruptedException e2 = assertThrows(CacheCorruptedException.class, () -> table.step(toLast));
        assertTrue(e2.getMessage().endsWith("which is a last block"), e2.getMessage());
    }
}
