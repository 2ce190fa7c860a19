package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import io.streamcache.segmentstore.eviction.ReaderRegistry.TrackedReader;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The {@link ReaderAwarePolicy}'s eviction pass: confined to the cache manager's pass (one thread
 * at a time), except {@link #idleReadersDropped()}, which any thread reads. It snapshots every
 * segment's live readers (registered and inferred) into a view per segment, ranks each surveyed
 * entry ({@link #rank}: the classes and their order are in {@link ReaderAwarePolicy}'s class
 * comment, the bits in {@link EvictionRanks}), and moves the cut-off up the sorted ranks in
 * steps of 1/{@value ReaderAwarePolicy#STEPS} of the surveyed entries.
 *
 * <pre>
 *   begin:   learn -> drop stale segments -> per segment a View (ascending reader positions, speeds)
 *   survey:  entry -> rank (class | order within the class) appended to ranks[]
 *   advance: sort ranks[] once; cut-off = the rank 1/STEPS further up; publish it to FillAdmission
 *   select:  entry's rank <= cut-off (and not used in this generation)
 * </pre>
 */
final class ReaderPass {
    /** Segments not surveyed or read for this many half-lives, with no readers and no popularity left, are dropped. */
    private static final int STALE_HALF_LIVES = 4;
    private static final double MIN_COUNT = 1e-3;

    private final ReaderRegistry registry;
    private final FillAdmission admission;
    private final ReuseModel model;
    private final ReuseLearning learning;
    private final LongSupplier clock;
    private final long idleTimeout;
    private final int rereadGenerations;
    private final int popularityHalfLife;
    /** Registered readers the passes closed because they were idle longer than the timeout (racy increments by the pass only). */
    private volatile long idleReadersDropped;

    /**
     * Each segment's view for the pass, by name: kept from pass to pass and refreshed in place
     * (a view and its arrays are made once per segment, not per pass); only the views of this
     * pass are in it once {@link #begin} returns.
     */
    private final Map<String, View> views = new HashMap<>();
    /** This pass's views, in the order made (the map's values without an iterator). */
    private final ArrayList<View> passViews = new ArrayList<>();
    /** Passes begun: a view refreshed in this pass carries it. */
    private long pass;
    private long[] ranks = new long[64];
    private int rankCount;
    private int nextRank;
    private boolean sorted;
    private int current;
    private long cutoff = Long.MIN_VALUE;
    private String lastSegment;
    private View lastView;
    /** The clock when the pass began. */
    private long now;
    private double speedSum;
    private int speedCount;
    /** The mean measured speed of the pass's readers: the speed of a reader not measured yet. */
    private double defaultSpeed = 1.0;

    ReaderPass(final ReaderRegistry registry, final FillAdmission admission, final ReuseModel model, final LongSupplier clock,
               final long idleTimeout, final int rereadGenerations, final int popularityHalfLife) {
        this.registry = registry;
        this.admission = admission;
        this.model = model;
        this.learning = new ReuseLearning(registry, model, idleTimeout);
        this.clock = clock;
        this.idleTimeout = idleTimeout;
        this.rereadGenerations = rereadGenerations;
        this.popularityHalfLife = popularityHalfLife;
    }

    /** @return registered readers the passes closed as idle (any thread). */
    long idleReadersDropped() {
        return idleReadersDropped;
    }

    /**
     * Begins a pass: learns ({@link ReuseLearning}), drops segments nothing is known of any more,
     * and takes the snapshot of every segment's readers the pass ranks on.
     */
    void begin(final int currentGeneration) {
        current = currentGeneration;
        registry.latestGeneration = currentGeneration;
        rankCount = 0;
        nextRank = 0;
        sorted = false;
        cutoff = Long.MIN_VALUE;
        lastSegment = null;
        lastView = null;
        pass++;
        passViews.clear();
        now = clock.getAsLong();
        speedSum = 0;
        speedCount = 0;
        learning.learn(currentGeneration, now);
        admission.publishCoverage(model.coverageCopy());
        final Iterator<SegmentReaders> it = registry.segments.values().iterator();
        while (it.hasNext()) {
            final SegmentReaders set = it.next();
            final ReaderAwarePolicy.Reader[] readers = set.readers;
            if (readers.length == 0 && set.count < MIN_COUNT && !set.anyTracked(now, idleTimeout)
                && currentGeneration - set.seenGeneration > (long) STALE_HALF_LIVES * popularityHalfLife) {
                synchronized (set) {
                    if (set.readers.length == 0) {
                        set.removed = true;
                        it.remove();
                    }
                }
                continue;
            }
            refresh(set, readers);
        }
        // Views of segments the registry no longer holds (forgotten, or dropped above) go.
        final Iterator<View> stale = views.values().iterator();
        while (stale.hasNext()) {
            if (stale.next().pass != pass) {
                stale.remove();
            }
        }
        defaultSpeed = speedCount > 0 ? speedSum / speedCount : 1.0;
    }

    /** Refreshes (or makes, the first time) the segment's view for this pass and lists it. */
    private View refresh(final SegmentReaders set, final ReaderAwarePolicy.Reader[] readers) {
        View view = views.get(set.segment);
        if (view == null || view.set != set) {
            view = new View(set);
            views.put(set.segment, view);
        }
        fill(view, readers);
        passViews.add(view);
        return view;
    }

    private void fill(final View view, final ReaderAwarePolicy.Reader[] readers) {
        final SegmentReaders set = view.set;
        int n = 0;
        final int room = readers.length + ReaderRegistry.TRACKED_PER_SEGMENT;
        if (view.positions.length < room) {
            view.positions = new long[room];
            view.speeds = new double[room];
        }
        final long[] positions = view.positions;
        final double[] speeds = view.speeds;
        for (final ReaderAwarePolicy.Reader reader : readers) {
            final long position = reader.position();
            final long elapsed = now - reader.lastTime();
            if (elapsed > idleTimeout) {
                // Idle past the timeout: it protects nothing any more and is dropped.
                reader.close();
                idleReadersDropped++;
                continue;
            }
            if (registry.stalled(elapsed, reader.interval())) {
                continue; // late for its own pace: protects nothing until it moves again
            }
            positions[n] = position;
            speeds[n++] = noteSpeed(reader.speed());
        }
        if (set.trackedStamp() != Integer.MIN_VALUE) { // acquire before reading the slots
            for (final TrackedReader t : set.tracked) {
                final long time = t.time;
                if (time == ReaderRegistry.FREE || now - time > idleTimeout || registry.stalled(t, now) || !t.sequential()) {
                    continue;
                }
                positions[n] = t.end;
                speeds[n++] = noteSpeed(t.speed());
            }
        }
        ReaderRegistry.sortTogether(positions, speeds, n);
        view.count = n;
        view.reread = set.reread && current - set.rereadGeneration <= rereadGenerations;
        view.tail = Math.max(set.tail, n == 0 ? 0 : positions[n - 1]);
        final double rate = set.learned ? model.rate(set.bucket, set.lengthBucket) : 0;
        set.admitRate = rate;
        view.rate = rate;
        view.surveyedEnd = 0;
        view.pass = pass;
    }

    private double noteSpeed(final double speed) {
        if (speed > 0) {
            speedSum += speed;
            speedCount++;
        }
        return speed;
    }

    /** {@link EvictionPolicy#survey}. */
    void survey(final String segment, final CachedEntry entry) {
        View view = view(segment);
        if (view == null) {
            // A segment the policy has not seen yet: remember it (its tail, its exposure).
            final SegmentReaders set = registry.readersOf(segment);
            view = refresh(set, set.readers);
            lastView = view;
        }
        view.surveyedEnd = Math.max(view.surveyedEnd, entry.endOffset());
        final int age = entry.generation() - current;
        if (age >= 0) {
            return;
        }
        if (rankCount == ranks.length) {
            ranks = Arrays.copyOf(ranks, rankCount * 2);
        }
        ranks[rankCount++] = rank(view, entry, age);
    }

    /** {@link EvictionPolicy#advance}. */
    boolean advance() {
        if (!sorted) {
            Arrays.sort(ranks, 0, rankCount);
            sorted = true;
            // The survey is over: what it saw of each segment's tail counts from the next pass.
            for (int i = 0; i < passViews.size(); i++) {
                final View view = passViews.get(i);
                if (view.surveyedEnd > view.set.tail) {
                    view.set.tail = view.surveyedEnd;
                }
                if (view.surveyedEnd > 0) {
                    view.set.seenGeneration = current;
                }
            }
        }
        if (nextRank >= rankCount) {
            return false;
        }
        final int step = Math.max(1, rankCount / ReaderAwarePolicy.STEPS);
        cutoff = ranks[Math.min(rankCount, nextRank + step) - 1];
        admission.publishCutoff(cutoff);
        nextRank = Math.min(rankCount, nextRank + step);
        while (nextRank < rankCount && ranks[nextRank] == cutoff) {
            nextRank++;
        }
        return true;
    }

    /** {@link EvictionPolicy#select}. */
    boolean select(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        return age < 0 && rank(view(segment), entry, age) <= cutoff;
    }

    /**
     * The rank of an entry in the current pass: lower ranks are evicted first. The top byte is the
     * class (no expected reuse, expected re-reads, ahead), the rest orders within the class.
     */
    long rank(final View view, final CachedEntry entry, final int age) {
        final long byAge = EvictionRanks.byAge(age);
        if (view == null) {
            return EvictionRanks.unknown(byAge);
        }
        boolean passedByAll = false;
        if (view.count > 0) {
            final int behind = nearestReaderBefore(view.positions, view.count, entry.endOffset());
            if (behind >= 0) {
                return EvictionRanks.ahead(timeToReach(view, behind, entry.offset()));
            }
            passedByAll = !view.reread;
        }
        return EvictionRanks.reuseKey(passedByAll, view.rate * model.coverage(view.tail - entry.offset())) | byAge;
    }

    private View view(final String segment) {
        if (segment != lastSegment) {
            lastSegment = segment;
            lastView = views.get(segment);
        }
        return lastView;
    }

    /**
     * @return how soon, in clock units, the first of the readers behind {@code offset} (the
     *         nearest {@value ReaderAwarePolicy#READERS_CONSIDERED}, from index {@code behind} down) reaches it: its
     *         distance over its measured speed (the pass's mean speed for a reader not measured
     *         yet); 0 for an entry a reader is inside.
     */
    private long timeToReach(final View view, final int behind, final long offset) {
        double best = Double.MAX_VALUE;
        for (int i = behind; i >= 0 && i > behind - ReaderAwarePolicy.READERS_CONSIDERED; i--) {
            final long distance = offset - view.positions[i];
            if (distance <= 0) {
                return 0;
            }
            final double speed = view.speeds[i] > 0 ? view.speeds[i] : defaultSpeed;
            best = Math.min(best, distance / speed);
        }
        return best >= EvictionRanks.MAX_TIME ? EvictionRanks.MAX_TIME : (long) Math.ceil(best);
    }

    /** @return the index of the largest position below {@code end}, or -1 if every position is at or past it. */
    private static int nearestReaderBefore(final long[] positions, final int count, final long end) {
        int lo = 0;
        int hi = count - 1;
        int found = -1;
        while (lo <= hi) {
            final int mid = (lo + hi) >>> 1;
            if (positions[mid] < end) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    @Override
    public String toString() {
        return "current=" + current + ", segments=" + registry.segments.size() + ", surveyed=" + rankCount
            + ", cutoff=0x" + Long.toHexString(cutoff) + ", " + model;
    }

    /**
     * The pass's snapshot of one segment; made once per segment and refreshed by every pass
     * (pass-confined, so plain fields).
     *
     * <pre>
     *   positions: [ p0 | p1 | ... | p(count-1) | unused ... ]   ascending reader positions
     *   speeds:    [ s0 | s1 | ... | s(count-1) | unused ... ]   each one's speed, 0: not measured
     *   the arrays grow to readers + tracked slots, and are never shrunk
     * </pre>
     */
    private static final class View {
        final SegmentReaders set;
        long[] positions = new long[0];
        /** Each position's reader's speed (bytes per clock unit), 0 where not measured yet. */
        double[] speeds = new double[0];
        /** How many of {@link #positions} and {@link #speeds} this pass filled. */
        int count;
        boolean reread;
        long tail;
        /** Expected re-read registrations per generation, from the segment's history. */
        double rate;
        long surveyedEnd;
        /** The pass that last refreshed it. */
        long pass;

        View(final SegmentReaders set) {
            this.set = set;
        }
    }
}
