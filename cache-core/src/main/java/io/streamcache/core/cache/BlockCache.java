package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.EntryTooLongException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.agrona.BufferUtil;
import org.jctools.queues.MpmcArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.lastWord;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.usedWord;
import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * An off-heap cache of growable byte entries in pre-allocated blocks: thread-safe for
 * operations on distinct entries; operations on one entry must be serialized by the caller.
 *
 * <h2>Concurrency</h2>
 * Any thread may insert, and any thread may operate on any entry, with these rules:
 * <ul>
 *   <li>Operations that change an entry ({@code append}, {@code replace}, {@code delete},
 *       {@code relocate}) must not
 *       run concurrently with any other operation on the same entry; reads of one entry
 *       ({@code length}, {@code view}, {@code copyTo}) may run concurrently with each other.
 *       The segment read index serializes this way through its per-segment lock.</li>
 *   <li>An address passed from one thread to another must be passed with a happens-before edge
 *       (a lock, a volatile write and read, a concurrent collection).</li>
 *   <li>Operations on different entries proceed in parallel. There is no global lock: block
 *       allocation takes one buffer at a time out of a lock-free queue and locks only that
 *       buffer; freeing locks the buffers of the freed blocks, one at a time.</li>
 *   <li>{@link #close()} must be called once all operations have returned; operations after it
 *       throw {@link CacheClosedException}; views taken before it throw Netty's
 *       {@code IllegalReferenceCountException} when read after it.</li>
 * </ul>
 *
 * <h2>Memory</h2>
 * The capacity is cut into buffers (2 MB by default) of blocks (4 KB by default), all
 * allocated when the cache is built from a {@link MemoryRegion}. Block 0 of each buffer holds
 * one metadata word per block ({@link BlockMetadataDescriptor}), so data plus metadata never
 * exceed the configured capacity; only the buffer objects live on the Java heap. An entry is a
 * chain of blocks, each pointing to its predecessor, addressed by its last block
 * ({@link BlockAddressDescriptor}): an append finds the free space at once and links new blocks
 * after it. Every block but the last is full; the last block's word records the entry's length.
 * Copies and views treat a run of blocks that are adjacent in memory as one range, so an entry
 * allocated from a fresh buffer is copied with one memcpy and viewed as one slice.
 *
 * <h2>Allocation</h2>
 * Free blocks of a buffer form a list through their metadata words (O(1) allocation). Buffers
 * with free blocks wait in a queue; an allocating thread takes one out, pops blocks under its
 * monitor and puts it back at the end if it still has free blocks; a full buffer that frees a
 * block rejoins the queue. A thread keeps allocating from the buffer it last took (a hint) until
 * that buffer is full, which keeps its entries together in memory. When no block is free, the {@link CacheFullHandler} is called with no
 * lock held and the allocation retried until the full-retry timeout; then the operation fails
 * with {@link CacheFullException}, leaving the entry as it was and no block taken.
 *
 * <h2>Tiers</h2>
 * A cache may span several tiers of memory in one address space, fastest first
 * ({@link Builder#tier(String, long, MemoryRegionFactory)}: DRAM in front of a mapped file or
 * PMEM, say); a cache built with {@link Builder#capacity(long)} has one tier. Tier k owns a
 * contiguous range of buffer indices (so {@link #tierOf(int)} reads the tier off the buffer part
 * of an address), its own region and its own queue of buffers with free blocks: tiers share no
 * lock. New entries take blocks from tier 0; an append or replace extends an entry in the tier
 * of its last block. A tier with no free block falls through to the next tier that has one,
 * fastest first, so the cache fails (or calls its full handler) only when every tier is full:
 * keeping tier 0 under its target, by demoting cold entries with {@link #relocate(int, int)}, is
 * the cache manager's job. An entry may thus straddle tiers; it counts in the tier of its last
 * block. {@link #relocate(int, int)} copies an entry into another tier and frees its old blocks.
 * {@link CacheStats#tiers()} gives per-tier occupancy, hits (views and copies), demotions and
 * promotions.
 *
 * <h2>Garbage</h2>
 * Insert, append, replace, delete, relocate, length and the copying reads allocate nothing on
 * the Java heap. Views allocate their small Netty wrappers; the bytes are not copied.
 *
 * <h2>Stale addresses</h2>
 * Every operation checks, through the metadata, that its address names the last block of a live
 * entry: an address of a freed block, or of a block that an append has since made a middle
 * block, is rejected with {@link InvalidAddressException}. One case cannot be told from a valid
 * address with 32 bits: a stale address whose block was reused as the last block of a new entry.
 */
public final class BlockCache implements AutoCloseable {
    /**
     * The address no entry ever has (block 0 of every buffer holds metadata): callers that keep
     * addresses in their own structures may use it to mean "no entry".
     */
    public static final int NULL_ADDRESS = BlockAddressDescriptor.NULL_ADDRESS;

    private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final int HINT_SLOTS = 64;

    private final String name;
    private final long capacity;
    private final int blockLength;
    private final int blockShift;
    private final int bufferLength;
    private final int blocksPerBuffer;
    private final int blockIndexBits;
    private final int blockIndexMask;
    private final int maxEntryLength;
    private final long totalBlocks;
    private final long fullRetryNanos;
    private final CacheBuffer[] buffers;
    /** The tiers, fastest first; tier k owns a contiguous range of {@link #buffers}. */
    private final Tier[] tiers;
    private final LongAdder fullHandlerCalls = new LongAdder();
    private final LongAdder fullFailures = new LongAdder();
    private final ObjectName objectName;
    private volatile CacheFullHandler fullHandler;
    private volatile boolean closed;

    private BlockCache(final Builder builder) {
        this.blockLength = builder.blockLength;
        this.bufferLength = builder.bufferLength;
        this.blocksPerBuffer = bufferLength / blockLength;
        this.blockShift = Integer.numberOfTrailingZeros(blockLength);
        this.blockIndexBits = BlockAddressDescriptor.blockIndexBits(blocksPerBuffer);
        this.blockIndexMask = blocksPerBuffer - 1;
        this.maxEntryLength = builder.maxEntryLength;
        this.fullRetryNanos = builder.fullRetryTimeout.toNanos();
        this.fullHandler = builder.fullHandler;
        this.name = builder.name != null ? builder.name : "cache-" + INSTANCES.incrementAndGet();
        final List<TierSpec> specs = builder.tierSpecs();
        this.tiers = new Tier[specs.size()];
        long bufferTotal = 0;
        for (final TierSpec spec : specs) {
            bufferTotal += spec.capacity / bufferLength;
        }
        this.capacity = bufferTotal * bufferLength;
        this.totalBlocks = bufferTotal * (blocksPerBuffer - 1);
        this.buffers = new CacheBuffer[(int)bufferTotal];
        try {
            int first = 0;
            for (int t = 0; t < tiers.length; t++) {
                final TierSpec spec = specs.get(t);
                final int count = (int)(spec.capacity / bufferLength);
                final MemoryRegion region = spec.region.open(count, bufferLength);
                tiers[t] = new Tier(t, spec.name, region, first, count, blocksPerBuffer);
                if (region.bufferCount() != count || region.bufferLength() != bufferLength) {
                    throw new CacheConfigurationException("tier " + spec.name + ": region " + region.description()
                        + " does not hold bufferCount=" + count + " x bufferLength=" + bufferLength);
                }
                for (int i = 0; i < count; i++) {
                    buffers[first + i] = new CacheBuffer(first + i, t, region.buffer(i), blocksPerBuffer);
                    tiers[t].available.offer(buffers[first + i]);
                }
                first += count;
            }
            this.objectName = builder.registerMBean ? registerMBean() : null;
        } catch (final RuntimeException e) {
            for (final Tier tier : tiers) {
                if (tier != null) {
                    tier.region.close();
                }
            }
            throw e;
        }
        LOG.info("block cache {}: capacity={} bufferLength={} blockLength={} buffers={} maxEntryLength={} tiers={}",
            name, capacity, bufferLength, blockLength, buffers.length, maxEntryLength, regionDescription());
    }

    /**
     * @return a builder with the defaults: 2 MB buffers of 4 KB blocks in direct memory.
     */
    public static Builder builder() {
        return new Builder();
    }

    // ------------------------------------------------------------------------------------------
    // Writes
    // ------------------------------------------------------------------------------------------

    /**
     * Stores a new entry holding the readable bytes of {@code data} (its indices are not moved).
     *
     * @return the address of the new entry (its last block).
     * @throws EntryTooLongException if the data is longer than {@link #maxEntryLength()}.
     * @throws CacheFullException    if no room could be made.
     */
    public int insert(final ByteBuf data) {
        ensureOpen();
        checkSource(data);
        return insert(data, null, data.readerIndex(), data.readableBytes());
    }

    /**
     * Stores a new entry holding the remaining bytes of {@code data} (its position is not moved).
     *
     * @return the address of the new entry (its last block).
     */
    public int insert(final ByteBuffer data) {
        ensureOpen();
        Objects.requireNonNull(data, "data");
        return insert(null, data, data.position(), data.remaining());
    }

    /**
     * Stores a new entry holding the readable bytes of {@code data} (its indices are not moved),
     * taking its blocks from {@code tier} first: data known to be cold (a historical range read
     * back from the log) can go straight to a slower tier. A full tier falls through to the
     * others, fastest first, as for {@link #insert(ByteBuf)}.
     *
     * @return the address of the new entry (its last block).
     * @throws IndexOutOfBoundsException if {@code tier} is not in {@code [0, tierCount())}; nothing is stored.
     * @throws EntryTooLongException     if the data is longer than {@link #maxEntryLength()}.
     * @throws CacheFullException        if no room could be made.
     */
    public int insert(final ByteBuf data, final int tier) {
        ensureOpen();
        checkSource(data);
        checkTier(tier);
        return insert(data, null, data.readerIndex(), data.readableBytes(), tier);
    }

    private int insert(final ByteBuf src, final ByteBuffer nio, final int srcIndex, final int length) {
        return insert(src, nio, srcIndex, length, 0);
    }

    private int insert(final ByteBuf src, final ByteBuffer nio, final int srcIndex, final int length, final int tier) {
        checkEntryLength(length);
        final int count = blockCount(length);
        final int last = allocateChain(count, BlockAddressDescriptor.NULL_ADDRESS, tier);
        try {
            writeBackward(last, 0, length, src, nio, srcIndex);
        } catch (final RuntimeException | Error e) {
            freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
            throw e;
        }
        setWord(last, lastWord(previousAddress(word(last)), length));
        final Tier placed = tierOfValid(last);
        placed.entries.increment();
        placed.storedBytes.add(length);
        return last;
    }

    /**
     * Appends the readable bytes of {@code data} (its indices are not moved) to an entry: fills
     * its last block and links new blocks as needed.
     *
     * @param address of the entry.
     * @return the entry's address after the append: the same if no block was linked, else the new last block.
     * @throws InvalidAddressException if {@code address} is not that of a live entry.
     * @throws EntryTooLongException   if the entry would grow past {@link #maxEntryLength()}.
     * @throws CacheFullException      if no room could be made; the entry is unchanged.
     */
    public int append(final int address, final ByteBuf data) {
        ensureOpen();
        checkSource(data);
        return append(address, data, null, data.readerIndex(), data.readableBytes());
    }

    /**
     * Appends the remaining bytes of {@code data} (its position is not moved) to an entry.
     *
     * @return the entry's address after the append.
     * @see #append(int, ByteBuf)
     */
    public int append(final int address, final ByteBuffer data) {
        ensureOpen();
        Objects.requireNonNull(data, "data");
        return append(address, null, data, data.position(), data.remaining());
    }

    private int append(final int address, final ByteBuf src, final ByteBuffer nio, final int srcIndex, final int length) {
        final long word = lastWordOf(address);
        final int oldLength = entryLength(word);
        if (length == 0) {
            return address;
        }
        checkEntryLength((long)oldLength + length);
        final int newLength = oldLength + length;
        final int newBlocks = blockCount(newLength) - blockCount(oldLength);
        if (newBlocks == 0) {
            writeBackward(address, oldLength, newLength, src, nio, srcIndex);
            setWord(address, lastWord(previousAddress(word), newLength));
            tierOfValid(address).storedBytes.add(length);
            return address;
        }
        final int last = allocateChain(newBlocks, address, buffers[address >>> blockIndexBits].tier);
        setWord(address, usedWord(previousAddress(word)));
        try {
            writeBackward(last, oldLength, newLength, src, nio, srcIndex);
        } catch (final RuntimeException | Error e) {
            setWord(address, word);
            freeChain(last, address);
            throw e;
        }
        setWord(last, lastWord(previousAddress(word(last)), newLength));
        moveAccount(address, oldLength, last, newLength);
        return last;
    }

    /**
     * Moves an entry's share of the per-tier accounts from the tier of its old last block to the
     * tier of its new one (they differ when an append or replace spilled into another tier).
     */
    private void moveAccount(final int oldAddress, final int oldLength, final int newAddress, final int newLength) {
        final Tier from = tierOfValid(oldAddress);
        final Tier to = tierOfValid(newAddress);
        if (from == to) {
            to.storedBytes.add(newLength - oldLength);
        } else {
            from.entries.decrement();
            from.storedBytes.add(-oldLength);
            to.entries.increment();
            to.storedBytes.add(newLength);
        }
    }

    /**
     * Replaces the contents of an entry with the readable bytes of {@code data}, reusing its
     * blocks. On failure the entry is unchanged, except that a source that throws while it is
     * copied (a composite with a released component, say) may leave the entry's bytes partly
     * overwritten; its length, blocks and address stay as they were and no block leaks.
     *
     * @return the entry's address after the replace (it changes when blocks are added).
     */
    public int replace(final int address, final ByteBuf data) {
        ensureOpen();
        checkSource(data);
        final long word = lastWordOf(address);
        final int length = data.readableBytes();
        checkEntryLength(length);
        final int oldLength = entryLength(word);
        final int oldCount = blockCount(oldLength);
        final int newCount = blockCount(length);
        int last = address;
        if (newCount > oldCount) {
            last = allocateChain(newCount - oldCount, address, buffers[address >>> blockIndexBits].tier);
            setWord(address, usedWord(previousAddress(word)));
        }
        // Copy before dropping blocks, and undo a growth if the copy fails, as append does.
        try {
            writeBackward(last, 0, length, data, null, data.readerIndex());
        } catch (final RuntimeException | Error e) {
            if (last != address) {
                setWord(address, word);
                freeChain(last, address);
            }
            throw e;
        }
        if (newCount < oldCount) {
            int first = address;
            for (int i = 1; i < newCount; i++) {
                first = step(first);
            }
            final int dropped = previousAddress(word(first));
            setWord(first, usedWord(BlockAddressDescriptor.NULL_ADDRESS));
            freeChain(dropped, BlockAddressDescriptor.NULL_ADDRESS);
        }
        setWord(last, lastWord(previousAddress(word(last)), length));
        moveAccount(address, oldLength, last, length);
        return last;
    }

    /**
     * Deletes an entry and frees its blocks.
     *
     * @throws InvalidAddressException if {@code address} is not that of a live entry.
     */
    public void delete(final int address) {
        ensureOpen();
        final long word = lastWordOf(address);
        freeChain(address, BlockAddressDescriptor.NULL_ADDRESS);
        final Tier tier = tierOfValid(address);
        tier.entries.decrement();
        tier.storedBytes.add(-entryLength(word));
    }

    // ------------------------------------------------------------------------------------------
    // Tiers
    // ------------------------------------------------------------------------------------------

    /**
     * @return how many tiers the cache has (1 for a cache built without {@code tier(...)}).
     */
    public int tierCount() {
        return tiers.length;
    }

    /**
     * @param tier a tier index, fastest first.
     * @return the tier's name.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public String tierName(final int tier) {
        return tiers[checkTier(tier)].name;
    }

    /**
     * Returns the tier holding the block an address names: the tier of an entry's last block.
     * A pure function of the address and the cache's geometry; does not check that the block is
     * used. Callable from any thread while the cache is open; allocates nothing.
     *
     * @throws InvalidAddressException if the address is 0 or past the last buffer.
     */
    public int tierOf(final int address) {
        if (address == BlockAddressDescriptor.NULL_ADDRESS) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.NULL_ADDRESS, "address 0 is never valid");
        }
        final int bufferIndex = address >>> blockIndexBits;
        if (bufferIndex >= buffers.length) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.OUT_OF_RANGE,
                "bufferIndex=" + bufferIndex + " bufferCount=" + buffers.length);
        }
        return buffers[bufferIndex].tier;
    }

    /**
     * Moves an entry into another tier: takes as many blocks in {@code targetTier} as the entry
     * has, copies the bytes (a run of blocks adjacent in memory on both sides is one copy), frees
     * the old blocks and returns the entry's new address. Blocks are taken from the target tier
     * only: the full handler is not called and the allocation does not fall through to another
     * tier. Allocates nothing on the Java heap.
     *
     * <p>Like every operation that changes an entry, it must not run concurrently with any other
     * operation on the same entry, and views of the entry taken before it read freed memory
     * afterwards: the caller must make sure no reader holds one (the segment store relocates only
     * unpinned entries, under the segment's lock). The per-tier stats count a demotion on the
     * source tier when the target is slower and a promotion on the target tier when it is faster.
     *
     * @param address    of a live entry.
     * @param targetTier the tier to move it into.
     * @return the entry's new address (its last block, in {@code targetTier}).
     * @throws InvalidAddressException   if {@code address} is not that of a live entry.
     * @throws IndexOutOfBoundsException if {@code targetTier} is not in {@code [0, tierCount())}.
     * @throws SameTierException         if every block of the entry is already in {@code targetTier}.
     * @throws CacheFullException        if the target tier has not enough free blocks.
     *                                   In every failure the entry and the cache are unchanged.
     */
    public int relocate(final int address, final int targetTier) {
        ensureOpen();
        final long word = lastWordOf(address);
        checkTier(targetTier);
        final int length = entryLength(word);
        final int count = blockCount(length);
        boolean moves = false;
        int current = address;
        for (int i = 0; ; i++) {
            if (buffers[current >>> blockIndexBits].tier != targetTier) {
                moves = true;
                break;
            }
            if (i == count - 1) {
                break;
            }
            current = step(current);
        }
        final int sourceTier = buffers[address >>> blockIndexBits].tier;
        if (!moves) {
            throw new SameTierException(address, targetTier, "the entry of " + count + " blocks is already wholly in tier "
                + tiers[targetTier].name);
        }
        final Tier target = tiers[targetTier];
        final int last = allocateInTier(target, count);
        try {
            copyChain(address, last, length, count);
        } catch (final RuntimeException | Error e) {
            freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
            throw e;
        }
        setWord(last, lastWord(previousAddress(word(last)), length));
        freeChain(address, BlockAddressDescriptor.NULL_ADDRESS);
        final Tier source = tiers[sourceTier];
        source.entries.decrement();
        source.storedBytes.add(-length);
        target.entries.increment();
        target.storedBytes.add(length);
        if (targetTier > sourceTier) {
            source.demotions.increment();
        } else {
            target.promotions.increment();
        }
        return last;
    }

    /**
     * Copies the {@code length} bytes of the chain ending at {@code from} into the chain of the
     * same block count ending at {@code to}, walking both backwards; a run of blocks adjacent in
     * memory on both sides is one copy.
     */
    private void copyChain(final int from, final int to, final int length, final int count) {
        if (length == 0) {
            return;
        }
        int src = from;
        int dst = to;
        int bytes = length - lastBlockStart(length);
        int remainingBlocks = count - 1;
        while (true) {
            // The run [srcFirst, src] / [dstFirst, dst]: both adjacent in memory, last block partial.
            int srcFirst = src;
            int dstFirst = dst;
            int runBytes = bytes;
            int srcPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            int dstPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            while (remainingBlocks > 0) {
                srcPrevious = step(srcFirst);
                dstPrevious = previousAddress(word(dstFirst));
                remainingBlocks--;
                if (srcPrevious != srcFirst - 1 || dstPrevious != dstFirst - 1) {
                    break;
                }
                srcFirst = srcPrevious;
                dstFirst = dstPrevious;
                runBytes += blockLength;
                srcPrevious = BlockAddressDescriptor.NULL_ADDRESS;
            }
            UNSAFE.copyMemory(buffers[srcFirst >>> blockIndexBits].address + blockOffset(srcFirst),
                buffers[dstFirst >>> blockIndexBits].address + blockOffset(dstFirst), runBytes);
            if (srcPrevious == BlockAddressDescriptor.NULL_ADDRESS) {
                return;
            }
            src = srcPrevious;
            dst = dstPrevious;
            bytes = blockLength;
        }
    }

    /**
     * @return the used data blocks of one tier now: a sum over the tier's buffers, read without
     *         locks (each buffer's count is exact, the sum is not a snapshot under load).
     *         Allocates nothing; callable from any thread while the cache is open.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierUsedBlocks(final int tier) {
        ensureOpen();
        final Tier t = tiers[checkTier(tier)];
        long free = 0;
        for (int i = t.firstBuffer; i < t.firstBuffer + t.bufferCount; i++) {
            free += buffers[i].freeCountVolatile();
        }
        return t.blockCount - free;
    }

    /**
     * @return the data blocks of one tier.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierBlocks(final int tier) {
        return tiers[checkTier(tier)].blockCount;
    }

    private int checkTier(final int tier) {
        if (tier < 0 || tier >= tiers.length) {
            throw new IndexOutOfBoundsException("tier=" + tier + " tierCount=" + tiers.length);
        }
        return tier;
    }

    private Tier tierOfValid(final int address) {
        return tiers[buffers[address >>> blockIndexBits].tier];
    }

    // ------------------------------------------------------------------------------------------
    // Reads
    // ------------------------------------------------------------------------------------------

    /**
     * @return the length in bytes of the entry at {@code address}.
     */
    public int length(final int address) {
        ensureOpen();
        return entryLength(lastWordOf(address));
    }

    /**
     * @return a read-only view of the whole entry; see {@link #view(int, int, int)}.
     */
    public ByteBuf view(final int address) {
        ensureOpen();
        final long word = lastWordOf(address);
        tierOfValid(address).hits.increment();
        return view(address, word, 0, entryLength(word));
    }

    /**
     * Returns a read-only, zero-copy view of {@code length} bytes of an entry from {@code offset}.
     * The view reads the cache's memory: it is valid until the entry is next changed or deleted,
     * and releasing it does nothing.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the entry.
     */
    public ByteBuf view(final int address, final int offset, final int length) {
        ensureOpen();
        final long word = lastWordOf(address);
        checkRange(offset, length, entryLength(word));
        tierOfValid(address).hits.increment();
        return view(address, word, offset, length);
    }

    private ByteBuf view(final int address, final long word, final int offset, final int length) {
        if (length == 0) {
            return Unpooled.EMPTY_BUFFER.asReadOnly();
        }
        final int end = offset + length;
        int current = address;
        int currentStart = lastBlockStart(entryLength(word));
        final int endBlockStart = blockStartOf(end - 1);
        while (currentStart > endBlockStart) {
            current = step(current);
            currentStart -= blockLength;
        }
        final int maxParts = ((end - 1) >>> blockShift) - (offset >>> blockShift) + 1;
        ByteBuf[] parts = null;
        int partIndex = maxParts;
        int partEnd = end;
        while (true) {
            int runFirst = current;
            int runStart = currentStart;
            int previous = BlockAddressDescriptor.NULL_ADDRESS;
            while (runStart > offset) {
                previous = step(runFirst);
                if (previous != runFirst - 1) {
                    break;
                }
                runFirst = previous;
                runStart -= blockLength;
            }
            final int start = Math.max(runStart, offset);
            final ByteBuf part = slice(runFirst, start - runStart, partEnd - start).asReadOnly();
            if (start == offset && parts == null) {
                // The whole range is one run of adjacent blocks: a single slice.
                return Unpooled.unreleasableBuffer(part);
            }
            if (parts == null) {
                parts = new ByteBuf[maxParts];
            }
            parts[--partIndex] = part;
            if (start == offset) {
                break;
            }
            partEnd = start;
            current = previous;
            currentStart = runStart - blockLength;
        }
        if (partIndex > 0) {
            parts = Arrays.copyOfRange(parts, partIndex, maxParts);
        }
        // FixedCompositeByteBuf rejects writes but reports isReadOnly() == false: say it.
        return Unpooled.unreleasableBuffer(Unpooled.wrappedUnmodifiableBuffer(parts).asReadOnly());
    }

    private ByteBuf slice(final int address, final int offsetInBlock, final int length) {
        return buffers[address >>> blockIndexBits].memory.slice(blockOffset(address) + offsetInBlock, length);
    }

    /**
     * Copies {@code length} bytes of an entry from {@code offset} into {@code destination} at
     * {@code destinationIndex}; the destination's indices are not moved. Allocates nothing.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the entry or the destination.
     * @throws ReadOnlyBufferException   if the destination is read-only.
     */
    public void copyTo(final int address, final int offset, final ByteBuf destination, final int destinationIndex, final int length) {
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        final long word = lastWordOf(address);
        checkRange(offset, length, entryLength(word));
        if (destinationIndex < 0 || destinationIndex > destination.capacity() - length) {
            throw new IndexOutOfBoundsException("destinationIndex=" + destinationIndex + " length=" + length
                + " destination.capacity=" + destination.capacity());
        }
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        tierOfValid(address).hits.increment();
        readBackward(address, word, offset, offset + length, destination, null, destinationIndex);
    }

    /**
     * Copies {@code destination.remaining()} bytes of an entry from {@code offset} into
     * {@code destination} and advances its position. Allocates nothing.
     *
     * @throws IndexOutOfBoundsException if the range is not inside the entry.
     * @throws ReadOnlyBufferException   if the destination is read-only.
     */
    public void copyTo(final int address, final int offset, final ByteBuffer destination) {
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        final long word = lastWordOf(address);
        final int length = destination.remaining();
        checkRange(offset, length, entryLength(word));
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        tierOfValid(address).hits.increment();
        readBackward(address, word, offset, offset + length, null, destination, destination.position());
        destination.position(destination.position() + length);
    }

    // ------------------------------------------------------------------------------------------
    // Block chains
    // ------------------------------------------------------------------------------------------

    /**
     * Copies source bytes that belong at entry offsets [from, to) into the chain whose block
     * holding offset {@code to - 1} is {@code last}.
     */
    private void writeBackward(
        final int last, final int from, final int to, final ByteBuf src, final ByteBuffer nio, final int srcIndexOfFrom) {
        if (to != from) {
            transferBackward(true, last, blockStartOf(to - 1), from, to, src, nio, srcIndexOfFrom);
        }
    }

    /**
     * Copies entry bytes [from, to) of the entry whose last block is {@code last} into the
     * destination.
     */
    private void readBackward(
        final int last, final long lastWord, final int from, final int to, final ByteBuf dst, final ByteBuffer nio, final int dstIndexOfFrom) {
        if (to != from) {
            transferBackward(false, last, lastBlockStart(entryLength(lastWord)), from, to, dst, nio, dstIndexOfFrom);
        }
    }

    /**
     * Copies entry bytes [from, to), {@code to > from}, into ({@code in}) or out of the chain
     * whose block {@code last} starts at entry offset {@code lastStart}, walking backwards from
     * the block holding {@code to - 1}; a run of blocks adjacent in memory is one copy.
     */
    private void transferBackward(
        final boolean in, final int last, final int lastStart, final int from, final int to,
        final ByteBuf buf, final ByteBuffer nio, final int indexOfFrom) {
        int current = last;
        int currentStart = lastStart;
        final int endBlockStart = blockStartOf(to - 1);
        while (currentStart > endBlockStart) {
            current = step(current);
            currentStart -= blockLength;
        }
        int end = to;
        while (true) {
            int runFirst = current;
            int runStart = currentStart;
            int previous = BlockAddressDescriptor.NULL_ADDRESS;
            while (runStart > from) {
                previous = step(runFirst);
                if (previous != runFirst - 1) {
                    break;
                }
                runFirst = previous;
                runStart -= blockLength;
            }
            final int start = Math.max(runStart, from);
            if (in) {
                copyIn(runFirst, start - runStart, buf, nio, indexOfFrom + (start - from), end - start);
            } else {
                copyOut(runFirst, start - runStart, buf, nio, indexOfFrom + (start - from), end - start);
            }
            if (start == from) {
                return;
            }
            end = start;
            current = previous;
            currentStart = runStart - blockLength;
        }
    }

    private void copyIn(
        final int address, final int offsetInBlock, final ByteBuf src, final ByteBuffer nio, final int srcIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = blockOffset(address) + offsetInBlock;
        if (src != null) {
            buffer.memory.setBytes(index, src, srcIndex, length);
        } else if (nio.isDirect()) {
            UNSAFE.copyMemory(BufferUtil.address(nio) + srcIndex, buffer.address + index, length);
        } else if (nio.hasArray()) {
            UNSAFE.copyMemory(nio.array(), BufferUtil.ARRAY_BASE_OFFSET + nio.arrayOffset() + srcIndex, null, buffer.address + index, length);
        } else {
            buffer.memory.setBytes(index, nio.duplicate().limit(srcIndex + length).position(srcIndex));
        }
    }

    private void copyOut(
        final int address, final int offsetInBlock, final ByteBuf dst, final ByteBuffer nio, final int dstIndex, final int length) {
        final CacheBuffer buffer = buffers[address >>> blockIndexBits];
        final int index = blockOffset(address) + offsetInBlock;
        if (dst != null) {
            buffer.memory.getBytes(index, dst, dstIndex, length);
        } else if (nio.isDirect()) {
            UNSAFE.copyMemory(buffer.address + index, BufferUtil.address(nio) + dstIndex, length);
        } else {
            UNSAFE.copyMemory(null, buffer.address + index, nio.array(), BufferUtil.ARRAY_BASE_OFFSET + nio.arrayOffset() + dstIndex, length);
        }
    }

    /**
     * @return the block before {@code address} in its entry, checked to be a used middle block.
     */
    private int step(final int address) {
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
     * Takes {@code count} blocks, linked backwards from {@code previous}, and returns the last.
     * Their words say "used, not last"; the caller writes the last one. Blocks come from
     * {@code preferredTier} first, then from the other tiers fastest first (a full tier falls
     * through to the next one with room); the full handler is called only when no tier has a
     * free block. On failure, gives back whatever it took and throws.
     */
    private int allocateChain(final int count, final int previous, final int preferredTier) {
        if (count > totalBlocks) {
            fullFailures.increment();
            throw new CacheFullException("cache " + name + " cannot hold " + count + " blocks: it has " + totalBlocks
                + " in all (capacity=" + capacity + ")", count);
        }
        int last = previous;
        int remaining = count;
        long deadline = 0L;
        final int hintSlot = (int)Thread.currentThread().getId() & (HINT_SLOTS - 1);
        while (remaining > 0) {
            long taken = takeFrom(tiers[preferredTier], remaining, last, hintSlot);
            for (int t = 0; (taken >>> Integer.SIZE) == 0 && t < tiers.length; t++) {
                if (t != preferredTier) {
                    taken = takeFrom(tiers[t], remaining, last, hintSlot);
                }
            }
            if (taken >>> Integer.SIZE != 0) {
                remaining -= (int)(taken >>> Integer.SIZE);
                last = (int)taken;
                continue;
            }
            if (deadline == 0L) {
                deadline = System.nanoTime() + fullRetryNanos;
            } else if (System.nanoTime() - deadline >= 0) {
                if (last != previous) {
                    freeChain(last, previous);
                }
                fullFailures.increment();
                throw full(count, "no block could be had within fullRetryTimeout=" + Duration.ofNanos(fullRetryNanos));
            }
            if (!hasFreeBlocks(0, buffers.length)) {
                // Give back a partial chain so that the handler and other threads can use those blocks.
                if (last != previous) {
                    freeChain(last, previous);
                    last = previous;
                    remaining = count;
                }
                fullHandlerCalls.increment();
                if (!fullHandler.onCacheFull(count)) {
                    fullFailures.increment();
                    throw full(count, "the full handler freed nothing");
                }
                // Retry even if the time is up: what the handler freed is not wasted.
                Thread.yield();
                continue;
            }
            // Another thread holds the buffers with free blocks for a moment.
            Thread.yield();
        }
        return last;
    }

    /**
     * Takes {@code count} blocks of one tier only, linked backwards from {@code previous}; never
     * calls the full handler and never falls through to another tier.
     *
     * @return the last block taken.
     * @throws CacheFullException if the tier has not that many free blocks; nothing is taken.
     */
    private int allocateInTier(final Tier tier, final int count) {
        int last = BlockAddressDescriptor.NULL_ADDRESS;
        int remaining = count;
        final int hintSlot = (int)Thread.currentThread().getId() & (HINT_SLOTS - 1);
        long deadline = 0L;
        while (remaining > 0) {
            final long taken = takeFrom(tier, remaining, last, hintSlot);
            if (taken >>> Integer.SIZE != 0) {
                remaining -= (int)(taken >>> Integer.SIZE);
                last = (int)taken;
                continue;
            }
            final boolean empty = !hasFreeBlocks(tier.firstBuffer, tier.firstBuffer + tier.bufferCount);
            if (deadline == 0L) {
                deadline = System.nanoTime() + fullRetryNanos;
            }
            if (empty || System.nanoTime() - deadline >= 0) {
                if (last != BlockAddressDescriptor.NULL_ADDRESS) {
                    freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
                }
                throw new CacheFullException("tier " + tier.name + " of cache " + name + " has not " + count
                    + " free blocks", count);
            }
            Thread.yield();
        }
        return last;
    }

    /**
     * Takes up to {@code want} blocks from one tier: from the calling thread's hint buffer of
     * that tier if it has free blocks, else from one buffer polled from the tier's queue.
     *
     * @return the number taken in the high 32 bits (0 if none could be had at once), the new
     *         last address in the low 32 bits.
     */
    private long takeFrom(final Tier tier, final int want, final int previous, final int hintSlot) {
        final CacheBuffer hint = tier.hints[hintSlot];
        if (hint != null && hint.freeCountVolatile() > 0) {
            final long taken = takeBlocks(hint, want, previous, false);
            if (taken >>> Integer.SIZE != 0) {
                return taken;
            }
        }
        final CacheBuffer buffer = tier.available.poll();
        if (buffer == null) {
            return previous & BlockMetadataDescriptor.LINK_MASK;
        }
        tier.hints[hintSlot] = buffer;
        return takeBlocks(buffer, want, previous, true);
    }

    private CacheFullException full(final int count, final String why) {
        return new CacheFullException("cache " + name + " is full: " + count + " blocks of " + blockLength
            + " bytes needed, capacity=" + capacity + ": " + why, count);
    }

    /**
     * Pops up to {@code want} blocks of {@code buffer}, linked backwards from {@code previous}.
     *
     * @param polled whether the caller took the buffer out of the queue (and so must put it back
     *               if it still has free blocks); {@code false} for the calling thread's hint, which
     *               may sit in the queue meanwhile: a buffer that fills stays there until a poller
     *               finds it full and drops it.
     * @return the number taken in the high 32 bits, the new last address in the low 32 bits.
     */
    private long takeBlocks(final CacheBuffer buffer, final int want, final int previous, final boolean polled) {
        int last = previous;
        final int taken;
        boolean putBack = false;
        synchronized (buffer) {
            final long header = buffer.header();
            final int free = BlockMetadataDescriptor.freeCount(header);
            int head = BlockMetadataDescriptor.freeHeadIndex(header);
            taken = Math.min(want, free);
            for (int i = 0; i < taken; i++) {
                final int block = head;
                head = BlockMetadataDescriptor.nextFreeIndex(buffer.word(block));
                buffer.word(block, usedWord(last));
                last = BlockAddressDescriptor.pack(buffer.index, block, blockIndexBits);
            }
            buffer.headerRelease(BlockMetadataDescriptor.headerWord(free - taken, head));
            if (polled) {
                putBack = free - taken > 0;
                buffer.inQueue = putBack;
            }
        }
        if (putBack) {
            tiers[buffer.tier].available.offer(buffer);
        }
        return ((long)taken << Integer.SIZE) | (last & BlockMetadataDescriptor.LINK_MASK);
    }

    /**
     * Frees the chain from {@code last} backwards, up to but excluding {@code stop} (or to its
     * first block), locking one buffer at a time.
     */
    private void freeChain(final int last, final int stop) {
        int current = last;
        while (current != stop && current != BlockAddressDescriptor.NULL_ADDRESS) {
            final CacheBuffer buffer = buffers[current >>> blockIndexBits];
            final boolean putBack;
            synchronized (buffer) {
                final long header = buffer.header();
                int free = BlockMetadataDescriptor.freeCount(header);
                int head = BlockMetadataDescriptor.freeHeadIndex(header);
                do {
                    final int block = current & blockIndexMask;
                    final long word = buffer.word(block);
                    if (!isUsed(word)) {
                        buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, head));
                        throw new CacheCorruptedException("freeing address=0x" + Integer.toHexString(current) + " which is free");
                    }
                    buffer.word(block, BlockMetadataDescriptor.freeWord(head));
                    // The list stays ascending only if each block goes back right before the head.
                    buffer.freeListAscending &= head == 0 ? block == blocksPerBuffer - 1 : block + 1 == head;
                    head = block;
                    free++;
                    current = previousAddress(word);
                } while (current != stop && current != BlockAddressDescriptor.NULL_ADDRESS
                    && current >>> blockIndexBits == buffer.index);
                if (free == blocksPerBuffer - 1 && !buffer.freeListAscending) {
                    // Wholly free and out of order: back to ascending order, so that the next
                    // entries are laid out forwards. (Already ascending, as when the blocks taken
                    // last are given back first, it costs nothing.)
                    buffer.resetFreeList();
                } else {
                    buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, head));
                }
                putBack = !buffer.inQueue;
                buffer.inQueue = true;
            }
            if (putBack) {
                tiers[buffer.tier].available.offer(buffer);
            }
        }
    }

    private boolean hasFreeBlocks(final int fromBuffer, final int toBuffer) {
        for (int i = fromBuffer; i < toBuffer; i++) {
            if (buffers[i].freeCountVolatile() > 0) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------
    // Addresses and checks
    // ------------------------------------------------------------------------------------------

    /**
     * @return the word of the last block of the entry at {@code address}, after checking that
     *         the address names one.
     */
    private long lastWordOf(final int address) {
        if (address == BlockAddressDescriptor.NULL_ADDRESS) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.NULL_ADDRESS, "address 0 is never valid");
        }
        final int bufferIndex = address >>> blockIndexBits;
        if (bufferIndex >= buffers.length) {
            throw new InvalidAddressException(address, InvalidAddressException.Reason.OUT_OF_RANGE,
                "bufferIndex=" + bufferIndex + " bufferCount=" + buffers.length);
        }
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

    private long word(final int address) {
        return buffers[address >>> blockIndexBits].word(address & blockIndexMask);
    }

    private void setWord(final int address, final long word) {
        buffers[address >>> blockIndexBits].word(address & blockIndexMask, word);
    }

    private int blockOffset(final int address) {
        return (address & blockIndexMask) << blockShift;
    }

    /**
     * @return blocks an entry of {@code length} bytes occupies (an empty entry has one).
     */
    private int blockCount(final int length) {
        return length == 0 ? 1 : ((length - 1) >>> blockShift) + 1;
    }

    private int blockStartOf(final int entryOffset) {
        return (entryOffset >>> blockShift) << blockShift;
    }

    private int lastBlockStart(final int entryLength) {
        return (blockCount(entryLength) - 1) << blockShift;
    }

    private void checkEntryLength(final long length) {
        if (length > maxEntryLength) {
            throw new EntryTooLongException(length, maxEntryLength);
        }
    }

    private static void checkSource(final ByteBuf data) {
        Objects.requireNonNull(data, "data");
        if (data.refCnt() == 0) {
            throw new IllegalReferenceCountException("data has been released (refCnt=0)");
        }
    }

    private static void checkRange(final int offset, final int length, final int entryLength) {
        if (offset < 0 || length < 0 || offset > entryLength - length) {
            throw new IndexOutOfBoundsException("offset=" + offset + " length=" + length + " entryLength=" + entryLength);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new CacheClosedException("cache " + name + " is closed");
        }
    }

    // ------------------------------------------------------------------------------------------
    // Configuration, stats, lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * Sets the handler called when the cache is full (typically the cache manager, which is
     * built after the cache). May be called at any time from any thread.
     */
    public void fullHandler(final CacheFullHandler handler) {
        this.fullHandler = Objects.requireNonNull(handler, "handler");
    }

    /**
     * @return the handler called when the cache is full ({@link CacheFullHandler#NONE} if none
     *         was set): a cache manager checks it so that a second manager is not installed over
     *         a live one. Any thread.
     */
    public CacheFullHandler fullHandler() {
        return fullHandler;
    }

    public String name() {
        return name;
    }

    public int blockLength() {
        return blockLength;
    }

    public int bufferLength() {
        return bufferLength;
    }

    public long capacity() {
        return capacity;
    }

    public int maxEntryLength() {
        return maxEntryLength;
    }

    /**
     * @return a description of the memory region holding the buffers; with several tiers, each
     *         tier's name and region, fastest first.
     */
    public String regionDescription() {
        if (tiers.length == 1) {
            return tiers[0].region.description();
        }
        final StringBuilder description = new StringBuilder();
        for (final Tier tier : tiers) {
            description.append(description.length() == 0 ? "" : ", ").append(tier.name).append(": ").append(tier.region.description());
        }
        return description.toString();
    }

    /**
     * @return a snapshot of occupancy and counters; callable from any thread.
     * @throws CacheClosedException after {@link #close()}: the metadata it reads is gone.
     */
    public CacheStats stats() {
        ensureOpen();
        long free = 0;
        long stored = 0;
        long entries = 0;
        final TierStats[] tierStats = new TierStats[tiers.length];
        for (int t = 0; t < tiers.length; t++) {
            final Tier tier = tiers[t];
            long tierFree = 0;
            for (int i = tier.firstBuffer; i < tier.firstBuffer + tier.bufferCount; i++) {
                tierFree += buffers[i].freeCountVolatile();
            }
            tierStats[t] = new TierStats(t, tier.name, tier.region.description(), (long)tier.bufferCount * bufferLength, tier.bufferCount,
                tier.blockCount, tier.blockCount - tierFree, tier.storedBytes.sum(), tier.entries.sum(), tier.hits.sum(),
                tier.demotions.sum(), tier.promotions.sum());
            free += tierFree;
            stored += tierStats[t].storedBytes();
            entries += tierStats[t].entryCount();
        }
        // The totals are the tiers' sums: one counter per tier on the data path, not two.
        return new CacheStats(capacity, buffers.length, bufferLength, blockLength, totalBlocks, totalBlocks - free,
            (long)buffers.length * blockLength, stored, entries, fullHandlerCalls.sum(), fullFailures.sum(),
            List.of(tierStats));
    }

    /**
     * Closes the cache and releases its memory. Idempotent. Must be called once every operation
     * has returned (see the class documentation).
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (objectName != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
            } catch (final JMException e) {
                LOG.warn("could not unregister {}", objectName, e);
            }
        }
        for (final CacheBuffer buffer : buffers) {
            buffer.memory.release();
        }
        for (final Tier tier : tiers) {
            tier.region.close();
        }
        LOG.info("block cache {} closed", name);
    }

    public boolean isClosed() {
        return closed;
    }

    private ObjectName registerMBean() {
        try {
            final ObjectName objectName = new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(name));
            ManagementFactory.getPlatformMBeanServer().registerMBean(new MXBeanAdapter(this), objectName);
            return objectName;
        } catch (final JMException e) {
            throw new CacheConfigurationException("could not register the cache's MBean (name=" + name
                + "): choose a unique name or disable registerMBean", e);
        }
    }

    private static final class MXBeanAdapter implements BlockCacheMXBean {
        private final BlockCache cache;

        MXBeanAdapter(final BlockCache cache) {
            this.cache = cache;
        }

        @Override
        public String getName() {
            return cache.name;
        }

        @Override
        public String getRegion() {
            return cache.regionDescription();
        }

        @Override
        public long getCapacity() {
            return cache.capacity;
        }

        @Override
        public int getBufferCount() {
            return cache.buffers.length;
        }

        @Override
        public int getBlockLength() {
            return cache.blockLength;
        }

        @Override
        public long getBlockCount() {
            return cache.totalBlocks;
        }

        @Override
        public long getUsedBlockCount() {
            return cache.stats().usedBlockCount();
        }

        @Override
        public long getFreeBlockCount() {
            return cache.stats().freeBlockCount();
        }

        @Override
        public long getUsedBytes() {
            return cache.stats().usedBytes();
        }

        @Override
        public long getStoredBytes() {
            return cache.stats().storedBytes();
        }

        @Override
        public long getEntryCount() {
            return cache.stats().entryCount();
        }

        @Override
        public double getUtilization() {
            return cache.stats().utilization();
        }

        @Override
        public long getFullHandlerCalls() {
            return cache.fullHandlerCalls.sum();
        }

        @Override
        public long getFullFailures() {
            return cache.fullFailures.sum();
        }

        @Override
        public String[] getTierNames() {
            final String[] names = new String[cache.tiers.length];
            for (int t = 0; t < names.length; t++) {
                names[t] = cache.tiers[t].name;
            }
            return names;
        }

        @Override
        public long[] getTierCapacities() {
            return tierValues(TierStats::capacity);
        }

        @Override
        public long[] getTierUsedBlockCounts() {
            return tierValues(TierStats::usedBlockCount);
        }

        @Override
        public long[] getTierStoredBytes() {
            return tierValues(TierStats::storedBytes);
        }

        @Override
        public long[] getTierEntryCounts() {
            return tierValues(TierStats::entryCount);
        }

        @Override
        public long[] getTierHits() {
            return tierValues(TierStats::hits);
        }

        @Override
        public long[] getTierDemotions() {
            return tierValues(TierStats::demotions);
        }

        @Override
        public long[] getTierPromotions() {
            return tierValues(TierStats::promotions);
        }

        private long[] tierValues(final ToLongFunction<TierStats> field) {
            final List<TierStats> stats = cache.stats().tiers();
            final long[] values = new long[stats.size()];
            for (int t = 0; t < values.length; t++) {
                values[t] = field.applyAsLong(stats.get(t));
            }
            return values;
        }
    }

    /** One tier: a contiguous range of the cache's buffers, its region, its queue of buffers with free blocks and its counters. */
    private static final class Tier {
        final int index;
        final String name;
        final MemoryRegion region;
        final int firstBuffer;
        final int bufferCount;
        final long blockCount;
        final MpmcArrayQueue<CacheBuffer> available;
        /**
         * The buffer of this tier each thread (hashed by id) last took from the queue: a thread
         * keeps filling it until it is full, so an entry's blocks and consecutive entries stay
         * close in memory, and threads mostly lock different buffers. Only a hint: racy plain
         * reads and writes.
         */
        final CacheBuffer[] hints = new CacheBuffer[HINT_SLOTS];
        final LongAdder storedBytes = new LongAdder();
        final LongAdder entries = new LongAdder();
        final LongAdder hits = new LongAdder();
        final LongAdder demotions = new LongAdder();
        final LongAdder promotions = new LongAdder();

        Tier(final int index, final String name, final MemoryRegion region, final int firstBuffer, final int bufferCount,
             final int blocksPerBuffer) {
            this.index = index;
            this.name = name;
            this.region = region;
            this.firstBuffer = firstBuffer;
            this.bufferCount = bufferCount;
            this.blockCount = (long)bufferCount * (blocksPerBuffer - 1);
            this.available = new MpmcArrayQueue<>(Math.max(2, bufferCount));
        }

        @Override
        public String toString() {
            return "Tier{index=" + index + ", name=" + name + ", buffers=[" + firstBuffer + ", " + (firstBuffer + bufferCount) + ")}";
        }
    }

    /** A tier as configured: its name, capacity in bytes and region. */
    private record TierSpec(String name, long capacity, MemoryRegionFactory region) {
    }

    /**
     * Configures and builds a {@link BlockCache}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        /** Default block length: a 4 KB page. */
        public static final int BLOCK_LENGTH_DEFAULT = 4096;
        /** Default buffer length: 2 MB, so that block 0 holds exactly the metadata of 512 blocks. */
        public static final int BUFFER_LENGTH_DEFAULT = 2 << 20;
        /** Smallest block length accepted. */
        public static final int MIN_BLOCK_LENGTH = 64;
        /** Largest block length accepted. */
        public static final int MAX_BLOCK_LENGTH = 1 << 20;
        /** Largest buffer length accepted. */
        public static final int MAX_BUFFER_LENGTH = 1 << 30;
        /** Default time a full cache retries an allocation while its full handler frees blocks. */
        public static final Duration FULL_RETRY_TIMEOUT_DEFAULT = Duration.ofMillis(500);

        private long capacity = -1;
        private int blockLength = BLOCK_LENGTH_DEFAULT;
        private int bufferLength = BUFFER_LENGTH_DEFAULT;
        private int maxEntryLength = BlockMetadataDescriptor.MAX_ENTRY_LENGTH;
        private MemoryRegionFactory region = DirectMemoryRegion.factory();
        private CacheFullHandler fullHandler = CacheFullHandler.NONE;
        private Duration fullRetryTimeout = FULL_RETRY_TIMEOUT_DEFAULT;
        private String name;
        private boolean registerMBean = true;
        private boolean regionSet;
        private final List<TierSpec> tiers = new ArrayList<>();

        private Builder() {
        }

        /**
         * Adds a tier behind those added before (call it fastest first). A cache built with tiers
         * has their capacities and regions; {@link #capacity(long)} and {@link #region} are for a
         * one-tier cache and must not be combined with this.
         *
         * @param name     the tier's name in stats, logs and JMX: unique, not empty.
         * @param capacity bytes of memory of the tier, data plus metadata; rounded down to whole
         *                 buffers, at least one.
         * @param region   where the tier's buffers live.
         */
        public Builder tier(final String name, final long capacity, final MemoryRegionFactory region) {
            tiers.add(new TierSpec(Objects.requireNonNull(name, "name"), capacity, Objects.requireNonNull(region, "region")));
            return this;
        }

        /**
         * @return the tiers to build: those declared, or one tier named "default" of
         *         {@link #capacity(long)} bytes in {@link #region}.
         */
        List<TierSpec> tierSpecs() {
            return tiers.isEmpty() ? List.of(new TierSpec("default", capacity, region)) : List.copyOf(tiers);
        }

        /**
         * @param capacity bytes of memory for data and metadata; rounded down to whole buffers. Required.
         */
        public Builder capacity(final long capacity) {
            this.capacity = capacity;
            return this;
        }

        /**
         * @param blockLength bytes per block: a power of two in [64, 1 MiB].
         */
        public Builder blockLength(final int blockLength) {
            this.blockLength = blockLength;
            return this;
        }

        /**
         * @param bufferLength bytes per buffer: a power of two, at least two blocks, with
         *                     {@code 8 * bufferLength / blockLength <= blockLength} so that block 0 holds all metadata.
         */
        public Builder bufferLength(final int bufferLength) {
            this.bufferLength = bufferLength;
            return this;
        }

        /**
         * @param maxEntryLength longest entry accepted, at most 2^30 - 1 bytes (the default).
         */
        public Builder maxEntryLength(final int maxEntryLength) {
            this.maxEntryLength = maxEntryLength;
            return this;
        }

        /**
         * @param region where the buffers live; direct memory by default.
         */
        public Builder region(final MemoryRegionFactory region) {
            this.region = Objects.requireNonNull(region, "region");
            this.regionSet = true;
            return this;
        }

        public Builder fullHandler(final CacheFullHandler fullHandler) {
            this.fullHandler = Objects.requireNonNull(fullHandler, "fullHandler");
            return this;
        }

        /**
         * @param fullRetryTimeout how long an allocation on a full cache keeps retrying while the full handler asks it to.
         */
        public Builder fullRetryTimeout(final Duration fullRetryTimeout) {
            this.fullRetryTimeout = Objects.requireNonNull(fullRetryTimeout, "fullRetryTimeout");
            return this;
        }

        /**
         * @param name the cache's name in logs and JMX; generated if not set.
         */
        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder registerMBean(final boolean registerMBean) {
            this.registerMBean = registerMBean;
            return this;
        }

        /**
         * Allocates all the memory and builds the cache.
         *
         * @throws CacheConfigurationException if the configuration is inconsistent or the memory cannot be had.
         */
        public BlockCache build() {
            if (blockLength < MIN_BLOCK_LENGTH || blockLength > MAX_BLOCK_LENGTH || Integer.bitCount(blockLength) != 1) {
                throw new CacheConfigurationException("blockLength=" + blockLength + " must be a power of two in ["
                    + MIN_BLOCK_LENGTH + ", " + MAX_BLOCK_LENGTH + "]");
            }
            if (bufferLength > MAX_BUFFER_LENGTH || Integer.bitCount(bufferLength) != 1 || bufferLength < 2 * blockLength) {
                throw new CacheConfigurationException("bufferLength=" + bufferLength + " must be a power of two of at least two blocks"
                    + " (blockLength=" + blockLength + ") and at most " + MAX_BUFFER_LENGTH);
            }
            final long blocksPerBuffer = bufferLength / blockLength;
            if (blocksPerBuffer * BlockMetadataDescriptor.WORD_LENGTH > blockLength) {
                throw new CacheConfigurationException("bufferLength=" + bufferLength + " has " + blocksPerBuffer
                    + " blocks whose metadata does not fit in one block of blockLength=" + blockLength
                    + ": use bufferLength <= " + ((long)blockLength * blockLength / BlockMetadataDescriptor.WORD_LENGTH));
            }
            if (!tiers.isEmpty() && (capacity != -1 || regionSet)) {
                throw new CacheConfigurationException("capacity=" + capacity + (regionSet ? " and region " : " ")
                    + "set with tier(...): give every tier its capacity and region in tier(...) instead");
            }
            long bufferCount = 0;
            final List<TierSpec> specs = tierSpecs();
            for (int t = 0; t < specs.size(); t++) {
                final TierSpec spec = specs.get(t);
                final String which = tiers.isEmpty() ? "" : "tier " + spec.name + ": ";
                if (spec.capacity < bufferLength) {
                    throw new CacheConfigurationException(which + "capacity=" + spec.capacity
                        + " must hold at least one buffer of bufferLength=" + bufferLength);
                }
                if (spec.name.isEmpty()) {
                    throw new CacheConfigurationException("tier " + t + " has an empty name");
                }
                for (int u = 0; u < t; u++) {
                    if (specs.get(u).name.equals(spec.name)) {
                        throw new CacheConfigurationException("tier name " + spec.name + " is used twice (tiers " + u + " and " + t + ")");
                    }
                }
                bufferCount += spec.capacity / bufferLength;
            }
            final long capacity = bufferCount * bufferLength;
            final long maxBuffers = Math.min(Integer.MAX_VALUE - 8,
                BlockAddressDescriptor.maxBufferCount(BlockAddressDescriptor.blockIndexBits((int)blocksPerBuffer)));
            if (bufferCount > maxBuffers) {
                throw new CacheConfigurationException("capacity=" + capacity + " needs " + bufferCount
                    + " buffers, more than 32-bit addresses can name (" + maxBuffers + "): raise bufferLength or blockLength");
            }
            if (maxEntryLength < 0 || maxEntryLength > BlockMetadataDescriptor.MAX_ENTRY_LENGTH) {
                throw new CacheConfigurationException("maxEntryLength=" + maxEntryLength + " must be in [0, "
                    + BlockMetadataDescriptor.MAX_ENTRY_LENGTH + "]");
            }
            if (fullRetryTimeout.isNegative()) {
                throw new CacheConfigurationException("fullRetryTimeout=" + fullRetryTimeout + " must not be negative");
            }
            return new BlockCache(this);
        }
    }
}
