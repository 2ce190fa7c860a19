package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.SegmentStore;

import java.util.List;
import java.util.Objects;

/**
 * Every streamcache meter of one store in one binder: its cache ({@link BlockCacheMetrics}), its
 * cache manager ({@link CacheManagerMetrics}), its log ({@link LogMetrics}), its reads
 * ({@link ReadMetrics}), its isolation ({@link IsolationMetrics}), its warm restart
 * ({@link WarmRestoreMetrics}) and its health ({@link StoreHealthMetrics}). Thread-safe. Stores
 * that share a cache or a manager bind the store's own meters with {@link #storeOnly(SegmentStore, Iterable)}
 * and the shared cache and manager once, so that no meter is registered twice.
 *
 * <pre>
 *   new StreamcacheMetrics(store, Tags.of("container", "3")).bindTo(registry);
 * </pre>
 */
public final class StreamcacheMetrics implements MeterBinder {
    private final List<MeterBinder> binders;

    /**
     * @param store the store to report, with its cache and its manager.
     * @param tags  extra tags for every meter.
     */
    public StreamcacheMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this(Objects.requireNonNull(store, "store"), tags, true);
    }

    /** @param store the store to report, with its cache and its manager, and no extra tags. */
    public StreamcacheMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    private StreamcacheMetrics(final SegmentStore store, final Iterable<Tag> tags, final boolean shared) {
        final List<MeterBinder> own = List.of(new LogMetrics(store, tags), new ReadMetrics(store, tags), new IsolationMetrics(store, tags),
            new WarmRestoreMetrics(store, tags), new StoreHealthMetrics(store, tags));
        if (shared) {
            final List<MeterBinder> all = new java.util.ArrayList<>(own);
            all.add(0, new CacheManagerMetrics(store.cacheManager(), tags));
            all.add(0, new BlockCacheMetrics(store.cache(), tags));
            this.binders = List.copyOf(all);
        } else {
            this.binders = own;
        }
    }

    /**
     * @param store a store whose cache and manager are bound on their own (shared by several stores).
     * @param tags  extra tags for every meter.
     * @return the binder of the store's own meters: log, reads, isolation, warm restart, health.
     */
    public static StreamcacheMetrics storeOnly(final SegmentStore store, final Iterable<Tag> tags) {
        return new StreamcacheMetrics(Objects.requireNonNull(store, "store"), Tags.of(tags), false);
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        for (final MeterBinder binder : binders) {
            binder.bindTo(registry);
        }
    }
}
