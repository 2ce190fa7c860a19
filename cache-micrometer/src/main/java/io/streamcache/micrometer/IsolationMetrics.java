package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.IsolationStats;
import io.streamcache.segmentstore.SegmentStore;

import java.util.Objects;

/**
 * Micrometer meters over a store's {@link IsolationStats}: appends that waited for cache room
 * (a timer) or were refused, fills from the log by outcome (tag {@code outcome}), the read budget
 * (limit, use, waiting reads, waits as a timer, refusals) and reads past the end; every meter
 * tagged {@code store=<name>}. Thread-safe; meters read {@link SegmentStore#isolationStats()} when scraped.
 */
public final class IsolationMetrics implements MeterBinder {
    private final SegmentStore store;
    private final Tags tags;

    /**
     * @param store the store to report.
     * @param tags  extra tags for every meter.
     */
    public IsolationMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this.store = Objects.requireNonNull(store, "store");
        this.tags = Tags.of(tags).and("store", store.name());
    }

    /** @param store the store to report, with no extra tags. */
    public IsolationMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.timer("isolation.append.room.waits", "appends that found no cache room and waited for memory, and the time they waited",
            store, s -> s.isolationStats().appendRoomWaits(), s -> s.isolationStats().appendRoomWaitNanos());
        meters.counter("isolation.append.room.refusals", "appends", "appends that found no room within the wait (CacheFullException)",
            store, s -> s.isolationStats().appendRoomRefusals());
        meters.with("outcome", "admitted").counter("isolation.fills", "fills", "pieces of ranges read from the log, by outcome", store,
            s -> s.isolationStats().fillsAdmitted());
        meters.with("outcome", "refused_no_room").counter("isolation.fills", "fills", "pieces of ranges read from the log, by outcome",
            store, s -> s.isolationStats().fillsRefusedNoRoom());
        meters.with("outcome", "refused_budget").counter("isolation.fills", "fills", "pieces of ranges read from the log, by outcome",
            store, s -> s.isolationStats().fillsRefusedBudget());
        meters.with("outcome", "refused_unread").counter("isolation.fills", "fills", "pieces of ranges read from the log, by outcome",
            store, s -> s.isolationStats().fillsRefusedUnread());
        meters.counter("isolation.fill.admitted", Meters.BYTES, "bytes of the fills put back into the cache", store,
            s -> s.isolationStats().fillBytesAdmitted());
        meters.gauge("isolation.read.budget.limit", Meters.BYTES, "the store's read budget", store, s -> s.isolationStats().readBudgetBytes());
        meters.gauge("isolation.read.budget.used", Meters.BYTES, "bytes charged to the store's read budget now", store,
            s -> s.isolationStats().readBudgetUsedBytes());
        meters.gauge("isolation.read.budget.waiting", "reads", "reads waiting for room in a read budget now", store,
            s -> s.isolationStats().readBudgetWaiting());
        meters.timer("isolation.read.budget.waits", "reads that waited for room in a read budget, and the time they waited", store,
            s -> s.isolationStats().readBudgetWaits(), s -> s.isolationStats().readBudgetWaitNanos());
        meters.counter("isolation.read.budget.refusals", "reads", "reads refused at once by a fail-fast budget", store,
            s -> s.isolationStats().readBudgetRefusals());
        meters.counter("isolation.reads.past.end", "reads", "reads at an offset past the segment's end", store,
            s -> s.isolationStats().readsPastEnd());
        meters.counter("isolation.reads.handed.off", "reads", "asynchronous reads handed to the read-timeouts thread because their segment's lock was held",
            store, s -> s.isolationStats().readsHandedOff());
        meters.gauge("isolation.range.buffers", Meters.BYTES, "direct memory held by the pool that ranges read from the log go through",
            store, s -> s.isolationStats().rangeBufferBytes());
        meters.counter("isolation.range.heap.fallbacks", "ranges", "ranges read from the log into a heap array because the pool was at its limit",
            store, s -> s.isolationStats().rangeHeapFallbacks());
    }
}
