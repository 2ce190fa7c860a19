package io.streamcache.core.cache;

import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;

/**
 * A warm restart's adoption: while a cache is built over reopened regions
 * ({@link io.streamcache.core.memory.MemoryRegion#reopened()}), takes back the entries its
 * {@link WarmCatalog} names that the region still holds intact, and makes every other block free.
 *
 * <h2>Procedure</h2>
 * <pre>
 *  read the catalog; damaged, another version or geometry, no buffer reopened -&gt; cold (reason)
 *  clear its CLEAN flag (the region changes from now on)
 *  for each record (owner, position, address, length, digest), in catalog order:
 *    walk blockCount(length) blocks back from address, each:
 *      inside the cache, not block 0, in a buffer online at the checkpoint   else DAMAGED_CHAIN
 *      in a buffer online now                                        else BUFFER_OFFLINE
 *      in a buffer its region reopened with its bytes                else REGION_NOT_KEPT
 *      used; the first one walked: last with a length &gt;= length,  else DAMAGED_CHAIN
 *        or a middle block (the entry grew past the record); the others: middle blocks
 *      not claimed by an entry adopted before (nor twice by this one)   else CLAIMED_TWICE
 *    the last block walked links to no block                       else DAMAGED_CHAIN
 *    digest of the length bytes == the record's                    else DIGEST_MISMATCH
 *    adopt: claim the blocks; the record's block becomes the last block of an entry of length
 *      bytes (an entry that grew after the checkpoint is cut back to what the record digested;
 *      blocks linked after it are unclaimed, so freed below)
 *  every reopened buffer: its free list rebuilt from its unclaimed blocks, ascending
 * </pre>
 * A resizable tier (one with a maximum capacity) reopens with the buffers its capacity asks for
 * online, lowest first; the catalog names the buffers online at the checkpoint; the records of
 * buffers online in both are tried, and a buffer the region reopened holds its old bytes (a
 * persistent mapped file: those below the file's old end). The addresses mean the same in both
 * runs because the geometry (block and buffer length, every tier's maximum) must be the same.
 * Nothing in the region is trusted that was not checked: a crash (SIGKILL) can leave any metadata
 * word half-way through a change, and a checkpoint is older than the region. Rebuilding the free
 * lists from the claimed blocks, instead of reading them, means torn metadata can never leak a
 * block nor hand one out twice. A claimed block is never freed, and no claimed block is free.
 *
 * <p><b>Threading:</b> runs once, on the thread building the cache, before the cache is published.
 */
final class RegionAdopter {
    private static final Logger LOG = LoggerFactory.getLogger(RegionAdopter.class);

    private final CacheConfig config;
    private final BlockTable table;
    private final TierTable tiers;
    /** Per buffer of the cache: online now, in a region that reopened it with its bytes. */
    private final boolean[] kept;
    /** One bit per block of the cache: claimed by an adopted entry. */
    private final long[] claimed;
    private final long[] discarded = new long[WarmStart.Discard.values().length];
    private int[] chain = new int[64];

    private RegionAdopter(final CacheConfig config, final BlockTable table, final TierTable tiers) {
        this.config = config;
        this.table = table;
        this.tiers = tiers;
        this.kept = new boolean[table.buffers.length];
        for (final Tier tier : tiers.tiers()) {
            for (int i = 0; i < tier.bufferCount; i++) {
                kept[tier.firstBuffer + i] = table.buffers[tier.firstBuffer + i] != null && tier.region.reopened(i);
            }
        }
        this.claimed = new long[(int) (((long) table.buffers.length * table.blocksPerBuffer + 63) >>> 6)];
    }

    /**
     * Adopts what it can of the catalog in {@code config.warmCatalog}.
     *
     * @return what was adopted and discarded, or why the cache starts cold.
     */
    static WarmStart adopt(final CacheConfig config, final BlockTable table, final TierTable tiers) {
        return new RegionAdopter(config, table, tiers).run();
    }

    private WarmStart run() {
        final long started = System.nanoTime();
        WarmCatalog.Contents contents = null;
        WarmStart.Cold cold = null;
        String reason = null;
        try {
            contents = WarmCatalog.read(config.warmCatalog);
            reason = mismatch(contents);
            cold = reason == null ? null : WarmStart.Cold.OTHER_GEOMETRY;
        } catch (final NoSuchFileException e) {
            cold = WarmStart.Cold.NO_CATALOG;
            reason = "no warm catalog at " + config.warmCatalog;
        } catch (final WarmCatalog.DamagedCatalogException e) {
            cold = WarmStart.Cold.DAMAGED_CATALOG;
            reason = e.getMessage();
        } catch (final WarmCatalog.OtherVersionException e) {
            cold = WarmStart.Cold.OTHER_VERSION;
            reason = e.getMessage();
        } catch (final IOException e) {
            cold = WarmStart.Cold.UNREADABLE_CATALOG;
            reason = "warm catalog " + config.warmCatalog + " could not be read: " + e;
        }
        if (cold == null && !anyKept()) {
            cold = WarmStart.Cold.NO_REGION_KEPT;
            reason = "no region was reopened (a new or resized region file)";
        }
        if (cold == null) {
            try {
                WarmCatalog.markDirty(config.warmCatalog);
            } catch (final IOException e) {
                // A catalog whose CLEAN flag stays set would let a later crash pass for a clean
                // close: refuse to trust it rather than risk that.
                cold = WarmStart.Cold.UNREADABLE_CATALOG;
                reason = "warm catalog " + config.warmCatalog + " could not be marked in use: " + e;
            }
        }
        final List<WarmCatalog.Entry> adopted = new ArrayList<>();
        if (cold == null) {
            for (final WarmCatalog.Entry entry : contents.entries()) {
                final WarmStart.Discard discard = tryAdopt(entry, contents);
                if (discard == null) {
                    adopted.add(entry);
                    tiers.added(entry.address(), entry.length());
                } else {
                    discarded[discard.ordinal()]++;
                }
            }
        }
        rebuildFreeLists();
        final long nanos = System.nanoTime() - started;
        final WarmStart start = cold == null
            ? new WarmStart(config.warmCatalog, true, null, null, contents.clean(), contents.identity(), contents.sequence(),
                contents.entries().size(), adopted, discarded, nanos)
            : new WarmStart(config.warmCatalog, false, cold, reason, false, contents != null ? contents.identity() : 0,
                contents != null ? contents.sequence() : 0, 0, List.of(), discarded, nanos);
        if (cold == WarmStart.Cold.DAMAGED_CATALOG || cold == WarmStart.Cold.UNREADABLE_CATALOG) {
            // Not a first start: a catalog was there and its entries are lost.
            LOG.warn("block cache warm restart: starting cold ({}): {}", cold, reason);
        } else if (cold != null) {
            LOG.info("block cache warm restart: starting cold ({}): {}", cold, reason);
        } else if (start.discardedTotal() > 0 && start.cleanShutdown()) {
            LOG.warn("block cache warm restart after a clean close lost entries: {}", start);
        } else {
            LOG.info("block cache warm restart: {}", start);
        }
        return start;
    }

    private boolean anyKept() {
        for (final boolean k : kept) {
            if (k) {
                return true;
            }
        }
        return false;
    }

    /** @return why the catalog does not describe this cache, or null if it does. */
    private String mismatch(final WarmCatalog.Contents contents) {
        final int[] counts = new int[tiers.count()];
        for (int t = 0; t < counts.length; t++) {
            counts[t] = tiers.tiers()[t].bufferCount;
        }
        if (contents.blockLength() != config.blockLength || contents.bufferLength() != config.bufferLength
            || !Arrays.equals(contents.maxBufferCounts(), counts)) {
            return "warm catalog " + config.warmCatalog + " describes blockLength=" + contents.blockLength() + " bufferLength="
                + contents.bufferLength() + " maximum buffers per tier=" + Arrays.toString(contents.maxBufferCounts())
                + ", this cache has " + config.blockLength + ", " + config.bufferLength + ", " + Arrays.toString(counts);
        }
        return null;
    }

    /** @return null if adopted, else why not. */
    private WarmStart.Discard tryAdopt(final WarmCatalog.Entry entry, final WarmCatalog.Contents contents) {
        final int length = entry.length();
        if (length < 0 || length > config.maxEntryLength) {
            return WarmStart.Discard.DAMAGED_CHAIN;
        }
        final int count = table.blockCount(length);
        if (chain.length < count) {
            chain = new int[Math.max(count, chain.length * 2)];
        }
        int current = entry.address();
        long lastWord = 0;
        WarmStart.Discard reason = null;
        int walked = 0;
        for (; walked < count; walked++) {
            final int bufferIndex = current >>> table.blockIndexBits;
            if (current == BlockAddressDescriptor.NULL_ADDRESS || bufferIndex >= table.buffers.length
                || (current & table.blockIndexMask) == BlockAddressDescriptor.METADATA_BLOCK_INDEX) {
                reason = WarmStart.Discard.DAMAGED_CHAIN;
                break;
            }
            if (!contents.wasOnline(bufferIndex)) {
                // The catalog's own record names a buffer it says was offline: damage, not staleness.
                reason = WarmStart.Discard.DAMAGED_CHAIN;
                break;
            }
            if (table.buffers[bufferIndex] == null) {
                reason = WarmStart.Discard.BUFFER_OFFLINE;
                break;
            }
            if (!kept[bufferIndex]) {
                reason = WarmStart.Discard.REGION_NOT_KEPT;
                break;
            }
            final long word = table.word(current);
            final boolean good = walked == 0
                ? isUsed(word) && (!isLast(word) || entryLength(word) >= length)
                : isUsed(word) && !isLast(word);
            if (!good) {
                reason = WarmStart.Discard.DAMAGED_CHAIN;
                break;
            }
            if (claim(current)) {
                reason = WarmStart.Discard.CLAIMED_TWICE;
                break;
            }
            chain[walked] = current;
            if (walked == 0) {
                lastWord = word;
            }
            current = previousAddress(word);
            if (walked == count - 1 && current != BlockAddressDescriptor.NULL_ADDRESS) {
                // The walk is done but the chain goes on: not an entry of this length.
                reason = WarmStart.Discard.DAMAGED_CHAIN;
                walked++;
                break;
            }
        }
        if (reason == null && EntryDigest.of(table, entry.address(), length) != entry.digest()) {
            reason = WarmStart.Discard.DIGEST_MISMATCH;
        }
        if (reason != null) {
            for (int i = 0; i < walked; i++) {
                unclaim(chain[i]);
            }
            return reason;
        }
        table.setWord(entry.address(), BlockMetadataDescriptor.lastWord(previousAddress(lastWord), length));
        return null;
    }

    /** Sets a block's claimed bit; @return whether it was set already (then it is left as it was). */
    private boolean claim(final int address) {
        final long bit = Integer.toUnsignedLong(address);
        final int word = (int) (bit >>> 6);
        final long mask = 1L << (bit & 63);
        if ((claimed[word] & mask) != 0) {
            return true;
        }
        claimed[word] |= mask;
        return false;
    }

    private void unclaim(final int address) {
        final long bit = Integer.toUnsignedLong(address);
        claimed[(int) (bit >>> 6)] &= ~(1L << (bit & 63));
    }

    private boolean isClaimed(final int address) {
        final long bit = Integer.toUnsignedLong(address);
        return (claimed[(int) (bit >>> 6)] & (1L << (bit & 63))) != 0;
    }

    /**
     * Links the unclaimed blocks of every reopened buffer into its free list, ascending; the
     * other buffers were reset when built, and offline ones have none.
     */
    private void rebuildFreeLists() {
        final int blocks = table.blocksPerBuffer;
        for (final CacheBuffer buffer : table.buffers) {
            // null: a buffer of an on-demand tier without memory yet, or an offline one.
            if (buffer == null || !kept[buffer.index]) {
                continue;
            }
            int head = 0;
            int free = 0;
            // Backwards, so that each free block links to the next free one above it.
            for (int block = blocks - 1; block >= 1; block--) {
                final int address = BlockAddressDescriptor.pack(buffer.index, block, table.blockIndexBits);
                if (!isClaimed(address)) {
                    buffer.word(block, BlockMetadataDescriptor.freeWord(head));
                    head = block;
                    free++;
                }
            }
            if (free == blocks - 1) {
                buffer.resetFreeList();
            } else {
                buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, head));
                // Ascending with gaps: not the fresh order the allocator keeps track of.
                buffer.freeListAscending = false;
            }
        }
    }
}
