package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderRegistry.SegmentReaders;
import io.streamcache.segmentstore.eviction.ReaderRegistry.TrackedReader;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 *       are kept by a {@code ReaderRegistry}; the pass and what it learns are the policy's own.</li>
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
 *
 * <h2>Parts</h2>
 * This class is the policy's face and the registered readers' handle ({@link Reader}); the pass
 * (views, ranks, cut-off) is {@code ReaderPass}, what the passes learn is {@code ReuseLearning}
 * over a {@code ReuseModel}, the readers are kept by {@code ReaderRegistry}, fill admission is
 * {@code FillAdmission}.
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
    static final int READERS_CONSIDERED = 8;

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
    private final LongSupplier clock;
    private final long idleTimeout;
    /** What the passes learn (re-read sessions, popularity): kept for tests. */
    private final ReuseModel model;
    /** The eviction pass: views, ranks, the cut-off (confined to the pass). */
    private final ReaderPass pass;

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
        this.model = new ReuseModel(popularityHalfLife);
        this.admission = new FillAdmission(registry, idleTimeout, rereadGenerations);
        this.pass = new ReaderPass(registry, admission, model, clock, idleTimeout, rereadGenerations, popularityHalfLife);
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
        return pass.idleReadersDropped();
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
        pass.begin(currentGeneration);
    }

    @Override
    public void survey(final String segment, final CachedEntry entry) {
        pass.survey(segment, entry);
    }

    @Override
    public boolean advance() {
        return pass.advance();
    }

    @Override
    public boolean select(final String segment, final CachedEntry entry) {
        return pass.select(segment, entry);
    }

    static void checkPosition(final long position) {
        if (position < 0) {
            throw new IllegalArgumentException("position=" + position + " must be >= 0");
        }
    }

    @Override
    public String toString() {
        return "ReaderAwarePolicy{" + pass + '}';
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
