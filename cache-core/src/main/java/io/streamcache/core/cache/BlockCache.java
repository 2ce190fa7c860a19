package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.EntryTooLongException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.core.memory.ResizeTarget;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;

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
 * one metadata word per block ({@code BlockMetadataDescriptor}), so data plus metadata never
 * exceed the configured capacity; only the buffer objects live on the Java heap. An entry is a
 * chain of blocks, each pointing to its predecessor, addressed by its last block
 * ({@code BlockAddressDescriptor}): an append finds the free space at once and links new blocks
 * after it. Every block but the last is full; the last block's word records the entry's length.
 * Copies and views treat a run of blocks that are adjacent in memory as one range, so an entry
 * allocated from a fresh buffer is copied with one memcpy and viewed as one slice.
 *
 * <h2>Allocation</h2>
 * Free blocks of a buffer form a list through their metadata words (O(1) allocation). Buffers
 * with free blocks wait on a stack, the one that gained free blocks last on top; an allocating
 * thread takes one off, pops blocks under its lock and puts it back if it still has free blocks;
 * a full buffer that frees a block rejoins them. A thread keeps allocating from the buffer it
 * last took or last freed an entry into (a hint) until that buffer is full, which keeps its
 * entries together in memory. When no block is free, the {@link CacheFullHandler} is called with
 * no lock held and the allocation retried until the full-retry timeout; then the operation fails
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
 * <h2>Resizing</h2>
 * A tier built with a {@link Builder#maxCapacity(long)} grows and shrinks by whole buffers while the
 * cache runs ({@link #resize}, {@link #startShrink}; buffer states in {@code docs/resize.md}).
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
 *
 * <h2>Inside</h2>
 * This class is the API: it checks the caller's arguments and that the cache is open, and hands
 * each operation to package-private parts, each with one concern and its own class comment:
 * {@code BlockTable} (buffers, addresses, metadata words, chain steps), {@code BlockAllocator}
 * (allocation and free chains, hints, the full handler), {@code ChainCopier} (copies in, out and
 * between chains, views), {@code EntryWriter} (insert, append, replace, delete and relocate,
 * each undone on failure), {@code TierTable} and {@code Tier} (tiers, their regions and
 * accounts), {@code TierResizer} (growing and shrinking resizable tiers), {@code CacheConfig} (the builder's checks) and {@code BlockCacheJmx} (the MXBean);
 * for a warm restart, {@code RegionAdopter} (adoption from a reopened region), {@code EntryDigest}
 * (the entries' digest), {@link WarmCatalog} (the catalog's format) and {@link WarmStart} (what
 * came back): see {@code docs/warm-restart.md}.
 *
 * <p><b>Why one class past ~800 lines:</b> what is left here is the public API itself, each
 * method an argument check, its Javadoc and a call into one of the parts above; resizing and the
 * warm restart added their public methods (~200 lines, mostly Javadoc) and no logic, and the
 * builder's buffer-length default that follows the block length ({@code defaultBufferLength}, one
 * formula) ~20 more. Splitting it would split the API a broker codes against, not a concern.
 */
public final class BlockCache implements AutoCloseable {
    /**
     * The address no entry ever has (block 0 of every buffer holds metadata): callers that keep
     * addresses in their own structures may use it to mean "no entry".
     */
    public static final int NULL_ADDRESS = BlockAddressDescriptor.NULL_ADDRESS;

    private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private final long fullRetryTimeoutNanos;

    private final String name;
    private final int bufferLength;
    private final int maxEntryLength;
    private final BlockTable table;
    /** The tiers, fastest first; tier k owns a contiguous range of the table's buffers. */
    private final TierTable tiers;
    private final BlockAllocator allocator;
    private final ChainCopier copier;
    private final EntryWriter writer;
    private final TierResizer resizer;
    private final ObjectName objectName;
    /** What a warm restart adopted, or {@link WarmStart#none()}. */
    private final WarmStart warmStart;
    private volatile boolean closed;

    private BlockCache(final CacheConfig config) {
        this.bufferLength = config.bufferLength;
        this.maxEntryLength = config.maxEntryLength;
        this.name = config.name != null ? config.name : "cache-" + INSTANCES.incrementAndGet();
        final int blocksPerBuffer = config.blocksPerBuffer();
        this.tiers = new TierTable(config, BlockAddressDescriptor.blockIndexBits(blocksPerBuffer));
        this.table = new BlockTable(tiers.buffers(), config.blockLength, blocksPerBuffer, tiers::notAllocatedYet);
        this.allocator = new BlockAllocator(name, table, tiers.tiers(), config.fullHandler, config.fullRetryTimeout);
        this.fullRetryTimeoutNanos = config.fullRetryTimeout.toNanos();
        this.copier = new ChainCopier(table);
        this.writer = new EntryWriter(maxEntryLength, table, tiers, allocator, copier);
        this.resizer = new TierResizer(name, table, tiers, allocator, bufferLength);
        try {
            this.warmStart = config.warmCatalog != null ? RegionAdopter.adopt(config, table, tiers) : WarmStart.none();
        } catch (final RuntimeException | Error e) {
            tiers.closeRegions();
            throw e;
        }
        try {
            this.objectName = config.registerMBean ? BlockCacheJmx.register(this, allocator) : null;
        } catch (final RuntimeException e) {
            tiers.closeRegions();
            throw e;
        }
        LOG.info("block cache {}: capacity={} maxCapacity={} bufferLength={} blockLength={} buffers={} maxEntryLength={} tiers={}",
            name, capacity(), maxCapacity(), bufferLength, config.blockLength, capacity() / bufferLength, maxEntryLength,
            regionDescription());
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
        return writer.insert(data, data.readerIndex(), data.readableBytes(), 0, true);
    }

    /**
     * Stores a new entry holding the remaining bytes of {@code data} (its position is not moved).
     *
     * @return the address of the new entry (its last block).
     */
    public int insert(final ByteBuffer data) {
        ensureOpen();
        Objects.requireNonNull(data, "data");
        return writer.insert(data, data.position(), data.remaining(), 0, true);
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
        tiers.check(tier);
        return writer.insert(data, data.readerIndex(), data.readableBytes(), tier, true);
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
        return writer.append(address, data, data.readerIndex(), data.readableBytes(), true);
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
        return writer.append(address, data, data.position(), data.remaining(), true);
    }

    /**
     * As {@link #insert(ByteBuf, int)}, but takes only blocks that are free now: never calls the
     * full handler and never waits, so it may be called with a lock held that an eviction pass
     * or an appender needs. Pair it with {@link #makeRoom} called with no lock held.
     *
     * @return the new entry's address, or {@link #NULL_ADDRESS} if there were not enough free
     *         blocks (nothing stored).
     * @throws IndexOutOfBoundsException if {@code tier} is not in {@code [0, tierCount())}; nothing is stored.
     * @throws EntryTooLongException     if the data is longer than {@link #maxEntryLength()}.
     */
    public int tryInsert(final ByteBuf data, final int tier) {
        ensureOpen();
        checkSource(data);
        tiers.check(tier);
        return writer.insert(data, data.readerIndex(), data.readableBytes(), tier, false);
    }

    /**
     * As {@link #append(int, ByteBuf)}, but takes only blocks that are free now: never calls the
     * full handler and never waits (see {@link #tryInsert}).
     *
     * @return the entry's address after the append, or {@link #NULL_ADDRESS} if there were not
     *         enough free blocks (the entry is unchanged).
     * @throws InvalidAddressException if {@code address} is not that of a live entry.
     * @throws EntryTooLongException   if the entry would grow past {@link #maxEntryLength()}.
     */
    public int tryAppend(final int address, final ByteBuf data) {
        ensureOpen();
        checkSource(data);
        return writer.append(address, data, data.readerIndex(), data.readableBytes(), false);
    }

    /** {@link #makeRoom}: the blocks asked for were free when it returned. */
    public static final int ROOM_FREE = 1;
    /** {@link #makeRoom}: no room yet, but the full handler may free some (its time ran out, or it had none). */
    public static final int ROOM_LATER = 0;
    /** {@link #makeRoom}: the full handler freed nothing and said nothing could be freed (or the cache is too small). */
    public static final int ROOM_NONE = -1;

    /**
     * Makes room for {@code length} bytes in new blocks, for a {@link #tryInsert} or
     * {@link #tryAppend} that found none: calls the full handler on this thread (an eviction
     * pass), then waits up to {@code timeoutNanos} (0: not at all) on a condition that every
     * free of blocks signals, calling the handler again between waits. The caller must hold no
     * lock an eviction pass or a freeing thread could need: this is where a writer waits for
     * memory, with nothing held.
     *
     * @return {@link #ROOM_FREE}, {@link #ROOM_LATER} or {@link #ROOM_NONE}: a status, not a
     *         promise (another thread may take the blocks first).
     */
    public int makeRoom(final int length, final long timeoutNanos) {
        ensureOpen();
        return allocator.makeRoom(Math.max(1, table.blockCount(Math.max(0, length))), timeoutNanos);
    }

    /**
     * @return how long an allocation on a full cache keeps trying, in nanoseconds (the builder's
     *         {@code fullRetryTimeout}).
     */
    public long fullRetryTimeoutNanos() {
        return fullRetryTimeoutNanos;
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
        return writer.replace(address, data);
    }

    /**
     * Deletes an entry and frees its blocks.
     *
     * @throws InvalidAddressException if {@code address} is not that of a live entry.
     */
    public void delete(final int address) {
        ensureOpen();
        writer.delete(address);
    }

    // ------------------------------------------------------------------------------------------
    // Tiers
    // ------------------------------------------------------------------------------------------

    /**
     * @return how many tiers the cache has (1 for a cache built without {@code tier(...)}).
     */
    public int tierCount() {
        return tiers.count();
    }

    /**
     * @param tier a tier index, fastest first.
     * @return the tier's name.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public String tierName(final int tier) {
        return tiers.get(tier).name;
    }

    /**
     * Returns the tier holding the block an address names: the tier of an entry's last block.
     * A pure function of the address and the cache's geometry; does not check that the block is
     * used. Callable from any thread while the cache is open; allocates nothing.
     *
     * @throws InvalidAddressException if the address is 0 or past the last buffer.
     */
    public int tierOf(final int address) {
        final int bufferIndex = address >>> table.blockIndexBits;
        if (address != BlockAddressDescriptor.NULL_ADDRESS && bufferIndex < table.buffers.length
            && tiers.notAllocatedYet(bufferIndex)) {
            // A buffer of an on-demand tier without memory yet: the geometry still says its tier.
            for (final Tier tier : tiers.tiers()) {
                if (bufferIndex >= tier.firstBuffer && bufferIndex < tier.firstBuffer + tier.bufferCount) {
                    return tier.index;
                }
            }
        }
        return table.buffers[table.checkedBufferIndex(address)].tier;
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
        return writer.relocate(address, targetTier);
    }

    /**
     * Returns the 64-bit digest of an entry's bytes, as a {@link WarmCatalog} records it and a
     * warm restart checks it (see {@code EntryDigest}). A read of the entry: it may run
     * concurrently with other reads of it, not with a change. Allocates nothing.
     *
     * @throws InvalidAddressException if {@code address} is not that of a live entry.
     */
    public long digest(final int address) {
        ensureOpen();
        final long word = table.lastWordOf(address);
        return EntryDigest.of(table, address, entryLength(word));
    }

    /**
     * Returns the digest of the first {@code length} bytes of an entry that holds them all in
     * its last block's chain, that is when {@code length} ends in the entry's last block (an
     * owner that indexes fewer bytes than the entry holds records those). As
     * {@link #digest(int)} otherwise.
     *
     * @throws IndexOutOfBoundsException if {@code length} is negative, longer than the entry, or
     *                                   ends before the entry's last block.
     */
    public long digest(final int address, final int length) {
        ensureOpen();
        final int entryLength = entryLength(table.lastWordOf(address));
        if (length < 0 || length > entryLength || table.blockCount(length) != table.blockCount(entryLength)) {
            throw new IndexOutOfBoundsException("length=" + length + " does not end in the last block of the entry at address=0x"
                + Integer.toHexString(address) + " of length " + entryLength);
        }
        return EntryDigest.of(table, address, length);
    }

    /**
     * @return what this cache's warm restart found when it was built (the adopted entries, the
     *         discarded records, or why it started cold); {@link WarmStart#enabled()} is false
     *         for a cache built without {@link Builder#warmRestart(java.nio.file.Path)}. Any thread.
     */
    public WarmStart warmStart() {
        return warmStart;
    }

    /**
     * @return the used data blocks of one tier now: a sum over the tier's buffers, read without
     *         locks (each buffer's count is exact, the sum is not a snapshot under load).
     *         Allocates nothing; callable from any thread while the cache is open.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierUsedBlocks(final int tier) {
        ensureOpen();
        final Tier t = tiers.get(tier);
        return Math.max(0, t.blockCount() - tiers.freeBlocks(t));
    }

    /**
     * @return the data blocks of one tier's online buffers now (draining ones included).
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierBlocks(final int tier) {
        return tiers.get(tier).blockCount();
    }

    // ------------------------------------------------------------------------------------------
    // Resizing
    // ------------------------------------------------------------------------------------------

    /**
     * @return bytes of memory of one tier now: data plus metadata of its online buffers (a
     *         draining buffer counts until its memory is released). Any thread; allocates nothing.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierCapacity(final int tier) {
        return (long)tiers.get(tier).online * bufferLength;
    }

    /**
     * @return bytes one tier may grow to: its {@code maxCapacity} (its capacity if it has none).
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public long tierMaxCapacity(final int tier) {
        return (long)tiers.get(tier).bufferCount * bufferLength;
    }

    /** @return whether buffer {@code bufferIndex} (an address's buffer part) is online now; a warm catalog records it. */
    boolean isBufferOnline(final int bufferIndex) {
        return table.buffers[bufferIndex] != null;
    }

    /** @return whether a tier can change size (built with a maxCapacity); IndexOutOfBoundsException if no such tier. */
    public boolean isResizable(final int tier) {
        return tiers.get(tier).resizable != null;
    }

    /**
     * Sets a tier's capacity while the cache runs, in whole buffers (rounded down). A grow brings
     * buffers online at once, all or none. A shrink releases only the buffers wholly free now and
     * returns how far it got (moving entries out is their owner's: {@link #startShrink}, or
     * {@code CacheManager.resizeTier} for a store). Waits for a resize on another thread.
     *
     * @param tier     the tier.
     * @param capacity the bytes it should have: at least one buffer, at most its maxCapacity.
     * @return the tier's capacity after the call (the asked one, or more if a shrink found buffers in use).
     * @throws IndexOutOfBoundsException      if there is no such tier.
     * @throws IllegalArgumentException       if the capacity is out of the tier's bounds; nothing changes.
     * @throws UnsupportedOperationException  if the tier was built without a maxCapacity; nothing changes.
     * @throws CacheConfigurationException    if a grow cannot have the memory; nothing changes.
     */
    public long resize(final int tier, final long capacity) {
        ensureOpen();
        final Tier t = tiers.get(tier);
        final int target = resizer.targetBuffers(t, capacity);
        if (target > t.online) {
            resizer.grow(t, target);
        } else if (target < t.online) {
            try (TierShrink shrink = resizer.startShrink(t, target)) {
                shrink.release();
            }
        }
        return tierCapacity(tier);
    }

    /**
     * @param tier a resizable tier.
     * @return the tier as a {@link ResizeTarget} for a {@link io.streamcache.core.memory.MemoryMonitor}:
     *         resizes through {@link #resize} (a shrink releases only what is free; a segment
     *         store's manager offers a target that moves entries out).
     * @throws UnsupportedOperationException if the tier cannot change size.
     */
    public ResizeTarget resizeTarget(final int tier) {
        final Tier t = tiers.get(tier);
        resizer.targetBuffers(t, tierCapacity(tier));
        return new TierResizeTarget(this, tier, "cache " + name + " tier " + t.name);
    }

    /**
     * Starts a shrink of a tier to {@code capacity} bytes (whole buffers): marks the buffers it
     * will release draining and returns the shrink, through which the entries' owner lists the
     * entries to move and releases the buffers as they empty (see {@link TierShrink}). Waits for
     * a resize running on another thread; the calling thread must close the shrink.
     *
     * @throws IllegalArgumentException      if the capacity is out of the tier's bounds or above its capacity now.
     * @throws UnsupportedOperationException if the tier cannot change size.
     */
    public TierShrink startShrink(final int tier, final long capacity) {
        ensureOpen();
        final Tier t = tiers.get(tier);
        final int target = resizer.targetBuffers(t, capacity);
        if (target > t.online) {
            throw new IllegalArgumentException("capacity=" + capacity + " is above tier " + t.name + "'s capacity now ("
                + tierCapacity(tier) + "): grow it with resize");
        }
        return resizer.startShrink(t, target);
    }

    // ------------------------------------------------------------------------------------------
    // Reads
    // ------------------------------------------------------------------------------------------

    /**
     * @return the length in bytes of the entry at {@code address}.
     */
    public int length(final int address) {
        ensureOpen();
        return entryLength(table.lastWordOf(address));
    }

    /**
     * @return a read-only view of the whole entry; see {@link #view(int, int, int)}.
     */
    public ByteBuf view(final int address) {
        ensureOpen();
        final long word = table.lastWordOf(address);
        tiers.of(address).hits.increment();
        return copier.view(address, word, 0, entryLength(word));
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
        final long word = table.lastWordOf(address);
        checkRange(offset, length, entryLength(word));
        tiers.of(address).hits.increment();
        return copier.view(address, word, offset, length);
    }

    /**
     * Copies {@code length} bytes of an entry from {@code offset} into {@code destination} at
     * {@code destinationIndex}; the destination's indices are not moved. Allocates nothing.
     *
     * @throws IndexOutOfBoundsException       if the range is not inside the entry or the destination.
     * @throws ReadOnlyBufferException         if the destination is read-only.
     * @throws IllegalReferenceCountException if the destination has been released.
     */
    public void copyTo(final int address, final int offset, final ByteBuf destination, final int destinationIndex, final int length) {
        ensureOpen();
        checkDestination(destination);
        final long word = table.lastWordOf(address);
        checkRange(offset, length, entryLength(word));
        checkDestinationRange(destination, destinationIndex, length);
        tiers.of(address).hits.increment();
        copier.readBackward(address, word, offset, offset + length, destination, destinationIndex);
    }

    /**
     * Copies the whole entry into {@code destination} at {@code destinationIndex}: one check of
     * the address where {@link #length(int)} then {@link #copyTo(int, int, ByteBuf, int, int)}
     * take two. The destination's indices are not moved. Allocates nothing.
     *
     * @return the entry's length: the bytes copied.
     * @throws IndexOutOfBoundsException if the entry does not fit in the destination from
     *                                   {@code destinationIndex}; nothing is copied.
     * @see #copyTo(int, int, ByteBuf, int, int) the other exceptions
     */
    public int copyTo(final int address, final ByteBuf destination, final int destinationIndex) {
        ensureOpen();
        checkDestination(destination);
        final long word = table.lastWordOf(address);
        final int length = entryLength(word);
        checkDestinationRange(destination, destinationIndex, length);
        tiers.of(address).hits.increment();
        copier.readBackward(address, word, 0, length, destination, destinationIndex);
        return length;
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
        final long word = table.lastWordOf(address);
        final int length = destination.remaining();
        checkRange(offset, length, entryLength(word));
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        tiers.of(address).hits.increment();
        copier.readBackward(address, word, offset, offset + length, destination, destination.position());
        destination.position(destination.position() + length);
    }

    // ------------------------------------------------------------------------------------------
    // Checks
    // ------------------------------------------------------------------------------------------

    private static void checkSource(final ByteBuf data) {
        Objects.requireNonNull(data, "data");
        if (data.refCnt() == 0) {
            throw new IllegalReferenceCountException("data has been released (refCnt=0)");
        }
    }

    private static void checkDestination(final ByteBuf destination) {
        Objects.requireNonNull(destination, "destination");
        if (destination.refCnt() == 0) {
            // The copy writes straight to the destination's memory: never into a freed buffer.
            throw new IllegalReferenceCountException("destination has been released (refCnt=0)");
        }
    }

    private static void checkDestinationRange(final ByteBuf destination, final int destinationIndex, final int length) {
        if (destinationIndex < 0 || destinationIndex > destination.capacity() - length) {
            throw new IndexOutOfBoundsException("destinationIndex=" + destinationIndex + " length=" + length
                + " destination.capacity=" + destination.capacity());
        }
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
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
        allocator.fullHandler(handler);
    }

    /**
     * @return the handler called when the cache is full ({@link CacheFullHandler#NONE} if none
     *         was set): a cache manager checks it so that a second manager is not installed over
     *         a live one. Any thread.
     */
    public CacheFullHandler fullHandler() {
        return allocator.fullHandler();
    }

    public String name() {
        return name;
    }

    public int blockLength() {
        return table.blockLength;
    }

    public int bufferLength() {
        return bufferLength;
    }

    /**
     * @return bytes of memory of the cache now: data plus metadata of every tier's online
     *         buffers. Any thread.
     */
    public long capacity() {
        long capacity = 0;
        for (final Tier tier : tiers.tiers()) {
            capacity += (long)tier.online * bufferLength;
        }
        return capacity;
    }

    /**
     * @return buffers holding memory now: all online buffers, but for a tier over an
     *         {@link io.streamcache.core.memory.OnDemandRegion} (direct memory by default),
     *         whose buffers get memory as the cache first needs them and keep it until close.
     *         Times {@link #bufferLength()}, the bytes the cache's regions hold. Any thread;
     *         0 once the cache is closed (its memory is released).
     */
    public long allocatedBufferCount() {
        if (closed) {
            return 0;
        }
        long count = 0;
        for (final Tier tier : tiers.tiers()) {
            count += tier.onDemand == null ? tier.online : tier.grown();
        }
        return count;
    }

    /**
     * @return bytes the cache may grow to: the sum of its tiers' maxCapacity.
     */
    public long maxCapacity() {
        return (long)table.buffers.length * bufferLength;
    }

    public int maxEntryLength() {
        return maxEntryLength;
    }

    /**
     * @return a description of the memory region holding the buffers; with several tiers, each
     *         tier's name and region, fastest first.
     */
    public String regionDescription() {
        return tiers.regionDescription();
    }

    /**
     * @return a snapshot of occupancy and counters; callable from any thread.
     * @throws CacheClosedException after {@link #close()}: the metadata it reads is gone.
     */
    public CacheStats stats() {
        ensureOpen();
        long used = 0;
        long stored = 0;
        long entries = 0;
        final TierStats[] tierStats = tiers.stats();
        for (final TierStats tier : tierStats) {
            used += tier.usedBlockCount();
            stored += tier.storedBytes();
            entries += tier.entryCount();
        }
        // The totals are the tiers' sums: one counter per tier on the data path, not two.
        final long capacity = capacity();
        final int bufferCount = (int)(capacity / bufferLength);
        return new CacheStats(capacity, bufferCount, bufferLength, table.blockLength, allocator.totalBlocks(), used,
            (long)bufferCount * table.blockLength, stored, entries, allocator.fullHandlerCalls(), allocator.fullFailures(),
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
                BlockCacheJmx.unregister(objectName);
            } catch (final JMException e) {
                LOG.warn("could not unregister {}", objectName, e);
            }
        }
        tiers.markBuffersOffline();
        tiers.closeRegions();
        LOG.info("block cache {} closed", name);
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Configures and builds a {@link BlockCache}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        /** Default block length: a 4 KB page. */
        public static final int BLOCK_LENGTH_DEFAULT = 4096;
        /** Default buffer length: 2 MB, so that block 0 holds exactly the metadata of 512 blocks. */
        public static final int BUFFER_LENGTH_DEFAULT = 2 << 20;
        /** The longest buffer a default buffer length may be, whatever the block length: 2 MiB. */
        public static final int MAX_DEFAULT_BUFFER_LENGTH = 2 << 20;
        /** Smallest block length accepted. */
        public static final int MIN_BLOCK_LENGTH = 64;
        /** Largest block length accepted. */
        public static final int MAX_BLOCK_LENGTH = 1 << 20;
        /** Largest buffer length accepted. */
        public static final int MAX_BUFFER_LENGTH = 1 << 30;
        /** Default time a full cache retries an allocation while its full handler frees blocks. */
        public static final Duration FULL_RETRY_TIMEOUT_DEFAULT = Duration.ofMillis(500);

        private long capacity = -1;
        private long maxCapacity = CacheConfig.TierSpec.SAME;
        private int blockLength = BLOCK_LENGTH_DEFAULT;
        private int bufferLength;
        /** Whether {@link #bufferLength(int)} was called; if not, the buffer length is {@link #defaultBufferLength(int)}. */
        private boolean bufferLengthSet;
        private int maxEntryLength = BlockMetadataDescriptor.MAX_ENTRY_LENGTH;
        private MemoryRegionFactory region = DirectMemoryRegion.factory();
        private CacheFullHandler fullHandler = CacheFullHandler.NONE;
        private Duration fullRetryTimeout = FULL_RETRY_TIMEOUT_DEFAULT;
        private String name;
        private boolean registerMBean = true;
        private boolean regionSet;
        private java.nio.file.Path warmCatalog;
        private final List<CacheConfig.TierSpec> tiers = new ArrayList<>();

        private Builder() {
        }

        /**
         * Adds a tier behind those added before (call it fastest first). A cache built with tiers
         * has their capacities and regions; {@link #capacity(long)} and {@link #region(MemoryRegionFactory)} are for a
         * one-tier cache and must not be combined with this.
         *
         * @param name     the tier's name in stats, logs and JMX: unique, not empty.
         * @param capacity bytes of memory of the tier, data plus metadata; rounded down to whole
         *                 buffers, at least one.
         * @param region   where the tier's buffers live.
         */
        public Builder tier(final String name, final long capacity, final MemoryRegionFactory region) {
            return tier(name, capacity, CacheConfig.TierSpec.SAME, region);
        }

        /**
         * Adds a tier that may change size while the cache runs ({@link BlockCache#resize}):
         * buffer indices are reserved for {@code maxCapacity}, memory is held for
         * {@code capacity}; it may shrink to one buffer and grow back up to {@code maxCapacity}. The region must support it (direct memory and mapped files do,
         * PMEM does not).
         *
         * @param maxCapacity bytes the tier may grow to, at least {@code capacity}; rounded down to whole buffers.
         * @see #tier(String, long, MemoryRegionFactory)
         */
        public Builder tier(final String name, final long capacity, final long maxCapacity, final MemoryRegionFactory region) {
            tiers.add(new CacheConfig.TierSpec(Objects.requireNonNull(name, "name"), capacity, maxCapacity,
                Objects.requireNonNull(region, "region")));
            return this;
        }

        /**
         * @param maxCapacity bytes a one-tier cache may grow to while it runs ({@link BlockCache#resize});
         *                    at least its capacity. Not set: the cache keeps its capacity.
         */
        public Builder maxCapacity(final long maxCapacity) {
            this.maxCapacity = maxCapacity;
            return this;
        }

        /**
         * @param capacity bytes of memory for data and metadata; rounded down to whole buffers. Required.
         */
        public Builder capacity(final long capacity) {
            this.capacity = capacity;
            return this;
        }

        /**
         * The buffer length a cache gets when {@link #bufferLength(int)} is not called: the
         * largest buffer whose block 0 holds the metadata words of all its blocks
         * ({@code blockLength^2 / 8}), at most {@link #MAX_DEFAULT_BUFFER_LENGTH}. So 2 MiB for
         * 4 KiB blocks (the default) and longer ones, 512 KiB for 2 KiB, 128 KiB for 1 KiB.
         *
         * @param blockLength a block length (not checked here; {@code build()} checks it).
         * @return the default buffer length for it.
         */
        public static int defaultBufferLength(final int blockLength) {
            return (int)Math.min(MAX_DEFAULT_BUFFER_LENGTH, (long)blockLength * blockLength / BlockMetadataDescriptor.WORD_LENGTH);
        }

        /**
         * @param blockLength bytes per block: a power of two in [64, 1 MiB]; 4 KiB by default.
         *                    Without {@link #bufferLength(int)}, the buffer length follows it
         *                    ({@link #defaultBufferLength(int)}).
         */
        public Builder blockLength(final int blockLength) {
            this.blockLength = blockLength;
            return this;
        }

        /**
         * @param bufferLength bytes per buffer: a power of two, at least two blocks, with
         *                     {@code 8 * bufferLength / blockLength <= blockLength} so that block 0 holds all metadata;
         *                     by default {@link #defaultBufferLength(int)} of the block length.
         */
        public Builder bufferLength(final int bufferLength) {
            this.bufferLength = bufferLength;
            this.bufferLengthSet = true;
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

        /**
         * Makes the cache restartable warm: when it is built over regions that kept their memory
         * ({@link io.streamcache.core.memory.MappedFileRegion#persistent}), it adopts the entries
         * the catalog at {@code catalog} names whose blocks and bytes are intact (checked chain by
         * chain and digest by digest), frees every other block, and reports what it found in
         * {@link BlockCache#warmStart()}; the catalog's owner (a segment store) claims the entries
         * and writes the catalog again ({@link WarmCatalog.Writer}). Without a usable catalog, or
         * over regions created afresh, the cache starts empty and says why. See
         * {@code docs/warm-restart.md}.
         *
         * @param catalog the catalog's file (its own small file, outside the region).
         */
        public Builder warmRestart(final java.nio.file.Path catalog) {
            this.warmCatalog = Objects.requireNonNull(catalog, "catalog");
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
            final int buffer = bufferLengthSet ? bufferLength : defaultBufferLength(blockLength);
            return new BlockCache(new CacheConfig(name, capacity, maxCapacity, blockLength, buffer, maxEntryLength, region, regionSet,
                tiers, fullHandler, fullRetryTimeout, registerMBean, warmCatalog));
        }
    }
}
