package io.streamcache.bookkeeper;

import io.netty.util.internal.PlatformDependent;
import org.HdrHistogram.Histogram;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.LastConfirmedAndEntry;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The read side and the ledger count of one bookie in this JVM, on {@code DbLedgerStorage} and on
 * {@link StreamcacheLedgerStorage} (journal writing data, as the bookie's default), one after the
 * other on the same disk, ensemble, write and ack quorum 1 (not thread-safe; one test thread
 * drives each cell). Runs only with {@code -Dstreamcache.bk.bench=true}; each test is one table:
 *
 * <ul>
 *   <li>{@link #shouldCompareTailReadLatency}: a writer adds 1 KB entries to one ledger at a
 *       fixed rate; a reader long-polls the ledger's LAC ({@code readLastAddConfirmedAndEntry});
 *       the latency is from the add's acknowledgement (its callback) to the reader holding the
 *       entry. With ack quorum 1 an entry's LAC reaches the bookie with the next entry, so the
 *       floor is one interval between adds, the same for both storages.</li>
 *   <li>{@link #shouldCompareCatchUpReads}: 4 ledgers of 64 KB entries written, the bookie
 *       stopped, the page cache of every file under its directory dropped
 *       ({@code dd iflag=nocache}), the bookie restarted (its caches empty); then 4 readers read
 *       one ledger each from the start, 16 entries per read: MB/s.</li>
 *   <li>{@link #shouldCompareTenThousandLedgers}: 10,000 ledgers open at once, 1 KB adds
 *       round-robin over them with 64 in flight: adds/s and latency, and the JVM's heap (after a
 *       full GC) and direct memory with them open, less the same before they were created,
 *       per ledger. Bookie and client share the JVM, so the figure holds the client's ledger
 *       handles too: the same for both storages.</li>
 * </ul>
 * {@code -Dstreamcache.bk.bench.seconds=N} sets the measured time (default 5);
 * {@code -Dstreamcache.bk.bench.rounds=N} the rounds (default 3, storages in alternating order;
 * each figure printed as median [min, max]).
 */
// BookKeeper's clients declare close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
class BookieReadBenchmark {

    private static final byte[] PASSWORD = BookKeeperClusterTest.PASSWORD;
    private static final int TAIL_RATE = 1000;
    private static final int CATCH_UP_LEDGERS = 4;
    private static final int CATCH_UP_ENTRY = 64 * 1024;
    private static final long CATCH_UP_BYTES = 512L << 20;
    private static final int CATCH_UP_BATCH = 16;
    private static final int MANY_LEDGERS = 10_000;
    private static final int WINDOW = 64;

    @TempDir
    Path directory;

    private record Storage(String name, Consumer<ServerConfiguration> conf) {
    }

    /**
     * @return the storages compared: 0 DbLedgerStorage, 1 this storage with its defaults, 2 this
     *         storage with {@code streamcacheZeroCopyReads=true};
     *         {@code -Dstreamcache.bk.bench.storages=1,2} keeps only those (by index).
     */
    private static List<Storage> storages() {
        final List<Storage> all = allStorages();
        final String pick = System.getProperty("streamcache.bk.bench.storages", "");
        return pick.isEmpty() ? all : java.util.Arrays.stream(pick.split(",")).map(i -> all.get(Integer.parseInt(i.trim()))).toList();
    }

    private static List<Storage> allStorages() {
        return List.of(
            new Storage("DbLedgerStorage", conf -> {
                conf.setLedgerStorageClass(DbLedgerStorage.class.getName());
                conf.setProperty("dbStorage_writeCacheMaxSizeMb", 64);
                conf.setProperty("dbStorage_readAheadCacheMaxSizeMb", 64);
            }),
            new Storage("Streamcache", conf -> {
                conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
                conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 128L << 20);
            }),
            // Reads lent as read-only views of the cache instead of the default copy.
            new Storage("Streamcache zero-copy", conf -> {
                conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
                conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 128L << 20);
                conf.setProperty(StreamcacheStorageSettings.ZERO_COPY_READS, true);
            }));
    }

    private static long seconds() {
        Assumptions.assumeTrue(Boolean.getBoolean("streamcache.bk.bench"), "the benchmark runs only with -Dstreamcache.bk.bench=true");
        return Long.getLong("streamcache.bk.bench.seconds", 5);
    }

    private Path root(final Storage storage, final String test) throws IOException {
        return Files.createDirectories(directory.resolve(test + "-" + storage.name().replaceAll("[^A-Za-z]", "")));
    }

    // ---- tail reads ----

    @Test
    @Timeout(1800)
    void shouldCompareTailReadLatency() throws Exception {
        final long seconds = seconds();
        final StringBuilder table = new StringBuilder("| storage | adds/s (paced) | entries seen | p50 µs | p99 µs | p99.9 µs | max µs |\n"
            + "|---|---|---|---|---|---|---|\n");
        final BenchRounds summary = new BenchRounds("p50 µs", "p99 µs", "p99.9 µs", "max µs");
        final int rounds = BenchRounds.rounds();
        for (int round = 0; round < rounds; round++) {
            for (final Storage storage : BenchRounds.order(storages(), round)) {
                try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(root(storage, "tail-" + round), 1, storage.conf());
                     BookKeeper bk = new BookKeeper(cluster.clientConf().setThrottleValue(0))) {
                    final Histogram histogram = tail(bk, seconds);
                    table.append(String.format(Locale.ROOT, "| %s | %d | %,d | %d | %d | %d | %d |%n", storage.name(), TAIL_RATE,
                        histogram.getTotalCount(), histogram.getValueAtPercentile(50) / 1000, histogram.getValueAtPercentile(99) / 1000,
                        histogram.getValueAtPercentile(99.9) / 1000, histogram.getMaxValue() / 1000));
                    summary.add(storage.name(), histogram.getValueAtPercentile(50) / 1000.0, histogram.getValueAtPercentile(99) / 1000.0,
                        histogram.getValueAtPercentile(99.9) / 1000.0, histogram.getMaxValue() / 1000.0);
                    System.out.print(table);
                }
            }
        }
        System.out.println("\nTail-read latency (add acknowledged -> long-polling reader holds the entry), 1 KB entries, "
            + TAIL_RATE + " adds/s, " + seconds + " s measured, every round:\n" + table);
        System.out.println("\nTail-read latency, median [min, max] of " + rounds + " rounds:\n" + summary.table("storage"));
    }

    private static Histogram tail(final BookKeeper bk, final long seconds) throws Exception {
        final LedgerHandle writer = bk.createLedger(1, 1, 1, BookKeeper.DigestType.CRC32C, PASSWORD);
        final long warmUp = 2L * TAIL_RATE;
        final long total = warmUp + seconds * TAIL_RATE;
        final AtomicLongArray acked = new AtomicLongArray((int)total + 1);
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final byte[] data = new byte[1024];
        new SplittableRandom(1).nextBytes(data);
        // Entry 0 first: a bookie answers a read of a ledger it holds nothing of with NoSuchLedger.
        writer.addEntry(data);
        acked.set(0, System.nanoTime());
        final CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            try (ReadHandle rh = bk.newOpenLedgerOp().withLedgerId(writer.getId()).withRecovery(false)
                     .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).withPassword(PASSWORD).execute().get()) {
                // An entry carries the LAC the client knew when it sent it, which trails by up to the
                // window: the bookie never learns that the last WINDOW + 1 entries are confirmed.
                final long last = total - WINDOW - 2;
                long next = 0;
                while (next <= last && failure.get() == null) {
                    try (LastConfirmedAndEntry r = rh.readLastAddConfirmedAndEntryAsync(next, 1000, false).get(60, TimeUnit.SECONDS)) {
                        if (r.hasEntry()) {
                            final long seen = System.nanoTime();
                            final long ack = acked.get((int)next);
                            if (next >= warmUp) {
                                histogram.recordValue(Math.min(Math.max(0, ack == 0 ? 0 : seen - ack), histogram.getHighestTrackableValue()));
                            }
                            next++;
                        }
                    }
                }
            } catch (final Exception e) {
                failure.compareAndSet(null, e);
            }
        });
        final Semaphore window = new Semaphore(WINDOW);
        final long interval = TimeUnit.SECONDS.toNanos(1) / TAIL_RATE;
        final long start = System.nanoTime();
        for (long i = 1; i < total && failure.get() == null; i++) {
            final long due = start + i * interval;
            long now;
            while ((now = System.nanoTime()) < due) {
                LockSupport.parkNanos(due - now);
            }
            window.acquire();
            final int id = (int)i;
            writer.asyncAddEntry(data, (rc, lh, entryId, ctx) -> {
                if (rc != BKException.Code.OK) {
                    failure.compareAndSet(null, BKException.create(rc));
                } else {
                    acked.set(id, System.nanoTime());
                }
                window.release();
            }, null);
        }
        window.acquire(WINDOW);
        reader.get(120, TimeUnit.SECONDS);
        assertNull(failure.get());
        writer.close();
        return histogram;
    }

    // ---- catch-up reads ----

    @Test
    @Timeout(1800)
    void shouldCompareCatchUpReads() throws Exception {
        seconds();
        final StringBuilder table = new StringBuilder("| storage | ledgers x entries | data | read s | MB/s | page cache of the bookie's files before the read |\n"
            + "|---|---|---|---|---|---|\n");
        final int perLedger = (int)(CATCH_UP_BYTES / CATCH_UP_ENTRY / CATCH_UP_LEDGERS);
        final BenchRounds summary = new BenchRounds("MB/s", "read s");
        final int rounds = BenchRounds.rounds();
        for (int round = 0; round < rounds; round++) {
            for (final Storage storage : BenchRounds.order(storages(), round)) {
                final Path root = root(storage, "catchup-" + round);
                try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(root, 1, storage.conf());
                     BookKeeper bk = new BookKeeper(cluster.clientConf().setThrottleValue(0))) {
                    final List<Long> ids = write(bk, perLedger);
                    cluster.stop(0);
                    final Path bookieDir = cluster.bookies().get(0).directory;
                    dropPageCache(bookieDir);
                    final String cached = fincore(bookieDir);
                    cluster.start(0);
                    final AtomicLong bytes = new AtomicLong();
                    final long start = System.nanoTime();
                    final List<CompletableFuture<Void>> readers = new ArrayList<>();
                    for (final long id : ids) {
                        readers.add(CompletableFuture.runAsync(() -> readAll(bk, id, perLedger, bytes)));
                    }
                    CompletableFuture.allOf(readers.toArray(new CompletableFuture<?>[0])).get(600, TimeUnit.SECONDS);
                    final double elapsed = (System.nanoTime() - start) / 1e9;
                    assertEquals((long)perLedger * CATCH_UP_LEDGERS * CATCH_UP_ENTRY, bytes.get());
                    table.append(String.format(Locale.ROOT, "| %s | %d x %d | %d MiB | %.2f | %.1f | %s |%n", storage.name(), CATCH_UP_LEDGERS,
                        perLedger, CATCH_UP_BYTES >> 20, elapsed, bytes.get() / elapsed / (1 << 20), cached));
                    summary.add(storage.name(), bytes.get() / elapsed / (1 << 20), elapsed);
                    System.out.print(table);
                }
                // Each round's directories hold 1 GB (log or entry log, and journal): not kept.
                deleteRecursively(root);
            }
        }
        System.out.println("\nCatch-up reads of ledgers written earlier, every cache empty (64 KB entries, " + CATCH_UP_BATCH
            + " per read, one reader per ledger), every round:\n" + table);
        System.out.println("\nCatch-up reads, median [min, max] of " + rounds + " rounds:\n" + summary.table("storage"));
    }

    private static List<Long> write(final BookKeeper bk, final int perLedger) throws Exception {
        final List<LedgerHandle> handles = new ArrayList<>();
        for (int i = 0; i < CATCH_UP_LEDGERS; i++) {
            handles.add(bk.createLedger(1, 1, 1, BookKeeper.DigestType.CRC32C, PASSWORD));
        }
        final byte[] data = new byte[CATCH_UP_ENTRY];
        new SplittableRandom(2).nextBytes(data);
        final Semaphore window = new Semaphore(WINDOW);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int e = 0; e < perLedger; e++) {
            for (final LedgerHandle handle : handles) {
                window.acquire();
                handle.asyncAddEntry(data, (rc, lh, entryId, ctx) -> {
                    if (rc != BKException.Code.OK) {
                        failure.compareAndSet(null, BKException.create(rc));
                    }
                    window.release();
                }, null);
            }
        }
        window.acquire(WINDOW);
        assertNull(failure.get());
        final List<Long> ids = new ArrayList<>();
        for (final LedgerHandle handle : handles) {
            ids.add(handle.getId());
            handle.close();
        }
        return ids;
    }

    private static void readAll(final BookKeeper bk, final long id, final int entries, final AtomicLong bytes) {
        try (ReadHandle rh = bk.newOpenLedgerOp().withLedgerId(id).withRecovery(false)
                 .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).withPassword(PASSWORD).execute().get()) {
            for (long from = 0; from < entries; from += CATCH_UP_BATCH) {
                try (LedgerEntries read = rh.read(from, Math.min(entries - 1, from + CATCH_UP_BATCH - 1))) {
                    for (final LedgerEntry entry : read) {
                        bytes.addAndGet(entry.getEntryBuffer().readableBytes());
                    }
                }
            }
        } catch (final Exception e) {
            throw new AssertionError("catch-up read of ledger=" + id, e);
        }
    }

    /** Writes back and drops the page cache of every file under {@code root} (GNU dd's nocache flags; no root needed). */
    private static void dropPageCache(final Path root) throws Exception {
        final List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        for (final Path file : files) {
            run("dd", "if=/dev/null", "of=" + file, "oflag=nocache", "conv=notrunc,fdatasync", "count=0", "status=none");
            run("dd", "if=" + file, "iflag=nocache", "count=0", "status=none");
        }
    }

    /** @return the bytes of files under {@code root} in the page cache now, by {@code fincore}, or "n/a". */
    private static String fincore(final Path root) throws Exception {
        final List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        long cached = 0;
        long total = 0;
        for (final Path file : files) {
            total += Files.size(file);
            final Process p = new ProcessBuilder("fincore", "--bytes", "--noheadings", "--output", "RES", file.toString())
                .redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes()).trim();
            if (p.waitFor() != 0) {
                return "n/a";
            }
            if (!out.isEmpty()) {
                cached += Long.parseLong(out.split("\\s+")[0]);
            }
        }
        return String.format(Locale.ROOT, "%.1f of %d MiB", cached / (double)(1 << 20), total >> 20);
    }

    private static void deleteRecursively(final Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (final Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static void run(final String... command) throws Exception {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), () -> String.join(" ", command) + ": " + out);
    }

    // ---- 10,000 ledgers ----

    @Test
    @Timeout(1800)
    void shouldCompareTenThousandLedgers() throws Exception {
        final long seconds = seconds();
        final StringBuilder table = new StringBuilder("| storage | ledgers | adds/s | p50 µs | p99 µs | p99.9 µs | heap per open ledger | direct per open ledger |\n"
            + "|---|---|---|---|---|---|---|---|\n");
        final BenchRounds summary = new BenchRounds("adds/s", "p50 µs", "p99 µs", "p99.9 µs", "heap B per ledger", "direct B per ledger");
        final int rounds = BenchRounds.rounds();
        for (int round = 0; round < rounds; round++) {
            for (final Storage storage : BenchRounds.order(storages(), round)) {
                try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(root(storage, "many-" + round), 1, storage.conf());
                     BookKeeper bk = new BookKeeper(cluster.clientConf().setThrottleValue(0))) {
                    final long[] before = memory();
                    final List<LedgerHandle> handles = create(bk);
                    final byte[] data = new byte[1024];
                    new SplittableRandom(3).nextBytes(data);
                    // Every ledger gets entries first (the warm-up): then they all hold some.
                    add(handles, data, Math.max(2 * MANY_LEDGERS, 1), null);
                    final long[] after = memory();
                    final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
                    final long nanos = TimeUnit.SECONDS.toNanos(seconds);
                    final long adds = add(handles, data, nanos, histogram);
                    final double perSecond = adds * 1e9 / nanos;
                    table.append(String.format(Locale.ROOT, "| %s | %,d | %,.0f | %d | %d | %d | %,d B | %,d B |%n", storage.name(),
                        handles.size(), perSecond, histogram.getValueAtPercentile(50) / 1000, histogram.getValueAtPercentile(99) / 1000,
                        histogram.getValueAtPercentile(99.9) / 1000, (after[0] - before[0]) / MANY_LEDGERS,
                        (after[1] - before[1]) / MANY_LEDGERS));
                    summary.add(storage.name(), perSecond, histogram.getValueAtPercentile(50) / 1000.0,
                        histogram.getValueAtPercentile(99) / 1000.0, histogram.getValueAtPercentile(99.9) / 1000.0,
                        (after[0] - before[0]) / (double)MANY_LEDGERS, (after[1] - before[1]) / (double)MANY_LEDGERS);
                    System.out.print(table);
                    for (final LedgerHandle handle : handles) {
                        handle.asyncClose((rc, lh, ctx) -> { }, null);
                    }
                }
            }
        }
        System.out.println("\n" + MANY_LEDGERS + " ledgers open, 1 KB adds round-robin, " + WINDOW + " in flight, " + seconds
            + " s measured; memory: the JVM's (bookie and client) with the ledgers open and 2 entries each, less before they were"
            + " created, per ledger, every round:\n" + table);
        System.out.println("\n" + MANY_LEDGERS + " ledgers, median [min, max] of " + rounds + " rounds:\n" + summary.table("storage"));
    }

    private static List<LedgerHandle> create(final BookKeeper bk) throws Exception {
        final List<CompletableFuture<LedgerHandle>> futures = new ArrayList<>();
        final Semaphore window = new Semaphore(100);
        for (int i = 0; i < MANY_LEDGERS; i++) {
            window.acquire();
            final CompletableFuture<LedgerHandle> future = new CompletableFuture<>();
            bk.asyncCreateLedger(1, 1, 1, BookKeeper.DigestType.CRC32C, PASSWORD, (rc, lh, ctx) -> {
                if (rc == BKException.Code.OK) {
                    future.complete(lh);
                } else {
                    future.completeExceptionally(BKException.create(rc));
                }
                window.release();
            }, null, null);
            futures.add(future);
        }
        final List<LedgerHandle> handles = new ArrayList<>();
        for (final CompletableFuture<LedgerHandle> future : futures) {
            handles.add(future.get(120, TimeUnit.SECONDS));
        }
        return handles;
    }

    /**
     * Adds round-robin over {@code handles}: {@code limit} adds without a histogram, else for
     * {@code limit} nanoseconds recording latencies. @return the adds made.
     */
    private static long add(final List<LedgerHandle> handles, final byte[] data, final long limit, final Histogram histogram)
        throws Exception {
        final Semaphore window = new Semaphore(WINDOW);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long end = System.nanoTime() + limit;
        long adds = 0;
        int next = 0;
        while ((histogram == null ? adds < limit : System.nanoTime() < end) && failure.get() == null) {
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
            next = next + 1 == handles.size() ? 0 : next + 1;
            adds++;
        }
        window.acquire(WINDOW);
        assertNull(failure.get());
        return adds;
    }

    /** @return {heap used after full GCs, direct memory used (NIO buffers and Netty's own counter)}. */
    private static long[] memory() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        final long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long direct = 0;
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                direct += pool.getMemoryUsed();
            }
        }
        final long netty = PlatformDependent.usedDirectMemory();
        assertTrue(heap > 0);
        return new long[] {heap, direct + Math.max(0, netty)};
    }
}
