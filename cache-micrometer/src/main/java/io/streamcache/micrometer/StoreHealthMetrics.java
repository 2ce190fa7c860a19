package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.StoreHealth;

import java.util.Objects;

/**
 * Micrometer gauges over a store's {@link SegmentStore#health()}: {@code streamcache.store.health}
 * (0 healthy, 1 degraded, 2 failed: {@link StoreHealth.State#ordinal()}) and
 * {@code streamcache.store.health.issue} per reason (tag {@code reason}: 1 while that issue is
 * present, else 0), every meter tagged {@code store=<name>}. Thread-safe; each gauge evaluates
 * the health when scraped (no lock of the data path; one {@code statfs} of the log's file system).
 */
public final class StoreHealthMetrics implements MeterBinder {
    private final SegmentStore store;
    private final Tags tags;

    /**
     * @param store the store to report.
     * @param tags  extra tags for every meter.
     */
    public StoreHealthMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this.store = Objects.requireNonNull(store, "store");
        this.tags = Tags.of(tags).and("store", store.name());
    }

    /** @param store the store to report, with no extra tags. */
    public StoreHealthMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.gauge("store.health", null, "the store's health: 0 healthy, 1 degraded, 2 failed", store, s -> s.health().state().ordinal());
        for (final StoreHealth.Reason reason : StoreHealth.Reason.values()) {
            meters.with("reason", reason.name()).gauge("store.health.issue", null, "1 while the store has an issue of that reason, else 0",
                store, s -> s.health().has(reason) ? 1 : 0);
        }
    }
}
