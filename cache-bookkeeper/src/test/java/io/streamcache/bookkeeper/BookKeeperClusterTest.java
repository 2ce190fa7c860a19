package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.LastConfirmedAndEntry;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.util.DiskChecker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Three real bookies on {@link StreamcacheLedgerStorage} and a real ZooKeeper in this JVM, driven
 * by BookKeeper's own client. {@code -Dstreamcache.bk.heavy=true} runs the long variant (more
 * writers, ledgers and entries); CI runs the short one.
 */
// BookKeeper's clients and handles declare close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
class BookKeeperClusterTest {

    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperClusterTest.class);
    static final byte[] PASSWORD = "streamcache".getBytes(StandardCharsets.UTF_8);
    static final boolean HEAVY = Boolean.getBoolean("streamcache.bk.heavy");
    /** Header of a stored entry with a CRC32C digest: ledger, entry, LAC, length (8 bytes each), digest (4). */
    static final int ENTRY_HEADER_LENGTH = 4 * Long.BYTES + Integer.BYTES;

    @TempDir
    Path directory;

    static void streamcacheBookie(final ServerConfiguration conf) {
        conf.setLedgerStorageClass(StreamcacheLedgerStorage.class.getName());
        conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 48L << 20);
        conf.setProperty(StreamcacheStorageSettings.LOG_FILE_BYTES, 32L << 20);
        conf.setGcWaitTime(1000);
    }

    /** A ledger a writer made, as readers learn of it. */
    private static final class Written {
        final long ledgerId;
        final CompletableFuture<Long> lastEntry = new CompletableFuture<>();

        Written(final long ledgerId) {
            this.ledgerId = ledgerId;
        }
    }

    @Test
    @Timeout(600)
    void shouldReadBackEveryAcknowledgedEntryAfterConcurrentWritesTailReadsAndABookieRestart() throws Exception {
        final int writers = HEAVY ? 8 : 4;
        final int ledgersPerWriter = HEAVY ? 10 : 3;
        final int entriesPerLedger = HEAVY ? 1000 : 120;
        final long total = (long) writers * ledgersPerWriter * entriesPerLedger;
        final ConcurrentLinkedQueue<Written> ledgers = new ConcurrentLinkedQueue<>();
        final BlockingQueue<Written> toTail = new LinkedBlockingQueue<>();
        final AtomicLong acked = new AtomicLong();
        final AtomicLong tailed = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(directory, 3, BookKeeperClusterTest::streamcacheBookie)) {
            final ClientConfiguration clientConf = cluster.clientConf();
            clientConf.setDelayEnsembleChange(true);
            clientConf.setExplictLacInterval(200);
            clientConf.setAddEntryTimeout(30);
            final ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
            try (BookKeeper bk = new BookKeeper(clientConf)) {
                final List<Future<?>> writing = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    writing.add(pool.submit(() -> {
                        for (int l = 0; l < ledgersPerWriter; l++) {
                            final LedgerHandle lh = create(bk);
                            final Written ledger = new Written(lh.getId());
                            ledgers.add(ledger);
                            final Semaphore window = new Semaphore(16);
                            for (long e = 0; e < entriesPerLedger; e++) {
                                window.acquire();
                                lh.asyncAddEntry(Payloads.payload(lh.getId(), e), (rc, handle, entryId, ctx) -> {
                                    if (rc == BKException.Code.OK) {
                                        acked.incrementAndGet();
                                        if (entryId == 0) {
                                            // Tailed once a bookie holds it: until its first entry no bookie knows
                                            // the ledger, and a long poll then fails with NoSuchLedgerExists.
                                            toTail.add(ledger);
                                        }
                                    } else {
                                        failure.compareAndSet(null, BKException.create(rc));
                                    }
                                    window.release();
                                }, null);
                            }
                            window.acquire(16);
                            lh.close();
                            ledger.lastEntry.complete(lh.getLastAddConfirmed());
                        }
                        return null;
                    }));
                }
                final List<Future<?>> tailing = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    tailing.add(pool.submit(() -> {
                        while (true) {
                            final Written ledger = toTail.poll(100, TimeUnit.MILLISECONDS);
                            if (ledger == null) {
                                if (writing.stream().allMatch(Future::isDone) && toTail.isEmpty()) {
                                    return null;
                                }
                                continue;
                            }
                            tail(bk, ledger, tailed);
                        }
                    }));
                }

                // One bookie goes down while the writers are at it, and comes back.
                awaitProgress(acked, total / 3, writing);
                cluster.stop(2);
                LOG.info("bookie 2 stopped at acked={}", acked.get());
                final long downAt = acked.get();
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (acked.get() < downAt + total / 4 && System.nanoTime() < deadline && failure.get() == null) {
                    Thread.sleep(20);
                }
                cluster.start(2);
                LOG.info("bookie 2 restarted at acked={}", acked.get());

                for (final Future<?> f : writing) {
                    f.get(10, TimeUnit.MINUTES);
                }
                for (final Future<?> f : tailing) {
                    f.get(10, TimeUnit.MINUTES);
                }
                assertNull(failure.get(), () -> "an add failed: " + failure.get());
                assertEquals(total, acked.get());
                assertEquals(total, tailed.get(), "the tailing readers saw every entry");

                // Every acknowledged entry reads back through the client, the restarted bookie included.
                for (final Written ledger : ledgers) {
                    try (ReadHandle rh = bk.newOpenLedgerOp().withLedgerId(ledger.ledgerId).withRecovery(false)
                             .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).withPassword(PASSWORD)
                             .execute().get();
                         LedgerEntries entries = rh.read(0, entriesPerLedger - 1)) {
                        long id = 0;
                        for (final org.apache.bookkeeper.client.api.LedgerEntry entry : entries) {
                            assertArrayEquals(Payloads.payload(ledger.ledgerId, id), entry.getEntryBytes(),
                                "ledger=" + ledger.ledgerId + " entry=" + id);
                            id++;
                        }
                        assertEquals(entriesPerLedger, id);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            // Clean shutdown of every bookie: what each storage holds is now on disk.
            cluster.close();
            verifyEveryCopy(cluster, ledgers, entriesPerLedger);
        }
    }

    @Test
    @Timeout(300)
    void shouldFenceALedgerOpenedWithRecoveryAndKeepEveryAcknowledgedEntry() throws Exception {
        try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(directory, 3, BookKeeperClusterTest::streamcacheBookie);
             BookKeeper writer = cluster.client();
             BookKeeper recoverer = cluster.client()) {
            final LedgerHandle lh = writer.createLedger(3, 3, 2, BookKeeper.DigestType.CRC32C, PASSWORD);
            for (long e = 0; e < 200; e++) {
                assertEquals(e, lh.addEntry(Payloads.payload(lh.getId(), e)));
            }
            final LedgerHandle recovered = recoverer.openLedger(lh.getId(), BookKeeper.DigestType.CRC32C, PASSWORD);
            assertEquals(199, recovered.getLastAddConfirmed(), "recovery keeps every acknowledged entry");
            final BKException fenced = assertThrows(BKException.class, () -> lh.addEntry(new byte[] {1}));
            assertEquals(BKException.Code.LedgerFencedException, fenced.getCode(), fenced.toString());
            final Enumeration<LedgerEntry> entries = recovered.readEntries(0, 199);
            long id = 0;
            while (entries.hasMoreElements()) {
                assertArrayEquals(Payloads.payload(lh.getId(), id), entries.nextElement().getEntry());
                id++;
            }
            assertEquals(200, id);

            // The fence is durable: it survives a restart of every bookie.
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
                cluster.start(i);
            }
            try (BookKeeper late = cluster.client()) {
                final LedgerHandle again = late.openLedgerNoRecovery(lh.getId(), BookKeeper.DigestType.CRC32C, PASSWORD);
                assertEquals(199, again.getLastAddConfirmed());
                assertArrayEquals(Payloads.payload(lh.getId(), 150), again.readEntries(150, 150).nextElement().getEntry());
            }
        }
    }

    @Test
    @Timeout(300)
    void shouldDeleteLedgersThroughTheBookiesGarbageCollection() throws Exception {
        try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(directory, 3, BookKeeperClusterTest::streamcacheBookie);
             BookKeeper bk = cluster.client()) {
            final List<Long> ids = new ArrayList<>();
            for (int l = 0; l < 4; l++) {
                final LedgerHandle lh = bk.createLedger(3, 3, 2, BookKeeper.DigestType.CRC32C, PASSWORD);
                for (long e = 0; e < 20; e++) {
                    lh.addEntry(Payloads.payload(lh.getId(), e));
                }
                lh.close();
                ids.add(lh.getId());
            }
            bk.deleteLedger(ids.get(1));
            bk.deleteLedger(ids.get(3));
            for (int b = 0; b < 3; b++) {
                final org.apache.bookkeeper.bookie.LedgerStorage storage = cluster.storage(b);
                assertTrue(storage.getUnderlyingLedgerStorage() instanceof StreamcacheLedgerStorage);
                // The bookie's collector runs every gcWaitTime (1 s here): wait for it, bounded by @Timeout.
                while (storage.ledgerExists(ids.get(1)) || storage.ledgerExists(ids.get(3))) {
                    Thread.sleep(50);
                }
                assertTrue(storage.ledgerExists(ids.get(0)) && storage.ledgerExists(ids.get(2)), "live ledgers are kept");
            }
            // Gone for good: not back after a restart, and the live ones still read.
            cluster.stop(0);
            cluster.start(0);
            assertTrue(!cluster.storage(0).ledgerExists(ids.get(1)) && cluster.storage(0).ledgerExists(ids.get(2)));
            final LedgerHandle live = bk.openLedger(ids.get(2), BookKeeper.DigestType.CRC32C, PASSWORD);
            assertArrayEquals(Payloads.payload(ids.get(2), 19), live.readEntries(19, 19).nextElement().getEntry());
        }
    }

    private static LedgerHandle create(final BookKeeper bk) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return bk.createLedger(3, 3, 2, BookKeeper.DigestType.CRC32C, PASSWORD);
            } catch (final BKException.BKNotEnoughBookiesException e) {
                // A bookie is down: ensemble 3 needs all three; wait for its restart.
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Follows a ledger as it is written, with long-poll LAC reads, checking every entry. */
    private static void tail(final BookKeeper bk, final Written ledger, final AtomicLong tailed) throws Exception {
        long next = 0;
        try (ReadHandle rh = bk.newOpenLedgerOp().withLedgerId(ledger.ledgerId).withRecovery(false)
                 .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).withPassword(PASSWORD).execute().get()) {
            while (true) {
                if (ledger.lastEntry.isDone() && next > ledger.lastEntry.join()) {
                    return;
                }
                try (LastConfirmedAndEntry r = rh.readLastAddConfirmedAndEntryAsync(next, 200, false).get(60, TimeUnit.SECONDS)) {
                    if (r.hasEntry()) {
                        assertArrayEquals(Payloads.payload(ledger.ledgerId, next), r.getEntry().getEntryBytes(),
                            "tail read ledger=" + ledger.ledgerId + " entry=" + next);
                        next++;
                        tailed.incrementAndGet();
                        continue;
                    }
                }
                if (ledger.lastEntry.isDone()) {
                    break;
                }
            }
        }
        // Closed: the last entries' LAC is in the ledger's metadata, not in any entry.
        final long last = ledger.lastEntry.join();
        if (next <= last) {
            try (ReadHandle closed = bk.newOpenLedgerOp().withLedgerId(ledger.ledgerId).withRecovery(false)
                     .withDigestType(org.apache.bookkeeper.client.api.DigestType.CRC32C).withPassword(PASSWORD).execute().get();
                 LedgerEntries entries = closed.read(next, last)) {
                for (final org.apache.bookkeeper.client.api.LedgerEntry entry : entries) {
                    assertArrayEquals(Payloads.payload(ledger.ledgerId, next), entry.getEntryBytes());
                    next++;
                    tailed.incrementAndGet();
                }
            }
        }
    }

    private static void awaitProgress(final AtomicLong acked, final long target, final List<Future<?>> writing) throws Exception {
        while (acked.get() < target) {
            for (final Future<?> f : writing) {
                if (f.isDone()) {
                    f.get();
                }
            }
            Thread.sleep(10);
        }
    }

    /**
     * Opens each stopped bookie's storage directly and checks that every acknowledged entry is
     * held by at least the ack quorum, and that every copy is the written bytes.
     */
    static void verifyEveryCopy(final LocalBookKeeperCluster cluster, final Iterable<Written> ledgers,
                                final int entriesPerLedger) throws Exception {
        final List<StreamcacheLedgerStorage> storages = new ArrayList<>();
        try {
            for (final LocalBookKeeperCluster.Bookie bookie : cluster.bookies()) {
                storages.add(openStorage(bookie.conf));
            }
            long copies = 0;
            for (final Written ledger : ledgers) {
                for (long e = 0; e < entriesPerLedger; e++) {
                    final byte[] payload = Payloads.payload(ledger.ledgerId, e);
                    int held = 0;
                    for (final StreamcacheLedgerStorage storage : storages) {
                        if (!storage.ledgerExists(ledger.ledgerId) || !storage.entryExists(ledger.ledgerId, e)) {
                            continue;
                        }
                        final ByteBuf entry = storage.getEntry(ledger.ledgerId, e);
                        try {
                            assertEquals(ENTRY_HEADER_LENGTH + payload.length, entry.readableBytes());
                            assertEquals(ledger.ledgerId, entry.getLong(entry.readerIndex()));
                            assertEquals(e, entry.getLong(entry.readerIndex() + 8));
                            final byte[] stored = new byte[payload.length];
                            entry.getBytes(entry.readerIndex() + ENTRY_HEADER_LENGTH, stored);
                            if (!Arrays.equals(payload, stored)) {
                                fail("ledger=" + ledger.ledgerId + " entry=" + e + " differs on a bookie");
                            }
                        } finally {
                            entry.release();
                        }
                        held++;
                    }
                    assertTrue(held >= 2, "ledger=" + ledger.ledgerId + " entry=" + e + " is on held=" + held + " bookies");
                    copies += held;
                }
            }
            LOG.info("verified copies={} on {} bookies", copies, storages.size());
        } finally {
            for (final StreamcacheLedgerStorage storage : storages) {
                storage.shutdown();
            }
        }
    }

    static StreamcacheLedgerStorage openStorage(final ServerConfiguration bookieConf) throws Exception {
        final ServerConfiguration conf = new ServerConfiguration(bookieConf);
        final LedgerDirsManager dirs = new LedgerDirsManager(conf, conf.getLedgerDirs(),
            new DiskChecker(conf.getDiskUsageThreshold(), conf.getDiskUsageWarnThreshold()));
        final StreamcacheLedgerStorage storage = new StreamcacheLedgerStorage();
        storage.initialize(conf, null, dirs, dirs, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT);
        return storage;
    }
}
