package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;

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
        // Committed at build, like the baselines' buffers, so no measured insert pays a first-touch page fault.
        this(keyCount, capacity, blockLength, bufferLength, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER));
    }

    BlockCacheStore(final int keyCount, final long capacity, final int blockLength, final int bufferLength, final MemoryRegionFactory region) {
        this.cache = BlockCache.builder().capacity(capacity).blockLength(blockLength).bufferLength(bufferLength)
            .name("bench").registerMBean(false).region(region).build();
        this.addresses = new int[keyCount];
    }

    /**
     * @param kind a store kind.
     * @return the block and buffer length a {@code blockcache-<N>k} kind names (blocks of N KiB,
     *         N a power of two in [1, 1024], buffers of {@link #bufferLengthFor}) or a
     *         {@code blockcache-<N>k-<M>k} kind (buffers of M KiB), or null if {@code kind} is not of
     *         that form. The cache checks the pair when it is built.
     */
    static int[] geometryOf(final String kind) {
        if (!kind.startsWith("blockcache-")) {
            return null;
        }
        final String[] parts = kind.substring("blockcache-".length()).split("-", -1);
        if (parts.length > 2) {
            return null;
        }
        final int block = kibOf(parts[0]) <= BlockCache.Builder.MAX_BLOCK_LENGTH ? kibOf(parts[0]) : 0;
        final int buffer = parts.length == 2 ? kibOf(parts[1]) : (block > 0 ? bufferLengthFor(block) : 0);
        return block > 0 && buffer > 0 ? new int[] {block, buffer} : null;
    }

    /** @return {@code n << 10} for a string {@code <n>k}, n a power of two in [1, 1048576]; else 0. */
    private static int kibOf(final String s) {
        if (!s.endsWith("k") || s.length() < 2 || s.length() > 8 || !s.chars().limit(s.length() - 1).allMatch(Character::isDigit)) {
            return 0;
        }
        final int kib = Integer.parseInt(s.substring(0, s.length() - 1));
        return kib >= 1 && kib <= (1 << 20) && Integer.bitCount(kib) == 1 ? kib << 10 : 0;
    }

    /**
     * @param blockLength bytes per block.
     * @return the buffer length the benchmarks pair with it: the cache's default for that block
     *         length ({@link BlockCache.Builder#defaultBufferLength}: the largest buffer whose block
     *         0 holds the metadata words of all its blocks, at most 2 MiB).
     */
    static int bufferLengthFor(final int blockLength) {
        return BlockCache.Builder.defaultBufferLength(blockLength);
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

    /** @return the block and buffer lengths of the cache underneath. */
    int[] geometry() {
        return new int[] {cache.blockLength(), cache.bufferLength()};
    }

    @Override
    public void close() {
        cache.close();
    }
}
