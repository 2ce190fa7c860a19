package io.streamcache.bookkeeper;

import io.streamcache.segmentstore.StoreHealth;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The storage's figures in the bookie's own metrics: a real bookie (a real ZooKeeper, BookKeeper's
 * {@code EmbeddedServer}) with BookKeeper's Prometheus stats provider serving {@code /metrics} on
 * a loopback port, written to and read by BookKeeper's client; the scrape shows DbLedgerStorage's
 * names under the bookie scope and this storage's own under {@code bookie_streamcache_}, and
 * their values move with the traffic.
 */
// BookKeeper's client declares close() throws InterruptedException: try-with-resources is still right.
@SuppressWarnings("try")
@Timeout(120)
class StorageStatsTest {
    private static final byte[] PASSWORD = "stats".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path directory;

    private static String scrape(final int port) throws IOException {
        final HttpURLConnection connection = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/metrics").openConnection();
        try (InputStream in = connection.getInputStream()) {
            assertEquals(200, connection.getResponseCode());
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } finally {
            connection.disconnect();
        }
    }

    /** @return the sum of the samples {@code name{...}} (every label set), failing if there is none. */
    private static double sample(final String text, final String name) {
        final Matcher line = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(text);
        double sum = 0;
        boolean found = false;
        while (line.find()) {
            found = true;
            sum += Double.parseDouble(line.group(2));
        }
        assertTrue(found, "no sample " + name + " in the scrape");
        return sum;
    }

    @Test
    void shouldReportThroughTheBookiesPrometheusProvider() throws Exception {
        final int port = LocalBookKeeperCluster.freePort();
        try (LocalBookKeeperCluster cluster = new LocalBookKeeperCluster(directory, 1, conf -> prometheusBookie(conf, port));
             BookKeeper bk = cluster.client()) {
            final StreamcacheLedgerStorage storage = (StreamcacheLedgerStorage) cluster.storage(0);
            assertEquals(StoreHealth.HEALTHY, storage.health());
            final String before = scrape(port);
            assertEquals(0, sample(before, "bookie_read_cache_hits"));
            assertEquals(0, sample(before, "bookie_streamcache_health"));
            final double forcesBefore = sample(before, "bookie_streamcache_log_forces");

            final int entries = 40;
            final LedgerHandle lh = bk.createLedger(1, 1, 1, BookKeeper.DigestType.CRC32C, PASSWORD);
            for (long e = 0; e < entries; e++) {
                lh.addEntry(Payloads.payload(lh.getId(), e));
            }
            readAll(lh, entries);
            // Everything out of the cache: the next reads go to the log.
            storage.store().cacheManager().evictDownTo(0.0);
            readAll(lh, entries);
            lh.close();
            storage.flush();

            final String text = scrape(port);
            // DbLedgerStorage's names, which a bookie's dashboards already show.
            assertTrue(sample(text, "bookie_add_entry_count") >= entries, "adds counted");
            assertTrue(sample(text, "bookie_read_entry_count") >= 2 * entries, "reads counted");
            assertTrue(sample(text, "bookie_read_cache_hits") >= entries, "the tail reads hit the cache");
            // After the eviction the first read misses; its range (with read-ahead) fills the cache for the next ones.
            final double misses = sample(text, "bookie_read_cache_misses");
            assertTrue(misses >= 1, "the reads after the eviction missed");
            assertTrue(sample(text, "bookie_read_cache_hits") + misses >= 2 * entries, "every read is a hit or a miss");
            assertEquals(misses, sample(text, "bookie_read_entrylog_time_count"), "each miss timed reading the log");
            assertTrue(sample(text, "bookie_flush_count") >= 1);
            assertTrue(sample(text, "bookie_read_cache_size") > 0, "the misses filled the cache again");
            assertTrue(text.contains("ledgerDir=\""), "labelled by ledger directory as DbLedgerStorage's are");
            // This storage's own.
            assertTrue(sample(text, "bookie_streamcache_cache_capacity") >= 48L << 20);
            assertTrue(sample(text, "bookie_streamcache_log_bytes_written") >= entries * Payloads.payload(lh.getId(), 0).length);
            assertTrue(sample(text, "bookie_streamcache_log_forces") > forcesBefore);
            assertTrue(sample(text, "bookie_streamcache_log_read_bytes") > 0);
            assertTrue(sample(text, "bookie_streamcache_log_bytes_on_disk") > 0);
            assertTrue(sample(text, "bookie_streamcache_cache_evictions") >= 1);
            assertEquals(0, sample(text, "bookie_streamcache_log_failed"));
            assertEquals(0, sample(text, "bookie_streamcache_health"));
            sample(text, "bookie_streamcache_compaction_passes");
        }
    }

    private static void readAll(final LedgerHandle lh, final int entries) throws Exception {
        final Enumeration<LedgerEntry> read = lh.readEntries(0, entries - 1);
        long id = 0;
        while (read.hasMoreElements()) {
            assertArrayEquals(Payloads.payload(lh.getId(), id), read.nextElement().getEntry());
            id++;
        }
        assertEquals(entries, id);
    }

    private static void prometheusBookie(final ServerConfiguration conf, final int port) {
        BookKeeperClusterTest.streamcacheBookie(conf);
        conf.setStatsProviderClass(org.apache.bookkeeper.stats.prometheus.PrometheusMetricsProvider.class);
        conf.setProperty("enableStatistics", true);
        conf.setProperty(org.apache.bookkeeper.stats.prometheus.PrometheusMetricsProvider.PROMETHEUS_STATS_HTTP_ADDRESS, "127.0.0.1");
        conf.setProperty(org.apache.bookkeeper.stats.prometheus.PrometheusMetricsProvider.PROMETHEUS_STATS_HTTP_PORT, port);
    }
}
