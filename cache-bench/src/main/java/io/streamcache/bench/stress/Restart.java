package io.streamcache.bench.stress;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.log.LogConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The harness's {@code --restart-at}: builds the run's cache (in a persistent
 * mapped-file region with a warm catalog when {@code --region} or {@code --restart-at} is given)
 * and store, and restarts them in the middle of the run, then measures the first minute after.
 * <pre>
 *  at --restart-at: stop producers and readers (producers drain: every append acknowledged)
 *                   close the store (a clean close: the last warm checkpoint) and the cache
 *                   cold: remove the region file and the catalog
 *                   reopen cache and store (warm: adopt and index what the catalog names)
 *                   producers go on at their offsets; tail readers resume --restart-rewind bytes
 *                   behind each tail (consumers reconnecting re-read the tail just cached);
 *                   catch-up readers start over
 *  60 s later (or at the end): hits and misses of the reads since the restart, the bytes of the
 *                   reads that went through the log, and what the store loaded from its files
 *                   (read-through loads whole ranges ahead of the reader: the cost of a miss)
 * </pre>
 * <b>Threading:</b> the sampler thread only.
 */
final class Restart implements AutoCloseable {
    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final StressConfig config;
    private final Path catalog;
    /** The cache and store built at the restart, or null. */
    private BlockCache cache;
    private SegmentStore store;
    private boolean done;
    private long restartedNanos;
    private boolean reported;
    private long hits;
    private long misses;
    private long logBytes;
    private long readBytes;
    private long logFileBytes;
    private long logLoads;

    Restart(final StressConfig config) {
        this.config = config;
        this.catalog = config.region == null ? null : config.region.resolveSibling(config.region.getFileName() + ".catalog");
    }

    /** @return a new cache as the flags describe. */
    BlockCache cache() {
        final BlockCache.Builder builder = BlockCache.builder().capacity(config.cacheSize).name("stress").registerMBean(false);
        if (config.region != null) {
            builder.region(MappedFileRegion.persistent(config.region)).warmRestart(catalog);
        }
        return builder.build();
    }

    /** @return a new store over {@code cache} as the flags describe. */
    SegmentStore store(final BlockCache over, final CacheManager.Builder manager, final Path dir) {
        final SegmentStore.Builder builder = SegmentStore.builder(over)
            .name("stress")
            .cacheManager(manager)
            .log(LogConfig.builder(dir).durability(StressHarness.policy(config.durability)).fileLength(config.logFileSize)
                .name("stress").build());
        if (config.readBudget > 0) {
            builder.readBudget(config.readBudget);
        }
        return builder.build();
    }

    /** @return the cache in use: the restart's, or {@code original}. */
    BlockCache current(final BlockCache original) {
        return cache != null ? cache : original;
    }

    boolean done() {
        return done;
    }

    /**
     * Stops the threads (they are joined and the lists emptied), closes and reopens the store
     * and cache, and points the run at the new store; the caller starts new threads.
     */
    void restart(final StressRun run, final List<Thread> producers, final List<Thread> readers, final List<CatchUpReader> catchups,
                 final Path dir, final PrintStream out) {
        done = true;
        run.stopping.set(true);
        join(producers, 90);
        join(readers, StressRun.READ_THROUGH_TIMEOUT_SECONDS + 5);
        if (run.failed()) {
            return;
        }
        producers.clear();
        readers.clear();
        catchups.clear();
        final long closing = System.nanoTime();
        final BlockCache old = run.store.cache();
        run.store.close();
        old.close();
        final long closed = System.nanoTime();
        if (!config.restartWarm && config.region != null) {
            try {
                Files.deleteIfExists(config.region);
                Files.deleteIfExists(catalog);
            } catch (final IOException e) {
                run.fail("cold restart: removing the region", e);
                return;
            }
        }
        cache = cache();
        final CacheManager.Builder manager = CacheManager.builder(cache).name("stress").registerMBean(false);
        if (run.readerAware != null) {
            // The readers register with the new store's policy.
            run.readerAware = new io.streamcache.segmentstore.eviction.ReaderAwarePolicy();
            manager.policy(run.readerAware);
        }
        store = store(cache, manager, dir);
        final long opened = System.nanoTime();
        run.store = store;
        run.resumeRewind = config.restartRewind;
        out.printf(Locale.ROOT, "restart (%s): closed in %d ms, reopened in %d ms; cache %.1f%% full; %s%n",
            config.restartWarm ? "warm" : "cold", TimeUnit.NANOSECONDS.toMillis(closed - closing),
            TimeUnit.NANOSECONDS.toMillis(opened - closed), cache.stats().utilization() * 100, store.warmRestore());
        hits = run.metrics.cacheHits.sum();
        misses = run.metrics.cacheMisses.sum();
        logBytes = run.metrics.logBytes.sum();
        readBytes = run.metrics.tailRead.bytes.sum() + run.metrics.catchupRead.bytes.sum();
        run.stopping.set(false);
    }

    /** Marks when the threads after the restart started: the first minute counts from here. */
    void started(final StressRun run) {
        restartedNanos = System.nanoTime();
        final io.streamcache.log.HistoricalReadStats log = run.store.log().orElseThrow().historicalReadStats();
        logFileBytes = log.bytesRead();
        logLoads = log.loads();
    }

    /** Prints the reads since the restart once 60 s passed, or at the end of the run ({@code end}) if they did not. */
    void reportFirstMinute(final StressRun run, final long now, final boolean end, final PrintStream out) {
        if (restartedNanos == 0 || reported || (!end && now - restartedNanos < WINDOW_NANOS)) {
            return;
        }
        reported = true;
        final long h = run.metrics.cacheHits.sum() - hits;
        final long m = run.metrics.cacheMisses.sum() - misses;
        final long viaLog = run.metrics.logBytes.sum() - logBytes;
        final long read = run.metrics.tailRead.bytes.sum() + run.metrics.catchupRead.bytes.sum() - readBytes;
        final io.streamcache.log.HistoricalReadStats log = run.store.log().orElseThrow().historicalReadStats();
        out.printf(Locale.ROOT, "restart (%s): first %.0f s after it: read hit ratio %.2f%% (%d hits, %d misses); %s read, %s of it"
                + " (%.2f%%) in reads that went through the log; the store loaded %d ranges, %s, from the log files%n",
            config.restartWarm ? "warm" : "cold",
            Math.min(WINDOW_NANOS, now - restartedNanos) / 1e9, h + m == 0 ? 0 : 100.0 * h / (h + m), h, m,
            Report.formatBytes(read), Report.formatBytes(viaLog), read == 0 ? 0 : 100.0 * viaLog / read,
            log.loads() - logLoads, Report.formatBytes(log.bytesRead() - logFileBytes));
    }

    private static void join(final List<Thread> threads, final long seconds) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (final Thread thread : threads) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Closes the restart's store and cache, and removes the region file and catalog of a restart run. */
    @Override
    public void close() {
        if (store != null) {
            store.close();
        }
        if (cache != null) {
            cache.close();
        }
        if (config.restartAt != null && config.region != null) {
            try {
                Files.deleteIfExists(config.region);
                Files.deleteIfExists(catalog);
            } catch (final IOException e) {
                // Left behind: named in the flags.
            }
        }
    }
}
