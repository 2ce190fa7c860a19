package io.streamcache.core.memory;

/**
 * An immutable snapshot of a {@link MemoryMonitor}; safe to pass between threads.
 *
 * @param ticks          readings taken.
 * @param shrinks        resizes that shrank the target (the headroom fell below the low watermark).
 * @param grows          resizes that grew it back (the headroom rose above the high watermark).
 * @param shrunkBytes    bytes given back by shrinks, in all.
 * @param grownBytes     bytes taken by grows, in all.
 * @param failures       ticks whose reading or resize threw (logged).
 * @param capacity       the target's capacity after the last tick.
 * @param limit          the last reading's limit (-1: unknown).
 * @param used           the last reading's use against it (-1: unknown).
 * @param headroom       the last reading's smallest headroom, in bytes, over the limits known.
 */
public record MemoryMonitorStats(long ticks, long shrinks, long grows, long shrunkBytes, long grownBytes, long failures,
                                 long capacity, long limit, long used, long headroom) {
}
