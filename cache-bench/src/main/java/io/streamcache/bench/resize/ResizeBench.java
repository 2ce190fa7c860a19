package io.streamcache.bench.resize;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a resize costs a running store: appenders and a reader run on a store (no log: the cache
 * path alone) over a cache of {@code --max} MB, while the main thread shrinks the tier by
 * {@code --step} MB through the cache manager and grows it back, {@code --rounds} times, a
 * second apart. Prints each shrink's and grow's duration, the append throughput and latency
 * while a resize runs and while none does, and the process's resident set with the cache full
 * at its maximum, after a shrink, and after the grow and refill.
 *
 * <pre>
 *   java -jar streamcache-bench.jar resize [--region direct|eager|mapped] [--max 1024] [--step 256]
 *        [--rounds 5] [--appenders 2] [--append 1024] [--dir /dev/shm]
 * </pre>
 * Set {@code MALLOC_MMAP_THRESHOLD_=1048576} in the environment to see a direct region give its
 * memory back at once (see {@code docs/resize.md}).
 */
public final class ResizeBench {
    private static final long MB = 1 << 20;

    private ResizeBench() {
    }

    public static int run(final String[] args, final PrintStream out) throws Exception {
        String region = "direct";
        long max = 1024;
        long step = 256;
        int rounds = 5;
        int appenders = 2;
        int appendLength = 1024;
        Path dir = Path.of("/dev/shm");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--region" -> region = args[++i];
                case "--max" -> max = Long.parseLong(args[++i]);
                case "--step" -> step = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--appenders" -> appenders = Integer.parseInt(args[++i]);
                case "--append" -> appendLength = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                case "--help", "-h" -> {
                    out.println("resize [--region direct|eager|mapped] [--max MB] [--step MB] [--rounds N] [--appenders N] "
                        + "[--append BYTES] [--dir DIR]");
                    return 0;
                }
                default -> {
                    System.err.println("unknown flag " + args[i]);
                    return 2;
                }
            }
        }
        final Path file = dir.resolve("streamcache-resize-bench-" + ProcessHandle.current().pid());
        final MemoryRegionFactory factory = switch (region) {
            case "direct" -> DirectMemoryRegion.factory();
            case "eager" -> DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER);
            case "mapped" -> MappedFileRegion.factory(file);
            default -> throw new IllegalArgumentException("--region " + region);
        };
        out.printf(Locale.ROOT, "resize bench: region=%s max=%d MB step=%d MB rounds=%d appenders=%d append=%d B MALLOC_MMAP_THRESHOLD_=%s%n",
            region, max, step, rounds, appenders, appendLength, System.getenv("MALLOC_MMAP_THRESHOLD_"));
        try (BlockCache cache = BlockCache.builder().capacity(max * MB).maxCapacity(max * MB).region(factory).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).cacheManager(CacheManager.builder(cache).registerMBean(false)
                 .generationPeriod(Duration.ofMillis(100)).targetUtilization(0.9)).build()) {
            final CacheManager manager = store.cacheManager();
            final int segments = 64;
            final AtomicLongArray lengths = new AtomicLongArray(segments);
            for (int s = 0; s < segments; s++) {
                store.create("s" + s);
            }
            final AtomicBoolean resizing = new AtomicBoolean();
            final AtomicBoolean stop = new AtomicBoolean();
            final Recorder during = new Recorder(3);
            final Recorder outside = new Recorder(3);
            final List<Thread> threads = new ArrayList<>();
            final byte[] payload = new byte[appendLength];
            Arrays.fill(payload, (byte)7);
            final AtomicLongArray appended = new AtomicLongArray(2);
            final int appenderCount = appenders;
            for (int a = 0; a < appenders; a++) {
                final int first = a;
                threads.add(new Thread(() -> {
                    final ByteBuf data = Unpooled.wrappedBuffer(payload);
                    int s = first;
                    while (!stop.get()) {
                        final boolean phase = resizing.get();
                        final long start = System.nanoTime();
                        store.append("s" + s, data.duplicate());
                        final long took = System.nanoTime() - start;
                        (phase ? during : outside).recordValue(took);
                        appended.addAndGet(phase ? 1 : 0, payload.length);
                        lengths.addAndGet(s, payload.length);
                        s = (s + appenderCount) % segments;
                    }
                }, "appender-" + a));
            }
            final java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
            threads.add(new Thread(() -> {
                int s = 0;
                while (!stop.get()) {
                    final long length = lengths.get(s);
                    if (length > 65536) {
                        try (ReadResult result = store.read("s" + s, length - 65536, 65536)) {
                            if (result.data().isReadable()) {
                                result.data().getByte(0);
                                reads.incrementAndGet();
                            }
                        }
                    }
                    s = (s + 1) % segments;
                }
            }, "reader"));
            // Fill the cache to its maximum first, so that its pages are committed.
            final long fillStart = System.nanoTime();
            threads.forEach(Thread::start);
            while (cache.stats().utilization() < 0.85 && System.nanoTime() - fillStart < 120_000_000_000L) {
                Thread.sleep(50);
            }
            out.printf(Locale.ROOT, "filled: utilization=%.2f rss=%d MB direct=%d MB%n", cache.stats().utilization(), rss() / MB,
                DirectMemoryRegion.usedDirectMemory() / MB);
            final List<Long> shrinkMs = new ArrayList<>();
            final List<Long> growMs = new ArrayList<>();
            long duringNanos = 0;
            final long benchStart = System.nanoTime();
            outside.reset();
            appended.set(0, 0);
            appended.set(1, 0);
            for (int round = 0; round < rounds; round++) {
                Thread.sleep(1000);
                final long rssFull = rss();
                resizing.set(true);
                long t0 = System.nanoTime();
                final long reached = manager.resizeTier(0, (max - step) * MB, Duration.ofSeconds(30));
                long t1 = System.nanoTime();
                resizing.set(false);
                duringNanos += t1 - t0;
                shrinkMs.add((t1 - t0) / 1_000_000);
                Thread.sleep(200);
                final long rssShrunk = rss();
                Thread.sleep(800);
                resizing.set(true);
                t0 = System.nanoTime();
                manager.resizeTier(0, max * MB);
                t1 = System.nanoTime();
                resizing.set(false);
                duringNanos += t1 - t0;
                growMs.add((t1 - t0) / 1_000_000);
                out.printf(Locale.ROOT, "round %d: shrink to %d MB in %d ms, rss %d -> %d MB (%+d); grow in %d ms; moved=%d evicted=%d%n",
                    round, reached / MB, shrinkMs.get(round), rssFull / MB, rssShrunk / MB, (rssShrunk - rssFull) / MB, growMs.get(round),
                    manager.resizeStats().relocatedEntries(), manager.resizeStats().evictedEntries());
            }
            final long totalNanos = System.nanoTime() - benchStart;
            stop.set(true);
            for (final Thread thread : threads) {
                thread.join();
            }
            final Histogram in = during.getIntervalHistogram();
            final Histogram off = outside.getIntervalHistogram();
            out.printf(Locale.ROOT, "shrink ms: %s (median %d); grow ms: %s (median %d)%n", shrinkMs, median(shrinkMs), growMs, median(growMs));
            out.printf(Locale.ROOT, "appends while resizing: %.1f MB/s over %.2f s, p50 %.1f us p99 %.1f us p99.9 %.1f us max %.1f us (n=%d)%n",
                appended.get(1) / (double)MB / (duringNanos / 1e9), duringNanos / 1e9, in.getValueAtPercentile(50) / 1e3,
                in.getValueAtPercentile(99) / 1e3, in.getValueAtPercentile(99.9) / 1e3, in.getMaxValue() / 1e3, in.getTotalCount());
            out.printf(Locale.ROOT, "appends otherwise:      %.1f MB/s over %.2f s, p50 %.1f us p99 %.1f us p99.9 %.1f us max %.1f us (n=%d)%n",
                appended.get(0) / (double)MB / ((totalNanos - duringNanos) / 1e9), (totalNanos - duringNanos) / 1e9,
                off.getValueAtPercentile(50) / 1e3, off.getValueAtPercentile(99) / 1e3, off.getValueAtPercentile(99.9) / 1e3,
                off.getMaxValue() / 1e3, off.getTotalCount());
            out.printf(Locale.ROOT, "end: rss=%d MB capacity=%d MB reads=%d %s%n", rss() / MB, cache.capacity() / MB, reads.get(),
                manager.resizeStats());
        } finally {
            Files.deleteIfExists(file);
        }
        return 0;
    }

    private static long median(final List<Long> values) {
        final List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        return sorted.get(sorted.size() / 2);
    }

    private static long rss() throws IOException {
        for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
            }
        }
        return -1;
    }
}
