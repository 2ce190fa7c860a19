package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.cache.TierStats;

import java.util.Objects;

/**
 * Micrometer meters over a {@link BlockCache}'s {@link CacheStats}: per tier (tag {@code tier}) its
 * capacity, use, entries, free blocks, hits, demotions and promotions, and for the cache its
 * metadata and full-cache calls; every meter tagged {@code cache=<name>}. Thread-safe: bind it
 * to any number of registries from any thread; each meter reads a fresh snapshot when it is
 * scraped ({@link BlockCache#stats()}, which stops no writer). {@code docs/operations.md} lists
 * every meter with its unit.
 */
public final class BlockCacheMetrics implements MeterBinder {
    private final BlockCache cache;
    private final Tags tags;

    /**
     * @param cache the cache to report.
     * @param tags  extra tags for every meter (e.g. the broker's {@code bookie} or {@code container}).
     */
    public BlockCacheMetrics(final BlockCache cache, final Iterable<Tag> tags) {
        this.cache = Objects.requireNonNull(cache, "cache");
        this.tags = Tags.of(tags).and("cache", cache.name());
    }

    /** @param cache the cache to report, with no extra tags. */
    public BlockCacheMetrics(final BlockCache cache) {
        this(cache, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final Meters meters = new Meters(registry, tags);
        meters.gauge("cache.metadata", Meters.BYTES, "bytes of block metadata (block 0 of every buffer)", cache,
            c -> c.stats().metadataBytes());
        meters.counter("cache.full.calls", "calls", "times an allocation found the cache full and called its full handler",
            cache, c -> c.stats().fullHandlerCalls());
        meters.counter("cache.full.failures", "operations", "operations failed with CacheFullException", cache,
            c -> c.stats().fullFailures());
        final int tiers = cache.tierCount();
        for (int i = 0; i < tiers; i++) {
            final int tier = i;
            final Meters t = meters.with("tier", cache.tierName(tier));
            t.gauge("cache.capacity", Meters.BYTES, "memory of the tier's online buffers, data plus metadata", cache,
                c -> tier(c, tier).capacity());
            t.gauge("cache.capacity.max", Meters.BYTES, "memory the tier may grow to", cache, c -> tier(c, tier).maxCapacity());
            t.gauge("cache.used", Meters.BYTES, "memory of the tier's used data blocks", cache,
                c -> (double) tier(c, tier).usedBlockCount() * c.stats().blockLength());
            t.gauge("cache.stored", Meters.BYTES, "bytes of the entries whose last block is in the tier", cache,
                c -> tier(c, tier).storedBytes());
            t.gauge("cache.entries", "entries", "entries whose last block is in the tier", cache, c -> tier(c, tier).entryCount());
            t.gauge("cache.blocks.free", "blocks", "free data blocks of the tier", cache, c -> tier(c, tier).freeBlockCount());
            t.gauge("cache.buffers", "buffers", "online buffers of the tier", cache, c -> tier(c, tier).bufferCount());
            t.gauge("cache.utilization", null, "used data blocks of the tier as a fraction of its data blocks, in [0, 1]", cache,
                c -> tier(c, tier).utilization());
            t.counter("cache.hits", "reads", "reads of entries whose last block is in the tier (may undercount under contention)",
                cache, c -> tier(c, tier).hits());
            t.counter("cache.demotions", "entries", "entries relocated out of the tier into a slower one", cache,
                c -> tier(c, tier).demotions());
            t.counter("cache.promotions", "entries", "entries relocated into the tier from a slower one", cache,
                c -> tier(c, tier).promotions());
        }
    }

    private static TierStats tier(final BlockCache cache, final int tier) {
        return cache.stats().tier(tier);
    }
}
