package io.streamcache.core.cache;

import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;

import java.util.function.IntPredicate;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;

/**
 * The cache's buffers seen as one array of blocks named by 32-bit addresses
 * ({@link BlockAddressDescriptor}), and the metadata word of each block
 * ({@link io.streamcache.core.internal.layout.BlockMetadataDescriptor}): reading and writing a
 * block's word, checking that an address names the last block of a live entry, stepping back
 * along an entry's chain, and the geometry arithmetic (where a block starts in its buffer, how
 * many blocks a length takes).
 *
 * <p>The slot of an offline buffer of a resizable tier is null ({@link TierResizer} writes the
 * slots; an address reaches a thread only through the allocation that published its buffer).
 *
 * <p><b>Threading:</b> immutable after construction (but for those slots) and callable from any thread. The words
 * themselves follow {@link CacheBuffer}'s rules: a used block's word is written by the thread
 * that owns its entry (the cache's callers serialize operations per entry) and read under the
 * happens-before edge that handed the entry's address over; free blocks' words belong to the
 * buffer's lock ({@link BlockAllocator}).
 */
final class BlockTable {
    /** Every buffer of every tier, indexed by the buffer part of an address. */
    final CacheBuffer[] buffers;
    final int blockLength;
    final int blockShift;
    final int blocksPerBuffer;
    /** Low bits of an address that name the block in its buffer. */
    final int blockIndexBits;
    final int blockIndexMask;

    /** Whether a buffer index without a buffer belongs to an on-demand tier (not given memory yet) rather than a shrunk one. */
    private final IntPredicate notAllocatedYet;

    BlockTable(final CacheBuffer[] buffers, final int blockLength, final int blocksPerBuffer) {
        this(buffers, blockLength, blocksPerBuffer, index -> false);
    }

    /**
     * @param notAllocatedYet says of a buffer index without a buffer whether it is one of an
     *                        on-demand tier that has no memory yet: its blocks are free (or
     *                        metadata), not out of range.
     */
    BlockTable(final CacheBuffer[] buffers, final int blockLength, final int blocksPerBuffer, final IntPredicate notAllocatedYet) {
        this.notAllocatedYet = notAllocatedYet;
        this.buffers = buffers;
        this.blockLength = blockLength;
        this.blockShift = Integer.numberOfTrailingZeros(blockLength);
        this.blocksPerBuffer = blocksPerBuffer;
        this.blockIndexBits = BlockAddressDescriptor.blockIndexBits(blocksPerBuffer);
        this.blockIndexMask = blocksPerBuffer - 1;
    }

    /**
     * @return the word of the last block of the entry at {@code address}, after checking that
     *         the address names one.
     * @throws InvalidAddressException if it does not.
     */
    long lastWordOf(final int address) {
        final int bufferIndex = checkedBufferIndex(address);
        final int block = address & blockIndexMask;
        if (block == BlockAddressDescriptor.METADATA_BLOCK_INDEX) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.METADATA_BLOCK, "block 0 holds metadata");
        }
        final long word = buffers[bufferIndex].word(block);
        if (!isUsed(word)) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.FREED_BLOCK, "the block is free");
        }
        if (!isLast(word)) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.NOT_LAST_BLOCK,
                "the block is not the last block of its entry");
        }
        return word;
    }

    /**
     * @return the buffer part of {@code address}, checked to name a buffer of the cache.
     * @throws InvalidAddressException if the address is 0 or past the last buffer.
     */
    int checkedBufferIndex(final int address) {
        if (address == BlockAddressDescriptor.NULL_ADDRESS) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.NULL_ADDRESS, "address 0 is never valid");
        }
        final int bufferIndex = address >>> blockIndexBits;
        if (bufferIndex >= buffers.length) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.OUT_OF_RANGE,
                "bufferIndex=" + bufferIndex + " bufferCount=" + buffers.length);
        }
        if (buffers[bufferIndex] == null) {
            if (notAllocatedYet.test(bufferIndex)) {
                // A buffer the cache has not needed yet holds no entry: say what its block would be.
                if ((address & blockIndexMask) == BlockAddressDescriptor.METADATA_BLOCK_INDEX) {
                    throw new InvalidAddressException(address, InvalidAddressException.Reason.METADATA_BLOCK, "block 0 holds metadata");
                }
                throw new InvalidAddressException(address, InvalidAddressException.Reason.FREED_BLOCK,
                    "the block is free (bufferIndex=" + bufferIndex + " has not been needed yet)");
            }
            throw new InvalidAddressException(address, InvalidAddressException.Reason.OUT_OF_RANGE,
                "bufferIndex=" + bufferIndex + " is offline (its tier was shrunk)");
        }
        return bufferIndex;
    }

    /**
     * @return the buffer holding the block {@code address} names (not checked).
     */
    CacheBuffer bufferOf(final int address) {
        return buffers[address >>> blockIndexBits];
    }

    /**
     * @return the index of the tier holding the block {@code address} names (not checked).
     */
    int tierOf(final int address) {
        return buffers[address >>> blockIndexBits].tier;
    }

    long word(final int address) {
        return buffers[address >>> blockIndexBits].word(address & blockIndexMask);
    }

    void setWord(final int address, final long word) {
        buffers[address >>> blockIndexBits].word(address & blockIndexMask, word);
    }

    /**
     * @return the block before {@code address} in its entry, checked to be a used middle block.
     * @throws CacheCorruptedException if the chain ends early or links to a free or last block.
     */
    int step(final int address) {
        final int previous = previousAddress(word(address));
        if (previous == BlockAddressDescriptor.NULL_ADDRESS) {
            throw new CacheCorruptedException("block chain ends early at address=0x" + Integer.toHexString(address));
        }
        final long word = word(previous);
        if (!isUsed(word) || isLast(word)) {
            throw new CacheCorruptedException("block address=0x" + Integer.toHexString(address)
                + " links to address=0x" + Integer.toHexString(previous) + " which is " + (isUsed(word) ? "a last block" : "free"));
        }
        return previous;
    }

    /**
     * @return the byte offset of the block {@code address} names in its buffer.
     */
    int blockOffset(final int address) {
        return (address & blockIndexMask) << blockShift;
    }

    /**
     * @return blocks an entry of {@code length} bytes occupies (an empty entry has one).
     */
    int blockCount(final int length) {
        return length == 0 ? 1 : ((length - 1) >>> blockShift) + 1;
    }

    /**
     * @return the entry offset at which the block holding {@code entryOffset} starts.
     */
    int blockStartOf(final int entryOffset) {
        return (entryOffset >>> blockShift) << blockShift;
    }

    /**
     * @return the entry offset at which the last block of an entry of {@code entryLength} bytes starts.
     */
    int lastBlockStart(final int entryLength) {
        return (blockCount(entryLength) - 1) << blockShift;
    }
}
