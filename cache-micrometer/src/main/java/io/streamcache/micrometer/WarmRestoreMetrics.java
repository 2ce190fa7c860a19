package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.WarmRestoreStats;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer gauges over what a store's warm restart brought back ({@link WarmRestoreStats}, fixed
 * when the store was built): whether it came back warm, catalog entries, entries and bytes
 * restored, entries discarded by reason (tag {@code reason}, every reason registered so that the
 * series exist at 0), and the time it took (tag {@code phase}); every meter tagged
 * {@code store=<name>}. Thread-safe; immutable values.
 */
public final class WarmRestoreMetrics implements MeterBinder {
    /** The discard reasons: the cache's ({@code WarmStart.Discard}) and the store's. */
    static final List<String> REASONS = List.of("REGION_NOT_KEPT", "BUFFER_OFFLINE", "DAMAGED_CHAIN", "CLAIMED_TWICE", "DIGEST_MISMATCH",
        "IDENTITY", "SEGMENT_GONE", "TRUNCATED", "NOT_DURABLE", "OVERLAP");

    private final WarmRestoreStats warm;
    private final Tags tags;

    /**
     * @param store the store to report.
     * @param tags  extra tags for every meter.
     */
    public WarmRestoreMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this.warm = Objects.requireNonNull(store, "store").warmRestore();
        this.tags = Tags.of(tags).and("store", store.name());
    }

    /** @param store the store to report, with no extra tags. */
    public WarmRestoreMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.gauge("warm.restore.warm", null, "1 if the cache came back warm at the last start, else 0", warm, w -> w.warm() ? 1 : 0);
        meters.gauge("warm.restore.catalog.entries", "entries", "records in the warm-restart catalog", warm, WarmRestoreStats::catalogEntries);
        meters.gauge("warm.restore.restored.entries", "entries", "entries indexed again without reading the log", warm,
            WarmRestoreStats::restoredEntries);
        meters.gauge("warm.restore.restored", Meters.BYTES, "bytes of those entries", warm, WarmRestoreStats::restoredBytes);
        for (final String reason : REASONS) {
            meters.with("reason", reason).gauge("warm.restore.discarded", "entries", "catalog records discarded, by reason", warm,
                w -> w.discarded().getOrDefault(reason, 0L));
        }
        TimeGauge.builder(Meters.PREFIX + "warm.restore.duration", warm, TimeUnit.MILLISECONDS, WarmRestoreStats::cacheMillis)
            .description("time the warm restart took, by phase").tags(tags).tag("phase", "cache").register(registry);
        TimeGauge.builder(Meters.PREFIX + "warm.restore.duration", warm, TimeUnit.MILLISECONDS, WarmRestoreStats::attachMillis)
            .description("time the warm restart took, by phase").tags(tags).tag("phase", "attach").register(registry);
    }
}
