package io.streamcache.micrometer;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The meters as a Prometheus server scrapes them: the text exposition of a
 * {@link PrometheusMeterRegistry} names each meter by Prometheus' conventions (underscores, the
 * base unit, {@code _total} on counters, seconds on timers) and carries the values of a workload.
 */
@Timeout(60)
class PrometheusScrapeTest {
    @TempDir
    Path directory;

    /** @return the value of the sample {@code name{...labels...}} whose labels contain {@code labelPart}. */
    private static double sample(final String text, final String name, final String labelPart) {
        final Matcher line = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$").matcher(text);
        while (line.find()) {
            if (line.group(1).contains(labelPart)) {
                return Double.parseDouble(line.group(2));
            }
        }
        throw new AssertionError("no sample " + name + "{..." + labelPart + "...} in:\n" + text);
    }

    @Test
    void shouldScrapeEveryFamilyWithPrometheusNames() throws Exception {
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Workload work = new Workload(directory.resolve("log"), "scraped")) {
            new StreamcacheMetrics(work.store).bindTo(registry);
            final String before = registry.scrape();
            assertEquals(0, sample(before, "streamcache_log_written_bytes_total", "store=\"scraped\""));
            work.run(32);
            final String text = registry.scrape();
            assertTrue(sample(text, "streamcache_log_written_bytes_total", "store=\"scraped\"") >= 32 * Workload.APPEND);
            assertTrue(sample(text, "streamcache_log_requests_total", "outcome=\"success\"") >= 32);
            assertTrue(sample(text, "streamcache_log_forces_seconds_count", "store=\"scraped\"") >= 1);
            assertTrue(sample(text, "streamcache_log_forces_seconds_sum", "store=\"scraped\"") > 0);
            assertTrue(sample(text, "streamcache_cache_hits_reads_total", "cache=\"scraped-cache\"") >= 32);
            assertTrue(sample(text, "streamcache_cache_capacity_bytes", "tier=\"") > 0);
            assertTrue(sample(text, "streamcache_manager_evictions_entries_total", "reason=\"to_target\"") >= 1);
            assertTrue(sample(text, "streamcache_reads_log_read_bytes_total", "store=\"scraped\"") >= 32 * Workload.APPEND);
            assertTrue(sample(text, "streamcache_isolation_fills_total", "outcome=\"admitted\"") >= 1);
            assertEquals(0, sample(text, "streamcache_store_health", "store=\"scraped\""));
            assertEquals(0, sample(text, "streamcache_store_health_issue", "reason=\"LOG_FAILED\""));
            assertEquals(0, sample(text, "streamcache_warm_restore_duration_seconds", "phase=\"cache\""));
            assertTrue(text.contains("# HELP streamcache_log_written_bytes_total bytes written: records, padding and carried tails"),
                "descriptions become HELP lines");
            assertTrue(text.contains("# TYPE streamcache_cache_used_bytes gauge"));
            assertTrue(text.contains("# TYPE streamcache_log_requests_total counter"));
        } finally {
            registry.close();
        }
    }
}
