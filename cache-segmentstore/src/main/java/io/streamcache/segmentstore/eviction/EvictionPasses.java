package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.eviction.OneTierPass;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The eviction and demotion passes of a {@link CacheManager}: the registered
 * {@link EvictionSource sources}, the pass lock, the scans a pass drives over the sources, and
 * the pass counters (runs, evictions, busy skips, the admission threshold).
 *
 * <h2>How a pass works</h2>
 * A pass frees blocks until the cache is back at its target utilization (and at least a given
 * number of blocks, for an allocation that found the cache full). Over a cache of one tier it
 * asks the {@link EvictionPolicy} to survey the evictable entries of every source (the
 * survey of {@link OneTierPass}), then moves the policy's cut-off one step at a time (oldest generations
 * first, for the default {@link GenerationPolicy}) and scans the sources again, evicting what
 * lies behind the cut-off (its evict scan), until enough blocks are freed or the policy
 * has no step left. Evicting is {@code cache.delete(address)} and setting the entry's address to
 * {@link ReadIndexEntry#NULL_ADDRESS}, done by the source under the segment's lock.
 *
 * <p>Under the {@link GenerationPolicy}, with one source that supports it
 * ({@link EvictionSource#walksOldestFirst()}), the first step walks only the source's oldest
 * segments: the survey stops once every entry at least as old as the cut-off a full survey would
 * choose has been surveyed, and the eviction visits only the segments that may hold entries
 * behind that cut-off. A pass left short finishes as above. The one-tier pass is
 * {@link OneTierPass}, which the eviction simulator runs too.
 *
 * <p>Over a tiered cache a pass works from the slowest tier up ({@link #tieredPass}): the last
 * tier evicts down to its target, then every other tier over its target demotes the entries the
 * policy selects among that tier's entries into the next tier, which the step before made room
 * in. The {@link TierAdmission admission policy} decides which selected entries the next tier
 * takes (with {@link TierAdmission#auto()}, from the size histogram the survey fills); the
 * others, and those the next tier has no room for, are evicted ({@link TierScan}).
 *
 * <h2>Threading</h2>
 * Thread-safe. One pass runs at a time, under the pass lock: {@link #passNow} takes it (waiting
 * for a running pass); the full-cache handler ({@link ManagerFullHandler}) takes it only with
 * {@link #tryLock()} and calls {@link #passLocked} while holding it. The scans, the policy's
 * pass state, the histogram and the counters are written only under the lock; the counters are
 * volatile or {@link TierCounters adders} so that {@code stats()} reads them from any thread.
 * {@link #register} and {@link #unregister} replace the immutable list of sources under this
 * object's monitor (a store's build and close, never a data path); {@link #unregister} then
 * waits for a running pass.
 *
 * <h2>Allocation</h2>
 * A pass allocates nothing once its structures have grown to the store's size (it
 * made ~2 KB of garbage per pass): the sources are an immutable list walked by index (no
 * iterator), the one-tier pass reads the tier's used and total blocks (no {@code CacheStats}
 * snapshot), and the oldest-first lists are arrays ({@link GenerationLists}).
 * {@code PassAllocationTest} holds it to a bound.
 */
final class EvictionPasses {
    private final BlockCache cache;
    private final EvictionPolicy policy;
    /** The manager's generation counter (shared with the manager, which advances it). */
    private final AtomicInteger generation;
    private final double targetUtilization;
    private final int blockLength;
    private final int tierCount;
    /** Target utilization of each tier: passes demote (or, in the last tier, evict) down to it. */
    private final double[] tierTargets;
    private final TierAdmission admission;
    private final TierCounters tiers;
    /** How long a sequential reader stays live without reading (0: passes spare no reader's bytes). */
    private final long readerIdleNanos;
    /** The registered sources: immutable, replaced under this object's monitor; read by index, without an iterator. */
    private volatile List<EvictionSource> sources = List.of();

    private final ReentrantLock passLock = new ReentrantLock();
    /** The one-tier pass (shared with the eviction simulator). */
    private final OneTierPass onePass;
    private final TierScan tierScan = new TierScan();
    private final SizeHistogram histogram = new SizeHistogram();

    /** The last threshold {@link TierAdmission#auto()} computed (or the fixed one); written under the pass lock. */
    private volatile int admissionThreshold;

    // Written under passLock only; volatile for stats() readers.
    private volatile long runs;
    private volatile long evictions;
    private volatile long evictedBytes;
    private volatile long busySkips;
    /** Of {@link #evictions}: those by passes with a minimum to free (the full handler's). */
    private volatile long evictionsWhenFull;
    /** Segments whose unread bytes passes spared, each time a scan visited one. */
    private volatile long sparedSegments;
    /** Whether the last pass spared a live reader's unread bytes (under the pass lock; read by fills that find it busy). */
    private volatile boolean lastPassSpared;

    /**
     * @param cache             the managed cache.
     * @param policy            chooses what to evict or demote.
     * @param generation        the manager's generation counter.
     * @param targetUtilization the cache's target (a one-tier cache).
     * @param tierTargets       every tier's target.
     * @param admission         which demoted entries a slower tier takes.
     * @param tiers             the per-tier counters this class adds to.
     * @param readerIdleNanos   how long a sequential reader stays live without reading, for the
     *                          sparing of the bytes live readers have not read; 0 spares nothing.
     */
    EvictionPasses(final BlockCache cache, final EvictionPolicy policy, final AtomicInteger generation,
                   final double targetUtilization, final double[] tierTargets, final TierAdmission admission,
                   final TierCounters tiers, final long readerIdleNanos) {
        this.readerIdleNanos = readerIdleNanos;
        this.cache = cache;
        this.policy = policy;
        this.generation = generation;
        this.targetUtilization = targetUtilization;
        this.blockLength = cache.blockLength();
        this.tierCount = cache.tierCount();
        this.tierTargets = tierTargets;
        this.admission = admission;
        this.admissionThreshold = admission.maxLength();
        this.tiers = tiers;
        this.onePass = new OneTierPass(policy, cache.blockLength());
    }

    // ------------------------------------------------------------------------------------------
    // Sources
    // ------------------------------------------------------------------------------------------

    /**
     * Adds a source whose entries passes may evict. Idempotent.
     */
    synchronized void register(final EvictionSource source) {
        Objects.requireNonNull(source, "source");
        if (!sources.contains(source)) {
            final List<EvictionSource> grown = new ArrayList<>(sources);
            grown.add(source);
            sources = List.copyOf(grown);
        }
    }

    /**
     * Removes a source; waits for a running pass to finish, so once this returns no pass scans it.
     */
    void unregister(final EvictionSource source) {
        synchronized (this) {
            final List<EvictionSource> left = new ArrayList<>(sources);
            if (left.remove(source)) {
                sources = List.copyOf(left);
            }
        }
        passLock.lock();
        passLock.unlock();
    }

    int sourceCount() {
        return sources.size();
    }

    /**
     * Drives {@code scan} over every source without the pass lock (a shrink of the cache runs
     * beside the passes: both act on an entry only under its segment's lock). Call it holding
     * no segment lock.
     *
     * @return segments skipped because they were busy.
     */
    int scanSources(final EvictionScan scan) {
        int busy = 0;
        final List<EvictionSource> all = sources;
        for (int i = 0; i < all.size(); i++) {
            busy += all.get(i).scan(scan);
        }
        return busy;
    }

    // ------------------------------------------------------------------------------------------
    // The pass lock
    // ------------------------------------------------------------------------------------------

    /**
     * Runs one pass on the calling thread, waiting for a pass running on another thread.
     *
     * @param target  the target utilization, or NaN for the configured one(s).
     * @param advance whether to advance the generation first (under the lock).
     * @return blocks freed.
     */
    long passNow(final double target, final boolean advance) {
        passLock.lock();
        try {
            if (advance) {
                generation.incrementAndGet();
            }
            return passLocked(target, 0);
        } finally {
            passLock.unlock();
        }
    }

    /** @return whether the calling thread now holds the pass lock (no pass was running). */
    boolean tryLock() {
        return passLock.tryLock();
    }

    /** Releases the pass lock taken with {@link #tryLock()}. */
    void unlock() {
        passLock.unlock();
    }

    /**
     * Waits at most {@code nanos} for the pass another thread is running to end.
     *
     * @throws InterruptedException if the waiting thread is interrupted.
     */
    void awaitRunningPass(final long nanos) throws InterruptedException {
        if (passLock.tryLock(nanos, TimeUnit.NANOSECONDS)) {
            passLock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Passes
    // ------------------------------------------------------------------------------------------

    /**
     * One pass; the caller holds the pass lock.
     *
     * @param target        the target utilization, or NaN for the configured one(s).
     * @param minimumBlocks blocks to free even if the cache is at or under the target.
     * @return blocks freed.
     * @throws CacheClosedException if the cache is closed.
     */
    long passLocked(final double target, final long minimumBlocks) {
        return passLocked(target, minimumBlocks, false);
    }

    /**
     * One pass; the caller holds the pass lock. Every pass first spares the bytes live readers
     * have not read ({@link EvictionScan#readerIdleNanos()}): it ranks and evicts only the rest,
     * so what a reader has passed goes before what it is about to read, under every policy. A
     * pass left short then goes on over every entry, unless {@code spareOnly}: a fill from the
     * log asks for that one, and is refused rather than evict a reader's unread bytes; appends
     * and the timer's passes keep the exact bound and the appends' room by evicting them last.
     *
     * @param target        the target utilization, or NaN for the configured one(s).
     * @param minimumBlocks blocks to free even if the cache is at or under the target.
     * @param spareOnly     whether the pass stops short rather than evict a live reader's unread bytes.
     * @return blocks freed.
     * @throws CacheClosedException if the cache is closed.
     */
    long passLocked(final double target, final long minimumBlocks, final boolean spareOnly) {
        final long before = evictions;
        try {
            return pass(target, minimumBlocks, spareOnly);
        } finally {
            if (minimumBlocks > 0) {
                evictionsWhenFull = evictionsWhenFull + (evictions - before);
            }
        }
    }

    private long pass(final double target, final long minimumBlocks, final boolean spareOnly) {
        runs = runs + 1;
        lastPassSpared = false;
        if (cache.isClosed()) {
            throw new CacheClosedException("cache " + cache.name() + " is closed");
        }
        if (tierCount > 1) {
            return tieredPass(target, minimumBlocks, spareOnly);
        }
        final double utilization = Double.isNaN(target) ? targetUtilization : target;
        // The tier's counts, not cache.stats(): the same figures for one tier, without a snapshot's objects.
        final long targetBlocks = (long) Math.floor(utilization * cache.tierBlocks(0));
        final long wanted = Math.max(cache.tierUsedBlocks(0) - targetBlocks, minimumBlocks);
        final List<EvictionSource> all = sources;
        if (wanted <= 0 || all.isEmpty()) {
            return 0;
        }
        long freed = 0;
        if (readerIdleNanos > 0) {
            freed = onePassRun(all, wanted, readerIdleNanos);
            if (onePass.sparedSegments() == 0 || spareOnly) {
                return freed;
            }
        }
        if (freed < wanted) {
            freed += onePassRun(all, wanted - freed, 0);
        }
        return freed;
    }

    /** One run of the one-tier pass, counted. */
    private long onePassRun(final List<EvictionSource> all, final long wanted, final long idleNanos) {
        final long freed = onePass.run(all, generation.get(), wanted, idleNanos);
        evictions = evictions + onePass.evictedEntries();
        evictedBytes = evictedBytes + onePass.evictedBytes();
        busySkips = busySkips + onePass.busySkips();
        tiers.evictions[0].add(onePass.evictedEntries());
        if (onePass.sparedSegments() > 0) {
            sparedSegments = sparedSegments + onePass.sparedSegments();
            lastPassSpared = true;
        }
        return freed;
    }

    /**
     * A pass over a tiered cache: evicts from the last tier down to its target (and at least
     * {@code minimumBlocks}), then, from the second-slowest tier up to tier 0, demotes out of
     * each tier over its target into the next one, so that every demotion finds the room the
     * step before made. The caller holds the pass lock.
     *
     * @return blocks freed (evicted or moved out of their tier).
     */
    private long tieredPass(final double target, final long minimumBlocks, final boolean spareOnly) {
        final int last = tierCount - 1;
        final double lastTarget = Double.isNaN(target) ? tierTargets[last] : target;
        long freed = 0;
        boolean spared = false;
        if (readerIdleNanos > 0) {
            freed = tierStep(last, lastTarget, minimumBlocks, false, readerIdleNanos);
            spared = tierScan.spared > 0;
        }
        if (readerIdleNanos == 0 || spared && !spareOnly) {
            freed += tierStep(last, lastTarget, Math.max(0, minimumBlocks - freed), false, 0);
        }
        for (int tier = last - 1; tier >= 0; tier--) {
            freed += tierStep(tier, Double.isNaN(target) ? tierTargets[tier] : target, 0, true, 0);
        }
        return freed;
    }

    /**
     * One tier's part of a pass: surveys the entries of the tier, then moves the policy's cut-off
     * and evicts (last tier) or demotes (other tiers, subject to the admission policy) what it
     * selects until the tier is back at its target.
     */
    private long tierStep(final int tier, final double target, final long minimumBlocks, final boolean demote, final long idleNanos) {
        final long blocks = cache.tierBlocks(tier);
        final long wanted = Math.max(cache.tierUsedBlocks(tier) - (long) Math.floor(target * blocks), minimumBlocks);
        final List<EvictionSource> all = sources;
        if (wanted <= 0 || all.isEmpty()) {
            return 0;
        }
        long busy = 0;
        policy.beginPass(generation.get(), wanted * cache.blockLength());
        histogram.clear();
        tierScan.reset(tier, demote, wanted, idleNanos);
        for (int i = 0; i < all.size(); i++) {
            busy += all.get(i).scan(tierScan);
        }
        if (demote) {
            admissionThreshold = switch (admission.kind()) {
                case ALL, SIZE_THRESHOLD -> admission.maxLength();
                case AUTO -> histogram.threshold((long) Math.floor(tierTargets[tier] * blocks)
                    + (long) Math.floor(tierTargets[tier + 1] * cache.tierBlocks(tier + 1)));
            };
        }
        tierScan.select(admissionThreshold);
        while (!tierScan.isDone() && policy.advance()) {
            for (int i = 0; i < all.size(); i++) {
                busy += all.get(i).scan(tierScan);
                if (tierScan.isDone()) {
                    break;
                }
            }
        }
        busySkips = busySkips + busy;
        if (tierScan.spared > 0) {
            sparedSegments = sparedSegments + tierScan.spared;
            lastPassSpared = true;
        }
        return tierScan.blocks;
    }

    // ------------------------------------------------------------------------------------------
    // Counters (any thread)
    // ------------------------------------------------------------------------------------------

    long runs() {
        return runs;
    }

    long evictions() {
        return evictions;
    }

    long evictedBytes() {
        return evictedBytes;
    }

    /** @return of {@link #evictions()}, those by the full handler's passes. */
    long evictionsWhenFull() {
        return evictionsWhenFull;
    }

    long busySkips() {
        return busySkips;
    }

    /** @return segments whose unread bytes passes spared, each time a scan visited one. */
    long sparedSegments() {
        return sparedSegments;
    }

    /** @return whether the last pass spared a live reader's unread bytes (any thread; a hint). */
    boolean lastPassSpared() {
        return lastPassSpared;
    }

    int admissionThreshold() {
        return admissionThreshold;
    }

    private long blocksOf(final int length) {
        return length == 0 ? 1 : ((length - 1) / blockLength) + 1L;
    }

    // ------------------------------------------------------------------------------------------
    // Scans
    // ------------------------------------------------------------------------------------------

    /**
     * The scan of one tier's step: first the survey (offers the tier's entries to the policy and
     * fills the size histogram), then the selection (evicts, demotes, or refuses admission).
     */
    private final class TierScan implements EvictionScan {
        private int tier;
        private boolean demote;
        private boolean surveying;
        private int threshold;
        private long wanted;
        private long blocks;

        /** How long a reader stays live without reading (0: spare nothing), and the segments spared. */
        private long idleNanos;
        private long spared;

        void reset(final int tier, final boolean demote, final long wanted, final long idleNanos) {
            this.idleNanos = idleNanos;
            this.spared = 0;
            this.tier = tier;
            this.demote = demote;
            this.wanted = wanted;
            this.blocks = 0;
            this.surveying = true;
        }

        void select(final int threshold) {
            this.threshold = threshold;
            this.surveying = false;
        }

        @Override
        public int action(final String segment, final ReadIndexEntry entry) {
            final int entryTier = cache.tierOf(entry.address());
            if (surveying) {
                if (entryTier == tier) {
                    policy.survey(segment, entry);
                }
                if (demote && (entryTier == tier || entryTier == tier + 1)) {
                    histogram.add(entry.length(), blocksOf(entry.length()));
                }
                return KEEP;
            }
            if (entryTier != tier || !policy.select(segment, entry)) {
                return KEEP;
            }
            if (!demote) {
                evicted(entry);
                return EVICT;
            }
            if (entry.length() > threshold) {
                tiers.rejections[tier].increment();
                evicted(entry);
                return EVICT;
            }
            return tier + 1;
        }

        private void evicted(final ReadIndexEntry entry) {
            blocks += blocksOf(entry.length());
            evictions = evictions + 1;
            evictedBytes = evictedBytes + entry.length();
            tiers.evictions[tier].increment();
        }

        @Override
        public void relocated(final String segment, final ReadIndexEntry entry, final int fromTier) {
            blocks += blocksOf(entry.length());
            tiers.demotions[fromTier].increment();
        }

        @Override
        public int relocationFailed(final String segment, final ReadIndexEntry entry, final int targetTier) {
            evicted(entry);
            return EVICT;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            return action(segment, entry) == EVICT;
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
            return !surveying && blocks >= wanted;
        }
    }
}
