package io.streamcache.pravega;

import io.micrometer.core.instrument.Gauge;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.contracts.AttributeUpdateCollection;
import io.pravega.segmentstore.contracts.ReadResult;
import io.pravega.segmentstore.contracts.SegmentType;
import io.pravega.segmentstore.server.SegmentContainer;
import io.pravega.segmentstore.storage.cache.CacheState;
import io.pravega.shared.metrics.MetricRegistryUtils;
import io.pravega.shared.metrics.MetricsConfig;
import io.pravega.shared.metrics.MetricsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pravega's own cache metrics on this storage, in a whole Pravega segment container: Pravega's
 * {@code CacheManager} reports {@code pravega.segmentstore.cache.stored_size_bytes},
 * {@code used_size_bytes} and {@code allocated_size_bytes} from {@code CacheStorage.getState()},
 * and {@code gen} and {@code manager_iteration_duration_ms} from its own iterations; with
 * statistics on they appear and carry the storage's figures once the read index caches appends.
 * The manager iterates on its own timer (every 100 ms here): the test waits for its report, it
 * asserts no time.
 */
@Timeout(120)
class PravegaCacheMetricsTest {
    private static final String PREFIX = "pravega.segmentstore.cache.";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @BeforeEach
    void enableStatistics() {
        MetricsProvider.initialize(MetricsConfig.builder().with(MetricsConfig.ENABLE_STATISTICS, true).build());
        MetricsProvider.getMetricsProvider().startWithoutExporting();
    }

    @AfterEach
    void disableStatistics() {
        MetricsProvider.getMetricsProvider().close();
        MetricsProvider.initialize(MetricsConfig.builder().with(MetricsConfig.ENABLE_STATISTICS, false).build());
    }

    /** @return the gauge's value once Pravega reported it as {@code expected}, failing after a minute. */
    private static double awaitGauge(final String name, final java.util.function.DoubleSupplier expected) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            final Gauge gauge = MetricRegistryUtils.getGauge(PREFIX + name);
            final double want = expected.getAsDouble();
            if (gauge != null && gauge.value() == want) {
                return gauge.value();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(PREFIX + name + " is " + (gauge == null ? "not reported" : gauge.value()) + ", want " + want);
            }
            Thread.sleep(50);
        }
    }

    @Test
    void shouldReportPravegasCacheGaugesFromTheStoragesState() throws Exception {
        final StreamcacheCacheStorage storage = StreamcacheCacheStorage.create(64L << 20);
        try (InProcessContainer process = new InProcessContainer(storage,
            new io.pravega.segmentstore.server.CachePolicy(64L << 20, Duration.ofSeconds(60), Duration.ofMillis(100)), 4)) {
            final SegmentContainer container = process.container();
            container.createStreamSegment("metrics", SegmentType.STREAM_SEGMENT, Collections.emptyList(), TIMEOUT).get(30, TimeUnit.SECONDS);
            final byte[] data = new byte[10_000];
            for (int i = 0; i < 100; i++) {
                container.append("metrics", new ByteArraySegment(data), new AttributeUpdateCollection(), TIMEOUT).get(30, TimeUnit.SECONDS);
            }
            try (ReadResult read = container.read("metrics", 0, 1_000_000, TIMEOUT).get(30, TimeUnit.SECONDS)) {
                assertTrue(read.hasNext());
            }
            // Once the writer has moved the appends to tier 2 nothing changes: the gauges settle on the storage's state.
            final double stored = awaitGauge("stored_size_bytes", () -> storage.getState().getStoredBytes());
            assertTrue(stored >= 100 * 10_000, "the appends are cached: " + stored);
            final CacheState state = storage.getState();
            assertEquals(state.getUsedBytes(), awaitGauge("used_size_bytes", () -> storage.getState().getUsedBytes()));
            assertEquals(state.getAllocatedBytes(), awaitGauge("allocated_size_bytes", () -> storage.getState().getAllocatedBytes()));
            assertTrue(state.getUsedBytes() >= state.getStoredBytes(), "used counts whole blocks and metadata");
            assertTrue(MetricRegistryUtils.getGauge(PREFIX + "gen").value() >= 0, "the generation spread is reported");
            final io.micrometer.core.instrument.Timer iterations = MetricRegistryUtils.getTimer(PREFIX + "manager_iteration_duration_ms");
            assertTrue(iterations != null && iterations.count() >= 1, "Pravega times its iterations: "
                + io.micrometer.core.instrument.Metrics.globalRegistry.find(PREFIX + "manager_iteration_duration_ms").meters());
        }
    }
}
