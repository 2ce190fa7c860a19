package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.SegmentStore;

import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What a block length costs in memory, for the choice of the default: per GiB of cache, the
 * metadata in block 0 of every buffer (exact, from the layout) and the heap of the buffer
 * objects (measured: heap after GC with and without a built cache); and on a message-queue
 * workload, the bytes lost in the partly filled last block of every segment's last entry.
 *
 * <pre>
 *   java -Xmx2g -XX:MaxDirectMemorySize=5g -cp streamcache-bench.jar io.streamcache.bench.jmh.BlockSizeFootprint \
 *        BLOCK_KIB [SEGMENTS] [BYTES]
 * </pre>
 * {@code BLOCK_KIB}: the block length in KiB (buffers as {@code blockcache-<N>k}'s:
 * {@link BlockCacheStore#bufferLengthFor}). The fill appends messages of 100 B to 17 KiB
 * (uniform, seeded, as the contest's) to {@code SEGMENTS} segments (250,000) chosen at random
 * until {@code BYTES} (2 GB) are in a 4 GiB cache that commits its memory lazily and never
 * fills, so nothing is evicted; the segment store has no log. One geometry per JVM.
 */
public final class BlockSizeFootprint {
    private static final long GIB = 1L << 30;

    private BlockSizeFootprint() {
    }

    public static void main(final String[] args) {
        if (args.length < 1) {
            System.err.println("usage: BlockSizeFootprint BLOCK_KIB [SEGMENTS] [BYTES]");
            System.exit(2);
        }
        final int blockLength = Integer.parseInt(args[0]) << 10;
        final int bufferLength = BlockCacheStore.bufferLengthFor(blockLength);
        final int segments = args.length > 1 ? Integer.parseInt(args[1]) : 250_000;
        final long bytes = args.length > 2 ? Long.parseLong(args[2]) : 2_000_000_000L;

        // The heap of the buffers: a cache of 2 GiB and one of 4 GiB (lazily committed), so that
        // what every cache has once (classes, per-tier arrays) falls out of the difference.
        heapOf(GIB, blockLength, bufferLength); // loads and initializes the classes a cache uses
        final long heap2 = heapOf(2 * GIB, blockLength, bufferLength);
        final long heap4 = heapOf(4 * GIB, blockLength, bufferLength);
        final long capacity = 4 * GIB;
        final double perBuffer = (double)(heap4 - heap2) / (2 * GIB / bufferLength);
        try (BlockCache cache = BlockCache.builder().capacity(capacity).blockLength(blockLength).bufferLength(bufferLength)
                 .registerMBean(false).build()) {
            final CacheStats empty = cache.stats();
            System.out.printf(Locale.ROOT, "block %d B, buffer %d B: %,d buffers per GiB; metadata %,d B per GiB (%.3f%%, "
                    + "stats: %,d B for %d GiB); heap %.0f B per buffer, %,.0f B per GiB (a 2 GiB cache: %,d B in all, "
                    + "a 4 GiB one %,d B)%n",
                blockLength, bufferLength, GIB / bufferLength, GIB / bufferLength * blockLength,
                100.0 * blockLength / bufferLength, empty.metadataBytes(), capacity / GIB, perBuffer,
                perBuffer * (GIB / bufferLength), heap2, heap4);
            try (SegmentStore store = SegmentStore.builder(cache).build()) {
                fill(store, cache, segments, bytes, blockLength);
            }
        }
    }

    private static void fill(final SegmentStore store, final BlockCache cache, final int segments, final long bytes,
                             final int blockLength) {
        final String[] names = new String[segments];
        for (int s = 0; s < segments; s++) {
            names[s] = "mq/" + s + "/topic";
            store.create(names[s]);
        }
        final ByteBuf message = Unpooled.directBuffer(17 << 10, 17 << 10).writeZero(17 << 10);
        final SplittableRandom random = new SplittableRandom(14);
        long written = 0;
        long appends = 0;
        while (written < bytes) {
            final int length = 100 + random.nextInt((17 << 10) - 100 + 1);
            store.append(names[random.nextInt(segments)], message.slice(0, length));
            written += length;
            appends++;
        }
        message.release();
        final CacheStats stats = cache.stats();
        final long used = stats.usedBlockCount() * blockLength;
        final long lost = used - stats.storedBytes();
        System.out.printf(Locale.ROOT, "%,d segments, %,d appends, %,d B written: %,d entries, %,d B stored in %,d B of blocks; "
                + "unused in last blocks %,d B (%.1f%% of the blocks used, %,.0f B per entry, %,.0f B per segment; on a 2 GiB "
                + "cache %.1f%% of it)%n",
            segments, appends, written, stats.entryCount(), stats.storedBytes(), used, lost, 100.0 * lost / used,
            (double)lost / Math.max(1, stats.entryCount()), (double)lost / segments, 100.0 * lost / (2 * GIB));
    }

    /** @return the heap a built cache of {@code capacity} bytes holds: heap after GC with it, less before it. */
    private static long heapOf(final long capacity, final int blockLength, final int bufferLength) {
        final long before = usedHeapAfterGc();
        try (BlockCache cache = BlockCache.builder().capacity(capacity).blockLength(blockLength).bufferLength(bufferLength)
                 .registerMBean(false).build()) {
            final long with = usedHeapAfterGc();
            return cache.capacity() > 0 ? with - before : 0; // the cache is reachable until the heap is read

        }
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
