package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.StoreLog;

import java.util.Objects;

/**
 * Micrometer meters over a store's reads that miss the cache and go to the log (its historical
 * reads: ranges loaded, calls that joined a load, positional reads, bytes read back, failures,
 * loads in flight and queued), and over the store itself (segments, durable appends that found
 * no cache room); every meter tagged {@code store=<name>}. Cache hits are the cache's
 * ({@code streamcache.cache.hits}, per tier). Thread-safe; meters read fresh snapshots when scraped.
 */
public final class ReadMetrics implements MeterBinder {
    private final SegmentStore store;
    private final Tags tags;

    /**
     * @param store the store to report.
     * @param tags  extra tags for every meter.
     */
    public ReadMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this.store = Objects.requireNonNull(store, "store");
        this.tags = Tags.of(tags).and("store", store.name());
    }

    /** @param store the store to report, with no extra tags. */
    public ReadMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.gauge("store.segments", "segments", "segments of the store now", store, SegmentStore::segmentCount);
        meters.counter("store.uncached.commits", Meters.BYTES, "durable appends that could not enter the full cache (read from the log later)",
            store, SegmentStore::uncachedCommitBytes);
        final StoreLog log = store.log().orElse(null);
        if (log == null) {
            return;
        }
        meters.counter("reads.log.loads", "ranges", "ranges read from the log for reads that missed the cache", log,
            l -> l.historicalReadStats().loads());
        meters.counter("reads.log.joins", "reads", "misses that joined a range already being read", log,
            l -> l.historicalReadStats().joins());
        meters.counter("reads.log.file.reads", "reads", "positional reads of the log files", log, l -> l.historicalReadStats().fileReads());
        meters.counter("reads.log.read", Meters.BYTES, "bytes read back from the log files", log, l -> l.historicalReadStats().bytesRead());
        meters.counter("reads.log.failures", "ranges", "range reads that failed", log, l -> l.historicalReadStats().failures());
        meters.counter("reads.log.fill.failures", "ranges", "ranges whose bytes could not be put back in the cache", log,
            l -> l.historicalReadStats().fillFailures());
        meters.counter("reads.log.cached.meanwhile", "reads", "misses found cached by another read's fill when theirs would start", log,
            l -> l.historicalReadStats().cachedMeanwhile());
        meters.gauge("reads.log.in.flight", "ranges", "ranges being read now (or queued)", log, l -> l.historicalReadStats().inFlight());
        meters.gauge("reads.log.queued", "reads", "reads waiting for a reading thread now", log, l -> l.historicalReadStats().queued());
    }
}
