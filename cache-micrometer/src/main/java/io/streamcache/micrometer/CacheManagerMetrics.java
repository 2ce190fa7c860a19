package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import io.streamcache.segmentstore.eviction.EvictionReasons;
import io.streamcache.segmentstore.eviction.ManagedTierStats;

import java.util.Objects;
import java.util.function.ToLongFunction;

/**
 * Micrometer meters over a {@link CacheManager}'s {@link CacheManagerStats}: passes, evictions by
 * reason (tag {@code reason}), bytes evicted, utilization against its target, promotions, pins,
 * the entry pool, and per tier (tag {@code tier}) demotions, promotions, evictions and admission
 * rejections; every meter tagged {@code manager=<name>}, {@code cache=<name>} and
 * {@code policy=<policy class>}. Thread-safe: bind it from any thread; each meter reads a fresh
 * {@link CacheManager#stats()} when scraped. {@code docs/operations.md} lists every meter.
 */
public final class CacheManagerMetrics implements MeterBinder {
    private final CacheManager manager;
    private final Tags tags;

    /**
     * @param manager the manager to report.
     * @param tags    extra tags for every meter.
     */
    public CacheManagerMetrics(final CacheManager manager, final Iterable<Tag> tags) {
        this.manager = Objects.requireNonNull(manager, "manager");
        this.tags = Tags.of(tags).and("manager", manager.name()).and("cache", manager.cache().name())
            .and("policy", manager.policy().getClass().getSimpleName());
    }

    /** @param manager the manager to report, with no extra tags. */
    public CacheManagerMetrics(final CacheManager manager) {
        this(manager, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.counter("manager.passes", "passes", "eviction passes run (timer, on demand, full cache)", manager, m -> m.stats().runs());
        reason(meters, "to_target", EvictionReasons::toTarget);
        reason(meters, "cache_full", EvictionReasons::cacheFull);
        reason(meters, "demoted", EvictionReasons::demoted);
        reason(meters, "resized", EvictionReasons::resized);
        reason(meters, "truncated_or_deleted", EvictionReasons::truncatedOrDeleted);
        meters.counter("manager.evicted", Meters.BYTES, "bytes of the entries passes evicted", manager, m -> m.stats().evictedBytes());
        meters.gauge("manager.utilization", null, "the cache's used data blocks as a fraction of all, in [0, 1]", manager,
            m -> m.stats().utilization());
        meters.gauge("manager.utilization.target", null, "the utilization passes evict down to", manager,
            CacheManager::targetUtilization);
        meters.gauge("manager.generation", null, "the current generation", manager, CacheManager::generation);
        meters.counter("manager.full.calls", "calls", "times the cache called the manager because it was full", manager,
            m -> m.stats().fullHandlerCalls());
        meters.counter("manager.busy.skips", "segments", "segments a pass skipped because another thread held their lock", manager,
            m -> m.stats().busySkips());
        meters.counter("manager.promotion.requests", "entries", "entries queued for promotion", manager,
            m -> m.stats().promotionRequests());
        meters.counter("manager.promotion.drops", "entries", "promotion requests dropped because the queue was full", manager,
            m -> m.stats().promotionDrops());
        meters.counter("manager.promotion.skips", "entries", "queued entries not promoted", manager, m -> m.stats().promotionSkips());
        meters.gauge("manager.pinned.results", "results", "read results holding pins now (read, not yet released)", manager,
            m -> m.stats().pinnedResults());
        meters.gauge("manager.pins", "pins", "pins those results hold, one per entry per result", manager, m -> m.stats().entryPins());
        meters.counter("manager.leaked.results", "results", "read results collected unreleased (Netty's leak detector)", manager,
            m -> m.stats().leakedResults());
        pool(meters, "taken", "entries reused from the pool", s -> s.entryPool().taken());
        pool(meters, "made", "entries made new because the pool was empty", s -> s.entryPool().made());
        pool(meters, "recycled", "entries given back and kept", s -> s.entryPool().recycled());
        pool(meters, "dropped", "entries given back but dropped because the pool was full", s -> s.entryPool().dropped());
        meters.gauge("manager.entry.pool.size", "entries", "entries in the pool now", manager, m -> m.stats().entryPool().pooled());
        final int tiers = manager.cache().tierCount();
        for (int i = 0; i < tiers; i++) {
            final int tier = i;
            final Meters t = meters.with("tier", manager.cache().tierName(tier));
            t.gauge("manager.tier.utilization.target", null, "the utilization passes bring the tier back to", manager,
                m -> m.tierTargetUtilization(tier));
            t.counter("manager.tier.demotions", "entries", "entries moved out of the tier into the next", manager,
                m -> tier(m, tier).demotions());
            t.counter("manager.tier.promotions", "entries", "entries moved into the tier from a slower one", manager,
                m -> tier(m, tier).promotions());
            t.counter("manager.tier.evictions", "entries", "entries evicted out of the tier", manager, m -> tier(m, tier).evictions());
            t.counter("manager.tier.admission.rejections", "entries", "entries the admission policy kept out of the next tier",
                manager, m -> tier(m, tier).admissionRejections());
        }
    }

    private void reason(final Meters meters, final String reason, final ToLongFunction<EvictionReasons> count) {
        meters.with("reason", reason).counter("manager.evictions", "entries",
            "entries that left the cache or their tier, by reason", manager, m -> count.applyAsLong(m.stats().evictionsByReason()));
    }

    private void pool(final Meters meters, final String what, final String description, final ToLongFunction<CacheManagerStats> count) {
        meters.counter("manager.entry.pool." + what, "entries", description, manager, m -> count.applyAsLong(m.stats()));
    }

    private static ManagedTierStats tier(final CacheManager manager, final int tier) {
        return manager.stats().tier(tier);
    }
}
