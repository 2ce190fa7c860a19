package io.streamcache.bookkeeper;

import org.HdrHistogram.Histogram;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Adds through BookKeeper's client to one bookie in this JVM (ensemble, write and ack quorum 1,
 * so that the figures are the bookie's and its storage's, not the replication's), on
 * {@code DbLedgerStorage} and on {@link StreamcacheLedgerStorage} (with the journal writing data,
 * and without it), one after the other on the same disk: per entry length and ledger count,
 * throughput and add latency (from {@code asyncAddEntry} to its callback, with a window of
 * {@value #WINDOW} adds in flight, the client's add throttle off). Runs only with {@code -Dstreamcache.bk.bench=true};
 * {@code -Dstreamcache.bk.bench.rounds=N} runs every storage N times, alternating their order
 * (default 3: each figure is printed as median [min, max]);
 * {@code -Dstreamcache.bk.bench.seconds=N} sets the measured time per cell (default 5, after
 * 2 s of warm-up); {@code -Dstreamcache.bk.bench.lengths=65536} and {@code -Dstreamcache.bk.bench.ledgers=1,100}
 * pick the cells. Prints a Markdown table (docs/benchmarks.md holds the figures), with the
 * process's CPU per MB added and its context switches per add over each measured cell (client
 * and bookie share this JVM: the client's share is the same work on every storage), and the CPU
 * per add by thread group ({@link ThreadCpu}).
 */
// BookKeeper's clients declare close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
class BookieStorageBenchmark {

    private static final int WINDOW = 64;
    private static final int[] LENGTHS = {100, 1024, 65_536};
    private static final int[] LEDGERS = {1, 100};

    @TempDir
    Path directory;

    private record Storage(String name, Consumer<ServerConfiguration> conf) {
    }

    @Test
    @Timeout(3600)
    void shouldCompareAddsOnDbLedgerStorageAndStreamcache() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("streamcache.bk.bench"), "the benchmark runs only with -Dstreamcache.bk.bench=true");
        final long seconds = Long.getLong("streamcache.bk.bench.seconds", 5);
        final List<Storage> storages = List.of(
            new Storage("DbLedgerStorage", conf -> {
                conf.setLedgerStorageClass(DbLedgerStorage.class.getName());
                conf.setProperty("dbStorage_writeCacheMaxSizeMb", 64);
                conf.setProperty("dbStorage_readAheadCacheMaxSizeMb", 64);
            }),
            // With the journal writing data (the bookie's default) the log runs under NEVER and is forced at checkpoints.
            new Storage("Streamcache", conf -> {
                conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
                conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 128L << 20);
            }),
            new Storage("Streamcache, 4 MiB batches, 50 ms", conf -> {
                conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
                conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 128L << 20);
                conf.setProperty(StreamcacheStorageSettings.BATCH_BYTES, 4 << 20);
                conf.setProperty(StreamcacheStorageSettings.MAX_DELAY_MICROS, 50_000);
            }),
            new Storage("Streamcache, journalWriteData=false", conf -> {
                conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
                conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 128L << 20);
                conf.setJournalWriteData(false);
                // Each add thread waits for its entry's batch to be forced: more of them keep the log busy.
                conf.setNumAddWorkerThreads(8);
            }));
        // -Dstreamcache.bk.bench.storages=0,1 runs only those of the list above (by index).
        final String pick = System.getProperty("streamcache.bk.bench.storages", "");
        final List<Storage> chosen = pick.isEmpty() ? storages
            : java.util.Arrays.stream(pick.split(",")).map(i -> storages.get(Integer.parseInt(i.trim()))).toList();
        final StringBuilder table = new StringBuilder(
            "| storage | entry | ledgers | adds/s | MB/s | p50 µs | p99 µs | p99.9 µs | CPU ms/MB | switches/add |\n"
                + "|---|---|---|---|---|---|---|---|---|---|\n");
        final StringBuilder threads = new StringBuilder(
            "| storage | entry | ledgers | CPU µs per add by thread group (share of the process's) |\n|---|---|---|---|\n");
        final BenchRounds summary = new BenchRounds("adds/s", "MB/s", "p50 µs", "p99 µs", "p99.9 µs", "CPU ms/MB",
            "switches/add", "CPU µs/add");
        final int rounds = BenchRounds.rounds();
        for (int round = 0; round < rounds; round++) {
            for (final Storage storage : BenchRounds.order(chosen, round)) {
                final Path root = Files.createDirectories(directory.resolve(storage.name().replaceAll("[^A-Za-z]", "") + "-" + round));
                try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(root, 1, storage.conf());
                     BookKeeper bk = new BookKeeper(cluster.clientConf().setThrottleValue(0))) {
                    for (final int length : ints("streamcache.bk.bench.lengths", LENGTHS)) {
                        for (final int ledgers : ints("streamcache.bk.bench.ledgers", LEDGERS)) {
                            run(bk, length, ledgers, TimeUnit.SECONDS.toNanos(2), null);
                            final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
                            final long nanos = TimeUnit.SECONDS.toNanos(seconds);
                            final ThreadCpu before = ThreadCpu.snapshot();
                            final long adds = run(bk, length, ledgers, nanos, histogram);
                            final ThreadCpu after = ThreadCpu.snapshot();
                            final long[] cpu = after.totalSince(before);
                            final double perSecond = adds * 1e9 / nanos;
                            final double megabytes = (double) adds * length / (1 << 20);
                            final double cpuMsPerMb = cpu[0] / 1e6 / megabytes;
                            final double switchesPerAdd = (double) (cpu[1] + cpu[2]) / adds;
                            table.append(String.format(Locale.ROOT, "| %s | %d B | %d | %,.0f | %.1f | %d | %d | %d | %.1f | %.2f |%n",
                                storage.name(), length, ledgers, perSecond, perSecond * length / (1 << 20),
                                histogram.getValueAtPercentile(50) / 1000, histogram.getValueAtPercentile(99) / 1000,
                                histogram.getValueAtPercentile(99.9) / 1000, cpuMsPerMb, switchesPerAdd));
                            summary.add(storage.name() + " | " + length + " B | " + ledgers, perSecond, perSecond * length / (1 << 20),
                                histogram.getValueAtPercentile(50) / 1000.0, histogram.getValueAtPercentile(99) / 1000.0,
                                histogram.getValueAtPercentile(99.9) / 1000.0, cpuMsPerMb, switchesPerAdd,
                                cpu[0] / 1e3 / adds);
                            threads.append(String.format(Locale.ROOT, "| %s | %d B | %d | %s |%n", storage.name(), length, ledgers,
                                topGroups(after.cpuByGroup(before), cpu[0], adds)));
                            System.out.print(table);
                        }
                    }
                }
                // A round writes gigabytes (journal and log or entry log) on a disk other sessions share: not kept.
                deleteRecursively(root);
            }
        }
        System.out.println("\nBookie storage benchmark, " + seconds + " s per cell, every round:\n" + table);
        System.out.println("\nBookie storage benchmark, " + seconds + " s per cell, median [min, max] of " + rounds + " rounds:\n"
            + summary.table("storage | entry | ledgers"));
        System.out.println("\nBookie storage benchmark, CPU by thread (client and bookie share the JVM), every round:\n" + threads);
    }

    /** @return the thread groups that took at least 2% of {@code totalNanos}, largest first: "name µs/add (share)". */
    private static String topGroups(final java.util.Map<String, Long> groups, final long totalNanos, final long adds) {
        return groups.entrySet().stream()
            .filter(g -> g.getValue() * 50 >= totalNanos)
            .sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed())
            .map(g -> String.format(Locale.ROOT, "%s %.1f (%.0f%%)", g.getKey(), g.getValue() / 1e3 / adds,
                100.0 * g.getValue() / totalNanos))
            .collect(java.util.stream.Collectors.joining(", "));
    }

    private static void deleteRecursively(final Path root) throws java.io.IOException {
        try (java.util.stream.Stream<Path> walk = Files.walk(root)) {
            for (final Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** @return the comma-separated ints of system property {@code key}, or {@code defaults}. */
    private static int[] ints(final String key, final int[] defaults) {
        final String value = System.getProperty(key, "");
        return value.isEmpty() ? defaults : java.util.Arrays.stream(value.split(",")).mapToInt(v -> Integer.parseInt(v.trim())).toArray();
    }

    /** Adds {@code length}-byte entries round-robin over {@code ledgers} new ledgers for {@code nanos}. */
    private static long run(final BookKeeper bk, final int length, final int ledgers, final long nanos,
                            final Histogram histogram) throws Exception {
        final List<LedgerHandle> handles = new ArrayList<>();
        for (int i = 0; i < ledgers; i++) {
            handles.add(bk.createLedger(1, 1, 1, BookKeeper.DigestType.CRC32C, BookKeeperClusterTest.PASSWORD));
        }
        final byte[] data = new byte[length];
        new SplittableRandom(length).nextBytes(data);
        final Semaphore window = new Semaphore(WINDOW);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long end = System.nanoTime() + nanos;
        long adds = 0;
        int next = 0;
        while (System.nanoTime() < end && failure.get() == null) {
            window.acquire();
            final long start = System.nanoTime();
            handles.get(next).asyncAddEntry(data, (rc, lh, entryId, ctx) -> {
                if (rc != BKException.Code.OK) {
                    failure.compareAndSet(null, BKException.create(rc));
                } else if (histogram != null) {
                    synchronized (histogram) {
                        histogram.recordValue(Math.min(System.nanoTime() - start, histogram.getHighestTrackableValue()));
                    }
                }
                window.release();
            }, null);
            next = next + 1 == ledgers ? 0 : next + 1;
            adds++;
        }
        window.acquire(WINDOW);
        assertNull(failure.get());
        for (final LedgerHandle handle : handles) {
            handle.close();
        }
        return adds;
    }
}
