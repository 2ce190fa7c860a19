package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MappedFileRegion;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The operations the raw cache benchmarks run, so that the block cache, the peers and the
 * physical limit run the same workload code. Keys are ints in {@code [0, keyCount)}.
 *
 * <p>Concurrency: each implementation says whether it is thread-safe. The thread-safe ones
 * ({@code blockcache}, {@code concurrenthashmap}, {@code caffeine}, {@code ohc}, {@code rocksdb};
 * see {@link #isThreadSafe(String)}) may be shared by several threads as long as no two threads
 * use the same key at once; the others ({@code hashmap}, {@code memcpy}, {@code memcpy-metadata}) take one instance per
 * thread. The {@link ByteBuf}s passed in belong to the calling thread.
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
     * @param kind         {@code blockcache} (the cache's default block and buffer lengths), {@code blockcache-16m} (the
     *                     same with a 16 MB capacity), {@code blockcache-<N>k} (blocks of N KiB, a power of two from 1 to
     *                     1,024, in buffers of {@link BlockCacheStore#bufferLengthFor}: {@code blockcache-2k},
     *                     {@code blockcache-4k}, ...), {@code blockcache-<N>k-<M>k} (the same in buffers of M KiB:
     *                     {@code blockcache-4k-512k}), {@code hashmap}, {@code concurrenthashmap}, {@code memcpy},
     *                     {@code memcpy-blocks} (memcpy with each slot rounded up to whole 4 KB blocks, the
     *                     cache's layout), {@code memcpy-metadata} (memcpy plus an out-of-line length word per entry),
     *                     {@code blockcache-mapped}, {@code memcpy-mapped} and {@code memcpy-blocks-mapped} (the
     *                     defaults, memcpy and memcpy-blocks in a file mapped from {@link #mappedDir()}: huge pages against 4 KB ones),
     *                     {@code memcpy-stride-<N>} (memcpy with slots N bytes apart, N at least the entry length:
     *                     {@code memcpy-stride-12288} is {@code memcpy-blocks} for 10 KB entries), {@code caffeine},
     *                     {@code ohc} or {@code rocksdb}.
     * @param keyCount     how many distinct keys the workload uses.
     * @param entryLength  bytes per entry.
     * @param slotCount    for {@code memcpy}: how many entry-sized slots its working set holds.
     */
    /** Prefix of the {@code memcpy-stride-<bytes>} kinds. */
    String MEMCPY_STRIDE = "memcpy-stride-";

    /**
     * @return where the {@code -mapped} kinds map their files: the system property
     *         {@code streamcache.bench.mappedDir}, by default {@code /dev/shm}.
     */
    static Path mappedDir() {
        return Path.of(System.getProperty("streamcache.bench.mappedDir", "/dev/shm"));
    }

    static ByteStore create(final String kind, final int keyCount, final int entryLength, final int slotCount) {
        switch (kind) {
            case "blockcache":
                return new BlockCacheStore(keyCount, BlockCacheStore.CAPACITY);
            case "blockcache-16m":
                // A cache no larger than a hot working set: its memory stays inside the CPU caches.
                return new BlockCacheStore(keyCount, 16L << 20);
            case "hashmap":
                return new HashMapStore(new HashMap<>());
            case "concurrenthashmap":
                return new HashMapStore(new ConcurrentHashMap<>());
            case "memcpy":
                return new MemcpyStore(entryLength, slotCount);
            case "memcpy-blocks":
                // The cache's layout of 4 KB blocks (entries rounded up to whole blocks), no bookkeeping.
                return new MemcpyStore(entryLength, slotCount, (entryLength + 4095) & -4096);
            case "blockcache-mapped":
                // The cache's defaults in a file mapped from mappedDir() (on a tmpfs mounted with huge=always
                // its pages are 2 MB, the direct regions' are 4 KB; on /dev/shm 4 KB), sized to the workload's
                // keys in whole 4 KB blocks plus a quarter, at least 16 MB: the file takes its whole length.
                final long mappedCapacity = Math.max(16L << 20, ((long)keyCount * ((entryLength + 4095) & -4096) * 5 / 4 + (2L << 20) - 1) & -(2L << 20));
                return new BlockCacheStore(keyCount, mappedCapacity, BlockCache.Builder.BLOCK_LENGTH_DEFAULT, BlockCache.Builder.BUFFER_LENGTH_DEFAULT,
                    MappedFileRegion.factory(mappedDir().resolve("blockcache-" + ProcessHandle.current().pid())));
            case "memcpy-mapped":
                // memcpy in a file mapped from mappedDir().
                return new MemcpyStore(entryLength, slotCount, entryLength, mappedDir().resolve("memcpy-" + ProcessHandle.current().pid()));
            case "memcpy-blocks-mapped":
                // memcpy-blocks in a file mapped from mappedDir(): the same pages as blockcache-mapped.
                return new MemcpyStore(entryLength, slotCount, (entryLength + 4095) & -4096,
                    mappedDir().resolve("memcpy-" + ProcessHandle.current().pid()));
            case "memcpy-metadata":
                return new MemcpyMetadataStore(entryLength, slotCount);
            case "caffeine":
                return new CaffeineStore(BlockCacheStore.CAPACITY);
            case "ohc":
                return new OhcStore(BlockCacheStore.CAPACITY);
            case "rocksdb":
                return new RocksDbStore();
            default:
                if (kind.startsWith(MEMCPY_STRIDE)) {
                    // memcpy with slots this many bytes apart: which spacing, not which bookkeeping, costs.
                    return new MemcpyStore(entryLength, slotCount, Integer.parseInt(kind.substring(MEMCPY_STRIDE.length())));
                }
                final int[] geometry = BlockCacheStore.geometryOf(kind);
                if (geometry != null) {
                    return new BlockCacheStore(keyCount, BlockCacheStore.CAPACITY, geometry[0], geometry[1]);
                }
                throw new IllegalArgumentException("kind=" + kind + " is not one of blockcache, blockcache-16m, blockcache-<N>k[-<M>k], hashmap, "
                    + "concurrenthashmap, memcpy, memcpy-blocks, memcpy-metadata, memcpy-stride-<N>, caffeine, ohc, rocksdb");
        }
    }

    /**
     * @return whether one store of {@code kind} may be shared by several threads (on distinct keys).
     */
    static boolean isThreadSafe(final String kind) {
        switch (kind) {
            case "blockcache":
            case "blockcache-16m":
            case "concurrenthashmap":
            case "caffeine":
            case "ohc":
            case "rocksdb":
                return true;
            default:
                return BlockCacheStore.geometryOf(kind) != null;
        }
    }
}
