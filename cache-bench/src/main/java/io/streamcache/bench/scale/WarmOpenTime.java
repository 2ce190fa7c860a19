package io.streamcache.bench.scale;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.WarmRestoreStats;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * The time to reopen a durable store whose cache restarts warm, against a cold open of the same
 * log, for a cache of a given size.
 *
 * <pre>
 *   java -cp streamcache-bench.jar io.streamcache.bench.scale.WarmOpenTime --region /dev/shm/warm-region \
 *        --log /var/tmp/warm-log [--cache 4g] [--segments 1000] [--append 64k] [--repeats 3] \
 *        [--kinds warm,direct,mapped]
 * </pre>
 * Fill: a store over a cache of {@code --cache} bytes in a persistent mapped-file region at
 * {@code --region}, with its warm catalog in the log directory, appends {@code --append}-byte
 * records round-robin to {@code --segments} segments (durability NEVER: the page cache holds the
 * log, which is what a clean close leaves anyway) until the log holds as much as the cache, then
 * closes cleanly, and {@code sync} writes the dirty pages back. Then, {@code --repeats} times each
 * (warm, then cold direct memory, then cold mapped file), and timed from the cache's
 * {@code build()} to the store's {@code build()} returning:
 * <ul>
 *   <li><b>warm</b>: the same region and catalog; the cache adopts (catalog, chains, a digest of
 *       every cached byte, free lists), the store recovers the log and indexes the entries; then
 *       a clean close, so the next repeat is warm again;</li>
 *   <li><b>cold, mapped file</b>: the region file and catalog removed first, so the region is
 *       created and zero-filled, as a mapped-file cache opens today; the store recovers the log,
 *       every byte a NOT_CACHED gap;</li>
 *   <li><b>cold, direct memory</b>: the default region (committed lazily), same recovery.</li>
 * </ul>
 * {@code --kinds} leaves out the cold opens not named (a cold direct-memory cache commits as much
 * RAM as it reads back). A cold open is followed by reading back through the log, per segment, the tail bytes the warm
 * open restored (what it takes a cold store to hold what the warm one holds at once); that time
 * is printed apart. Prints each time and the median; the region and log are removed at the end.
 */
public final class WarmOpenTime {
    private WarmOpenTime() {
    }

    public static void main(final String[] args) throws Exception {
        Path region = null;
        Path log = null;
        long capacity = 4L << 30;
        int segments = 1000;
        int append = 64 << 10;
        int repeats = 3;
        String kinds = "warm,direct,mapped";
        for (int i = 0; i + 1 < args.length; i += 2) {
            final String v = args[i + 1];
            switch (args[i]) {
                case "--region" -> region = Path.of(v);
                case "--log" -> log = Path.of(v);
                case "--cache" -> capacity = OpenTime.size(v);
                case "--segments" -> segments = Integer.parseInt(v);
                case "--append" -> append = (int) OpenTime.size(v);
                case "--repeats" -> repeats = Integer.parseInt(v);
                case "--kinds" -> kinds = v;
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        if (region == null || log == null) {
            throw new IllegalArgumentException("--region FILE and --log DIR are required (both are removed)");
        }
        delete(region);
        delete(log);
        final Path catalog = log.resolve("warm-catalog");
        try {
            final long start = System.nanoTime();
            final long written = fill(region, catalog, log, capacity, segments, append);
            System.out.printf(Locale.ROOT, "fill: %d MB in %d segments, %.1f s%n", written >> 20, segments,
                (System.nanoTime() - start) / 1e9);
            // The fill's dirty pages written back first, so that the first opens do not pay for them.
            new ProcessBuilder("sync").inheritIO().start().waitFor();
            final List<Long> warm = new ArrayList<>();
            final List<Long> coldDirect = new ArrayList<>();
            // Warm first, each reopening what the last one closed; not alternated with cold opens: a
            // cold store opening the log bumps its writer epoch, and the catalog is then another
            // writer's (IDENTITY). The warm opens tell the cold ones how much to read back.
            for (int r = 0; r < repeats; r++) {
                warm.add(open("warm", MappedFileRegion.persistent(region), catalog, log, capacity));
            }
            for (int r = 0; r < repeats && kinds.contains("direct"); r++) {
                coldDirect.add(open("cold, direct memory", DirectMemoryRegion.factory(), null, log, capacity));
            }
            final List<Long> coldMapped = new ArrayList<>();
            for (int r = 0; r < repeats && kinds.contains("mapped"); r++) {
                delete(region);
                Files.deleteIfExists(catalog);
                coldMapped.add(open("cold, mapped file", MappedFileRegion.persistent(region), catalog, log, capacity));
            }
            System.out.printf(Locale.ROOT, "median ms: warm %d, cold mapped file %d, cold direct memory %d (cache %d MB)%n",
                median(warm), median(coldMapped), median(coldDirect), capacity >> 20);
        } finally {
            delete(region);
            delete(log);
        }
    }

    private static LogConfig logConfig(final Path log) {
        return LogConfig.builder(log).fileLength(256L << 20).batchLength(1 << 20).durability(DurabilityPolicy.NEVER)
            .registerMBeans(false).build();
    }

    private static BlockCache cache(final MemoryRegionFactory region, final Path catalog, final long capacity) {
        final BlockCache.Builder builder = BlockCache.builder().capacity(capacity).region(region).registerMBean(false);
        return catalog != null ? builder.warmRestart(catalog).build() : builder.build();
    }

    private static long fill(final Path region, final Path catalog, final Path log, final long capacity, final int segments,
                             final int append) {
        final SplittableRandom random = new SplittableRandom(16);
        final byte[] bytes = new byte[append];
        random.nextBytes(bytes);
        final ByteBuf data = Unpooled.wrappedBuffer(bytes);
        long written = 0;
        try (BlockCache cache = cache(MappedFileRegion.persistent(region), catalog, capacity);
             SegmentStore store = SegmentStore.builder(cache).log(logConfig(log)).build()) {
            for (int s = 0; s < segments; s++) {
                store.create("segment-" + s);
            }
            // 64 appends in flight: the fill is not what is measured.
            final java.util.ArrayDeque<java.util.concurrent.CompletableFuture<Long>> inFlight = new java.util.ArrayDeque<>();
            for (int i = 0; written < capacity; i++) {
                inFlight.add(store.appendAsync("segment-" + (i % segments), data.duplicate()));
                written += append;
                if (inFlight.size() >= 64) {
                    inFlight.poll().join();
                }
            }
            inFlight.forEach(java.util.concurrent.CompletableFuture::join);
            System.out.printf(Locale.ROOT, "filled: cache %s%n", cache.stats());
        }
        return written;
    }

    /** Bytes per segment the last warm open restored: what a cold open reads back to be as warm. */
    private static long restoredPerSegment;

    private static long open(final String what, final MemoryRegionFactory region, final Path catalog, final Path log,
                             final long capacity) throws Exception {
        final long start = System.nanoTime();
        try (BlockCache cache = cache(region, catalog, capacity)) {
            final long cacheBuilt = System.nanoTime();
            try (SegmentStore store = SegmentStore.builder(cache).log(logConfig(log)).build()) {
                final long end = System.nanoTime();
                final long ms = (end - start) / 1_000_000;
                final WarmRestoreStats stats = store.warmRestore();
                if (stats.warm()) {
                    restoredPerSegment = stats.restoredBytes() / Math.max(1, store.segmentCount());
                }
                // A cold store reads back through the log what the warm one restored: the tail of each segment.
                String refill = "";
                if (!stats.warm() && restoredPerSegment > 0) {
                    final long refillStart = System.nanoTime();
                    long bytes = 0;
                    for (final String name : store.segmentNames()) {
                        final long length = store.info(name).length();
                        long at = Math.max(0, length - restoredPerSegment);
                        while (at < length) {
                            try (io.streamcache.segmentstore.ReadResult result = store.readThrough(name, at,
                                (int) Math.min(1 << 20, length - at)).get()) {
                                at += result.length();
                                bytes += result.length();
                            }
                        }
                    }
                    refill = String.format(Locale.ROOT, "; then %d ms to read the same %d MB back through the log",
                        (System.nanoTime() - refillStart) / 1_000_000, bytes >> 20);
                }
                System.out.printf(Locale.ROOT, "%-20s %6d ms (cache %d ms, store %d ms)  restored %d entries, %d MB (adoption %d ms,"
                        + " indexing %d ms)%s%s%n", what, ms, (cacheBuilt - start) / 1_000_000, (end - cacheBuilt) / 1_000_000,
                    stats.restoredEntries(), stats.restoredBytes() >> 20, stats.cacheMillis(), stats.attachMillis(),
                    stats.warm() || !stats.enabled() ? "" : " (cold: " + stats.coldReason() + ")", refill);
                return ms;
            }
        }
    }

    private static long median(final List<Long> values) {
        if (values.isEmpty()) {
            return -1;
        }
        final List<Long> sorted = new ArrayList<>(values);
        sorted.sort(Comparator.naturalOrder());
        return sorted.get(sorted.size() / 2);
    }

    private static void delete(final Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            for (final Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
