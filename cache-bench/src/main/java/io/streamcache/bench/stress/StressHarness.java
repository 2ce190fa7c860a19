package io.streamcache.bench.stress;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import io.streamcache.segmentstore.eviction.HitmapPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The stress test, run from the calling thread (which samples and reports) with producer and
 * reader threads of its own: drives an embedded {@link SegmentStore} (a DRAM {@link BlockCache}
 * and a durable log in a directory), verifies every byte read, prints a progress line a second,
 * and ends with a latency table, {@code summary.json} and {@code report.html}.
 *
 * <pre>
 *   producers (P threads)          log (writer + completion thread)     tail readers (T threads)
 *   +--------------+  appendAsync  +-------------------------+   read / readOrWait
 *   | parallelism  | ------------> | batch, force, commit to | &lt;------------------- follow tails
 *   | appends in   | &lt;------------ | cache + index, wake     |
 *   | flight each  |    offset     | waiting tail readers    |   read / readThrough
 *   +--------------+               +-------------------------+ &lt;------------------- catch-up readers (C)
 *                                                                  from offset 0, behind the tail
 *   sampler (the calling thread): once a second, interval histograms, counters, cache stats,
 *                                 reader lag, bytes of the log directory
 *   retention (one thread): truncates each segment to --retention / segments bytes behind its
 *                           tail, never past its tail reader; the log deletes files left dead
 * </pre>
 *
 * <h2>What it measures besides latency</h2>
 * Reader lag: the acknowledged bytes each reader has yet to read in the segment it reads, and
 * that in time at the segment's append rate. Disk: the bytes of the log directory, which the
 * retention thread keeps near {@code --retention} plus one truncation step per segment and a few
 * log files. Memory: at the end, the Java heap in use after a full GC beside the bytes cached.
 * With {@code --prefill}, producers first fill the cache (without readers), and the clock, the
 * histograms and the readers start once it is full, so a large cache is measured in its steady
 * state rather than while it fills.
 *
 * <h2>Verification</h2>
 * The bytes of a segment are a pure function of (segment seed, offset) ({@link SegmentContent}),
 * so any range a reader receives, from the cache or from the log, is checked without a copy of
 * what was written; the store must also give each append exactly the offset its bytes were made
 * for. The first mismatch stops the run and fails it (exit code 1).
 *
 * <h2>Stopping</h2>
 * A run ends at {@code --duration} or after {@code --ops} appends, on the first failure, or on
 * Ctrl-C: a shutdown hook stops producers and readers and waits for the summary so far to be
 * printed and written.
 */
public final class StressHarness {
    /** Interval of the {@code interval} durability policy. */
    static final Duration INTERVAL_POLICY_PERIOD = Duration.ofMillis(100);
    private static final long TICK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long the Hitmap updater parks when its queue is empty: short against the 64 Ki uses the queue holds. */
    private static final long HITMAP_UPDATER_IDLE_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final double MB = 1e6;
    /** A prefill ends this far below the manager's target utilization (which it hovers under once evicting). */
    static final double PREFILL_SLACK = 0.02;
    /** Longest a prefill appends before measuring anyway. */
    static final long PREFILL_TIMEOUT_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final SegmentContent expected;
    /** The report of the last run this harness made, for {@code --compare}; null before one ended. */
    private Report lastReport;

    /** A harness that verifies against the content the producers write. */
    public StressHarness() {
        this(SegmentContent.SPLITMIX);
    }

    /** For tests: a harness whose readers check against {@code expected} instead. */
    StressHarness(final SegmentContent expected) {
        this.expected = expected;
    }

    /**
     * Runs the stress test the flags describe, printing to {@code out}.
     *
     * @return the process exit code: 0 if every byte read verified, 1 on a mismatch or failure, 2 on bad flags.
     */
    public static int run(final String[] args, final PrintStream out) {
        return new StressHarness().execute(args, out, true);
    }

    int execute(final String[] args, final PrintStream out, final boolean installShutdownHook) {
        final StressConfig config;
        try {
            config = StressConfig.parse(args);
        } catch (final IllegalArgumentException e) {
            out.println("stress: " + e.getMessage());
            out.println("run with --help for the flags");
            return 2;
        }
        if (config.help) {
            out.println(StressConfig.USAGE);
            return 0;
        }
        if (config.compare) {
            return compare(config, out, installShutdownHook);
        }
        return runOnce(config, out, installShutdownHook);
    }

    /**
     * {@code --compare}: for each round, a baseline run (the flags with the disturbance off) and
     * the scenario run, back to back, each on a fresh store and log; then the targets as ratios of
     * the two, the median over the rounds, printed and written to {@code summary.json} and
     * {@code report.html} beside the runs' own folders.
     */
    private int compare(final StressConfig config, final PrintStream out, final boolean installShutdownHook) {
        final List<Report> baselines = new ArrayList<>();
        final List<Report> scenarios = new ArrayList<>();
        int code = 0;
        for (int round = 1; round <= config.rounds; round++) {
            for (final boolean disturbed : new boolean[] {false, true}) {
                final StressConfig one = config.forRun(disturbed, config.out.resolve((disturbed ? "scenario-" : "baseline-") + round));
                out.printf(Locale.ROOT, "%n=== round %d of %d: %s ===%n", round, config.rounds,
                    disturbed ? "scenario " + config.scenario() : "baseline (the same flags, the disturbance off)");
                lastReport = null;
                final int c = runOnce(one, out, installShutdownHook);
                code = Math.max(code, c);
                if (lastReport == null || lastReport.interrupted()) {
                    out.println("stress: --compare stopped: the run " + (lastReport == null ? "failed" : "was interrupted"));
                    return Math.max(code, 1);
                }
                (disturbed ? scenarios : baselines).add(lastReport);
            }
        }
        final Comparison comparison = new Comparison(config, baselines, scenarios);
        comparison.print(out);
        try {
            out.println("comparison: " + comparison.writeJson(config.out.resolve("summary.json")).toAbsolutePath());
            out.println("report:     " + comparison.writeHtml(config.out.resolve("report.html")).toAbsolutePath());
        } catch (final IOException | UncheckedIOException e) {
            out.println("stress: cannot write results to " + config.out + ": " + e);
            return 1;
        }
        return code;
    }

    private int runOnce(final StressConfig config, final PrintStream out, final boolean installShutdownHook) {
        final Path dir;
        final boolean tempDir = config.dir == null;
        try {
            if (tempDir) {
                dir = Files.createTempDirectory("streamcache-stress-");
            } else {
                dir = config.dir;
                Files.createDirectories(dir);
                try (Stream<Path> entries = Files.list(dir)) {
                    if (entries.findAny().isPresent()) {
                        out.println("stress: --dir=" + dir + " must be empty or not exist (the run creates a fresh log there)");
                        return 2;
                    }
                }
            }
            Files.createDirectories(config.out);
        } catch (final IOException e) {
            out.println("stress: cannot prepare directories: " + e);
            return 1;
        }
        // Counted down once the results are out and the temporary directory is gone: a Ctrl-C's
        // shutdown hook waits for it, since the JVM halts as soon as the hooks return.
        final CountDownLatch done = new CountDownLatch(1);
        final Thread[] hook = new Thread[1];
        try {
            return runIn(config, dir, out, installShutdownHook, done, hook);
        } finally {
            if (tempDir) {
                deleteRecursively(dir, out);
            }
            out.flush();
            done.countDown();
            removeHook(hook[0]);
        }
    }

    private int runIn(final StressConfig config, final Path dir, final PrintStream out, final boolean installShutdownHook,
                      final CountDownLatch done, final Thread[] hook) {
        final boolean[] interrupted = new boolean[1];
        final Report report;
        final Instant startedAt = Instant.now();
        final Restart restart = new Restart(config);
        try (BlockCache cache = restart.cache()) {
            final StressRun run;
            final List<Sample> samples = new ArrayList<>();
            final long startNanos;
            final CacheStats cacheStats;
            final CacheManagerStats managerStats;
            final Footprint footprint;
            final PolicyStats policyStats;
            final ReaderAwarePolicy readerAware = config.policy == StressConfig.Policy.READER_AWARE ? new ReaderAwarePolicy() : null;
            final HitmapPolicy hitmap = config.policy == StressConfig.Policy.HITMAP ? hitmap(cache) : null;
            final CacheManager.Builder manager = CacheManager.builder(cache).name("stress").registerMBean(false);
            if (readerAware != null) {
                manager.policy(readerAware);
            } else if (hitmap != null) {
                manager.policy(hitmap);
            }
            try (hitmap; restart; SegmentStore store = restart.store(cache, manager, dir)) {
                if (config.maxWriteSize > store.maxAppendLength()) {
                    out.println("stress: --write-size=" + config.maxWriteSize + " is more than the log's maxAppendLength="
                        + store.maxAppendLength());
                    return 2;
                }
                run = new StressRun(config, store, expected, readerAware);
                for (final StressRun.SegmentState segment : run.segments) {
                    store.create(segment.name);
                }
                out.printf(Locale.ROOT, "stress: %s%n", config);
                out.printf(Locale.ROOT, "cache: %s, %d MB (%s); log: %s (%s)%n", cache.name(), cache.capacity() >> 20,
                    cache.regionDescription(), dir, policy(config.durability));
                if (config.prefill && config.retention > 0 && config.retention < config.cacheSize) {
                    out.println("stress: warning: --retention is less than --cache-size, so truncation frees the cache before it fills;"
                        + " the prefill may not end before its time limit");
                }
                if (installShutdownHook) {
                    hook[0] = new Thread(() -> {
                        interrupted[0] = true;
                        run.stopping.set(true);
                        try {
                            done.await(90, TimeUnit.SECONDS);
                        } catch (final InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }, "stress-shutdown");
                    Runtime.getRuntime().addShutdownHook(hook[0]);
                }
                final List<Thread> producers = new ArrayList<>();
                final List<Thread> readers = new ArrayList<>();
                final List<CatchUpReader> catchups = new ArrayList<>();
                if (config.prefill) {
                    // The prefill's appends are neither recorded nor counted against --ops.
                    run.measuring = false;
                }
                for (int i = 0; i < config.producers; i++) {
                    producers.add(start(new Producer(run, i), "stress-producer-" + i));
                }
                if (config.retention > 0) {
                    readers.add(start(new Retention(run), "stress-retention"));
                }
                final Gauges gauges = new Gauges(run, catchups, dir);
                if (config.prefill) {
                    prefill(run, cache, store.cacheManager(), gauges, out);
                }
                for (int i = 0; i < config.tailReaders; i++) {
                    readers.add(start(new TailReader(run, i), "stress-tail-" + i));
                }
                for (int i = 0; i < config.catchupReaders; i++) {
                    final CatchUpReader reader = new CatchUpReader(run, i);
                    catchups.add(reader);
                    readers.add(start(reader, "stress-catchup-" + i));
                }
                startNanos = System.nanoTime();
                final Disturbance disturbance = config.phased() ? new Disturbance(run, startNanos) : null;
                final PhaseSplit phases = config.phased() ? new PhaseSplit(config.producers, config.tailReaders) : null;
                long lastTick = startNanos;
                long lastAppendBytes = run.metrics.append.bytes.sum();
                long lastReadBytes = readBytes(run.metrics);
                final long deadline = config.duration == null ? Long.MAX_VALUE : startNanos + config.duration.toNanos();
                final long restartAt = config.restartAt == null ? Long.MAX_VALUE : startNanos + config.restartAt.toNanos();
                while (true) {
                    final long now = System.nanoTime();
                    if (now >= restartAt && !restart.done() && !run.stopping()) {
                        restart.restart(run, producers, readers, catchups, dir, out);
                        if (run.failed()) {
                            break;
                        }
                        for (int i = 0; i < config.producers; i++) {
                            producers.add(start(new Producer(run, i), "stress-producer-" + i));
                        }
                        if (config.retention > 0) {
                            readers.add(start(new Retention(run), "stress-retention"));
                        }
                        for (int i = 0; i < config.tailReaders; i++) {
                            readers.add(start(new TailReader(run, i), "stress-tail-" + i));
                        }
                        for (int i = 0; i < config.catchupReaders; i++) {
                            final CatchUpReader reader = new CatchUpReader(run, i);
                            catchups.add(reader);
                            readers.add(start(reader, "stress-catchup-" + i));
                        }
                        restart.started(run);
                    }
                    restart.reportFirstMinute(run, now, false, out);
                    if (now >= deadline || producers.stream().noneMatch(Thread::isAlive)) {
                        run.stopping.set(true);
                    }
                    if (run.stopping()) {
                        break;
                    }
                    if (now - lastTick >= TICK_NANOS) {
                        final Sample sample = sample(run, restart.current(cache), gauges, startNanos, lastTick, now, lastAppendBytes, lastReadBytes,
                            phases, disturbance);
                        lastAppendBytes = run.metrics.append.bytes.sum();
                        lastReadBytes = readBytes(run.metrics);
                        lastTick = now;
                        samples.add(sample);
                        out.println(progressLine(sample) + phaseNote(run, disturbance));
                        if (disturbance != null) {
                            final Phase before = disturbance.phase();
                            disturbance.afterSample(now);
                            if (disturbance.phase() != before) {
                                out.printf(Locale.ROOT, "phase: %s from %.0f s (%s)%n", disturbance.phase().label(), (now - startNanos) / 1e9,
                                    disturbance.phase() == Phase.DURING ? "disturbance: " + config.scenario() : "disturbance stopped");
                            }
                            if (disturbance.threadDumpDue(now)) {
                                try {
                                    out.println("threads: " + ThreadDump.write(config.out.resolve("threads-during.txt")).toAbsolutePath());
                                } catch (final IOException e) {
                                    out.println("stress: cannot write the thread dump: " + e);
                                }
                            }
                        }
                    }
                    sleepQuietly(Math.min(20, Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(deadline, lastTick + TICK_NANOS) - now))));
                }
                joinAll(producers, 90);
                joinAll(readers, StressRun.READ_THROUGH_TIMEOUT_SECONDS + 5);
                if (disturbance != null) {
                    joinAll(disturbance.threads(), StressRun.READ_THROUGH_TIMEOUT_SECONDS + 5);
                }
                final long end = System.nanoTime();
                restart.reportFirstMinute(run, end, true, out);
                final BlockCache current = restart.current(cache);
                final SegmentStore currentStore = run.store;
                policyStats = new PolicyStats(config.policy, run.metrics.readerRegistrations.sum(), gauges.registeredReadersMax,
                    run.registeredReaders(), hitmap == null ? 0 : hitmap.applied(), hitmap == null ? 0 : hitmap.drops());
                final Sample last = sample(run, current, gauges, startNanos, lastTick, end, lastAppendBytes, lastReadBytes, phases,
                    disturbance);
                if (end - lastTick >= TICK_NANOS / 5) {
                    samples.add(last);
                    out.println(progressLine(last));
                }
                cacheStats = current.stats();
                managerStats = currentStore.cacheManager().stats();
                final long heap = heapUsedAfterGc();
                final CacheStats atEnd = current.stats();
                final long disk = diskBytes(dir);
                footprint = new Footprint(disk, Math.max(disk, gauges.diskBytesMax),
                    currentStore.log().orElseThrow().directoryStats().filesDeleted(), heap,
                    atEnd.storedBytes(), atEnd.usedBytes());
                final boolean readersEnded = readers.stream().noneMatch(Thread::isAlive)
                    && (disturbance == null || disturbance.threads().stream().noneMatch(Thread::isAlive));
                report = new Report(config, startedAt, (end - startNanos) / 1e9, interrupted[0], run, samples, cacheStats, managerStats,
                    footprint, policyStats, readersEnded, phases, disturbance == null ? null : disturbance.firstRefusal(),
                    currentStore.isolationStats());
                lastReport = report;
            }
        } catch (final RuntimeException e) {
            out.println("stress: FAILED: " + e);
            e.printStackTrace(out);
            return 1;
        }
        report.print(out);
        try {
            final Path json = report.writeJson(config.out.resolve("summary.json"));
            final Path html = report.writeHtml(config.out.resolve("report.html"));
            out.println("summary: " + json.toAbsolutePath());
            out.println("report:  " + html.toAbsolutePath());
        } catch (final IOException | UncheckedIOException e) {
            out.println("stress: cannot write results to " + config.out + ": " + e);
            return 1;
        }
        return report.passed() ? 0 : 1;
    }

    /**
     * The Hitmap policy of a {@code --policy hitmap} run, sized for the cache's blocks, with its
     * updater thread started: without it the queued uses are applied only when a pass begins,
     * and a second of reads can overflow the queue (uses dropped). Closing the policy stops it,
     * after the store (and its cache manager) closed.
     */
    static HitmapPolicy hitmap(final BlockCache cache) {
        final HitmapPolicy policy = HitmapPolicy.forEntries(Math.max(1, cache.capacity() / cache.blockLength()));
        policy.startUpdater("stress-hitmap-updater", HITMAP_UPDATER_IDLE_NANOS);
        return policy;
    }

    static DurabilityPolicy policy(final StressConfig.Durability durability) {
        switch (durability) {
            case EVERY_BATCH: return DurabilityPolicy.EVERY_BATCH;
            case INTERVAL: return DurabilityPolicy.interval(INTERVAL_POLICY_PERIOD);
            case NEVER: return DurabilityPolicy.NEVER;
            default: throw new IllegalArgumentException("durability=" + durability);
        }
    }

    /**
     * Appends without readers until the cache is full (the manager's eviction target reached, or
     * a first eviction), printing a progress line a second, then forgets what the prefill
     * recorded; the calling (sampler) thread.
     */
    private static void prefill(final StressRun run, final BlockCache cache, final CacheManager manager, final Gauges gauges,
                                final PrintStream out) {
        final long begin = System.nanoTime();
        final double target = manager.targetUtilization() - PREFILL_SLACK;
        long lastTick = begin;
        long lastBytes = 0;
        out.printf(Locale.ROOT, "prefill: appending until the cache is %.0f%% full or evicting (at most %d s)%n", target * 100,
            TimeUnit.NANOSECONDS.toSeconds(PREFILL_TIMEOUT_NANOS));
        while (!run.stopping()) {
            final long now = System.nanoTime();
            if (cache.stats().utilization() >= target || manager.stats().evictions() > 0) {
                break;
            }
            if (now - begin >= PREFILL_TIMEOUT_NANOS) {
                out.println("prefill: not full after " + TimeUnit.NANOSECONDS.toSeconds(PREFILL_TIMEOUT_NANOS) + " s; measuring anyway");
                break;
            }
            if (now - lastTick >= TICK_NANOS) {
                final long bytes = run.metrics.prefillBytes.sum();
                out.printf(Locale.ROOT, "prefill [%5.0fs] %s appended, %7.1f MB/s | cache %5.1f%% | disk %s%n", (now - begin) / 1e9,
                    Report.formatBytes(bytes), (bytes - lastBytes) / MB / ((now - lastTick) / 1e9), cache.stats().utilization() * 100,
                    Report.formatBytes(gauges.diskBytes()));
                lastBytes = bytes;
                lastTick = now;
            }
            sleepQuietly(20);
        }
        out.printf(Locale.ROOT, "prefill: done in %.1f s, %s appended, cache %.1f%% full; measuring from here%n",
            (System.nanoTime() - begin) / 1e9, Report.formatBytes(run.metrics.prefillBytes.sum()), cache.stats().utilization() * 100);
        run.metrics.resetAfterPrefill();
        run.measuring = true;
    }

    /** The gauges sampled once a second besides the counters: reader lag and disk use; the sampler thread only. */
    static final class Gauges {
        private final StressRun run;
        private final List<CatchUpReader> catchups;
        private final Path dir;
        long diskBytesMax;
        /** The most readers registered with the reader-aware policy at a sample; 0 with another policy. */
        long registeredReadersMax;

        Gauges(final StressRun run, final List<CatchUpReader> catchups, final Path dir) {
            this.run = run;
            this.catchups = catchups;
            this.dir = dir;
        }

        /** @return {mean, max} acknowledged bytes the tail readers have yet to read, over the segments they follow. */
        long[] tailLag() {
            long sum = 0;
            long max = 0;
            long count = 0;
            for (final StressRun.SegmentState segment : run.segments) {
                final long position = segment.tailPosition;
                if (position != Long.MAX_VALUE) {
                    final long lag = Math.max(0, segment.appendedEnd - position);
                    sum += lag;
                    max = Math.max(max, lag);
                    count++;
                }
            }
            return new long[] {count == 0 ? 0 : sum / count, max};
        }

        /** @return {mean, max} bytes the catch-up readers in a pass are behind their segment's acknowledged end. */
        long[] catchupLag() {
            long sum = 0;
            long max = 0;
            long count = 0;
            for (final CatchUpReader reader : catchups) {
                final long lag = reader.lagBytes();
                if (lag >= 0) {
                    sum += lag;
                    max = Math.max(max, lag);
                    count++;
                }
            }
            return new long[] {count == 0 ? 0 : sum / count, max};
        }

        /** @return the readers registered with the reader-aware policy now (0 with another policy); tracks the most seen. */
        int registeredReaders() {
            final int count = run.registeredReaders();
            registeredReadersMax = Math.max(registeredReadersMax, count);
            return count;
        }

        long diskBytes() {
            final long bytes = StressHarness.diskBytes(dir);
            diskBytesMax = Math.max(diskBytesMax, bytes);
            return bytes;
        }
    }

    private static Sample sample(final StressRun run, final BlockCache cache, final Gauges gauges, final long startNanos, final long from,
                                 final long to, final long lastAppendBytes, final long lastReadBytes, final PhaseSplit phases,
                                 final Disturbance disturbance) {
        final StressMetrics m = run.metrics;
        final double seconds = Math.max(1e-9, (to - from) / 1e9);
        final Histogram append = m.append.interval();
        final Histogram tail = m.tailRead.interval();
        final Histogram catchup = m.catchupRead.interval();
        final Histogram storm = m.stormRead.interval();
        final Histogram appendCall = m.appendCall.interval();
        final Histogram readCall = m.readCall.interval();
        final Histogram waitCall = m.waitCall.interval();
        if (phases != null) {
            phases.record(disturbance.phase(), new PhaseSplit.Tick(seconds, append, appendCall, readCall, waitCall, storm,
                m.append.bytes.sum(), m.stormRead.bytes.sum(), m.bytesVerified.sum(), StressMetrics.sums(m.producerBytes),
                StressMetrics.sums(m.tailReaderBytes), heldPeak(m)));
        }
        final long appendBytes = m.append.bytes.sum();
        final long readBytes = readBytes(m);
        final double appendBytesPerSec = (appendBytes - lastAppendBytes) / seconds;
        final long[] tailLag = gauges.tailLag();
        final long[] catchupLag = gauges.catchupLag();
        gauges.registeredReaders();
        return new Sample(
            (to - startNanos) / 1e9,
            append.getTotalCount() / seconds,
            appendBytesPerSec / MB,
            (tail.getTotalCount() + catchup.getTotalCount()) / seconds,
            (readBytes - lastReadBytes) / MB / seconds,
            micros(append, 50),
            micros(append, 99),
            append.getTotalCount() == 0 ? 0 : append.getMaxValue() / 1e3,
            micros(tail, 99),
            micros(catchup, 99),
            cache.stats().utilization(),
            m.hitRatio(),
            m.bytesVerified.sum(),
            tailLag[0],
            tailLag[1],
            lagSeconds(tailLag[0], appendBytesPerSec, run.segments.length),
            catchupLag[0],
            catchupLag[1],
            lagSeconds(catchupLag[0], appendBytesPerSec, run.segments.length),
            gauges.diskBytes());
    }

    /**
     * @return {@code lagBytes} as time: how long the producers take to append that many bytes to
     *     one segment at the interval's rate (producers pick segments uniformly); 0 if nothing was appended.
     */
    static double lagSeconds(final long lagBytes, final double appendBytesPerSec, final int segments) {
        final double perSegment = appendBytesPerSec / segments;
        return perSegment > 0 ? lagBytes / perSegment : 0;
    }

    /** @return bytes of the regular files under {@code dir} (the log files), 0 if it cannot be listed. */
    static long diskBytes(final Path dir) {
        long total = 0;
        try (Stream<Path> paths = Files.walk(dir)) {
            for (final Path p : (Iterable<Path>) paths::iterator) {
                try {
                    if (Files.isRegularFile(p)) {
                        total += Files.size(p);
                    }
                } catch (final IOException e) {
                    // Deleted (a dead log file) between the listing and the size: it no longer counts.
                }
            }
        } catch (final IOException | UncheckedIOException e) {
            return total;
        }
        return total;
    }

    /** @return heap bytes in use after full collections (two, so that what the first finalized goes too). */
    static long heapUsedAfterGc() {
        final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static long readBytes(final StressMetrics m) {
        return m.tailRead.bytes.sum() + m.catchupRead.bytes.sum();
    }

    private static double micros(final Histogram h, final double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1e3;
    }

    /** @return the phase and the disturbance's progress for the end of a progress line; empty without a scenario. */
    private static String phaseNote(final StressRun run, final Disturbance disturbance) {
        if (disturbance == null) {
            return "";
        }
        final StressMetrics m = run.metrics;
        final StringBuilder b = new StringBuilder(" | ").append(disturbance.phase().label());
        if (run.config.storm && disturbance.phase() != Phase.BEFORE) {
            b.append(" storm ").append(Report.formatBytes(m.stormRead.bytes.sum()));
        }
        if (run.config.slowConsumer && disturbance.phase() != Phase.BEFORE) {
            b.append(" held ").append(Report.formatBytes(m.slowHeldBytes.get())).append(" refused ").append(m.slowRefusals.sum());
        }
        return b.toString();
    }

    static String progressLine(final Sample s) {
        return String.format(Locale.ROOT,
            "[%5.0fs] append %,9.0f ops/s %7.1f MB/s p99 %s | read %,8.0f ops/s %7.1f MB/s | cache %5.1f%% hit %5.1f%% | verified %s"
                + " | lag tail %s/%s catch-up %s/%s | disk %s",
            s.elapsedSeconds(), s.appendOpsPerSec(), s.appendMBps(), Report.formatMicros(s.appendP99Micros()), s.readOpsPerSec(),
            s.readMBps(), s.cacheUtilization() * 100, s.hitRatio() * 100, Report.formatBytes(s.bytesVerified()),
            Report.formatBytes(s.tailLagBytes()), Report.formatSeconds(s.tailLagSeconds()), Report.formatBytes(s.catchupLagBytes()),
            Report.formatSeconds(s.catchupLagSeconds()), Report.formatBytes(s.diskBytes()));
    }

    private static Thread start(final Runnable task, final String name) {
        final Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void joinAll(final List<Thread> threads, final long seconds) {
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

    private static void sleepQuietly(final long millis) {
        try {
            Thread.sleep(millis);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void removeHook(final Thread hook) {
        if (hook == null) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (final IllegalStateException e) {
            // The JVM is shutting down (Ctrl-C): the hook is running and returns once done is counted down.
        }
    }

    private static void deleteRecursively(final Path dir, final PrintStream out) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (final IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (final IOException | UncheckedIOException e) {
            out.println("stress: could not delete " + dir + ": " + e);
        }
    }

    /** @return the most bytes the slow consumer held since the last sample, and starts the next interval at what it holds now. */
    private static long heldPeak(final StressMetrics m) {
        final long now = m.slowHeldBytes.get();
        return Math.max(now, m.slowHeldPeak.getAndSet(now));
    }
}
