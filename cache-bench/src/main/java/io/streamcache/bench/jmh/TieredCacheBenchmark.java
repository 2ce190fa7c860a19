package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
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

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A tiered workload whose working set is 4x the DRAM tier: 32 segments whose tails
 * grow by 4 KB appends and whose heads are truncated, so that each keeps a window of
 * {@code 4 x dramMb / 32} MB; reads of 4 KB land at a distance from the tail drawn from a
 * power law (most near the tail, some far back: catch-up readers). A read that finds its bytes
 * evicted loads its 16 KB index entry back with {@code fill} from a preallocated buffer (a log
 * read stand-in). The manager's thread demotes DRAM's coldest entries into the slow tier,
 * evicts from the slow tier, and promotes entries read often from it.
 *
 * <p>{@code layout=tiered}: DRAM of {@code dramMb} in front of a mapped file on /dev/shm (or the
 * temporary directory) of {@code 3 x dramMb}; {@code layout=dram}: one DRAM tier of the same
 * total ({@code 4 x dramMb}), the baseline. Sampled: p50 / p99 of one operation (a read, and every
 * eighth operation an append too); {@code -prof gc} gives B/op, which the tiering adds nothing to
 * (compare the layouts: the read's Netty view wrappers and the fills' new index entries are the
 * same in both). At the end of each trial the benchmark prints the hit ratio per tier, the miss
 * ratio, and demotions and promotions per second (from the cache's and the manager's stats).
 */
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class TieredCacheBenchmark {
    private static final int SEGMENTS = 32;
    private static final int READ_LENGTH = 4096;
    private static final int ENTRY_LENGTH = 16 * 1024;
    private static final int SKEW_TABLE = 1 << 16;

    /** DRAM tier size in MB; the working set is 4x this. */
    @Param("32")
    public int dramMb;

    /** {@code tiered}: DRAM + 3x mapped file; {@code dram}: one DRAM tier of 4x. */
    @Param({"tiered", "dram"})
    public String layout;

    /** Reads from the slow tier before an entry is queued for promotion; 0 turns promotion off. */
    @Param("2")
    public int promoteAfterReads;

    /** The tier misses are filled into first (clamped to the last tier of the layout). */
    @Param("0")
    public int fillTier;

    private BlockCache cache;
    private SegmentStore store;
    private ByteBuf appendData;
    private ByteBuf fillData;
    private final String[] names = new String[SEGMENTS];
    private final long[] starts = new long[SEGMENTS];
    private final long[] ends = new long[SEGMENTS];
    /** Distance from the tail, in read-sized steps, of the reads: a power law. */
    private final int[] distances = new int[SKEW_TABLE];
    private final int[] segmentChoice = new int[SKEW_TABLE];
    private long window;
    private int next;
    private long operations;
    private long misses;
    private long startNanos;
    private long demotionsAtStart;
    private long promotionsAtStart;
    private long[] hitsAtStart;

    @Setup(Level.Trial)
    public void open() throws Exception {
        final long dram = (long) dramMb << 20;
        final BlockCache.Builder builder = BlockCache.builder().registerMBean(false).name("tiered-bench-" + layout);
        if (layout.equals("tiered")) {
            final Path shm = Paths.get("/dev/shm");
            final Path directory = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir"));
            builder.tier("dram", dram, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER))
                .tier("mapped", 3 * dram, MappedFileRegion.factory(directory.resolve("streamcache-tiered-bench-" + ProcessHandle.current().pid())));
        } else {
            builder.tier("dram", 4 * dram, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER));
        }
        cache = builder.build();
        store = SegmentStore.builder(cache).maxIndexEntryLength(ENTRY_LENGTH).fillTier(Math.min(fillTier, cache.tierCount() - 1))
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ofMillis(10))
                .promotion(promoteAfterReads, Duration.ofSeconds(1)))
            .build();
        appendData = Unpooled.directBuffer(READ_LENGTH, READ_LENGTH).writeZero(READ_LENGTH);
        fillData = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH).writeZero(ENTRY_LENGTH);
        window = 4 * dram / SEGMENTS;
        final Random random = new Random(42);
        final int steps = (int) (window / READ_LENGTH);
        for (int i = 0; i < SKEW_TABLE; i++) {
            // u^3: half of the reads within 1/8 of the window from the tail, a long tail of catch-up reads.
            final double u = random.nextDouble();
            distances[i] = (int) (steps * u * u * u);
            segmentChoice[i] = random.nextInt(SEGMENTS);
        }
        for (int s = 0; s < SEGMENTS; s++) {
            names[s] = "segment-" + s;
            store.create(names[s]);
            while (ends[s] < window) {
                append(s);
            }
        }
        store.cacheManager().evictNow();
        startNanos = System.nanoTime();
        demotionsAtStart = store.cacheManager().stats().tier(0).demotions();
        promotionsAtStart = store.cacheManager().stats().tier(0).promotions();
        final CacheStats stats = cache.stats();
        hitsAtStart = new long[stats.tiers().size()];
        for (int t = 0; t < hitsAtStart.length; t++) {
            hitsAtStart[t] = stats.tier(t).hits();
        }
    }

    private void append(final int s) {
        ends[s] = store.append(names[s], appendData) + READ_LENGTH;
        if (ends[s] - starts[s] > window + ENTRY_LENGTH * 4L) {
            starts[s] = ends[s] - window;
            store.truncate(names[s], starts[s]);
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        final double seconds = (System.nanoTime() - startNanos) / 1e9;
        final CacheStats stats = cache.stats();
        final CacheManagerStats manager = store.cacheManager().stats();
        final StringBuilder line = new StringBuilder();
        line.append(String.format("%n[tiered] layout=%s dramMb=%d promoteAfterReads=%d fillTier=%d ops=%d", layout, dramMb,
            promoteAfterReads, fillTier, operations));
        // Hits are views: a read that spans two index entries is two hits. Ratios are of views + misses.
        final long[] hits = new long[stats.tiers().size()];
        long lookups = misses;
        for (int t = 0; t < hits.length; t++) {
            hits[t] = stats.tier(t).hits() - hitsAtStart[t];
            lookups += hits[t];
        }
        for (int t = 0; t < hits.length; t++) {
            line.append(String.format(" %s-hits=%.1f%%", stats.tier(t).name(), 100.0 * hits[t] / Math.max(1, lookups)));
        }
        line.append(String.format(" misses=%.1f%% demotions/s=%.0f promotions/s=%.0f evictions=%d",
            100.0 * misses / Math.max(1, lookups), (manager.tier(0).demotions() - demotionsAtStart) / seconds,
            (manager.tier(0).promotions() - promotionsAtStart) / seconds, manager.evictions()));
        System.out.println(line);
        store.close();
        cache.close();
        appendData.release();
        fillData.release();
    }

    /**
     * One operation: a 4 KB read at a power-law distance from a segment's tail (a miss loads the
     * entry back), and every eighth operation a 4 KB append to that segment.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int read() {
        final int i = next++ & (SKEW_TABLE - 1);
        final int s = segmentChoice[i];
        operations++;
        if ((operations & 7) == 0) {
            append(s);
        }
        final long offset = Math.max(starts[s], ends[s] - (long) (distances[i] + 1) * READ_LENGTH);
        int length;
        ReadStatus status;
        try (ReadResult result = store.read(names[s], offset, READ_LENGTH)) {
            length = result.length();
            status = result.status();
        }
        if (status == ReadStatus.NOT_CACHED && length == 0) {
            misses++;
            final long entryStart = Math.max(starts[s], offset - offset % ENTRY_LENGTH);
            final int n = (int) Math.min(ENTRY_LENGTH, ends[s] - entryStart);
            try {
                store.fill(names[s], entryStart, fillData.slice(0, n));
            } catch (final CacheException e) {
                return 0;
            }
        }
        return length;
    }
}
