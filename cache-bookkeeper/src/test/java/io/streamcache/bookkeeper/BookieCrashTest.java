package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.net.BookieId;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bookie on {@link StreamcacheLedgerStorage} in a child JVM, killed with SIGKILL while writers
 * add to it, and restarted on the same directories: every entry it acknowledged is on it
 * afterwards. The ledgers are written with ack quorum 3, so that an acknowledged add is one the
 * killed bookie acknowledged. Run with the journal writing data (the bookie's default: the
 * journal replay restores what the storage had not forced) and without
 * ({@code journalWriteData=false}: the storage's own forced log is all there is).
 */
// BookKeeper's clients declare close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
class BookieCrashTest {

    private static final Logger LOG = LoggerFactory.getLogger(BookieCrashTest.class);

    @TempDir
    Path directory;

    @ParameterizedTest(name = "journalWriteData={0}")
    @ValueSource(booleans = {true, false})
    @Timeout(300)
    void shouldKeepEveryAcknowledgedEntryOfABookieKilledWithSigkill(final boolean journalWriteData) throws Exception {
        final int writers = 3;
        try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(directory, 2, BookKeeperClusterTest::streamcacheBookie)) {
            final int port = LocalBookKeeperCluster.freePort();
            final Path childDir = directory.resolve("child-bookie");
            final BookieId childId = BookieId.parse("127.0.0.1:" + port);
            Process child = startChild(cluster, port, childDir, journalWriteData, 0);
            cluster.awaitAvailable(childId, true);

            final Map<Long, AtomicLong> lastAcked = new ConcurrentHashMap<>();
            final AtomicLong acked = new AtomicLong();
            final ClientConfiguration clientConf = cluster.clientConf();
            clientConf.setAddEntryTimeout(10);
            final ExecutorService pool = Executors.newFixedThreadPool(writers);
            try (BookKeeper bk = new BookKeeper(clientConf)) {
                final List<Future<?>> writing = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    writing.add(pool.submit(() -> {
                        final LedgerHandle lh = bk.createLedger(3, 3, 3, BookKeeper.DigestType.CRC32C, BookKeeperClusterTest.PASSWORD);
                        final AtomicLong last = new AtomicLong(-1);
                        lastAcked.put(lh.getId(), last);
                        final Semaphore window = new Semaphore(8);
                        final AtomicLong failed = new AtomicLong();
                        for (long e = 0; failed.get() == 0 && e < 1_000_000; e++) {
                            window.acquire();
                            lh.asyncAddEntry(Payloads.payload(lh.getId(), e), (rc, handle, entryId, ctx) -> {
                                if (rc == BKException.Code.OK) {
                                    // Adds complete in entry order: the last OK is the highest acknowledged.
                                    last.set(entryId);
                                    acked.incrementAndGet();
                                } else {
                                    failed.incrementAndGet();
                                }
                                window.release();
                            }, null);
                        }
                        window.acquire(8);
                        return null;
                    }));
                }
                while (acked.get() < 600) {
                    Thread.sleep(10);
                }
                // Process.destroyForcibly() is kill(pid, SIGKILL) on Linux.
                child.destroyForcibly();
                assertEquals(137, child.waitFor(), "the child died of SIGKILL");
                LOG.info("child bookie killed at acked={} journalWriteData={}", acked.get(), journalWriteData);
                for (final Future<?> f : writing) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }

            child = startChild(cluster, port, childDir, journalWriteData, 1);
            cluster.awaitAvailable(childId, true);
            try (BookKeeper bk = cluster.client()) {
                for (final Map.Entry<Long, AtomicLong> ledger : lastAcked.entrySet()) {
                    final long last = ledger.getValue().get();
                    assertTrue(last >= 0, "ledger=" + ledger.getKey() + " had adds acknowledged");
                    final LedgerHandle recovered = bk.openLedger(ledger.getKey(), BookKeeper.DigestType.CRC32C,
                        BookKeeperClusterTest.PASSWORD);
                    assertTrue(recovered.getLastAddConfirmed() >= last,
                        "recovery lost acknowledged entries of ledger=" + ledger.getKey() + ": lac=" + recovered.getLastAddConfirmed() + " last=" + last);
                    final Enumeration<LedgerEntry> entries = recovered.readEntries(0, last);
                    long id = 0;
                    while (entries.hasMoreElements()) {
                        assertArrayEquals(Payloads.payload(ledger.getKey(), id), entries.nextElement().getEntry());
                        id++;
                    }
                    assertEquals(last + 1, id);
                }
            }
            child.destroy();
            child.waitFor(60, TimeUnit.SECONDS);
            if (child.isAlive()) {
                child.destroyForcibly();
                child.waitFor();
            }

            // The killed bookie itself holds every entry it acknowledged, byte for byte.
            final ServerConfiguration conf = LocalBookKeeperCluster.bookieConf(cluster.metadataUri(), port, childDir);
            BookKeeperClusterTest.streamcacheBookie(conf);
            final StreamcacheLedgerStorage storage = BookKeeperClusterTest.openStorage(conf);
            try {
                long checked = 0;
                for (final Map.Entry<Long, AtomicLong> ledger : lastAcked.entrySet()) {
                    for (long e = 0; e <= ledger.getValue().get(); e++) {
                        final byte[] payload = Payloads.payload(ledger.getKey(), e);
                        final ByteBuf entry = storage.getEntry(ledger.getKey(), e);
                        try {
                            final byte[] stored = new byte[entry.readableBytes() - BookKeeperClusterTest.ENTRY_HEADER_LENGTH];
                            entry.getBytes(entry.readerIndex() + BookKeeperClusterTest.ENTRY_HEADER_LENGTH, stored);
                            assertTrue(Arrays.equals(payload, stored), "ledger=" + ledger.getKey() + " entry=" + e);
                        } finally {
                            entry.release();
                        }
                        checked++;
                    }
                }
                LOG.info("killed bookie holds all checked={} acknowledged entries", checked);
            } finally {
                storage.shutdown();
            }
        }
    }

    private static Process startChild(final LocalBookKeeperCluster cluster, final int port, final Path dir,
                                      final boolean journalWriteData, final int run) throws Exception {
        Files.createDirectories(dir);
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:MaxDirectMemorySize=256m",
            "--add-opens", "java.base/java.io=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), BookieProcess.class.getName(),
            cluster.metadataUri(), Integer.toString(port), dir.toString(), Boolean.toString(journalWriteData)));
        return new ProcessBuilder(command).redirectOutput(dir.resolve("out-" + run + ".log").toFile())
            .redirectError(dir.resolve("err-" + run + ".log").toFile()).start();
    }
}
