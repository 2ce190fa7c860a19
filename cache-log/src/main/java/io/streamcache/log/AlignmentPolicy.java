package io.streamcache.log;

/**
 * How the aggregating writer makes every write start and end on a 4 KB boundary; an immutable
 * constant.
 *
 * <p>An SSD writes whole 4 KB pages: a write that ends mid-page makes the next write rewrite
 * that page (read-modify-write in the drive, and a page holding acknowledged data exposed to a
 * torn write). The RocketMQ-on-PMEM contest design measured both remedies and chose between them per batch.
 */
public enum AlignmentPolicy {
    /**
     * Pad the batch's tail to the next 4 KB boundary with a padding record: no request waits,
     * at the cost of up to 4 KB - 8 of padding per batch (a lot for small batches).
     */
    PAD,
    /**
     * Write up to the last 4 KB boundary and carry the unaligned tail into the next batch (its
     * requests complete with that batch): no padding while batches keep coming, at the cost of
     * holding the tail's requests back for one more write. A tail with no request waiting behind
     * it when its write is done (the end of a burst) is written at once, padded.
     */
    CUT,
    /**
     * Cut when the batch holds at least {@link LogConfig#cutThreshold()} bytes (the tail is a
     * small fraction, and under such load the next batch comes at once), pad when it is smaller.
     */
    ADAPTIVE
}
