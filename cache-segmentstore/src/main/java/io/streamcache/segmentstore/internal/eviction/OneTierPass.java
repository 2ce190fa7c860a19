package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.EvictionPolicy;
import io.streamcache.segmentstore.eviction.GenerationPolicy;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

import java.util.Arrays;
import java.util.List;

/**
 * The eviction pass over a cache of one tier, as the cache manager runs it: drives an
 * {@link EvictionPolicy} over {@link EvictionSource sources} until a number of blocks is freed.
 * The cache manager's passes and the eviction simulator (cache-bench) both run this code, so
 * that what the simulator reports is what the cache does.
 *
 * <h2>A pass</h2>
 * <pre>
 *   GenerationPolicy and one source that walks oldest first:
 *     survey the oldest segments only ──► first cut-off ──► evict from those segments ──► done?
 *                                                                                    │ no
 *   any policy (or what the step above left):                                        ▼
 *     beginPass(current, wanted bytes) ──► survey every source ──► advance ──► evict scan ──┐
 *                                                                    ▲     (until enough)   │
 *                                                                    └──────────────────────┘
 * </pre>
 * Under the {@link GenerationPolicy}, with one source that supports it
 * ({@link EvictionSource#walksOldestFirst()}), the first step surveys only the source's oldest
 * segments: the survey stops once every entry at least as old as the cut-off a full survey would
 * choose has been surveyed, and the eviction visits only the segments that may hold entries
 * behind that cut-off. A pass left short (busy, pinned or not-yet-durable entries) finishes as
 * any other: a survey of every source, then the cut-off moved step by step, each step followed
 * by a scan that evicts what the policy selects, until enough blocks are freed or the policy has
 * no step left.
 *
 * <p><b>Threading:</b> confined to one thread at a time (the manager's pass lock, or the
 * simulating thread); reusable from pass to pass, allocation-free once built.
 */
public final class OneTierPass {
    private final EvictionPolicy policy;
    private final int blockLength;
    private final SurveyScan survey = new SurveyScan();
    private final OldestSurveyScan oldestSurvey = new OldestSurveyScan();
    private final EvictScan evict = new EvictScan();
    private long busy;
    /** Of the running pass: how long a reader stays live without reading (0: spare nothing), and the segments spared. */
    private long idleNanos;
    private long spared;

    /**
     * @param policy      chooses what to evict.
     * @param blockLength the cache's block length: an entry of {@code n} bytes frees {@code ceil(n / blockLength)} blocks (at least 1).
     */
    public OneTierPass(final EvictionPolicy policy, final int blockLength) {
        if (blockLength < 1) {
            throw new IllegalArgumentException("blockLength=" + blockLength + " must be >= 1");
        }
        this.policy = policy;
        this.blockLength = blockLength;
    }

    /**
     * Runs one pass.
     *
     * @param sources the sources to scan (a snapshot that does not change during the call; read by index).
     * @param current the generation now (already advanced for this pass).
     * @param wanted  blocks to free, &gt; 0.
     * @return blocks freed.
     */
    public long run(final List<? extends EvictionSource> sources, final int current, final long wanted) {
        return run(sources, current, wanted, 0);
    }

    /**
     * Runs one pass that spares the bytes live readers have not read yet (see
     * {@link EvictionScan#readerIdleNanos()}): such entries are neither surveyed nor evicted.
     *
     * @param sources         as {@link #run(List, int, long)}.
     * @param current         the generation now.
     * @param wanted          blocks to free, &gt; 0.
     * @param readerIdleNanos how long a reader stays live without reading; 0 spares nothing.
     * @return blocks freed.
     */
    public long run(final List<? extends EvictionSource> sources, final int current, final long wanted, final long readerIdleNanos) {
        busy = 0;
        spared = 0;
        idleNanos = readerIdleNanos;
        evict.reset(wanted);
        final EvictionSource only = onlySource(sources);
        if (policy instanceof GenerationPolicy generations && only != null && only.walksOldestFirst()) {
            busy += oldestFirst(generations, only, current, wanted * blockLength);
            if (evict.isDone()) {
                return evict.blocks;
            }
        }
        policy.beginPass(current, (wanted - evict.blocks) * blockLength);
        // By index, not for-each: no iterator per walk (a pass allocates nothing, see EvictionPasses).
        for (int i = 0; i < sources.size(); i++) {
            busy += sources.get(i).scan(survey);
        }
        while (!evict.isDone() && policy.advance()) {
            for (int i = 0; i < sources.size(); i++) {
                busy += sources.get(i).scan(evict);
                if (evict.isDone()) {
                    break;
                }
            }
        }
        return evict.blocks;
    }

    /** @return entries the last pass evicted. */
    public long evictedEntries() {
        return evict.entries;
    }

    /** @return bytes the last pass evicted. */
    public long evictedBytes() {
        return evict.bytes;
    }

    /** @return segments whose unread bytes the last pass spared (each time a scan visited one). */
    public long sparedSegments() {
        return spared;
    }

    /** @return segments the last pass skipped because they were busy. */
    public long busySkips() {
        return busy;
    }

    /**
     * @return the one source, or null if there are none or several (a snapshot: a source may be
     *         unregistered while a pass runs).
     */
    private static EvictionSource onlySource(final List<? extends EvictionSource> sources) {
        return sources.size() == 1 ? sources.get(0) : null;
    }

    /**
     * The first step under the {@link GenerationPolicy}, over a source that walks its segments
     * oldest first: surveys only the segments listed before the first generation at which the
     * bytes surveyed at least as old add up to {@code wantedBytes} (all of them, if they never
     * do), then evicts behind the policy's first cut-off from only the segments listed at or
     * before it. The cut-off is the one a survey of every segment would give, since every entry
     * at least as old as it has been surveyed.
     *
     * @return segments skipped because they were busy.
     */
    private long oldestFirst(final GenerationPolicy generations, final EvictionSource source, final int current,
                             final long wantedBytes) {
        generations.beginPass(current, wantedBytes);
        oldestSurvey.reset(current, wantedBytes);
        long skipped = source.scanOldestFirst(oldestSurvey, current);
        if (generations.advance()) {
            evict.bound(generations.cutoffGeneration());
            try {
                skipped += source.scanOldestFirst(evict, current);
            } finally {
                evict.unbound();
            }
        }
        return skipped;
    }

    private long blocksOf(final int length) {
        return length == 0 ? 1 : ((length - 1) / blockLength) + 1L;
    }

    /** The survey: offers every evictable entry to the policy, evicts none. */
    private final class SurveyScan implements EvictionScan {
        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            policy.survey(segment, entry);
            return false;
        }

        @Override
        public long readerIdleNanos() {
            return idleNanos;
        }

        @Override
        public void spared(final String segment, final ReadIndexEntry first) {
            spared++;
        }

        @Override
        public boolean isDone() {
            return false;
        }
    }

    /**
     * The survey of a walk oldest first: offers every entry to the policy, and ends the walk
     * before the first generation at which the bytes it surveyed at least as old as the one
     * before add up to the bytes the pass wants. Those bytes are counted by age in a fixed
     * histogram; an entry older than its last slot counts in that slot, which can only make
     * the walk go on longer.
     */
    private final class OldestSurveyScan implements EvictionScan {
        private static final int AGES = 4096;
        /** Bytes surveyed by age ({@code current - generation}, from 1). */
        private final long[] bytesByAge = new long[AGES];
        private int current;
        private long wantedBytes;
        /** Ages at least this old are summed in {@link #behind}. */
        private int summedFrom;
        private long behind;

        void reset(final int current, final long wantedBytes) {
            this.current = current;
            this.wantedBytes = wantedBytes;
            Arrays.fill(bytesByAge, 0);
            summedFrom = AGES;
            behind = 0;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            policy.survey(segment, entry);
            final int age = current - entry.generation();
            if (age > 0) {
                bytesByAge[Math.min(age, AGES - 1)] += entry.length();
            }
            return false;
        }

        @Override
        public boolean beforeGeneration(final int next) {
            // Every entry older than next has been surveyed: those of age >= current - next + 1.
            final int age = Math.max(1, current - next + 1);
            while (summedFrom > age) {
                behind += bytesByAge[--summedFrom];
            }
            return behind < wantedBytes;
        }

        @Override
        public long readerIdleNanos() {
            return idleNanos;
        }

        @Override
        public void spared(final String segment, final ReadIndexEntry first) {
            spared++;
        }

        @Override
        public boolean isDone() {
            return false;
        }
    }

    /** One step of the cut-off: evicts what the policy selects until enough blocks are freed. */
    private final class EvictScan implements EvictionScan {
        private long wanted;
        private long blocks;
        private long entries;
        private long bytes;
        /** In a walk oldest first: the cut-off generation, past which no listed segment holds a candidate. */
        private boolean bounded;
        private int cutoff;

        void bound(final int cutoffGeneration) {
            bounded = true;
            cutoff = cutoffGeneration;
        }

        void unbound() {
            bounded = false;
        }

        @Override
        public boolean beforeGeneration(final int generation) {
            return !bounded || generation - cutoff <= 0;
        }

        void reset(final long wanted) {
            this.wanted = wanted;
            blocks = 0;
            entries = 0;
            bytes = 0;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            if (!policy.select(segment, entry)) {
                return false;
            }
            blocks += blocksOf(entry.length());
            entries++;
            bytes += entry.length();
            return true;
        }

        @Override
        public long readerIdleNanos() {
            return idleNanos;
        }

        @Override
        public void spared(final String segment, final ReadIndexEntry first) {
            spared++;
        }

        @Override
        public boolean isDone() {
            return blocks >= wanted;
        }
    }
}
