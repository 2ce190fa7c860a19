package io.streamcache.bench.scale;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;

import java.io.PrintStream;
import java.lang.ref.Reference;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Locale;

/**
 * Heap bytes per cached MB, measured alone: the Java heap in use after a full GC before and
 * after filling a cache, divided by the MB cached, for the block cache alone (10 KB entries,
 * their addresses in an {@code int[]} as a read index would hold them) and for a
 * {@link SegmentStore} without a log over {@code --segments} segments (1 KB appends until its
 * cache manager evicts). One JSON line per measure on standard output, with the heap of the
 * empty store per segment beside it (a segment costs heap whether it holds data or not). Single-threaded; one run
 * per process (the cache sizes of a scale run do not fit twice in memory).
 *
 * <pre>
 *   java -XX:MaxDirectMemorySize=17g -cp streamcache-bench.jar io.streamcache.bench.scale.HeapFootprint \
 *        --cache-size 16g --segments 1000 [--what cache|store|both]
 * </pre>
 */
public final class HeapFootprint {
    static final int ENTRY_LENGTH = 10 << 10;
    static final int EVENT_LENGTH = 1 << 10;
    private static final double MB = 1 << 20;

    private HeapFootprint() {
    }

    public static void main(final String[] args) {
        System.exit(run(args, System.out));
    }

    /** @return the exit code: 0, or 2 on bad flags. */
    static int run(final String[] args, final PrintStream out) {
        long cacheSize = 1L << 30;
        int segments = 1000;
        String what = "both";
        try {
            for (int i = 0; i < args.length; i++) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                final String value = args[i + 1];
                switch (args[i]) {
                    case "--cache-size": cacheSize = parseSize(value); i++; break;
                    case "--segments": segments = Integer.parseInt(value); i++; break;
                    case "--what": what = value; i++; break;
                    default: throw new IllegalArgumentException("unknown flag " + args[i]);
                }
            }
            if (segments < 1 || !("cache".equals(what) || "store".equals(what) || "both".equals(what))) {
                throw new IllegalArgumentException("--segments must be positive, --what cache|store|both");
            }
        } catch (final RuntimeException e) {
            out.println("heapfootprint: " + e.getMessage()
                + " (flags: --cache-size 1g --segments 1000 --what cache|store|both)");
            return 2;
        }
        // Once-only initialization (class statics, pools) must not count as the first measure's footprint.
        cache(8L << 20);
        store(8L << 20, 1);
        if (!"store".equals(what)) {
            out.println(cache(cacheSize));
        }
        if (!"cache".equals(what)) {
            out.println(store(cacheSize, segments));
        }
        return 0;
    }

    /** @return the JSON line of the block cache alone, filled to 97% of its blocks with 10 KB entries. */
    static String cache(final long cacheSize) {
        final long before = heapUsedAfterGc();
        final ByteBuf source = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH).writeZero(ENTRY_LENGTH);
        try (BlockCache cache = BlockCache.builder().capacity(cacheSize).name("footprint").registerMBean(false).build()) {
            final long empty = heapUsedAfterGc();
            final CacheStats stats = cache.stats();
            final long blocksPerEntry = (ENTRY_LENGTH + stats.blockLength() - 1) / stats.blockLength();
            final int[] addresses = new int[(int) (stats.blockCount() / blocksPerEntry * 0.97)];
            for (int i = 0; i < addresses.length; i++) {
                addresses[i] = cache.insert(source);
            }
            final long full = heapUsedAfterGc();
            final CacheStats end = cache.stats();
            // The addresses must still be reachable when the heap is measured.
            Reference.reachabilityFence(addresses);
            return json("cache", cacheSize, 0, end, before, empty, full, 16L + 4L * addresses.length);
        } finally {
            source.release();
        }
    }

    /** @return the JSON line of a store without a log over {@code segments} segments, filled until its manager evicts. */
    static String store(final long cacheSize, final int segments) {
        final long before = heapUsedAfterGc();
        final ByteBuf event = Unpooled.directBuffer(EVENT_LENGTH, EVENT_LENGTH).writeZero(EVENT_LENGTH);
        try (BlockCache cache = BlockCache.builder().capacity(cacheSize).name("footprint-store").registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).name("footprint")
                 .cacheManager(CacheManager.builder(cache).name("footprint").registerMBean(false)).build()) {
            final String[] names = new String[segments];
            for (int i = 0; i < segments; i++) {
                names[i] = "segment-" + i;
                store.create(names[i]);
            }
            final long empty = heapUsedAfterGc();
            final double target = store.cacheManager().targetUtilization() - 0.02;
            // BlockCache.stats() sums every buffer's free count (8,192 buffers at 16 GB): checked once per 1,024 appends.
            long appends = 0;
            for (int i = 0; (appends & 1023) != 0 || cache.stats().utilization() < target && store.cacheManager().stats().evictions() == 0;
                 i = (i + 1) % segments) {
                store.append(names[i], event);
                appends++;
            }
            final long full = heapUsedAfterGc();
            return json("store", cacheSize, segments, cache.stats(), before, empty, full, 0);
        } finally {
            event.release();
        }
    }

    private static String json(final String what, final long cacheSize, final int segments, final CacheStats stats, final long before,
                               final long empty, final long full, final long indexBytes) {
        final double cachedMB = stats.storedBytes() / MB;
        final long heap = full - before;
        return String.format(Locale.ROOT, "{\"what\": \"%s\", \"cacheSize\": %d, \"segments\": %d, \"cachedBytes\": %d, "
                + "\"entries\": %d, \"heapBefore\": %d, \"heapEmpty\": %d, \"heapFull\": %d, \"callerIndexBytes\": %d, "
                + "\"cacheUsedBytes\": %d, \"heapBytesPerCachedMB\": %.1f, \"heapBytesPerCachedMBWithoutCallerIndex\": %.1f, "
                + "\"heapBytesPerSegmentEmpty\": %.1f}",
            what, cacheSize, segments, stats.storedBytes(), stats.entryCount(), before, empty, full, indexBytes, stats.usedBytes(),
            cachedMB == 0 ? 0 : heap / cachedMB, cachedMB == 0 ? 0 : (heap - indexBytes) / cachedMB,
            segments == 0 ? 0 : (empty - before) / (double) segments);
    }

    static long parseSize(final String size) {
        final String v = size.trim().toLowerCase(Locale.ROOT);
        final char last = v.charAt(v.length() - 1);
        final int shift = last == 'k' ? 10 : last == 'm' ? 20 : last == 'g' ? 30 : 0;
        return Long.parseLong(shift == 0 ? v : v.substring(0, v.length() - 1)) << shift;
    }

    /** @return heap bytes in use after two full collections. */
    static long heapUsedAfterGc() {
        final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }
}
