package io.streamcache.segmentstore.eviction;

/**
 * An immutable snapshot of what a {@link CacheManager} did to one tier of its cache; safe to
 * pass between threads. A cache of one tier has one, whose evictions are all the manager's.
 *
 * @param index               the tier, 0 the fastest.
 * @param name                the tier's name.
 * @param targetUtilization   the utilization passes bring the tier back to.
 * @param utilization         the tier's used data blocks as a fraction of its data blocks now.
 * @param demotions           entries the manager moved out of this tier into the next.
 * @param promotions          entries the manager moved into this tier from a slower one.
 * @param evictions           entries the manager evicted out of this tier (from the last tier by
 *                            age; from the others when the admission policy refused them or the
 *                            next tier had no room).
 * @param admissionRejections entries of this tier the admission policy kept out of the next tier.
 */
public record ManagedTierStats(
    int index,
    String name,
    double targetUtilization,
    double utilization,
    long demotions,
    long promotions,
    long evictions,
    long admissionRejections) {
}
