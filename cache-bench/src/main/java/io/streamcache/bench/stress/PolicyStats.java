package io.streamcache.bench.stress;

import java.util.Locale;

/**
 * What the eviction policy of a stress run did that the cache statistics do not show; an
 * immutable value.
 *
 * @param policy                 the {@code --policy} of the run.
 * @param readerRegistrations    reader-aware: readers registered (one per reader and segment it read); 0 otherwise.
 * @param registeredReadersMax   reader-aware: the most readers registered at once, as sampled once a second; 0 otherwise.
 * @param registeredReadersAtEnd reader-aware: readers still registered once every reader stopped (0: all closed); 0 otherwise.
 * @param hitmapApplied          hitmap: uses applied to the counters; 0 otherwise.
 * @param hitmapDrops            hitmap: uses dropped because the updater's queue was full; 0 otherwise.
 */
record PolicyStats(StressConfig.Policy policy, long readerRegistrations, long registeredReadersMax, long registeredReadersAtEnd,
                   long hitmapApplied, long hitmapDrops) {

    /** @return one line for the console summary. */
    String describe() {
        switch (policy) {
            case READER_AWARE:
                return String.format(Locale.ROOT, "%s, %,d readers registered, at most %,d at once, %,d still registered at the end",
                    policy.flag(), readerRegistrations, registeredReadersMax, registeredReadersAtEnd);
            case HITMAP:
                return String.format(Locale.ROOT, "%s, %,d uses counted, %,d dropped (updater queue full)", policy.flag(), hitmapApplied,
                    hitmapDrops);
            default:
                return policy.flag();
        }
    }
}
