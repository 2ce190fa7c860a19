package io.streamcache.core.cache;

import java.util.List;

/**
 * An immutable snapshot of a {@link BlockCache}'s occupancy; safe to pass between threads.
 * Fields are read without stopping writers, so a snapshot taken under load is consistent per
 * field, not across fields.
 *
 * @param capacity          bytes of memory the cache holds: data plus metadata.
 * @param bufferCount       buffers in the cache.
 * @param bufferLength      bytes per buffer.
 * @param blockLength       bytes per block.
 * @param blockCount        data blocks in the cache (block 0 of each buffer excluded).
 * @param usedBlockCount    data blocks in use by entries.
 * @param metadataBytes     bytes of metadata (block 0 of every buffer).
 * @param storedBytes       bytes of entry data stored.
 * @param entryCount        live entries.
 * @param fullHandlerCalls  times the full-handler was called.
 * @param fullFailures      operations failed with a {@link io.streamcache.core.CacheFullException}.
 * @param tiers             per-tier occupancy and counters, fastest tier first (one element for a
 *                          cache built without tiers); an immutable list.
 */
public record CacheStats(
    long capacity,
    int bufferCount,
    int bufferLength,
    int blockLength,
    long blockCount,
    long usedBlockCount,
    long metadataBytes,
    long storedBytes,
    long entryCount,
    long fullHandlerCalls,
    long fullFailures,
    List<TierStats> tiers) {

    public CacheStats {
        tiers = List.copyOf(tiers);
    }

    /**
     * @return the stats of tier {@code index}.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public TierStats tier(final int index) {
        return tiers.get(index);
    }

    /**
     * @return free data blocks.
     */
    public long freeBlockCount() {
        return blockCount - usedBlockCount;
    }

    /**
     * @return bytes of memory in use: used blocks plus metadata.
     */
    public long usedBytes() {
        return usedBlockCount * blockLength + metadataBytes;
    }

    /**
     * @return used data blocks as a fraction of all data blocks, in [0, 1].
     */
    public double utilization() {
        return blockCount == 0 ? 0.0 : (double)usedBlockCount / blockCount;
    }
}
