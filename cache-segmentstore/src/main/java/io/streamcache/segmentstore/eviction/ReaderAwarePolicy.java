package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.index.ReadIndexEntry;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Eviction that knows where the readers of each segment are, approximating Belady's optimal
 * choice (evict what is needed farthest in the future) for streaming reads.
 *
 * <h2>Thread model</h2>
 * <ul>
 *   <li>{@link #register(String, long)} and {@link Reader#close()}: any thread, at any time
 *       (a broker calls them when a client opens or ends a read); they allocate and synchronize
 *       on the segment's reader set, never on the data path of other segments.</li>
 *   <li>{@link Reader#position(long)}: the reader's own thread (one writer per handle), on the
 *       data path; a release store into the handle, no allocation, no lock. The pass reads it
 *       with an acquire load, so it sees a recent position, not necessarily the latest.</li>
 *   <li>{@link #recordUse}: data-path threads under the segment's lock; stamps the generation
 *       (the recency fallback), nothing else.</li>
 *   <li>{@link #beginPass}, {@link #survey}, {@link #advance}, {@link #select}: the cache
 *       manager's pass, one thread at a time ({@link EvictionPolicy}). The pass takes a snapshot
 *       of every segment's reader positions in {@code beginPass} and decides on it.</li>
 * </ul>
 *
 * <h2>Reader contract</h2>
 * A reader's position is the next segment byte it will read: a catch-up reader registers at the
 * offset it starts from, a tail reader at the segment's current length, and after each read the
 * broker sets the position to the end of what was returned. A reader that stops reading must be
 * closed; an unclosed idle reader keeps the data ahead of it as if it were about to read it.
 *
 * <h2>Order of eviction</h2>
 * For every evictable entry the survey computes a rank; the cut-off moves from the lowest rank
 * up, in steps of 1/{@value #STEPS} of the surveyed entries:
 * <ol>
 *   <li><b>passed</b>: the segment has readers and all of them are at or past the entry's end
 *       (seed 5: blocks behind the read position are released at once); oldest use first.
 *       Segments where a reader recently registered behind data already read (re-reads: a
 *       consumer group restarting, followers) are treated as unread instead, see 2;</li>
 *   <li><b>recency</b>: segments nobody reads (and passed data of re-read segments) age
 *       normally, oldest generation first, as {@link GenerationPolicy} does;</li>
 *   <li><b>ahead of a reader</b>: ranked by the distance in bytes from the nearest reader
 *       behind the entry to the entry's start, farthest first, so the data right ahead of a
 *       reader (a follower's range up to its leader, a tail reader's next block) goes last.</li>
 * </ol>
 * Entries used in the current generation (during the pass) are never selected.
 */
public final class ReaderAwarePolicy implements EvictionPolicy {
    /** Each step of the cut-off covers this fraction (1/STEPS) of the surveyed entries. */
    public static final int STEPS = 64;
    /** Default number of generations a re-read registration marks its segment as re-read. */
    public static final int REREAD_GENERATIONS_DEFAULT = 16;

    private static final long RANK_PASSED = 0L;
    private static final long RANK_RECENCY = 1L;
    private static final long RANK_AHEAD = 2L;
    private static final int RANK_SHIFT = 56;
    private static final long VALUE_MASK = (1L << RANK_SHIFT) - 1;

    private static final VarHandle POSITION;

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(Reader.class, "position", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ConcurrentHashMap<String, SegmentReaders> segments = new ConcurrentHashMap<>();
    private final int rereadGenerations;
    /** The generation of the latest pass; read by registering threads. */
    private volatile int latestGeneration;

    // Pass state: confined to the pass.
    private final Map<String, View> views = new HashMap<>();
    private long[] ranks = new long[64];
    private int rankCount;
    private int nextRank;
    private boolean sorted;
    private int current;
    private long cutoff = Long.MIN_VALUE;
    private String lastSegment;
    private View lastView;

    /** A policy that treats a segment as re-read for {@value #REREAD_GENERATIONS_DEFAULT} generations. */
    public ReaderAwarePolicy() {
        this(REREAD_GENERATIONS_DEFAULT);
    }

    /**
     * @param rereadGenerations how many generations after a reader registered behind already-read
     *                          data its segment's passed data ages by recency instead of going
     *                          first; &gt;= 0.
     */
    public ReaderAwarePolicy(final int rereadGenerations) {
        if (rereadGenerations < 0) {
            throw new IllegalArgumentException("rereadGenerations=" + rereadGenerations + " must be >= 0");
        }
        this.rereadGenerations = rereadGenerations;
    }

    // ------------------------------------------------------------------------------------------
    // Readers
    // ------------------------------------------------------------------------------------------

    /**
     * Registers a reader of a segment; callable from any thread, not on the data path (allocates).
     *
     * @param segment  the segment's name.
     * @param position the next byte the reader will read, &gt;= 0.
     * @return the reader's handle: update its position as it reads, close it when done.
     */
    public Reader register(final String segment, final long position) {
        Objects.requireNonNull(segment, "segment");
        checkPosition(position);
        while (true) {
            final SegmentReaders set = segments.computeIfAbsent(segment, name -> new SegmentReaders(this, name));
            synchronized (set) {
                if (set.removed) {
                    continue;
                }
                final Reader reader = new Reader(set, position);
                long reached = set.frontier;
                for (final Reader other : set.readers) {
                    reached = Math.max(reached, other.position());
                }
                if (position < reached) {
                    set.rereadGeneration = latestGeneration;
                    set.reread = true;
                }
                final Reader[] readers = Arrays.copyOf(set.readers, set.readers.length + 1);
                readers[readers.length - 1] = reader;
                set.readers = readers;
                return reader;
            }
        }
    }

    /**
     * Forgets a deleted segment: its readers stop counting (close them too) and its re-read
     * history is dropped. Any thread.
     */
    public void forget(final String segment) {
        final SegmentReaders set = segments.remove(segment);
        if (set != null) {
            synchronized (set) {
                set.removed = true;
                for (final Reader reader : set.readers) {
                    reader.closed = true;
                }
                set.readers = new Reader[0];
            }
        }
    }

    /**
     * @return how many open readers the segment has now (any thread; for tests and metrics).
     */
    public int readerCount(final String segment) {
        final SegmentReaders set = segments.get(segment);
        return set == null ? 0 : set.readers.length;
    }

    // ------------------------------------------------------------------------------------------
    // The pass
    // ------------------------------------------------------------------------------------------

    @Override
    public void beginPass(final int currentGeneration) {
        current = currentGeneration;
        latestGeneration = currentGeneration;
        rankCount = 0;
        nextRank = 0;
        sorted = false;
        cutoff = Long.MIN_VALUE;
        lastSegment = null;
        lastView = null;
        views.clear();
        final Iterator<SegmentReaders> it = segments.values().iterator();
        while (it.hasNext()) {
            final SegmentReaders set = it.next();
            final Reader[] readers = set.readers;
            final boolean reread = set.reread && currentGeneration - set.rereadGeneration <= rereadGenerations;
            if (readers.length == 0) {
                if (!reread && currentGeneration - set.closedGeneration > rereadGenerations) {
                    synchronized (set) {
                        if (set.readers.length == 0) {
                            set.removed = true;
                            it.remove();
                        }
                    }
                }
                continue;
            }
            final long[] positions = new long[readers.length];
            for (int i = 0; i < readers.length; i++) {
                positions[i] = readers[i].position();
            }
            Arrays.sort(positions);
            views.put(set.segment, new View(positions, reread));
        }
    }

    @Override
    public void survey(final String segment, final ReadIndexEntry entry) {
        final int age = entry.generation() - current;
        if (age >= 0) {
            return;
        }
        if (rankCount == ranks.length) {
            ranks = Arrays.copyOf(ranks, rankCount * 2);
        }
        ranks[rankCount++] = rank(segment, entry, age);
    }

    @Override
    public boolean advance() {
        if (!sorted) {
            Arrays.sort(ranks, 0, rankCount);
            sorted = true;
        }
        if (nextRank >= rankCount) {
            return false;
        }
        final int step = Math.max(1, rankCount / STEPS);
        cutoff = ranks[Math.min(rankCount, nextRank + step) - 1];
        nextRank = Math.min(rankCount, nextRank + step);
        while (nextRank < rankCount && ranks[nextRank] == cutoff) {
            nextRank++;
        }
        return true;
    }

    @Override
    public boolean select(final String segment, final ReadIndexEntry entry) {
        final int age = entry.generation() - current;
        return age < 0 && rank(segment, entry, age) <= cutoff;
    }

    /**
     * The rank of an entry in the current pass: lower ranks are evicted first. The top byte is the
     * class (passed, recency, ahead), the rest orders within the class.
     */
    long rank(final String segment, final ReadIndexEntry entry, final int age) {
        final View view = view(segment);
        final long byAge = (long) age + Integer.MAX_VALUE + 1L;
        if (view == null) {
            return (RANK_RECENCY << RANK_SHIFT) | byAge;
        }
        final long behind = nearestReaderBefore(view.positions, entry.endOffset());
        if (behind < 0) {
            return ((view.reread ? RANK_RECENCY : RANK_PASSED) << RANK_SHIFT) | byAge;
        }
        final long distance = Math.min(Math.max(0, entry.offset() - behind), VALUE_MASK);
        return (RANK_AHEAD << RANK_SHIFT) | (VALUE_MASK - distance);
    }

    private View view(final String segment) {
        if (segment != lastSegment) {
            lastSegment = segment;
            lastView = views.get(segment);
        }
        return lastView;
    }

    /** @return the largest position below {@code end}, or -1 if every position is at or past it. */
    private static long nearestReaderBefore(final long[] positions, final long end) {
        int lo = 0;
        int hi = positions.length - 1;
        long found = -1;
        while (lo <= hi) {
            final int mid = (lo + hi) >>> 1;
            if (positions[mid] < end) {
                found = positions[mid];
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    private static void checkPosition(final long position) {
        if (position < 0) {
            throw new IllegalArgumentException("position=" + position + " must be >= 0");
        }
    }

    @Override
    public String toString() {
        return "ReaderAwarePolicy{current=" + current + ", segmentsWithReaders=" + segments.size()
            + ", surveyed=" + rankCount + ", cutoff=0x" + Long.toHexString(cutoff) + '}';
    }

    /** The readers of one segment; the array is copied on change, under the set's monitor. */
    private static final class SegmentReaders {
        final String segment;
        volatile Reader[] readers = new Reader[0];
        /** The farthest position a closed reader reached; under the monitor. */
        long frontier;
        volatile boolean reread;
        volatile int rereadGeneration;
        /** The generation when a reader last closed: the frontier is remembered that long. */
        volatile int closedGeneration;
        /** Set when the set left the map; registering threads retry with a new set. */
        boolean removed;

        private final ReaderAwarePolicy policy;

        SegmentReaders(final ReaderAwarePolicy policy, final String segment) {
            this.policy = policy;
            this.segment = segment;
        }

        int policyGeneration() {
            return policy.latestGeneration;
        }
    }

    /** The pass's snapshot of one segment's readers. */
    private static final class View {
        final long[] positions;
        final boolean reread;

        View(final long[] positions, final boolean reread) {
            this.positions = positions;
            this.reread = reread;
        }
    }

    /**
     * A registered reader: its position is written by the reader's thread (one writer) with a
     * release store and read by the eviction pass; {@link #close()} from any thread, once or more.
     */
    public static final class Reader implements AutoCloseable {
        private final SegmentReaders set;
        @SuppressWarnings("unused")
        private long position;
        private volatile boolean closed;

        private Reader(final SegmentReaders set, final long position) {
            this.set = set;
            this.position = position;
        }

        /**
         * Moves the reader: the next byte it will read. On the data path: a release store, no
         * allocation, no lock, no check beyond the sign.
         *
         * @param position the next byte the reader will read, &gt;= 0.
         */
        public void position(final long position) {
            checkPosition(position);
            POSITION.setRelease(this, position);
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
                set.closedGeneration = set.policyGeneration();
                set.readers = remaining;
            }
        }

        @Override
        public String toString() {
            return "Reader{segment=" + set.segment + ", position=" + position() + ", closed=" + closed + '}';
        }
    }
}
