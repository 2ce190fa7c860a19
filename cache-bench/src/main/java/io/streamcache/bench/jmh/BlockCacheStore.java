package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;

/**
 * The block cache under benchmark: a key maps to an entry address through an {@code int[]}, the
 * way a read index holds addresses, so the measured path allocates nothing of its own.
 *
 * <p>Thread-safe for distinct keys (the block cache is, for distinct entries, and each key owns
 * one slot of the address array): threads sharing an instance must use disjoint keys, and an
 * address written by one thread is read by another only across a happens-before edge (JMH's
 * iteration barriers).
 */
final class BlockCacheStore implements ByteStore {
    /** Cache capacity for the raw benchmarks: holds every workload's live set without eviction. */
    static final long CAPACITY = 1L << 30;

    private final BlockCache cache;
    private final int[] addresses;

    BlockCacheStore(final int keyCount, final long capacity) {
        this(keyCount, capacity, BlockCache.Builder.BLOCK_LENGTH_DEFAULT, BlockCache.Builder.BUFFER_LENGTH_DEFAULT);
    }

    /**
     * @param blockLength  bytes per block (the default is 4 KB; 2 KB blocks hold a 10 KB entry in
     *                     five whole blocks instead of three with 2 KB left over).
     * @param bufferLength bytes per buffer: at most {@code blockLength^2 / 8} (block 0 holds the
     *                     metadata words of all its blocks).
     */
    BlockCacheStore(final int keyCount, final long capacity, final int blockLength, final int bufferLength) {
        this.cache = BlockCache.builder().capacity(capacity).blockLength(blockLength).bufferLength(bufferLength)
            .name("bench").registerMBean(false)
            // Committed at build, like the baselines' buffers, so no measured insert pays a first-touch page fault.
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER)).build();
        this.addresses = new int[keyCount];
    }

    /**
     * @param kind a store kind.
     * @return the block length a {@code blockcache-<N>k} kind names (N KiB, N a power of two in
     *         [1, 1024]), or 0 if {@code kind} is not of that form.
     */
    static int blockLengthOf(final String kind) {
        if (!kind.startsWith("blockcache-") || !kind.endsWith("k")) {
            return 0;
        }
        final String n = kind.substring("blockcache-".length(), kind.length() - 1);
        if (n.isEmpty() || n.length() > 4 || !n.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        final int kib = Integer.parseInt(n);
        return kib >= 1 && kib <= 1024 && Integer.bitCount(kib) == 1 ? kib << 10 : 0;
    }

    /**
     * @param blockLength bytes per block.
     * @return the buffer length the benchmarks pair with it: 2 MiB (the buffer of 4 KiB blocks),
     *         or the largest buffer whose block 0 holds the metadata words of all its blocks
     *         ({@code blockLength^2 / 8}) when that is smaller (512 KiB for 2 KiB blocks, 128 KiB
     *         for 1 KiB).
     */
    static int bufferLengthFor(final int blockLength) {
        return (int)Math.min(2 << 20, (long)blockLength * blockLength / Long.BYTES);
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        addresses[key] = cache.insert(data);
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        // The whole entry in one call: one check of the address (length then copyTo took two).
        return cache.copyTo(addresses[key], destination, 0);
    }

    @Override
    public void remove(final int key) {
        cache.delete(addresses[key]);
        addresses[key] = 0;
    }

    @Override
    public void close() {
        cache.close();
    }
}
