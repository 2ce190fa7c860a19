package io.streamcache.core.cache;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.OnDemandRegion;

import java.util.List;

/**
 * The tiers of a {@link BlockCache}, fastest first, and the per-tier accounts: opens each
 * tier's region and cuts it into {@link CacheBuffer}s (tier k owns a contiguous range of buffer
 * indices, so the tier of an address is read off its buffer part), checks tier indices, moves an
 * entry's share of the accounts when it changes tier, and snapshots the counters.
 *
 * <p>Entries and stored bytes count in the tier of the entry's last block (the block its address
 * names): an entry whose append spilled into another tier counts there as a whole. Used blocks
 * are exact per tier, read from the buffers' headers.
 *
 * <p>A tier built with a maximum capacity above its capacity reserves indices for the maximum
 * and opens a {@link io.streamcache.core.memory.ResizableRegion}; the slots of its offline
 * buffers are null.
 *
 * <p><b>Threading:</b> the table is immutable after construction, but for the slots of
 * resizable tiers, which only {@link TierResizer} writes; the accounts are
 * {@link Tier}'s {@link java.util.concurrent.atomic.LongAdder}s, safe from any thread. The
 * constructor and {@link #closeRegions()} run on the thread that builds or closes the cache.
 */
final class TierTable {
    private final Tier[] tiers;
    private final CacheBuffer[] buffers;
    private final int blockIndexBits;
    private final int bufferLength;

    /**
     * Opens every tier's region and its buffers (a resizable region for a tier with a maxCapacity), in the queue of their tier; on failure closes
     * the regions already opened.
     *
     * @throws CacheConfigurationException if a region does not hold the buffers asked of it.
     */
    TierTable(final CacheConfig config, final int blockIndexBits) {
        final List<CacheConfig.TierSpec> specs = config.tiers;
        final int blocksPerBuffer = config.blocksPerBuffer();
        this.bufferLength = config.bufferLength;
        this.blockIndexBits = blockIndexBits;
        this.tiers = new Tier[specs.size()];
        long bufferTotal = 0;
        for (final CacheConfig.TierSpec spec : specs) {
            bufferTotal += spec.maximum() / bufferLength;
        }
        this.buffers = new CacheBuffer[(int)bufferTotal];
        try {
            int first = 0;
            for (int t = 0; t < tiers.length; t++) {
                final CacheConfig.TierSpec spec = specs.get(t);
                final int count = (int)(spec.capacity() / bufferLength);
                final int max = (int)(spec.maximum() / bufferLength);
                final MemoryRegion region = spec.resizable() ? spec.region().openResizable(count, max, bufferLength)
                    : spec.region().open(count, bufferLength);
                tiers[t] = new Tier(t, spec.name(), region, buffers, first, max, count, blocksPerBuffer);
                if (region.bufferCount() != max || region.bufferLength() != bufferLength) {
                    throw new CacheConfigurationException("tier " + spec.name() + ": region " + region.description()
                        + " does not hold bufferCount=" + max + " x bufferLength=" + bufferLength);
                }
                // A warm restart keeps a reopened buffer's metadata for RegionAdopter to read.
                // An on-demand region's buffers get their memory, and a CacheBuffer, as the tier
                // first needs them (Tier#allocateNext): none now.
                final int now = region instanceof OnDemandRegion ? 0 : count;
                for (int i = 0; i < now; i++) {
                    final boolean keep = config.warmCatalog != null && region.reopened(i);
                    buffers[first + i] = new CacheBuffer(first + i, t, region.buffer(i), blocksPerBuffer, keep);
                }
                // Last pushed is popped first: a new cache hands its buffers out in ascending order.
                for (int i = now - 1; i >= 0; i--) {
                    tiers[t].available.push(buffers[first + i]);
                }
                first += max;
            }
        } catch (final RuntimeException e) {
            closeRegions();
            throw e;
        }
    }

    /**
     * @return whether buffer {@code index} belongs to an on-demand tier and has no memory yet.
     */
    boolean notAllocatedYet(final int index) {
        for (final Tier tier : tiers) {
            if (index >= tier.firstBuffer && index < tier.firstBuffer + tier.bufferCount) {
                // A buffer above the count may have memory already (published while a lower one
                // was still being allocated): its slot in the array says.
                return tier.onDemand != null && index - tier.firstBuffer >= tier.allocatedBuffers && buffers[index] == null;
            }
        }
        return false;
    }

    /**
     * @return every buffer of every tier, indexed by the buffer part of an address.
     */
    CacheBuffer[] buffers() {
        return buffers;
    }

    /**
     * @return the tiers, fastest first; the array is shared, not to be changed.
     */
    Tier[] tiers() {
        return tiers;
    }

    int count() {
        return tiers.length;
    }

    /**
     * @return tier {@code index}, checked.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    Tier get(final int index) {
        return tiers[check(index)];
    }

    /**
     * @return {@code index} if there is such a tier.
     * @throws IndexOutOfBoundsException if there is not.
     */
    int check(final int index) {
        if (index < 0 || index >= tiers.length) {
            throw new IndexOutOfBoundsException("tier=" + index + " tierCount=" + tiers.length);
        }
        return index;
    }

    /**
     * @return the tier holding the block a valid address names.
     */
    Tier of(final int address) {
        return tiers[buffers[address >>> blockIndexBits].tier];
    }

    /**
     * Counts a new entry in the tier of its last block (warm adoption; inserts count in the
     * buffer instead, see {@link CacheBuffer#count}).
     */
    void added(final int address, final int length) {
        final Tier placed = of(address);
        placed.entries.increment();
        placed.storedBytes.add(length);
    }

    /**
     * Moves an entry's share of the per-tier accounts from the tier of its old last block to the
     * tier of its new one (they differ when an append or replace spilled into another tier).
     */
    void moved(final int oldAddress, final int oldLength, final int newAddress, final int newLength) {
        final Tier from = of(oldAddress);
        final Tier to = of(newAddress);
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
     * Counts a relocation: the entry's accounts move from {@code source} to {@code target}, with
     * a demotion on the source when the target is slower, else a promotion on the target.
     */
    void relocated(final Tier source, final Tier target, final int length) {
        source.entries.decrement();
        source.storedBytes.add(-length);
        target.entries.increment();
        target.storedBytes.add(length);
        if (target.index > source.index) {
            source.demotions.increment();
        } else {
            target.promotions.increment();
        }
    }

    /**
     * @return the free data blocks of one tier now: a sum over its buffers read without locks
     *         (each buffer's count is exact, the sum is not a snapshot under load).
     */
    long freeBlocks(final Tier tier) {
        // An on-demand tier's buffers without memory yet are free; those given memory after
        // the count was read are counted among them (they are nearly all free).
        final int allocated = tier.onDemand == null ? tier.bufferCount : tier.allocatedBuffers;
        long free = (long)(tier.bufferCount - allocated) * tier.blocksPerBufferData;
        for (int i = tier.firstBuffer; i < tier.firstBuffer + allocated; i++) {
            final CacheBuffer buffer = buffers[i];
            if (buffer != null) {
                free += buffer.freeCountVolatile();
            }
        }
        return free;
    }

    /**
     * @return a snapshot of every tier, fastest first.
     */
    TierStats[] stats() {
        final TierStats[] stats = new TierStats[tiers.length];
        for (int t = 0; t < tiers.length; t++) {
            final Tier tier = tiers[t];
            final long free = freeBlocks(tier);
            long stored = tier.storedBytes.sum();
            long entries = tier.entries.sum();
            for (int i = tier.firstBuffer; i < tier.firstBuffer + tier.bufferCount; i++) {
                final CacheBuffer buffer = buffers[i];
                if (buffer != null) {
                    stored += buffer.storedBytes();
                    entries += buffer.entries();
                }
            }
            final int online = tier.online;
            final long blocks = (long)online * tier.blocksPerBufferData;
            stats[t] = new TierStats(t, tier.name, tier.region.description(), (long)online * bufferLength,
                (long)tier.bufferCount * bufferLength, online, blocks, Math.max(0, blocks - free), stored, entries, tier.hits.sum(),
                tier.demotions.sum(), tier.promotions.sum());
        }
        return stats;
    }

    /**
     * @return a description of the memory regions: the region's, or with several tiers each
     *         tier's name and region, fastest first.
     */
    String regionDescription() {
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
     * Marks every online buffer offline under its lock (its views fail from then on), before
     * the regions are closed ({@link BlockCache#close()}).
     */
    void markBuffersOffline() {
        for (final CacheBuffer buffer : buffers) {
            if (buffer != null) {
                buffer.lock();
                try {
                    if (!buffer.offline) {
                        buffer.markOffline();
                    }
                } finally {
                    buffer.unlock();
                }
            }
        }
    }

    /**
     * Closes the regions of the tiers opened so far.
     */
    void closeRegions() {
        for (final Tier tier : tiers) {
            if (tier != null) {
                tier.region.close();
            }
        }
    }
}
