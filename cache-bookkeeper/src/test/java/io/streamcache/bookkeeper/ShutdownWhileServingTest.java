package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.util.DiskChecker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link StreamcacheLedgerStorage#shutdown()} while the bookie's request threads still add and
 * read entries (a bookie stops its storage while its server's threads may still be serving):
 * every call either completes with the right bytes or throws {@link IOException}; none reads
 * memory the close released (which could return another entry's bytes, or crash this JVM), none
 * throws anything else, and calls after the shutdown are refused. The cache is small, so reads
 * also come through the log.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ShutdownWhileServingTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 12;
    /** Entries up to 3 MB in a 4 MB cache: reads lend whole entries out of the cache, or come through the log. */
    private static final int MAX_PAYLOAD = 3_000_000;
    /** Entries each request thread keeps to read back: at most 16 x 3 MB of expected bytes per thread. */
    private static final int SAMPLE = 16;
    private static final byte[] KEY = "master-key".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path directory;

    @Test
    void shouldCompleteOrRefuseEveryCallCutByTheShutdown() throws Exception {
        long refused = 0;
        long served = 0;
        for (int round = 0; round < ROUNDS; round++) {
            final Path dir = Files.createDirectories(directory.resolve("r" + round));
            // Odd rounds lend zero-copy views of the cache, even rounds copies (the default).
            final StreamcacheLedgerStorage storage = open(dir, round % 2 == 1);
            final CountDownLatch started = new CountDownLatch(THREADS);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AtomicLong refusals = new AtomicLong();
            final AtomicLong calls = new AtomicLong();
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final long ledger = t + 1;
                storage.setMasterKey(ledger, KEY);
                final SplittableRandom random = new SplittableRandom(round * 31L + t);
                final Thread thread = new Thread(() -> serve(storage, ledger, random, started, refusals, calls, failure),
                    "request-" + t);
                thread.start();
                threads.add(thread);
            }
            started.await();
            TimeUnit.MILLISECONDS.sleep(20 + 15 * round);
            storage.shutdown();
            for (final Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!thread.isAlive(), thread.getName() + " still runs after the shutdown");
            }
            if (failure.get() != null) {
                throw new AssertionError("round " + round + ": a call cut by the shutdown failed otherwise", failure.get());
            }
            assertEquals(THREADS, refusals.get(), "every request thread ends on a refused call");
            assertThrows(IOException.class, () -> storage.getEntry(1, 0));
            assertThrows(IOException.class, () -> storage.addEntry(StreamcacheLedgerStorageTest.entry(1, 1_000_000, -1, 10,
                new SplittableRandom(0))));
            refused += refusals.get();
            served += calls.get();
        }
        assertTrue(served > 0, "no call was served before the shutdowns");
        assertEquals(THREADS * ROUNDS, refused);
    }

    @Test
    void shouldKeepALentZeroCopyViewReadableUntilItIsReleased() throws Exception {
        final StreamcacheLedgerStorage storage = open(Files.createDirectories(directory.resolve("lent")), true);
        storage.setMasterKey(7, KEY);
        final ByteBuf written = StreamcacheLedgerStorageTest.entry(7, 0, -1, 1 << 20, new SplittableRandom(7));
        storage.addEntry(written);
        storage.flush();
        final ByteBuf lent = storage.getEntry(7, 0);
        assertEquals(1, storage.store().cacheManager().stats().pinnedResults(), "the entry is lent from the cache, not copied");
        final Thread shutdown = new Thread(() -> {
            try {
                storage.shutdown();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "shutdown");
        shutdown.start();
        // The shutdown refuses new calls at once, then waits for the lent buffer.
        while (true) {
            try {
                storage.getEntry(7, 0).release();
            } catch (final IOException e) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(1);
        }
        TimeUnit.MILLISECONDS.sleep(200);
        assertTrue(shutdown.isAlive(), "the shutdown freed the cache under a buffer still lent out");
        assertTrue(ByteBufUtil.equals(written, lent), "the lent buffer changed while the storage shut down");
        lent.release();
        shutdown.join(TimeUnit.SECONDS.toMillis(30));
        assertTrue(!shutdown.isAlive(), "the shutdown did not end once the buffer came back");
    }

    /**
     * Adds entries to its own ledger and reads back random earlier ones until a call is refused.
     * It keeps a uniform sample of {@link #SAMPLE} of the entries written so far (reservoir
     * sampling, Vitter's algorithm R), not all of them: a thread that serves for seconds writes
     * gigabytes, which would fill this JVM's heap with expected bytes rather than test the storage.
     */
    private static void serve(final StreamcacheLedgerStorage storage, final long ledger, final SplittableRandom random,
                              final CountDownLatch started, final AtomicLong refusals, final AtomicLong calls,
                              final AtomicReference<Throwable> failure) {
        started.countDown();
        final List<ByteBuf> written = new ArrayList<>();
        try {
            for (long entry = 0; ; entry++) {
                final ByteBuf e = StreamcacheLedgerStorageTest.entry(ledger, entry, entry - 1, random.nextInt(100, MAX_PAYLOAD), random);
                storage.addEntry(e);
                if (written.size() < SAMPLE) {
                    written.add(e);
                } else {
                    final long slot = random.nextLong(entry + 1);
                    if (slot < SAMPLE) {
                        written.set((int) slot, e);
                    }
                }
                final ByteBuf expected = written.get(random.nextInt(written.size()));
                final ByteBuf actual = storage.getEntry(ledger, expected.getLong(8));
                try {
                    if (!ByteBufUtil.equals(expected, actual)) {
                        throw new AssertionError("ledger " + ledger + " entry " + expected.getLong(8) + " read other bytes");
                    }
                } finally {
                    actual.release();
                }
                calls.incrementAndGet();
            }
        } catch (final IOException e) {
            refusals.incrementAndGet();
        } catch (final Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    private static StreamcacheLedgerStorage open(final Path dir, final boolean zeroCopyReads) throws Exception {
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setLedgerDirNames(new String[] {dir.toString()});
        conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 4L << 20);
        conf.setProperty(StreamcacheStorageSettings.LOG_FILE_BYTES, 16L << 20);
        conf.setProperty(StreamcacheStorageSettings.ZERO_COPY_READS, zeroCopyReads);
        final LedgerDirsManager dirs = new LedgerDirsManager(conf, new File[] {dir.toFile()},
            new DiskChecker(conf.getDiskUsageThreshold(), conf.getDiskUsageWarnThreshold()));
        final StreamcacheLedgerStorage storage = new StreamcacheLedgerStorage();
        storage.initialize(conf, null, dirs, dirs, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT);
        storage.start();
        return storage;
    }
}
