package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderAwarePolicy.Reader;
import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import io.streamcache.segmentstore.eviction.ReaderRegistry.TrackedReader;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The reader-aware policy's admission of data read back from the log (a read-through or
 * historical read filling the cache) when the cache has no free room below its target: whether
 * the filled range is worth what a pass would have to evict to make room for it. Asked only when
 * {@link ReaderAwarePolicy#admitFills(boolean)} turned it on (off by default).
 *
 * <h2>The rule</h2>
 * A range is kept when
 * <ol>
 *   <li>no live reader of its segment has passed it (a key/value read, a first read, a segment
 *       nobody reads; an inferred reader counts only once it has read {@value #PASSING_RUN}
 *       bytes in one run): nothing says it is a catch-up behind the readers; or</li>
 *   <li>a live reader of its segment (registered, or inferred and reading sequentially; neither
 *       stalled nor idle past the timeout) is at or behind the range's last byte: someone is
 *       expected to read it (a catch-up reader's read-ahead, a slow tail reader's next blocks);
 *       or</li>
 *   <li>its rank as the passes would compute it now, without its age (the class and the learned
 *       re-read value: the segment's re-read frequency times the fraction of re-read sessions
 *       that read that far behind the tail) is above the last pass's cut-off, or equal to it
 *       inside the class of expected re-reads (where the newest of a step survives).</li>
 * </ol>
 * Otherwise (a block read behind every live reader, in a segment whose data behind the tail is
 * not read again often enough to beat what the passes evict now) it is served and not kept: the
 * store leaves it out of the cache, or stages it in the slowest tier. While no pass has evicted
 * anything, every range is kept. (A first version also refused fills of segments without live
 * readers when they ranked at or below the cut-off: on key/value traces, where every read is one,
 * the cache then stopped taking new keys; and counting any inferred reader that read twice in a
 * row cost 9 points on them with inferred readers, adjacent keys read in turn looking like one.)
 *
 * <pre>
 *   segment:  0 ............................................ tail
 *             [ fill ]        R1 -->             R2 -->
 *             behind every live reader: kept only if its value beats the last cut-off
 *                                R1 -->  [ fill ]         R2 -->
 *                                ahead of R1: kept
 * </pre>
 *
 * <h2>Threading</h2>
 * {@link #admit} runs on the data path (the filling thread, under the segment's lock; the
 * tracked readers it reads are written under that lock): no lock of its own, no allocation.
 * {@link #publishCutoff} and {@link #publishCoverage} are called by the pass (one thread at a
 * time); what they publish is read with volatile loads. The counters may be read from any thread.
 */
final class FillAdmission {
    /**
     * An inferred reader counts as having passed a range only once it has read this many bytes in
     * one sequential run: a scan, not two adjacent key/value reads that look like a reader.
     */
    static final long PASSING_RUN = 1024 * 1024;
    /** No pass has selected anything yet. */
    static final long NO_CUTOFF = Long.MIN_VALUE;

    private final ReaderRegistry registry;
    private final long idleTimeout;
    private final int rereadGenerations;
    /** The last pass's cut-off without its age bits, or {@link #NO_CUTOFF}. */
    private volatile long cutoffKey = NO_CUTOFF;
    /** The re-read model's coverage by distance bucket, as of the last pass (replaced, never changed). */
    private volatile double[] coverage = new double[0];
    private final AtomicLong kept = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    FillAdmission(final ReaderRegistry registry, final long idleTimeout, final int rereadGenerations) {
        this.registry = registry;
        this.idleTimeout = idleTimeout;
        this.rereadGenerations = rereadGenerations;
    }

    /** The pass moved its cut-off (a rank of {@link ReaderAwarePolicy}). */
    void publishCutoff(final long rank) {
        cutoffKey = EvictionRanks.withoutAge(rank);
    }

    /** The pass refreshed the re-read model: its coverage by distance bucket, a copy. */
    void publishCoverage(final double[] byDistanceBucket) {
        coverage = byDistanceBucket;
    }

    /**
     * @param set    the segment's readers, or null if the policy does not know the segment.
     * @param offset the range's first byte.
     * @param end    the byte after its last.
     * @return whether to keep the range (see the class comment); counted.
     */
    boolean admit(final SegmentReaders set, final long offset, final long end) {
        final boolean keep = decide(set, offset, end);
        (keep ? kept : refused).incrementAndGet();
        return keep;
    }

    private boolean decide(final SegmentReaders set, final long offset, final long end) {
        final long cut = cutoffKey;
        if (cut == NO_CUTOFF) {
            return true;
        }
        if (set == null) {
            return true;
        }
        final long now = registry.clock.getAsLong();
        boolean anyReader = false;
        for (final Reader reader : set.readers) {
            final long elapsed = now - reader.lastTime();
            if (reader.isClosed() || elapsed > idleTimeout || registry.stalled(elapsed, reader.interval())) {
                continue;
            }
            if (reader.position() < end) {
                return true;
            }
            anyReader = true;
        }
        for (final TrackedReader t : set.tracked) {
            final long time = t.time;
            if (time == ReaderRegistry.FREE || now - time > idleTimeout || registry.stalled(t, now) || !t.sequential()) {
                continue;
            }
            if (t.end < end) {
                return true;
            }
            anyReader |= t.end - t.start >= PASSING_RUN;
        }
        if (!anyReader) {
            // No live reader has passed it: not a catch-up behind readers (a key/value read, a
            // first read); nothing to go by, the passes rank it as any other entry.
            return true;
        }
        final boolean reread = set.reread && registry.latestGeneration - set.rereadGeneration <= rereadGenerations;
        final double[] byDistance = coverage;
        final long tail = Math.max(set.tail, set.reached);
        final double value = byDistance.length == 0 ? 0
            : set.admitRate * byDistance[ReuseModel.distanceBucket(tail - offset)];
        return keyBeats(EvictionRanks.reuseKey(!reread, value), cut);
    }

    private static boolean keyBeats(final long key, final long cut) {
        return key > cut || key == cut && !EvictionRanks.noReuse(key);
    }

    /** @return fills kept when the cache had no free room (any thread). */
    long kept() {
        return kept.get();
    }

    /** @return fills refused (any thread). */
    long refused() {
        return refused.get();
    }
}
