package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.eviction.ReaderAwarePolicy.Reader;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.LongSupplier;

/**
 * The registered readers of every segment, as {@link ReaderAwarePolicy} knows them: one
 * {@link SegmentReaders} per segment (its readers, its tail, its history of re-reads) and the
 * re-read sessions that ended since the last pass.
 *
 * <h2>Threading</h2>
 * {@link #register}, {@link #forget}, {@link #readerCount} and {@link Reader#close()}: any thread,
 * at any time (a broker calls them when a client opens or ends a read); they allocate and
 * synchronize on the segment's reader set, never on the data path of other segments. A reader
 * set's array of readers is copied on change under the set's monitor and read without it (a
 * volatile read). The policy's pass reads the sets and drains {@link #endedSessions}; it writes
 * the fields marked as confined to the pass, and removes stale sets under their monitor.
 */
final class ReaderRegistry {
    /** Readers inferred per segment from sequential reads; the least recently read is replaced beyond that. */
    static final int TRACKED_PER_SEGMENT = 8;
    /** A tracked slot's time when it holds no reader. */
    static final long FREE = Long.MIN_VALUE;
    /**
     * A reader that has not read (or moved) for this many of its own mean intervals between reads
     * has stalled: it protects nothing until it reads again (it is dropped only at the idle timeout).
     */
    static final int STALL_INTERVALS = 16;
    /**
     * A registered reader's interval between moves is its longest recent gap: each move after a
     * gap replaces it by {@code max(gap, interval * INTERVAL_DECAY)} (moves at the same instant do
     * not count), so a bursty reader (a tail reader woken by appends) stalls only when late by far
     * more than its usual longest pause: a registered reader says when it ends, the stall is only
     * for one that crashed. An inferred reader never says it ended, so its interval is the mean
     * gap (an exponential average, 1/4 weight to the last gap) and it stalls sooner.
     */
    static final double INTERVAL_DECAY = 0.95;

    /** The policy's clock: stamps reads and position moves (any unit; nanoseconds by default). */
    final LongSupplier clock;
    /** Clock units over which a reader's speed is measured (the speed spans one to two windows). */
    final long speedWindow;
    /** Clock units a reader may always go without reading before it counts as stalled: 1/128 of the speed window. */
    final long stallFloor;

    final ConcurrentHashMap<String, SegmentReaders> segments = new ConcurrentHashMap<>();
    /** Re-read sessions that ended since the last pass: (start distance, bytes read). */
    final ConcurrentLinkedQueue<long[]> endedSessions = new ConcurrentLinkedQueue<>();
    /** The generation of the latest pass; read by registering threads. */
    volatile int latestGeneration;

    ReaderRegistry(final LongSupplier clock, final long speedWindow) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.speedWindow = Math.max(1, speedWindow);
        this.stallFloor = Math.max(1, this.speedWindow / 128);
    }

    /**
     * @return whether a reader that last read {@code elapsed} clock units ago, {@code interval}
     *         apart on average (0: not known yet), has stalled.
     */
    boolean stalled(final long elapsed, final double interval) {
        return interval > 0 && elapsed > Math.max(stallFloor, STALL_INTERVALS * interval);
    }

    /**
     * @return whether an inferred reader has stalled: as {@link #stalled}, but one that read only
     *         once (nothing says it will read again) counts {@link #stallFloor} as its interval.
     */
    boolean stalled(final TrackedReader t, final long now) {
        return stalled(now - t.time, t.interval > 0 ? t.interval : stallFloor);
    }

    /**
     * A read of {@code [offset, end)} of a segment: continues the tracked reader whose last read
     * it starts within (from that read's start to its end), else starts a new tracked reader in a
     * free, expired or least recently read slot (a new reader that starts behind the tail counts
     * as a re-read). Called under the segment's lock (one writer per segment); allocates only
     * when it first sees the segment.
     */
    void observeRead(final String segment, final long offset, final long end, final long idleTimeout) {
        SegmentReaders set = segments.get(segment);
        if (set == null) {
            set = readersOf(segment);
        }
        final long now = clock.getAsLong();
        final TrackedReader[] tracked = set.tracked;
        TrackedReader reuse = null;
        long oldest = Long.MAX_VALUE;
        for (final TrackedReader t : tracked) {
            final long time = t.time;
            if (time == FREE || now - time > idleTimeout) {
                if (oldest != FREE) {
                    reuse = t;
                    oldest = FREE;
                }
                continue;
            }
            if (t.from <= offset && offset <= t.end) {
                t.move(offset, end, now, speedWindow);
                SegmentReaders.STAMP.setRelease(set, t.session);
                return;
            }
            if (time < oldest) {
                oldest = time;
                reuse = t;
            }
        }
        final long tail = Math.max(set.tail, set.reached);
        final boolean reread = offset < tail;
        reuse.start(offset, end, now, reread ? tail - offset : 0);
        if (reread) {
            set.inferredRereads++;
            if (offset < set.reached) {
                set.rereadGeneration = latestGeneration;
                set.reread = true;
            }
        }
        if (end > set.reached) {
            set.reached = end;
        }
        SegmentReaders.STAMP.setRelease(set, reuse.session);
    }

    /** Sorts positions ascending, carrying each one's speed along (insertion sort below 32, shell sort above). */
    static void sortTogether(final long[] positions, final double[] speeds) {
        sortTogether(positions, speeds, positions.length);
    }

    /** Sorts the first {@code n} positions ascending, moving each speed with its position. */
    static void sortTogether(final long[] positions, final double[] speeds, final int n) {
        int gap = 1;
        while (gap < n / 3) {
            gap = 3 * gap + 1;
        }
        for (; gap >= 1; gap /= 3) {
            for (int i = gap; i < n; i++) {
                final long p = positions[i];
                final double v = speeds[i];
                int j = i;
                while (j >= gap && positions[j - gap] > p) {
                    positions[j] = positions[j - gap];
                    speeds[j] = speeds[j - gap];
                    j -= gap;
                }
                positions[j] = p;
                speeds[j] = v;
            }
        }
    }

    /**
     * Registers a reader of a segment (see {@link ReaderAwarePolicy#register}).
     *
     * @param segment  the segment's name.
     * @param position the next byte the reader will read, &gt;= 0.
     * @return the reader's handle.
     */
    Reader register(final String segment, final long position) {
        Objects.requireNonNull(segment, "segment");
        ReaderAwarePolicy.checkPosition(position);
        while (true) {
            final SegmentReaders set = segments.computeIfAbsent(segment, name -> new SegmentReaders(this, name));
            synchronized (set) {
                if (set.removed) {
                    continue;
                }
                long reached = set.frontier;
                for (final Reader other : set.readers) {
                    reached = Math.max(reached, other.position());
                }
                final long tail = Math.max(reached, set.tail);
                final boolean reread = position < tail;
                final Reader reader = new Reader(set, position, reread ? tail - position : 0, reread);
                if (position < reached) {
                    set.rereadGeneration = latestGeneration;
                    set.reread = true;
                }
                if (reread) {
                    set.pendingRereads++;
                }
                final Reader[] readers = Arrays.copyOf(set.readers, set.readers.length + 1);
                readers[readers.length - 1] = reader;
                set.readers = readers;
                return reader;
            }
        }
    }

    /**
     * Forgets a deleted segment (see {@link ReaderAwarePolicy#forget}).
     */
    void forget(final String segment) {
        final SegmentReaders set = segments.remove(segment);
        if (set != null) {
            synchronized (set) {
                set.removed = true;
                for (final Reader reader : set.readers) {
                    reader.forgotten();
                }
                set.readers = new Reader[0];
            }
        }
    }

    /**
     * @return how many open readers the segment has now.
     */
    int readerCount(final String segment) {
        final SegmentReaders set = segments.get(segment);
        return set == null ? 0 : set.readers.length;
    }

    /**
     * @return the segment's reader set, created if the registry has none (a segment the policy
     *         surveys before anyone registered a reader of it).
     */
    SegmentReaders readersOf(final String segment) {
        return segments.computeIfAbsent(segment, name -> new SegmentReaders(this, name));
    }

    /**
     * What the policy knows of one segment: its readers (the array is copied on change, under the
     * set's monitor), its tail as far as seen, and its history of re-reads.
     */
    static final class SegmentReaders {
        final String segment;
        volatile Reader[] readers = new Reader[0];
        /** The farthest position a closed reader reached; under the monitor. */
        long frontier;
        volatile boolean reread;
        volatile int rereadGeneration;
        /** Set when the set left the map; registering threads retry with a new set. */
        boolean removed;
        /** Re-read registrations since the last pass; under the monitor. */
        int pendingRereads;
        /** Expected re-read registrations per generation (the last pass's rate), for fill admission; written by the pass. */
        volatile double admitRate;
        /** The farthest entry end a pass surveyed: the tail as far as the policy knows; written by the pass. */
        volatile long tail;
        // Confined to the pass.
        boolean learned;
        double count;
        int bucket;
        int lengthBucket;
        int seenGeneration;

        /** Readers inferred from the segment's reads: written under the segment's lock, read by the pass. */
        final TrackedReader[] tracked = new TrackedReader[TRACKED_PER_SEGMENT];
        /**
         * Written last by each observed read (a release store through {@link #STAMP}, no fence on
         * the data path); the pass reads it first (an acquire load, {@link #trackedStamp()}).
         */
        @SuppressWarnings("unused")
        private int trackedStamp;
        static final java.lang.invoke.VarHandle STAMP;

        static {
            try {
                STAMP = java.lang.invoke.MethodHandles.lookup().findVarHandle(SegmentReaders.class, "trackedStamp", int.class);
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
        /** Tracked readers that started behind the tail, ever (written under the segment's lock). */
        volatile long inferredRereads;
        /**
         * The farthest end of a tracked reader's first read (written under the segment's lock, only
         * when a reader starts, to keep volatile stores off the continuing reads); with the
         * surveyed tail it tells whether a new reader starts behind data already read.
         */
        volatile long reached;
        // Confined to the pass.
        long inferredRereadsSeen;

        final ReaderRegistry registry;

        SegmentReaders(final ReaderRegistry registry, final String segment) {
            this.registry = registry;
            this.segment = segment;
            for (int i = 0; i < tracked.length; i++) {
                tracked[i] = new TrackedReader();
            }
        }

        /** @return the stamp of the segment's last observed read (an acquire load: the slots as of that read follow). */
        int trackedStamp() {
            return (int) STAMP.getAcquire(this);
        }

        /** @return whether any tracked reader read within {@code idleTimeout} of {@code now} (stalled or not). */
        boolean anyTracked(final long now, final long idleTimeout) {
            for (final TrackedReader t : tracked) {
                final long time = t.time;
                if (time != FREE && now - time <= idleTimeout) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * One reader inferred from sequential reads of a segment: its first read's start, its last
     * read, when it read last, and two anchors its speed is measured from. Written under the
     * segment's lock by the reading threads (one at a time); the pass reads the fields without
     * it, after the segment's {@code trackedStamp}, and may see a slightly stale reader.
     */
    static final class TrackedReader {
        long start;
        /** Where its first read ended: it protects data only once it has read past that (two sequential reads). */
        long firstEnd;
        long from;
        long end;
        long time = FREE;
        long anchorPosition;
        long anchorTime;
        long midPosition;
        long midTime;
        /** Bytes between the tail and the start when it started behind the tail, else 0. */
        long startDistance;
        /** Mean clock units between its reads (an exponential average, see {@link #INTERVAL_DECAY}), 0 until it read twice. */
        double interval;
        /** Counts the readers this slot held; the pass learns each ended re-read session once. */
        int session;
        // Confined to the pass: the session it learned from last.
        int learnedSession;

        void start(final long offset, final long readEnd, final long now, final long distance) {
            session++;
            start = offset;
            from = offset;
            end = Math.max(offset, readEnd);
            firstEnd = end;
            startDistance = distance;
            interval = 0;
            anchorPosition = offset;
            anchorTime = now;
            midPosition = offset;
            midTime = now;
            time = now;
        }

        void move(final long offset, final long readEnd, final long now, final long window) {
            from = offset;
            if (readEnd > end) {
                end = readEnd;
            }
            final long gap = now - time;
            interval = interval == 0 ? gap : 0.75 * interval + 0.25 * gap;
            time = now;
            if (now - midTime >= window) {
                anchorPosition = midPosition;
                anchorTime = midTime;
                midPosition = end;
                midTime = now;
            }
        }

        /**
         * @return whether it has read on past its first read: one read is no reader (a key/value
         *         access, a probe); only a reader that went on sequentially protects data ahead of it.
         */
        boolean sequential() {
            return end > firstEnd;
        }

        /** @return bytes per clock unit since the older anchor, or 0 if not measured yet. */
        double speed() {
            final long elapsed = time - anchorTime;
            return elapsed > 0 ? (double) (end - anchorPosition) / elapsed : 0;
        }
    }
}
