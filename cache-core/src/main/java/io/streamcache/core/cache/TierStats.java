package io.streamcache.core.cache;

/**
 * An immutable snapshot of one tier of a {@link BlockCache}; safe to pass between threads.
 * Like {@link CacheStats}, consistent per field, not across fields, when taken under load.
 *
 * <p>Entries and stored bytes are counted in the tier of the entry's last block (the block its
 * address names): an entry whose append spilled into another tier counts there as a whole. The
 * used blocks are exact per tier.
 *
 * @param index          position of the tier, 0 the fastest.
 * @param name           the tier's name.
 * @param region         description of the tier's memory region.
 * @param capacity       bytes of memory of the tier now: data plus metadata of its online buffers.
 * @param maxCapacity    bytes the tier may grow to (its capacity, for a tier that cannot change size).
 * @param bufferCount    online buffers of the tier.
 * @param blockCount     data blocks of the tier's online buffers.
 * @param usedBlockCount data blocks of the tier in use.
 * @param storedBytes    bytes of the entries whose last block is in this tier.
 * @param entryCount     entries whose last block is in this tier.
 * @param hits           reads (views and copies) of entries whose last block is in this tier;
 *                       counted without an atomic instruction, so two threads that read at the
 *                       same instant may count once (it may undercount under contention, never
 *                       overcount).
 * @param demotions      entries relocated out of this tier into a slower one.
 * @param promotions     entries relocated into this tier from a slower one.
 */
public record TierStats(
    int index,
    String name,
    String region,
    long capacity,
    long maxCapacity,
    int bufferCount,
    long blockCount,
    long usedBlockCount,
    long storedBytes,
    long entryCount,
    long hits,
    long demotions,
    long promotions) {

    /**
     * A snapshot of a tier that cannot change size: its maximum capacity is its capacity.
     */
    public TierStats(final int index, final String name, final String region, final long capacity, final int bufferCount,
                     final long blockCount, final long usedBlockCount, final long storedBytes, final long entryCount, final long hits,
                     final long demotions, final long promotions) {
        this(index, name, region, capacity, capacity, bufferCount, blockCount, usedBlockCount, storedBytes, entryCount, hits,
            demotions, promotions);
    }

    /**
     * @return free data blocks of the tier.
     */
    public long freeBlockCount() {
        return blockCount - usedBlockCount;
    }

    /**
     * @return used data blocks of the tier as a fraction of its data blocks, in [0, 1].
     */
    public double utilization() {
        return blockCount == 0 ? 0.0 : (double)usedBlockCount / blockCount;
    }
}
