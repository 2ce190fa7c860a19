package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.EntryTooLongException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;

import java.nio.ByteBuffer;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.lastWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.usedWord;

/**
 * Every change to a {@link BlockCache}'s entries: insert, append, replace, delete and relocate,
 * each composed of the table's metadata words, the allocator's chains, the copier's copies and
 * the tier accounts. The cache checks the sources and that it is open; the addresses (through the
 * metadata), the entry lengths and a relocation's target tier are checked here, before anything
 * changes.
 *
 * <p><b>Failure leaves the entry as it was.</b> A change that grows an entry takes its new blocks
 * first (their words "used", linked backwards to the entry's last block), turns the old last
 * block's word into "used, not last" so that the copy can walk the whole chain, copies, and only
 * then writes the new last block's word with the length. A copy that fails (a source released
 * underneath, say) writes the old last word back and frees the blocks taken: no block leaks and
 * the address stays valid. (A replace writes over the entry's own blocks, so a source that fails
 * may leave the bytes partly overwritten; length, blocks and address stay as they were. A
 * relocation copies into blocks of its own and frees them on failure.) The words of a one-block
 * entry A while an append links B and C:
 * <pre>
 *   before:   [ A: used, last, length=n ]
 *   copying:  [ A: used ] <- [ B: used ] <- [ C: used ]                    copy into A's tail, B, C
 *   after:    [ A: used ] <- [ B: used ] <- [ C: used, last, length=n+k ]  address C
 *   failed:   [ A: used, last, length=n ]                                  B and C freed, address A
 * </pre>
 *
 * <p><b>Threading:</b> no state of its own beyond its immutable parts; callable from any thread
 * under the cache's contract: changes to one entry are serialized by the caller, changes to
 * different entries run in parallel (the allocator locks one buffer at a time). Allocates
 * nothing on the Java heap.
 */
final class EntryWriter {
    private final int maxEntryLength;
    private final BlockTable table;
    private final TierTable tiers;
    private final BlockAllocator allocator;
    private final ChainCopier copier;

    EntryWriter(final int maxEntryLength, final BlockTable table, final TierTable tiers, final BlockAllocator allocator,
                final ChainCopier copier) {
        this.maxEntryLength = maxEntryLength;
        this.table = table;
        this.tiers = tiers;
        this.allocator = allocator;
        this.copier = copier;
    }

    /**
     * Stores a new entry of the source bytes [srcIndex, srcIndex + length), its blocks taken
     * from {@code tier} first; with {@code mayWait} false takes only blocks free now and returns
     * {@link BlockAddressDescriptor#NULL_ADDRESS}, storing nothing, if there are not enough.
     *
     * @return the new entry's address.
     */
    int insert(final ByteBuf src, final int srcIndex, final int length, final int tier, final boolean mayWait) {
        return insert((Object)src, srcIndex, length, tier, mayWait);
    }

    /** As {@link #insert(ByteBuf, int, int, int, boolean)}, from a {@link ByteBuffer}'s absolute indices. */
    int insert(final ByteBuffer src, final int srcIndex, final int length, final int tier, final boolean mayWait) {
        return insert((Object)src, srcIndex, length, tier, mayWait);
    }

    /**
     * Appends the source bytes [srcIndex, srcIndex + length) to the entry at {@code address};
     * with {@code mayWait} false takes only blocks free now and returns
     * {@link BlockAddressDescriptor#NULL_ADDRESS}, the entry unchanged, if there are not enough.
     *
     * @return the entry's address after the append.
     */
    int append(final int address, final ByteBuf src, final int srcIndex, final int length, final boolean mayWait) {
        return append(address, (Object)src, srcIndex, length, mayWait);
    }

    /** As {@link #append(int, ByteBuf, int, int, boolean)}, from a {@link ByteBuffer}'s absolute indices. */
    int append(final int address, final ByteBuffer src, final int srcIndex, final int length, final boolean mayWait) {
        return append(address, (Object)src, srcIndex, length, mayWait);
    }

    // The bodies, shared by the typed overloads above: src is a ByteBuf or a ByteBuffer, never null.

    private int insert(final Object src, final int srcIndex, final int length, final int tier, final boolean mayWait) {
        checkEntryLength(length);
        final int count = table.blockCount(length);
        // Counted (entries, bytes) in the last block's buffer under the lock the allocation takes anyway.
        final int last = allocator.allocateChain(count, BlockAddressDescriptor.NULL_ADDRESS, tier, length, mayWait);
        if (last == BlockAddressDescriptor.NULL_ADDRESS) {
            return last;
        }
        try {
            write(last, 0, length, src, srcIndex);
        } catch (final RuntimeException | Error e) {
            allocator.freeChain(last, BlockAddressDescriptor.NULL_ADDRESS, length);
            throw e;
        }
        table.setWord(last, lastWord(previousAddress(table.word(last)), length));
        return last;
    }

    private int append(final int address, final Object src, final int srcIndex, final int length, final boolean mayWait) {
        final long word = table.lastWordOf(address);
        final int oldLength = entryLength(word);
        if (length == 0) {
            return address;
        }
        checkEntryLength((long)oldLength + length);
        final int newLength = oldLength + length;
        final int newBlocks = table.blockCount(newLength) - table.blockCount(oldLength);
        if (newBlocks == 0) {
            write(address, oldLength, newLength, src, srcIndex);
            table.setWord(address, lastWord(previousAddress(word), newLength));
            tiers.of(address).storedBytes.add(length);
            return address;
        }
        final int last = allocator.allocateChain(newBlocks, address, table.tierOf(address), -1, mayWait);
        if (last == BlockAddressDescriptor.NULL_ADDRESS) {
            return last;
        }
        table.setWord(address, usedWord(previousAddress(word)));
        try {
            write(last, oldLength, newLength, src, srcIndex);
        } catch (final RuntimeException | Error e) {
            table.setWord(address, word);
            allocator.freeChain(last, address);
            throw e;
        }
        table.setWord(last, lastWord(previousAddress(table.word(last)), newLength));
        tiers.moved(address, oldLength, last, newLength);
        return last;
    }

    private void write(final int last, final int from, final int to, final Object src, final int srcIndex) {
        if (src instanceof ByteBuf buf) {
            copier.writeBackward(last, from, to, buf, srcIndex);
        } else {
            copier.writeBackward(last, from, to, (ByteBuffer)src, srcIndex);
        }
    }

    /**
     * Replaces the bytes of the entry at {@code address} with the readable bytes of {@code data}.
     *
     * @return the entry's address after the replace.
     */
    int replace(final int address, final ByteBuf data) {
        final long word = table.lastWordOf(address);
        final int length = data.readableBytes();
        checkEntryLength(length);
        final int oldLength = entryLength(word);
        final int oldCount = table.blockCount(oldLength);
        final int newCount = table.blockCount(length);
        int last = address;
        if (newCount > oldCount) {
            last = allocator.allocateChain(newCount - oldCount, address, table.tierOf(address));
            table.setWord(address, usedWord(previousAddress(word)));
        }
        // Copy before dropping blocks, and undo a growth if the copy fails, as append does.
        try {
            copier.writeBackward(last, 0, length, data, data.readerIndex());
        } catch (final RuntimeException | Error e) {
            if (last != address) {
                table.setWord(address, word);
                allocator.freeChain(last, address);
            }
            throw e;
        }
        if (newCount < oldCount) {
            int first = address;
            for (int i = 1; i < newCount; i++) {
                first = table.step(first);
            }
            final int dropped = previousAddress(table.word(first));
            table.setWord(first, usedWord(BlockAddressDescriptor.NULL_ADDRESS));
            allocator.freeChain(dropped, BlockAddressDescriptor.NULL_ADDRESS);
        }
        table.setWord(last, lastWord(previousAddress(table.word(last)), length));
        tiers.moved(address, oldLength, last, length);
        return last;
    }

    /**
     * Deletes the entry at {@code address} and frees its blocks.
     */
    void delete(final int address) {
        final long word = table.lastWordOf(address);
        // Uncounted in the last block's buffer under the lock the free takes anyway.
        allocator.freeChain(address, BlockAddressDescriptor.NULL_ADDRESS, entryLength(word));
    }

    /**
     * Moves the entry at {@code address} into tier {@code targetTier}, only that tier's blocks.
     *
     * @return the entry's new address.
     */
    int relocate(final int address, final int targetTier) {
        final long word = table.lastWordOf(address);
        tiers.check(targetTier);
        final int length = entryLength(word);
        final int count = table.blockCount(length);
        boolean moves = false;
        int current = address;
        for (int i = 0; ; i++) {
            if (table.tierOf(current) != targetTier || table.bufferOf(current).draining) {
                moves = true;
                break;
            }
            if (i == count - 1) {
                break;
            }
            current = table.step(current);
        }
        final Tier source = tiers.of(address);
        final Tier target = tiers.get(targetTier);
        if (!moves) {
            throw new SameTierException(address, targetTier, "the entry of " + count + " blocks is already wholly in tier "
                + target.name);
        }
        final int last = allocator.allocateInTier(target, count);
        try {
            copier.copyChain(address, last, length, count);
        } catch (final RuntimeException | Error e) {
            allocator.freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
            throw e;
        }
        table.setWord(last, lastWord(previousAddress(table.word(last)), length));
        allocator.freeChain(address, BlockAddressDescriptor.NULL_ADDRESS);
        tiers.relocated(source, target, length);
        return last;
    }

    private void checkEntryLength(final long length) {
        if (length > maxEntryLength) {
            throw new EntryTooLongException(length, maxEntryLength);
        }
    }
}
