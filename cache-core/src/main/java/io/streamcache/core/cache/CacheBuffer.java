package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * One buffer of a {@link BlockCache}: its native memory, its metadata words and its free list.
 *
 * <p><b>Concurrency:</b> the free list (the header word and the words of free blocks) and
 * {@link #inQueue} are guarded by this object's monitor. The word of a used block is written by
 * the thread that owns its entry (the cache's callers serialize operations per entry) and read
 * under the happens-before edge that handed the entry's address over. The header is written with
 * release semantics under the monitor so that {@link #freeCountVolatile()} may read it without.
 */
final class CacheBuffer {
    final int index;
    /** Index of the tier owning this buffer. */
    final int tier;
    /** Native address of the buffer; its block 0 holds the metadata words. */
    final long address;
    /** Netty view over the whole buffer: the route for copies from and to any {@link ByteBuf}, and the parent of read views. */
    final ByteBuf memory;
    /** Blocks in the buffer, block 0 (the metadata) included. */
    final int blocksPerBuffer;
    /**
     * Whether the free list links its blocks in ascending order, each to the next (guarded by the
     * monitor): true after {@link #resetFreeList()}; taking blocks from the head keeps it; giving
     * a block back keeps it only if the block goes right before the head. A wholly free buffer
     * whose list is not ascending is reset.
     */
    boolean freeListAscending;
    /** Whether this buffer is in its tier's stack of buffers with free blocks, or about to be put back by the thread that took it. */
    boolean inQueue;

    CacheBuffer(final int index, final int tier, final ByteBuffer buffer, final int blocksPerBuffer) {
        this(index, tier, buffer, blocksPerBuffer, false);
    }

    /**
     * @param keepMetadata whether to leave block 0 as the memory holds it (a warm restart's
     *                     reopened region, whose free list {@code RegionAdopter} rebuilds before
     *                     the cache is used) instead of linking every block into the free list.
     */
    CacheBuffer(final int index, final int tier, final ByteBuffer buffer, final int blocksPerBuffer, final boolean keepMetadata) {
        this.index = index;
        this.tier = tier;
        this.address = BufferUtil.address(buffer);
        this.memory = Unpooled.wrappedBuffer(buffer);
        this.blocksPerBuffer = blocksPerBuffer;
        if (!keepMetadata) {
            resetFreeList();
        }
        inQueue = true;
    }

    /**
     * Links every block into the free list in ascending order (block 1 first), the order that
     * lets consecutive allocations form runs of adjacent blocks, which copies and views treat as
     * one range. Called by the constructor, and under the monitor when the last used block of
     * the buffer is freed: a LIFO free list would otherwise hand the blocks of a bulk-emptied
     * buffer out in the reverse order of their freeing (entry by entry downwards), breaking the
     * sequential streams that the hardware prefetcher follows.
     */
    void resetFreeList() {
        for (int block = 1; block < blocksPerBuffer; block++) {
            word(block, BlockMetadataDescriptor.freeWord(block + 1 < blocksPerBuffer ? block + 1 : 0));
        }
        UNSAFE.putLongVolatile(null, address, BlockMetadataDescriptor.headerWord(blocksPerBuffer - 1, 1));
        freeListAscending = true;
    }

    long word(final int blockIndex) {
        return UNSAFE.getLong(address + ((long)blockIndex << 3));
    }

    void word(final int blockIndex, final long word) {
        UNSAFE.putLong(address + ((long)blockIndex << 3), word);
    }

    /**
     * Called under the monitor; pairs with {@link #freeCountVolatile()}.
     */
    long header() {
        return UNSAFE.getLong(address);
    }

    /**
     * Called under the monitor; a release store that pairs with {@link #freeCountVolatile()}.
     */
    void headerRelease(final long header) {
        UNSAFE.putOrderedLong(null, address, header);
    }

    /**
     * @return free blocks, read without the monitor (acquire; pairs with {@link #headerRelease(long)}).
     */
    int freeCountVolatile() {
        return BlockMetadataDescriptor.freeCount(UNSAFE.getLongVolatile(null, address));
    }
}
