package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

/**
 * The operations the raw cache benchmarks run, so that the block cache, the peers and the
 * physical limit run the same workload code. Keys are ints in {@code [0, keyCount)}. Not
 * thread-safe: one instance per benchmark thread.
 */
interface ByteStore extends AutoCloseable {
    /**
     * Stores a copy of the readable bytes of {@code data} under {@code key} (absent before).
     */
    void put(int key, ByteBuf data);

    /**
     * Copies the entry of {@code key} into {@code destination} from index 0.
     *
     * @return the entry's length.
     */
    int get(int key, ByteBuf destination);

    /**
     * Removes the entry of {@code key} (present before).
     */
    void remove(int key);

    @Override
    void close();

    /**
     * @param kind         {@code blockcache}, {@code hashmap} or {@code memcpy}.
     * @param keyCount     how many distinct keys the workload uses.
     * @param entryLength  bytes per entry.
     * @param slotCount    for {@code memcpy}: how many entry-sized slots its working set holds.
     */
    static ByteStore create(final String kind, final int keyCount, final int entryLength, final int slotCount) {
        switch (kind) {
            case "blockcache":
                return new BlockCacheStore(keyCount, BlockCacheStore.CAPACITY);
            case "hashmap":
                return new HashMapStore();
            case "memcpy":
                return new MemcpyStore(entryLength, slotCount);
            default:
                throw new IllegalArgumentException("kind=" + kind + " is not one of blockcache, hashmap, memcpy");
        }
    }
}
