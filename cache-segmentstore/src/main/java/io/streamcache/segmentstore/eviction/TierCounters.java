package io.streamcache.segmentstore.eviction;

import io.streamcache.core.cache.BlockCache;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The per-tier counters of a {@link CacheManager}: demotions out of, promotions into, evictions
 * from and admission rejections of each tier. Thread-safe: each counter is a {@link LongAdder},
 * added to by the passes ({@link EvictionPasses}, under the pass lock) and the promotion drain
 * ({@link Promotions}), summed by any thread for {@link CacheManager#stats()} and the MXBean.
 * A cache of one tier uses only the evictions of tier 0.
 */
final class TierCounters {
    final LongAdder[] demotions;
    final LongAdder[] promotions;
    final LongAdder[] evictions;
    final LongAdder[] rejections;

    /**
     * @param tierCount tiers of the managed cache, &gt;= 1.
     */
    TierCounters(final int tierCount) {
        this.demotions = adders(tierCount);
        this.promotions = adders(tierCount);
        this.evictions = adders(tierCount);
        this.rejections = adders(tierCount);
    }

    /** @return the number of tiers counted. */
    int tierCount() {
        return evictions.length;
    }

    /**
     * @param cache   the managed cache (its tier names and, while open, its tier utilization).
     * @param targets each tier's target utilization.
     * @return an immutable snapshot of every tier's counters.
     */
    List<ManagedTierStats> snapshot(final BlockCache cache, final double[] targets) {
        final boolean open = !cache.isClosed();
        final int tierCount = tierCount();
        final List<ManagedTierStats> tiers = new ArrayList<>(tierCount);
        for (int t = 0; t < tierCount; t++) {
            final double utilization = open ? (double) cache.tierUsedBlocks(t) / cache.tierBlocks(t) : 0.0;
            tiers.add(new ManagedTierStats(t, cache.tierName(t), targets[t], utilization, demotions[t].sum(),
                promotions[t].sum(), evictions[t].sum(), rejections[t].sum()));
        }
        return tiers;
    }

    /**
     * @return every adder's sum, in tier order.
     */
    static long[] sums(final LongAdder[] adders) {
        final long[] sums = new long[adders.length];
        for (int i = 0; i < sums.length; i++) {
            sums[i] = adders[i].sum();
        }
        return sums;
    }

    private static LongAdder[] adders(final int count) {
        final LongAdder[] adders = new LongAdder[count];
        for (int i = 0; i < count; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
    }
}
