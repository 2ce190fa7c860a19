package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * How the cost of one operation grows with the work the cache holds (docs/benchmarks.md, "Scale"):
 * <ul>
 *   <li>the block cache alone, full (97% of its blocks in 10 KB entries), at a
 *       {@code cacheSize}: {@link #cacheReplace} deletes a random entry and inserts a new one in
 *       its place (the steady state of a full cache: an insert needs a delete), {@link #cacheGet}
 *       copies a random entry out;</li>
 *   <li>a {@link SegmentStore} without a log (the in-memory path: read index, cache manager,
 *       block cache; the log's cost does not depend on the cache size) over {@code segments}
 *       segments, its cache filled until the manager evicts: {@link #storeAppend} appends a 1 KB
 *       event to a random segment (eviction and, every {@code cacheSize / segments} bytes of a
 *       segment, its truncation included, amortized), {@link #storeTailRead} reads the last event
 *       of a random segment (zero-copy views, released).</li>
 * </ul>
 * Keys and segments are random over everything cached, so the working set is the whole cache.
 *
 * <p>The parameters default to a small size (256 MB, 10 segments) so the CI smoke run (every
 * benchmark, one short iteration) stays cheap; the scale matrix passes
 * {@code -p cacheSize=1g,4g,16g -p segments=10,1000,100000} (see {@code docs/benchmarks/scale.sh}).
 * Every fork may take a 16 GB direct cache: {@code -XX:MaxDirectMemorySize=17g} is a limit, not
 * a reservation. Average time per operation, single-threaded; each trial fills its cache in
 * setup, outside the measurement. The heap is pre-touched: the fill allocates little heap, so
 * without it the first seconds of measurement fault in the young generation's pages, slowly
 * once the process holds many gigabytes (on this VM ~1 us per tail read for ~6 s at 8 GB),
 * which once passed for a read cost growing with the cache size.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:MaxDirectMemorySize=17g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ScaleBenchmark {
    /** Entry length of the cache benchmarks: Pravega's 10 KB. */
    public static final int ENTRY_LENGTH = 10 << 10;
    /** Event length of the segment-store benchmarks. */
    public static final int EVENT_LENGTH = 1 << 10;
    /** Most bytes per append while a store fills, before the measurement. */
    static final int FILL_CHUNK_LENGTH = 16 << 10;
    /** Fraction of the cache's entry slots the cache benchmarks fill. */
    static final double FILL = 0.97;

    /** The cache size, shared by both kinds of state. */
    @State(Scope.Benchmark)
    public static class Size {
        /** Capacity: 256m, 1g, 4g, 16g (k, m, g suffixes, powers of two). */
        @Param({"256m"})
        public String cacheSize;

        /**
         * Where the cache's memory is: {@code direct} (the default), or {@code mapped:<file>} for a
         * shared mapped file, e.g. {@code mapped:/mnt/huge/scale} on a hugetlbfs mount to back the
         * cache with huge pages.
         */
        @Param({"direct"})
        public String region;

        long bytes() {
            return parseSize(cacheSize);
        }

        BlockCache.Builder builder() {
            final BlockCache.Builder builder = BlockCache.builder().capacity(bytes()).registerMBean(false);
            if (region.startsWith("mapped:")) {
                builder.region(MappedFileRegion.factory(Path.of(region.substring("mapped:".length()))));
            } else if (region.equals("direct")) {
                builder.region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER)); // no first-touch faults in the fill
            } else {
                throw new IllegalArgumentException("region=" + region + " is neither direct nor mapped:<file>");
            }
            return builder;
        }
    }

    /** A full block cache and the addresses of its entries, in an {@code int[]} the way a read index holds them. */
    @State(Scope.Benchmark)
    public static class FullCache {
        BlockCache cache;
        int[] addresses;
        ByteBuf source;
        ByteBuf destination;
        long seed = 0x9E3779B97F4A7C15L;

        @Setup(Level.Trial)
        public void open(final Size size) {
            cache = size.builder().name("scale").build();
            final CacheStats stats = cache.stats();
            final long blocksPerEntry = (ENTRY_LENGTH + stats.blockLength() - 1) / stats.blockLength();
            final int count = (int) (stats.blockCount() / blocksPerEntry * FILL);
            source = BlockCacheBenchmark.sourceOf(ENTRY_LENGTH, 11);
            destination = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH);
            addresses = new int[count];
            for (int i = 0; i < count; i++) {
                addresses[i] = cache.insert(source);
            }
            System.out.printf(Locale.ROOT, "%n[scale] cache %s: %,d entries of %d bytes, utilization %.1f%%%n", size.cacheSize, count,
                ENTRY_LENGTH, cache.stats().utilization() * 100);
        }

        @TearDown(Level.Trial)
        public void close() {
            cache.close();
            source.release();
            destination.release();
        }

        int next(final int bound) {
            seed = xorshift(seed);
            return (int) (((seed * 0x2545F4914F6CDD1DL) >>> 33) % bound);
        }
    }

    /** A segment store over {@code segments} segments whose cache is full (its manager evicting). */
    @State(Scope.Benchmark)
    public static class FullStore {
        @Param({"10"})
        public int segments;

        /**
         * Whether appends truncate their segment behind the bytes it keeps (about the cache's
         * share of each segment), as a broker's retention would: with false, evicted entries stay
         * in the read index as placeholders, coalesced so that each segment holds about one per
         * cached entry (before coalescing the index grew with every byte appended).
         */
        @Param({"true"})
        public boolean truncate;

        BlockCache cache;
        SegmentStore store;
        String[] names;
        long[] lengths;
        long[] truncatedTo;
        long keep;
        ByteBuf event;
        long seed = 0x2545F4914F6CDD1DL;
        long reads;
        long hits;

        @Setup(Level.Trial)
        public void open(final Size size) {
            cache = size.builder().name("scale-store").build();
            store = SegmentStore.builder(cache).name("scale")
                .cacheManager(CacheManager.builder(cache).name("scale").registerMBean(false))
                .build();
            names = new String[segments];
            lengths = new long[segments];
            truncatedTo = new long[segments];
            keep = Math.max(EVENT_LENGTH, size.bytes() / segments);
            for (int i = 0; i < segments; i++) {
                names[i] = "segment-" + i;
                store.create(names[i]);
            }
            event = BlockCacheBenchmark.sourceOf(EVENT_LENGTH, 13);
            // The fill appends 16 KB at a time (16 times fewer calls: a 16 GB store fills in seconds); the entries grow
            // in place the same way. Round robin until the manager evicts: the cache is in its steady state.
            // Small enough that one round covers every segment long before the cache is full.
            final int chunkLength = (int) Math.max(EVENT_LENGTH, Math.min(FILL_CHUNK_LENGTH, size.bytes() / segments / 8));
            final ByteBuf chunk = BlockCacheBenchmark.sourceOf(chunkLength, 17);
            final double full = store.cacheManager().targetUtilization() - 0.02;
            long appends = 0;
            // BlockCache.stats() sums every buffer's free count (8,192 buffers at 16 GB): checked once per 1,024 appends.
            for (int i = 0; (appends & 1023) != 0 || cache.stats().utilization() < full && store.cacheManager().stats().evictions() == 0;
                 i = (i + 1) % segments) {
                lengths[i] = store.append(names[i], chunk) + chunkLength;
                appends++;
            }
            chunk.release();
            System.out.printf(Locale.ROOT, "%n[scale] store %s, %,d segments: %,d appends of %d bytes, utilization %.1f%%%n",
                size.cacheSize, segments, appends, chunkLength, cache.stats().utilization() * 100);
        }

        @TearDown(Level.Trial)
        public void close() {
            System.out.printf(Locale.ROOT, "%n[scale] store: %,d evictions, tail reads served from the cache: %,d of %,d%n",
                store.cacheManager().stats().evictions(), hits, reads);
            store.close();
            cache.close();
            event.release();
        }

        int next(final int bound) {
            seed = xorshift(seed);
            return (int) (((seed * 0x2545F4914F6CDD1DL) >>> 33) % bound);
        }

        /** Appends an event to segment {@code i}; truncates it to {@link #keep} bytes once it holds twice that. */
        long append(final int i) {
            final long offset = store.append(names[i], event);
            final long length = offset + EVENT_LENGTH;
            lengths[i] = length;
            if (truncate && length - truncatedTo[i] >= 2 * keep) {
                store.truncate(names[i], length - keep);
                truncatedTo[i] = length - keep;
            }
            return offset;
        }
    }

    static long xorshift(final long x) {
        long s = x;
        s ^= s >>> 12;
        s ^= s << 25;
        s ^= s >>> 27;
        return s;
    }

    /** Parses {@code 256m}, {@code 1g}, {@code 512k} or plain bytes. */
    static long parseSize(final String size) {
        final String v = size.trim().toLowerCase(Locale.ROOT);
        final char last = v.charAt(v.length() - 1);
        final int shift = last == 'k' ? 10 : last == 'm' ? 20 : last == 'g' ? 30 : 0;
        return Long.parseLong(shift == 0 ? v : v.substring(0, v.length() - 1)) << shift;
    }

    /** Full cache: delete a random entry, insert a new 10 KB one in its place. */
    @Benchmark
    public int cacheReplace(final FullCache c) {
        final int i = c.next(c.addresses.length);
        c.cache.delete(c.addresses[i]);
        final int address = c.cache.insert(c.source);
        c.addresses[i] = address;
        return address;
    }

    /** Full cache: copy a random 10 KB entry out. */
    @Benchmark
    public int cacheGet(final FullCache c) {
        final int address = c.addresses[c.next(c.addresses.length)];
        final int length = c.cache.length(address);
        c.cache.copyTo(address, 0, c.destination, 0, length);
        return length;
    }

    /** Full store: append a 1 KB event to a random segment (the manager evicts as needed; truncation amortized). */
    @Benchmark
    public long storeAppend(final FullStore s) {
        return s.append(s.next(s.segments));
    }

    /** Full store: read the last event of a random segment (a hit unless the manager evicted it). */
    @Benchmark
    public int storeTailRead(final FullStore s) {
        final int i = s.next(s.segments);
        s.reads++;
        try (ReadResult result = s.store.read(s.names[i], Math.max(0, s.lengths[i] - EVENT_LENGTH), EVENT_LENGTH)) {
            final int length = result.length();
            if (length > 0) {
                s.hits++;
            }
            return length;
        }
    }
}
