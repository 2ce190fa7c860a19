package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import io.streamcache.segmentstore.eviction.ReaderRegistry.TrackedReader;

/**
 * What the {@link ReaderAwarePolicy} learns from its readers, pass by pass: confined to the
 * cache manager's pass (one thread at a time), it reads the {@link ReaderRegistry} (whose
 * reader sets it locks briefly to take their pending re-read counts) and updates the
 * {@link ReuseModel}.
 *
 * <p>A re-read session is a reader that started behind its segment's tail: when it ends (a
 * registered reader closes, or an inferred one goes idle past the timeout or stalls) what it
 * read (how far behind the tail it started, how much it read) teaches the model once. Each
 * segment's popularity is its count of re-reads, decayed with the model's half-life; its rate
 * and length buckets place it in the model's table for the pass's ranking.
 */
final class ReuseLearning {
    private final ReaderRegistry registry;
    private final ReuseModel model;
    private final long idleTimeout;
    private boolean passed;
    private int lastPassGeneration;

    ReuseLearning(final ReaderRegistry registry, final ReuseModel model, final long idleTimeout) {
        this.registry = registry;
        this.model = model;
        this.idleTimeout = idleTimeout;
    }

    /**
     * Updates what the policy learned, at the start of a pass: the re-read sessions that ended,
     * each segment's popularity (its re-reads, decayed by the generations since the last pass)
     * and the model's rates.
     *
     * @param currentGeneration the pass's generation.
     * @param now               the pass's clock.
     */
    void learn(final int currentGeneration, final long now) {
        final int elapsed = passed ? currentGeneration - lastPassGeneration : 0;
        passed = true;
        lastPassGeneration = currentGeneration;
        model.age(elapsed);
        for (long[] s = registry.endedSessions.poll(); s != null; s = registry.endedSessions.poll()) {
            model.session(s[0], s[1]);
        }
        final double decay = model.decay(elapsed);
        for (final SegmentReaders set : registry.segments.values()) {
            int rereads;
            synchronized (set) {
                rereads = set.pendingRereads;
                set.pendingRereads = 0;
            }
            final long inferred = set.inferredRereads;
            rereads += (int) Math.min(Integer.MAX_VALUE - rereads, Math.max(0, inferred - set.inferredRereadsSeen));
            set.inferredRereadsSeen = inferred;
            learnTracked(set, now);
            if (set.learned) {
                model.expose(set.bucket, set.lengthBucket, elapsed, rereads);
                set.count = set.count * decay + rereads;
            } else {
                // Registered since the last pass: no exposure yet, its first re-reads count from now.
                set.learned = true;
                set.count = rereads;
                set.seenGeneration = currentGeneration;
            }
            set.bucket = ReuseModel.rateBucket(set.count);
            set.lengthBucket = ReuseModel.lengthBucket(set.tail);
            if (set.readers.length > 0) {
                set.seenGeneration = currentGeneration;
            }
        }
        model.refresh();
    }

    /** An inferred re-reader that stopped (idle past the timeout): what it read teaches the model once. */
    private void learnTracked(final SegmentReaders set, final long now) {
        final int stamp = set.trackedStamp(); // an acquire: the slots as of the segment's last observed read
        for (final TrackedReader t : set.tracked) {
            final long time = t.time;
            if (time == ReaderRegistry.FREE || t.learnedSession == t.session
                || now - time <= idleTimeout && !registry.stalled(t, now)) {
                continue;
            }
            t.learnedSession = t.session;
            if (t.startDistance > 0) {
                model.session(t.startDistance, t.end - t.start);
            }
        }
    }
}
