package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import io.streamcache.segmentstore.eviction.ReaderRegistry.TrackedReader;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A thread-safe eviction policy (the thread model below says who calls what) that knows where
 * the readers of each segment are, approximating Belady's optimal
 * choice (evict what is needed farthest in the future) for streaming reads.
 *
 * <h2>Thread model</h2>
 * <ul>
 *   <li>{@link #register(String, long)} and {@link Reader#close()}: any thread, at any time
 *       (a broker calls them when a client opens or ends a read); they allocate and synchronize
 *       on the segment's reader set, never on the data path of other segments. The reader sets
 *       are kept by a {@code ReaderRegistry}; this class owns the pass and what it learns.</li>
 *   <li>{@link Reader#position(long)}: the reader's own thread (one writer per handle), on the
 *       data path; a release store into the handle, no allocation, no lock. The pass reads it
 *       with an acquire load, so it sees a recent position, not necessarily the latest.</li>
 *   <li>{@link #recordUse}: data-path threads under the segment's lock; stamps the generation
 *       (the recency fallback), nothing else.</li>
 *   <li>{@link #observeRead}: data-path threads under the segment's lock; updates the segment's
 *       inferred readers in place, no allocation once the segment is known, no lock of its own.</li>
 *   <li>{@link #beginPass}, {@link #survey}, {@link #advance}, {@link #select}: the cache
 *       manager's pass, one thread at a time ({@link EvictionPolicy}). The pass takes a snapshot
 *       of every segment's reader positions in {@code beginPass} and decides on it; everything
 *       the policy learns (popularity, where re-reads read, segment tails) is updated there too.</li>
 * </ul>
 *
 * <h2>Readers: found from the reads, or registered</h2>
 * A reader's position is the next segment byte it will read. A {@code SegmentStore} whose cache
 * manager runs this policy reports every read it serves ({@link #observeRead}), and the policy
 * infers the readers from them: a read that starts within the last read of a reader it tracks
 * continues that reader, any other read starts a new one (at most
 * {@value ReaderRegistry#TRACKED_PER_SEGMENT} per segment, the least recently read replaced).
 * A broker that only appends and reads gets reader-aware eviction without registering anything.
 * A broker may also register readers explicitly ({@link #register}): a catch-up reader at the
 * offset it starts from, a tail reader at the segment's current length, moved after each read
 * to the end of what was returned, and closed when it stops (closing releases at once all the
 * data it protected).
 *
 * <h2>Protection by time</h2>
 * Each reader's speed is measured from its moves (bytes per clock unit, over the last one to two
 * eighths of the idle timeout). Data ahead of readers is valued by how soon the first of them
 * will reach it: distance over speed. A reader that has not read or moved for
 * {@value ReaderRegistry#STALL_INTERVALS} times its own interval between reads (and at least
 * 1/1024 of the idle timeout; for a registered reader its longest recent pause, for an inferred
 * one its mean interval, see {@code ReaderRegistry#INTERVAL_DECAY}) has <em>stalled</em>: it protects nothing until it moves again. A
 * reader that has neither read nor moved for the idle timeout ({@link #IDLE_TIMEOUT_NANOS_DEFAULT}
 * by default) is dropped: the next pass closes it if registered, forgets it if inferred. So a
 * reader that crashes without closing stops protecting after a few of its read intervals and is
 * gone after one timeout; a reader registered and never moved protects until the timeout.
 *
 * <h2>Order of eviction</h2>
 * For every evictable entry the survey computes a rank; the cut-off moves from the lowest rank
 * up, in steps of 1/{@value #STEPS} of the surveyed entries:
 * <ol>
 *   <li><b>no expected reuse</b>: entries no registered reader is heading for, whose expected
 *       re-reads (below) are zero: first the <em>passed</em> ones (the segment has readers and
 *       all of them are at or past the entry's end; the RocketMQ-on-PMEM contest design releases blocks behind the read
 *       position at once), then the others (segments nobody reads, passed data of segments
 *       recently re-read), oldest use first within each;</li>
 *   <li><b>expected re-reads</b>: entries no registered reader is heading for, ranked by the
 *       expected number of re-read sessions (readers registering behind the tail) that will read
 *       them per generation, lowest first, then oldest use first. The estimate is learned online
 *       by {@code ReuseModel}: the re-read rate of segments with the segment's history of
 *       re-reads (its popularity) and its length times the fraction of re-read sessions that read data as far
 *       from the tail as the entry. Where no reader ever re-reads, this class is empty and the
 *       order is the passed-first order of the RocketMQ-on-PMEM contest design;</li>
 *   <li><b>ahead of a reader</b>: ranked by how soon a live reader behind the entry reaches its
 *       start (distance over the reader's measured speed, the soonest of the nearest
 *       {@value #READERS_CONSIDERED}), latest first, so the data a reader is about to read (a
 *       follower's range up to its leader, a tail reader's next block) goes last.</li>
 * </ol>
 * Entries used in the current generation (during the pass) are never selected. The rank's
 * bits are drawn in {@code EvictionRanks}, which {@code FillAdmission} shares.
 */
public final class ReaderAwarePolicy implements EvictionPolicy {
    /** Each step of the cut-off covers this fraction (1/STEPS) of the surveyed entries. */
    public static final int STEPS = 64;
    /** Default number of generations a re-read registration marks its segment as re-read. */
    public static final int REREAD_GENERATIONS_DEFAULT = 16;
    /** Default half-life, in generations, of the learned popularity and re-read statistics. */
    public static final int POPULARITY_HALF_LIFE_DEFAULT = 256;
    /** Default time after which a reader that neither read nor moved stops protecting anything: 60 s, in nanoseconds. */
    public static final long IDLE_TIMEOUT_NANOS_DEFAULT = TimeUnit.SECONDS.toNanos(60);
    /** Readers behind an entry (nearest first) whose arrival time the rank considers. */
    private static final int READERS_CONSIDERED = 8;
    /** Segments not surveyed or read for this many half-lives, with no readers and no popularity left, are dropped. */
    private static final int STALE_HALF_LIVES = 4;
    private static final double MIN_COUNT = 1e-3;

    private static final VarHandle POSITION;

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(Reader.class, "position", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The readers of every segment and the ended re-read sessions (any thread). */
    private final ReaderRegistry registry;
    /** Whether data read back from the log is kept when the cache has no free room (the data path). */
    private final FillAdmission admission;
    private volatile boolean admitFills;
    private final int rereadGenerations;
    private final int popularityHalfLife;
    private final LongSupplier clock;
    private final long idleTimeout;
    // Counters (racy increments by the pass only; read by anyone).
    private volatile long idleReadersDropped;

    // Pass state: confined to the pass.
    private final ReuseModel model;
    /**
     * Each segment's view for the pass, by name: kept from pass to pass and refreshed in place
     * (a view and its arrays are made once per segment, not per pass); only the views of this
     * pass are in it once {@link #beginPass} returns.
     */
    private final Map<String, View> views = new HashMap<>();
    /** This pass's views, in the order made (the map's values without an iterator). */
    private final ArrayList<View> passViews = new ArrayList<>();
    /** Passes begun: a view refreshed in this pass carries it. */
    private long pass;
    private int lastPassGeneration;
    private boolean passed;
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

    /** A policy with the default re-read memory and popularity half-life. */
    public ReaderAwarePolicy() {
        this(REREAD_GENERATIONS_DEFAULT);
    }

    /**
     * @param rereadGenerations how many generations after a reader registered behind already-read
     *                          data its segment's passed data ages by recency instead of going
     *                          first when nothing else is known about it; &gt;= 0.
     */
    public ReaderAwarePolicy(final int rereadGenerations) {
        this(rereadGenerations, POPULARITY_HALF_LIFE_DEFAULT);
    }

    /**
     * @param rereadGenerations  see {@link #ReaderAwarePolicy(int)}; &gt;= 0.
     * @param popularityHalfLife half-life in generations of each segment's re-read count (its
     *                           popularity); the model's global statistics decay four times
     *                           slower; &gt;= 1.
     */
    public ReaderAwarePolicy(final int rereadGenerations, final int popularityHalfLife) {
        this(rereadGenerations, popularityHalfLife, IDLE_TIMEOUT_NANOS_DEFAULT, System::nanoTime);
    }

    /**
     * @param rereadGenerations  see {@link #ReaderAwarePolicy(int)}; &gt;= 0.
     * @param popularityHalfLife see {@link #ReaderAwarePolicy(int, int)}; &gt;= 1.
     * @param idleTimeout        clock units after which a reader that has neither read nor moved
     *                           stops protecting anything: a registered reader is then closed, an
     *                           inferred one forgotten; &gt;= 1. A reader's speed is measured over
     *                           one to two eighths of it.
     * @param clock              the time readers are stamped with (monotonic; {@code System::nanoTime}
     *                           by default, a counter in tests and the simulator); called on the data
     *                           path, so it must not allocate or block.
     */
    public ReaderAwarePolicy(final int rereadGenerations, final int popularityHalfLife, final long idleTimeout,
                             final LongSupplier clock) {
        if (idleTimeout < 1) {
            throw new IllegalArgumentException("idleTimeout=" + idleTimeout + " must be >= 1");
        }
        this.clock = Objects.requireNonNull(clock, "clock");
        this.idleTimeout = idleTimeout;
        this.registry = new ReaderRegistry(clock, Math.max(1, idleTimeout / 8));
        if (rereadGenerations < 0) {
            throw new IllegalArgumentException("rereadGenerations=" + rereadGenerations + " must be >= 0");
        }
        if (popularityHalfLife < 1) {
            throw new IllegalArgumentException("popularityHalfLife=" + popularityHalfLife + " must be >= 1");
        }
        this.rereadGenerations = rereadGenerations;
        this.popularityHalfLife = popularityHalfLife;
        this.model = new ReuseModel(popularityHalfLife);
        this.admission = new FillAdmission(registry, idleTimeout, rereadGenerations);
    }

    // ------------------------------------------------------------------------------------------
    // Readers
    // ------------------------------------------------------------------------------------------

    /**
     * Registers a reader of a segment; callable from any thread, not on the data path (allocates).
     * A reader that registers behind the segment's tail (as far as the policy knows it: the
     * farthest reader position or cached entry end seen) is a <em>re-read</em>: it counts toward
     * the segment's popularity, and when it closes, what it read teaches the policy where re-reads
     * read.
     *
     * @param segment  the segment's name.
     * @param position the next byte the reader will read, &gt;= 0.
     * @return the reader's handle: update its position as it reads, close it when done.
     */
    public Reader register(final String segment, final long position) {
        return registry.register(segment, position);
    }

    /**
     * Records a read of a segment so that its reader is known without being registered: a read
     * that starts within the last read of a reader inferred for that segment continues it (moves
     * it to {@code end}, updates its speed), any other read starts a new inferred reader (up to
     * {@value ReaderRegistry#TRACKED_PER_SEGMENT} per segment, the least recently read one
     * replaced beyond that). An inferred reader protects the data ahead of it like a registered
     * one, until it has not read for the idle timeout. The segment store calls this itself for
     * every read when its cache manager runs this policy.
     *
     * <p><b>Threading:</b> the data path, under the segment's lock (reads of one segment are
     * observed one at a time); no lock of its own, and no allocation once the segment is known.
     *
     * @param segment the segment's name.
     * @param offset  the read's first byte.
     * @param end     the byte after the last one read ({@code offset} for a read that returned nothing).
     */
    public void observeRead(final String segment, final long offset, final long end) {
        registry.observeRead(segment, offset, end, idleTimeout);
    }

    /**
     * Admission of data read back from the log, asked by the store when a fill finds no room below
     * the target: keeps the range unless live readers have all passed it; then keeps it if one is
     * at or behind its last byte, or if its learned
     * re-read value ranks above the last pass's cut-off ({@code FillAdmission}). Data path, under
     * the segment's lock; no lock of its own, no allocation.
     *
     * @return whether to cache {@code [offset, end)} of the segment ({@code false}: serve and drop it, or stage it lower).
     */
    public boolean admit(final String segment, final long offset, final long end) {
        return !admitFills || admission.admit(registry.segments.get(segment), offset, end);
    }

    /**
     * Turns fill admission ({@link #admit}) on or off; off by default (every fill is kept): in the
     * simulator it changed the streaming workloads by at most 0.2 point and cost up to 1.8 points
     * on the key/value traces with inferred readers (docs/benchmarks.md). Any thread.
     *
     * @return this policy.
     */
    public ReaderAwarePolicy admitFills(final boolean on) {
        admitFills = on;
        return this;
    }

    /** @return fills {@link #admit} kept (any thread). */
    public long fillsKept() {
        return admission.kept();
    }

    /** @return fills {@link #admit} refused (any thread). */
    public long fillsRefused() {
        return admission.refused();
    }

    /** @return registered readers the passes closed because they were idle longer than the timeout (any thread). */
    public long idleReadersDropped() {
        return idleReadersDropped;
    }

    /**
     * @return how many inferred readers of the segment protect data now: read on past their first
     *         read, within the idle timeout, and not stalled (any thread; for tests and metrics; racy).
     */
    public int trackedReaderCount(final String segment) {
        final SegmentReaders set = registry.segments.get(segment);
        if (set == null) {
            return 0;
        }
        final long now = clock.getAsLong();
        int n = 0;
        for (final TrackedReader t : set.tracked) {
            if (t.time != ReaderRegistry.FREE && now - t.time <= idleTimeout && !registry.stalled(t, now) && t.sequential()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Forgets a deleted segment: its readers stop counting (close them too) and its history
     * (re-reads, popularity, tail) is dropped; what its re-readers read still teaches the model.
     * Any thread.
     */
    public void forget(final String segment) {
        registry.forget(segment);
    }

    /**
     * @return how many open readers the segment has now (any thread; for tests and metrics).
     */
    public int readerCount(final String segment) {
        return registry.readerCount(segment);
    }

    /** @return the (decayed) number of ended re-read sessions the passes learned from; for tests. */
    double learnedSessions() {
        return model.sessions();
    }

    // ------------------------------------------------------------------------------------------
    // The pass
    // ------------------------------------------------------------------------------------------

    @Override
    public void beginPass(final int currentGeneration) {
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
        learn(currentGeneration);
        admission.publishCoverage(model.coverageCopy());
        final Iterator<SegmentReaders> it = registry.segments.values().iterator();
        while (it.hasNext()) {
            final SegmentReaders set = it.next();
            final Reader[] readers = set.readers;
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

    /** Updates what the policy learned: ended sessions, each segment's popularity, the rates. */
    private void learn(final int currentGeneration) {
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
            learnTracked(set);
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
    private void learnTracked(final SegmentReaders set) {
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

    /** Refreshes (or makes, the first time) the segment's view for this pass and lists it. */
    private View refresh(final SegmentReaders set, final Reader[] readers) {
        View view = views.get(set.segment);
        if (view == null || view.set != set) {
            view = new View(set);
            views.put(set.segment, view);
        }
        fill(view, readers);
        passViews.add(view);
        return view;
    }

    private void fill(final View view, final Reader[] readers) {
        final SegmentReaders set = view.set;
        int n = 0;
        final int room = readers.length + ReaderRegistry.TRACKED_PER_SEGMENT;
        if (view.positions.length < room) {
            view.positions = new long[room];
            view.speeds = new double[room];
        }
        final long[] positions = view.positions;
        final double[] speeds = view.speeds;
        for (final Reader reader : readers) {
            final long position = reader.position();
            final long elapsed = now - reader.lastTime;
            if (elapsed > idleTimeout) {
                // Idle past the timeout: it protects nothing any more and is dropped.
                reader.close();
                idleReadersDropped++;
                continue;
            }
            if (registry.stalled(elapsed, reader.interval)) {
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

    @Override
    public void survey(final String segment, final CachedEntry entry) {
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

    @Override
    public boolean advance() {
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
        final int step = Math.max(1, rankCount / STEPS);
        cutoff = ranks[Math.min(rankCount, nextRank + step) - 1];
        admission.publishCutoff(cutoff);
        nextRank = Math.min(rankCount, nextRank + step);
        while (nextRank < rankCount && ranks[nextRank] == cutoff) {
            nextRank++;
        }
        return true;
    }

    @Override
    public boolean select(final String segment, final CachedEntry entry) {
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
     *         nearest {@value #READERS_CONSIDERED}, from index {@code behind} down) reaches it: its
     *         distance over its measured speed (the pass's mean speed for a reader not measured
     *         yet); 0 for an entry a reader is inside.
     */
    private long timeToReach(final View view, final int behind, final long offset) {
        double best = Double.MAX_VALUE;
        for (int i = behind; i >= 0 && i > behind - READERS_CONSIDERED; i--) {
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

    static void checkPosition(final long position) {
        if (position < 0) {
            throw new IllegalArgumentException("position=" + position + " must be >= 0");
        }
    }

    @Override
    public String toString() {
        return "ReaderAwarePolicy{current=" + current + ", segments=" + registry.segments.size()
            + ", surveyed=" + rankCount + ", cutoff=0x" + Long.toHexString(cutoff) + ", " + model + '}';
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

    /**
     * A registered reader: its position is written by the reader's thread (one writer) with a
     * release store and read by the eviction pass; {@link #close()} from any thread, once or more.
     */
    public static final class Reader implements AutoCloseable {
        private final SegmentReaders set;
        private final long start;
        private final long startDistance;
        private final boolean reread;
        @SuppressWarnings("unused")
        private long position;
        private volatile boolean closed;
        // Written by the reader's thread before the position's release store; read by the pass after its acquire load.
        private long lastTime;
        /** Its longest recent gap between moves (see {@code ReaderRegistry#INTERVAL_DECAY}), 0 until it moved after a gap. */
        private double interval;
        private long anchorPosition;
        private long anchorTime;
        private long midPosition;
        private long midTime;

        Reader(final SegmentReaders set, final long position, final long startDistance, final boolean reread) {
            this.set = set;
            this.start = position;
            this.startDistance = startDistance;
            this.reread = reread;
            this.position = position;
            final long now = set.registry.clock.getAsLong();
            this.lastTime = now;
            this.anchorPosition = position;
            this.anchorTime = now;
            this.midPosition = position;
            this.midTime = now;
        }

        /**
         * Moves the reader: the next byte it will read. On the data path: a release store, no
         * allocation, no lock, no check beyond the sign.
         *
         * @param position the next byte the reader will read, &gt;= 0.
         */
        public void position(final long position) {
            checkPosition(position);
            final long now = set.registry.clock.getAsLong();
            final long gap = now - lastTime;
            if (gap > 0) {
                interval = Math.max(gap, ReaderRegistry.INTERVAL_DECAY * interval);
            }
            lastTime = now;
            if (now - midTime >= set.registry.speedWindow) {
                anchorPosition = midPosition;
                anchorTime = midTime;
                midPosition = position;
                midTime = now;
            }
            POSITION.setRelease(this, position);
        }

        /** @return bytes per clock unit since the older speed anchor, or 0 if not measured yet (the pass; racy). */
        double speed() {
            final long moved = position() - anchorPosition; // the acquire first: then the stamps written before it
            final long elapsed = lastTime - anchorTime;
            return elapsed > 0 ? Math.max(0, (double) moved) / elapsed : 0;
        }

        /** @return the clock when it last moved (racy: read after {@link #position()} for a consistent pair). */
        long lastTime() {
            return lastTime;
        }

        /** @return its longest recent gap between moves, 0 until known (racy). */
        double interval() {
            return interval;
        }

        /** @return the last position set (an acquire load). */
        public long position() {
            return (long) POSITION.getAcquire(this);
        }

        /** @return the segment's name. */
        public String segment() {
            return set.segment;
        }

        /** @return whether the reader was closed (or its segment forgotten). */
        public boolean isClosed() {
            return closed;
        }

        /** Unregisters the reader; idempotent; any thread. */
        @Override
        public void close() {
            synchronized (set) {
                if (closed) {
                    return;
                }
                closed = true;
                final Reader[] readers = set.readers;
                int index = -1;
                for (int i = 0; i < readers.length; i++) {
                    if (readers[i] == this) {
                        index = i;
                        break;
                    }
                }
                if (index < 0) {
                    return;
                }
                final Reader[] remaining = new Reader[readers.length - 1];
                System.arraycopy(readers, 0, remaining, 0, index);
                System.arraycopy(readers, index + 1, remaining, index, readers.length - index - 1);
                set.frontier = Math.max(set.frontier, position());
                set.readers = remaining;
                ended();
            }
        }

        /** The reader's segment was forgotten: the reader is closed, its session ended. */
        void forgotten() {
            closed = true;
            ended();
        }

        /** A re-read session ended: what it read teaches the model (at the next pass). */
        private void ended() {
            if (reread) {
                set.registry.endedSessions.add(new long[] {startDistance, position() - start});
            }
        }

        @Override
        public String toString() {
            return "Reader{segment=" + set.segment + ", position=" + position() + ", closed=" + closed + '}';
        }
    }
}
