package io.streamcache.bench.cachebench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A cache_bench for the block cache alone, after RocksDB's {@code cache_bench}: runs on the
 * calling thread, which starts the worker threads, waits for them and prints the report.
 *
 * <pre>
 *   main ──start latch──┬─▶ worker 0: keys 0, T, 2T, ...   ──┐
 *                       ├─▶ worker 1: keys 1, T+1, ...      ──┤ join, merge histograms,
 *                       └─▶ worker T-1                      ──┘ print report + cache stats
 * </pre>
 *
 * <p><b>Design note:</b> each worker owns a disjoint slice of the keys (no striped locks), so
 * the cache's per-entry serialization contract holds with no lock in the measured path and the
 * figures are the cache's own. A full cache fails the operation with a
 * {@link CacheFullException} that is counted ({@code full}); nothing is evicted, because the
 * cache is built with {@link CacheFullHandler#NONE}. Those exceptions are the one allocation
 * of the measured loop.
 *
 * <p>The {@code pravega-sequential} preset runs Pravega's sequential raw test instead: on one
 * thread, insert N entries, read each once, delete each, and report each phase's total time.
 */
public final class CacheBench {
    /** Exit code of a finished run. */
    public static final int EXIT_OK = 0;
    /** Exit code of a run that failed (an unexpected error in a worker, no direct memory). */
    public static final int EXIT_FAILED = 1;
    /** Exit code of bad flags. */
    public static final int EXIT_BAD_FLAGS = 2;
    /** Entries of the sequential preset at most, as in Pravega's test. */
    public static final int SEQUENTIAL_MAX_ENTRIES = 1_000_000;

    private static final int ABSENT = BlockAddressDescriptor.NULL_ADDRESS;
    private static final double[] PERCENTILES = {50.0, 90.0, 99.0, 99.9};

    /** The stop signal from the coordinating thread to the workers: a volatile write and reads. */
    static final class StopFlag {
        private volatile boolean stopped;

        boolean stopped() {
            return stopped;
        }

        void stop() {
            stopped = true;
        }
    }

    private CacheBench() {
    }

    /** Runs with {@code args}, printing errors to {@link System#err}; returns the process exit code. */
    public static int run(final String[] args, final PrintStream out) {
        return run(args, out, System.err);
    }

    /** Runs with {@code args}; returns the process exit code (0 done, 1 failed, 2 bad flags). */
    public static int run(final String[] args, final PrintStream out, final PrintStream err) {
        return run(args, out, err, result -> { });
    }

    /** As {@link #run(String[], PrintStream, PrintStream)}, handing a finished run's counters to {@code sink}. */
    static int run(final String[] args, final PrintStream out, final PrintStream err, final Consumer<CacheBenchResult> sink) {
        if (CacheBenchConfig.wantsHelp(args)) {
            out.println(CacheBenchConfig.USAGE);
            return EXIT_OK;
        }
        final CacheBenchConfig config;
        try {
            config = CacheBenchConfig.parse(args);
        } catch (final IllegalArgumentException e) {
            err.println("cachebench: " + e.getMessage());
            err.println("cachebench: --help lists the flags");
            return EXIT_BAD_FLAGS;
        }
        try {
            sink.accept(execute(config, out));
            return EXIT_OK;
        } catch (final IllegalArgumentException e) {
            err.println("cachebench: " + e.getMessage());
            return EXIT_BAD_FLAGS;
        } catch (final OutOfMemoryError e) {
            err.println("cachebench: out of memory (" + e.getMessage() + "); raise -XX:MaxDirectMemorySize or lower --cache-size");
            return EXIT_FAILED;
        } catch (final RuntimeException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            err.println("cachebench: failed: " + e);
            return EXIT_FAILED;
        }
    }

    /**
     * Runs one benchmark and prints its report.
     *
     * @throws IllegalArgumentException if the entry size does not fit the cache.
     * @throws IllegalStateException    if a worker failed.
     */
    public static CacheBenchResult execute(final CacheBenchConfig config, final PrintStream out) throws InterruptedException {
        try (BlockCache cache = BlockCache.builder().capacity(config.cacheSize).name("cachebench")
            .fullHandler(CacheFullHandler.NONE).registerMBean(false).build()) {
            if (config.rollLength() > cache.maxEntryLength()) {
                throw new IllegalArgumentException("entry-size too large for the cache: entry-size=" + config.entrySizeMax
                    + " maxEntryLength=" + cache.maxEntryLength());
            }
            out.printf(Locale.ROOT, "cachebench: %s%n", config.describe());
            out.printf(Locale.ROOT, "cache: %s, %d buffers of %d KB, blocks of %d B, %s%n", cache.name(), cache.stats().bufferCount(),
                cache.bufferLength() >> 10, cache.blockLength(), cache.regionDescription());
            return config.preset == CacheBenchConfig.Preset.PRAVEGA_SEQUENTIAL
                ? sequential(cache, config, out) : mixed(cache, config, out);
        }
    }

    private static CacheBenchResult mixed(final BlockCache cache, final CacheBenchConfig config, final PrintStream out)
        throws InterruptedException {
        final int threads = config.threads;
        final CountDownLatch start = new CountDownLatch(1);
        final StopFlag stop = new StopFlag();
        final CacheBenchWorker[] workers = new CacheBenchWorker[threads];
        final Thread[] running = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final long share = config.ops == 0 ? 0 : config.ops / threads + (t < config.ops % threads ? 1 : 0);
            workers[t] = new CacheBenchWorker(cache, config, t, config.ops == 0 ? 0 : Math.max(1, share), start, stop);
        }
        // Threads start only once every worker is built, so a failed build leaves no thread waiting.
        for (int t = 0; t < threads; t++) {
            running[t] = new Thread(workers[t], "cachebench-" + t);
            running[t].start();
        }
        start.countDown();
        try {
            if (config.ops == 0) {
                TimeUnit.NANOSECONDS.sleep(config.duration.toNanos());
                stop.stop();
            }
            for (final Thread thread : running) {
                thread.join();
            }
        } catch (final InterruptedException e) {
            stop.stop();
            for (final Thread thread : running) {
                thread.join();
            }
            throw e;
        }

        final Histogram[] merged = new Histogram[CacheBenchWorker.OP_COUNT];
        final long[] counts = new long[CacheBenchWorker.OP_COUNT];
        long hits = 0;
        long misses = 0;
        long full = 0;
        long rolls = 0;
        long liveEntries = 0;
        long liveBytes = 0;
        long allocated = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        Throwable failure = null;
        for (int op = 0; op < merged.length; op++) {
            merged[op] = new Histogram(CacheBenchWorker.HIGHEST_LATENCY_NS, CacheBenchWorker.SIGNIFICANT_DIGITS);
        }
        for (final CacheBenchWorker w : workers) {
            for (int op = 0; op < merged.length; op++) {
                merged[op].add(w.histograms[op]);
                counts[op] += w.counts[op];
            }
            hits += w.hits;
            misses += w.misses;
            full += w.full;
            rolls += w.rolls;
            allocated = allocated < 0 || w.allocatedBytes < 0 ? -1 : allocated + w.allocatedBytes;
            first = Math.min(first, w.startNanos);
            last = Math.max(last, w.endNanos);
            if (w.failure != null && failure == null) {
                failure = w.failure;
            }
            for (final int address : w.addresses) {
                if (address != ABSENT) {
                    liveEntries++;
                    liveBytes += cache.length(address);
                }
            }
            w.release();
        }
        if (failure != null) {
            throw new IllegalStateException("worker failed: " + failure, failure);
        }
        final double seconds = Math.max(1e-9, (last - first) / 1e9);
        final long total = counts[0] + counts[1] + counts[2] + counts[3];
        out.printf(Locale.ROOT, "elapsed %.3f s, %,d ops, %,.0f ops/s (%,.0f ops/s per thread)%n", seconds, total, total / seconds,
            total / seconds / config.threads);
        printHeader(out);
        for (int op = 0; op < merged.length; op++) {
            if (counts[op] > 0) {
                printRow(out, CacheBenchWorker.OP_NAMES[op], counts[op], counts[op] / seconds, merged[op]);
            }
        }
        final Histogram all = new Histogram(CacheBenchWorker.HIGHEST_LATENCY_NS, CacheBenchWorker.SIGNIFICANT_DIGITS);
        for (final Histogram h : merged) {
            all.add(h);
        }
        printRow(out, "all", total, total / seconds, all);
        final CacheBenchResult result = new CacheBenchResult(counts[0], counts[1], counts[2], counts[3], hits, misses, full, rolls,
            liveEntries, liveBytes, allocated, seconds, cache.stats());
        printFooter(out, result);
        return result;
    }

    /** Pravega's sequential raw test: insert N, get N, delete N on the calling thread, each phase timed. */
    private static CacheBenchResult sequential(final BlockCache cache, final CacheBenchConfig config, final PrintStream out) {
        final int size = config.entrySizeMax;
        final long n = config.ops > 0 ? config.ops
            : Math.min(SEQUENTIAL_MAX_ENTRIES, CacheBenchConfig.keysFitting(config.cacheSize, size, 9, 10));
        if (n > (1 << 30)) {
            throw new IllegalArgumentException("ops too large for the sequential preset: ops=" + n);
        }
        final int count = (int) n;
        out.printf(Locale.ROOT, "pravega-sequential: N=%,d entries of %,d B (%s)%n", count, size,
            config.ops > 0 ? "--ops" : "90% of the cache, at most 1,000,000");
        final int[] addresses = new int[count];
        final ByteBuf source = Unpooled.directBuffer(size, size);
        final ByteBuf destination = Unpooled.directBuffer(size, size);
        final SplittableRandom random = new SplittableRandom(config.seed);
        while (source.isWritable()) {
            source.writeByte(random.nextInt(256));
        }
        final Histogram[] histograms = new Histogram[CacheBenchWorker.OP_COUNT];
        final double[] seconds = new double[CacheBenchWorker.OP_COUNT];
        for (int op = 0; op < histograms.length; op++) {
            histograms[op] = new Histogram(CacheBenchWorker.HIGHEST_LATENCY_NS, CacheBenchWorker.SIGNIFICANT_DIGITS);
        }
        long full = 0;
        long hits = 0;
        long misses = 0;
        final long allocatedBefore = CacheBenchWorker.allocatedBytes();
        long allocatedAfter = -1;
        try {
            long phase = System.nanoTime();
            for (int i = 0; i < count; i++) {
                final long t0 = System.nanoTime();
                try {
                    addresses[i] = cache.insert(source);
                } catch (final CacheFullException e) {
                    full++;
                }
                histograms[CacheBenchWorker.INSERT].recordValue(Math.min(System.nanoTime() - t0, CacheBenchWorker.HIGHEST_LATENCY_NS));
            }
            seconds[CacheBenchWorker.INSERT] = (System.nanoTime() - phase) / 1e9;
            final CacheStats filled = cache.stats();

            phase = System.nanoTime();
            for (int i = 0; i < count; i++) {
                final long t0 = System.nanoTime();
                final int address = addresses[i];
                if (address == ABSENT) {
                    misses++;
                } else {
                    cache.copyTo(address, 0, destination, 0, cache.length(address));
                    hits++;
                }
                histograms[CacheBenchWorker.LOOKUP].recordValue(Math.min(System.nanoTime() - t0, CacheBenchWorker.HIGHEST_LATENCY_NS));
            }
            seconds[CacheBenchWorker.LOOKUP] = (System.nanoTime() - phase) / 1e9;

            phase = System.nanoTime();
            for (int i = 0; i < count; i++) {
                final long t0 = System.nanoTime();
                final int address = addresses[i];
                if (address != ABSENT) {
                    cache.delete(address);
                    addresses[i] = ABSENT;
                }
                histograms[CacheBenchWorker.DELETE].recordValue(Math.min(System.nanoTime() - t0, CacheBenchWorker.HIGHEST_LATENCY_NS));
            }
            seconds[CacheBenchWorker.DELETE] = (System.nanoTime() - phase) / 1e9;
            allocatedAfter = CacheBenchWorker.allocatedBytes();

            out.printf(Locale.ROOT, "after inserts: %s%n", describe(filled));
            out.printf(Locale.ROOT, "%-8s %12s %12s %14s%n", "phase", "count", "total ms", "ops/s");
            final int[] order = {CacheBenchWorker.INSERT, CacheBenchWorker.LOOKUP, CacheBenchWorker.DELETE};
            for (final int op : order) {
                out.printf(Locale.ROOT, "%-8s %,12d %,12.1f %,14.0f%n", CacheBenchWorker.OP_NAMES[op], count, seconds[op] * 1e3,
                    count / Math.max(1e-9, seconds[op]));
            }
            printHeader(out);
            for (final int op : order) {
                printRow(out, CacheBenchWorker.OP_NAMES[op], count, count / Math.max(1e-9, seconds[op]), histograms[op]);
            }
        } finally {
            source.release();
            destination.release();
        }
        final double total = seconds[CacheBenchWorker.INSERT] + seconds[CacheBenchWorker.LOOKUP] + seconds[CacheBenchWorker.DELETE];
        final CacheBenchResult result = new CacheBenchResult(count, count, 0, count, hits, misses, full, 0, 0, 0,
            allocatedBefore < 0 || allocatedAfter < 0 ? -1 : allocatedAfter - allocatedBefore, total, cache.stats());
        printFooter(out, result);
        return result;
    }

    private static void printHeader(final PrintStream out) {
        out.printf(Locale.ROOT, "%-8s %14s %12s %10s %10s %10s %10s %10s%n", "op", "count", "ops/s", "p50 us", "p90 us",
            "p99 us", "p99.9 us", "max us");
    }

    private static void printRow(final PrintStream out, final String name, final long count, final double opsPerSecond,
        final Histogram h) {
        out.printf(Locale.ROOT, "%-8s %,14d %,12.0f %10.2f %10.2f %10.2f %10.2f %10.2f%n", name, count, opsPerSecond,
            h.getValueAtPercentile(PERCENTILES[0]) / 1e3, h.getValueAtPercentile(PERCENTILES[1]) / 1e3,
            h.getValueAtPercentile(PERCENTILES[2]) / 1e3, h.getValueAtPercentile(PERCENTILES[3]) / 1e3, h.getMaxValue() / 1e3);
    }

    private static void printFooter(final PrintStream out, final CacheBenchResult r) {
        out.printf(Locale.ROOT, "lookups: %,d hits, %,d misses, hit ratio %.2f%%%n", r.hits(), r.misses(), 100.0 * r.hitRatio());
        out.printf(Locale.ROOT, "cache full: %,d operations failed (counted, nothing evicted); appends rolled: %,d%n", r.full(),
            r.rolls());
        out.printf(Locale.ROOT, "heap allocated while measuring: %s (CacheFullExceptions are the expected garbage)%n",
            r.allocatedBytes() < 0 ? "unknown" : String.format(Locale.ROOT, "%,d bytes", r.allocatedBytes()));
        out.printf(Locale.ROOT, "held by threads at end: %,d entries, %,d bytes%n", r.liveEntries(), r.liveBytes());
        out.printf(Locale.ROOT, "cache stats at end: %s%n", describe(r.stats()));
    }

    static String describe(final CacheStats s) {
        return String.format(Locale.ROOT, "entries=%,d storedBytes=%,d usedBlocks=%,d/%,d utilization=%.1f%% fullHandlerCalls=%,d"
            + " fullFailures=%,d", s.entryCount(), s.storedBytes(), s.usedBlockCount(), s.blockCount(), 100.0 * s.utilization(),
            s.fullHandlerCalls(), s.fullFailures());
    }
}
