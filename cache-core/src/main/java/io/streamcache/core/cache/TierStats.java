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
 * @param capacity       bytes of memory of the tier: data plus metadata.
 * @param bufferCount    buffers of the tier.
 * @param blockCount     data blocks of the tier.
 * @param usedBlockCount data blocks of the tier in use.
 * @param storedBytes    bytes of the entries whose last block is in this tier.
 * @param entryCount     entries whose last block is in this tier.
 * @param hits           reads (views and copies) of entries whose last block is in this tier.
 * @param demotions      entries relocated out of this tier into a slower one.
 * @param promotions     entries relocated into this tier from a slower one.
 */
public record TierStats(
    int index,
    String name,
    String region,
    long capacity,
    int bufferCount,
    long blockCount,
    long usedBlockCount,
    long storedBytes,
    long entryCount,
    long hits,
    long demotions,
    long promotions) {

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
