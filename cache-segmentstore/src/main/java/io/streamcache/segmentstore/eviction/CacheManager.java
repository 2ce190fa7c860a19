package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.eviction.ReadPins;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.jctools.queues.MpmcArrayQueue;
import org.jctools.queues.MpscArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps a {@link BlockCache} under a target utilization by evicting read-index entries:
 * thread-safe; one eviction pass runs at a time (under the pass lock), on the manager's own
 * daemon thread, on a thread that calls {@link #evictNow()}, or on an allocating thread that
 * found the cache full.
 *
 * <h2>Generations</h2>
 * The manager owns a generation counter. Data paths stamp the current generation into every
 * entry they append into or read ({@link #recordUse}); the manager advances it every
 * {@link Builder#generationPeriod(Duration) generation period} on its thread, and on demand
 * ({@link #advanceGeneration()}, and at the start of every pass). An entry's age is thus the
 * number of periods (and passes) since its last use.
 *
 * <h2>Passes</h2>
 * After each advance the manager checks the cache's utilization; above the target it runs a pass
 * that frees blocks until the cache is back at the target: it asks its {@link EvictionPolicy} to
 * survey the evictable entries of every registered {@link EvictionSource}, then moves the
 * policy's cut-off step by step (oldest generations first, for the default
 * {@link GenerationPolicy}) and evicts the entries behind it. Evicting is
 * {@code cache.delete(address)} and setting the entry's address to
 * {@link ReadIndexEntry#NULL_ADDRESS}: a read reports the range as not cached. Only entries that
 * are durable, unpinned and not being appended to are ever offered (see {@link EvictionSource}).
 *
 * <h2>A full cache</h2>
 * The manager installs itself as the cache's {@link CacheFullHandler}, so an allocation that
 * finds no free block runs a pass on the allocating thread (freeing at least the blocks it
 * needs) before the cache gives up with a {@code CacheFullException}. That thread may hold its
 * segment's lock, and another appender may hold another segment's lock and be in the same
 * situation, so nothing on this path blocks on a lock another thread could hold while waiting
 * for blocks: the pass lock is taken with {@code tryLock} (when busy, the handler waits up to
 * 1 ms for the running pass, which is freeing blocks, then asks the cache to retry), and sources take segment locks with
 * {@code tryLock} and skip busy segments (see {@link EvictionSource}). The handler asks for a
 * retry when its pass freed blocks or skipped busy segments (whose owners may free their own),
 * and lets the cache fail at once when nothing could be freed.
 *
 * <h2>Tiers</h2>
 * Over a cache of several tiers ({@code BlockCache.Builder.tier}), every tier has a target
 * utilization ({@link Builder#tierTargetUtilization}, by default the cache's target). A pass
 * works from the slowest tier up: the last tier evicts down to its target as a one-tier cache
 * does; then every other tier over its target <em>demotes</em> the entries its policy selects
 * (surveyed among the entries of that tier only) into the next tier: the source relocates the
 * cache entry ({@code BlockCache.relocate}) and updates the index entry's address under the
 * segment's lock ({@link EvictionScan#action}). The {@link TierAdmission admission policy}
 * decides which selected entries the next tier takes; the others, and those the next tier has no
 * room for, are evicted. A read of an entry whose bytes are in a slower tier counts toward its
 * promotion ({@link #recordTierRead}); an entry read often enough is queued (a pooled request on
 * a jctools queue: nothing allocated, no lock on the data path) at most once per promotion
 * interval, and the manager's thread (or {@link #promoteNow()}) moves it into tier 0 while tier 0
 * is under its promotion ceiling (halfway between its target and full: passes keep it at the
 * target, appends push it over between passes), re-validating it under its segment's lock.
 * Per-tier counters are in {@link CacheManagerStats#tiers()}.
 *
 * <h2>Lifecycle</h2>
 * Close the manager (or the store that owns it) before the cache: a pass reads the cache's
 * buffers, which closing the cache releases.
 *
 * <h2>Logging and metrics</h2>
 * Only the manager's thread logs; passes on data-path threads only count. {@link #stats()} gives
 * an immutable snapshot, also published as a {@link CacheManagerMXBean}. It includes the reads
 * that pin entries now and the unreleased reads Netty's leak detector found ({@link #readPins()}):
 * a pinned entry is never evicted, so a count that only grows is a reader that does not release.
 */
public final class CacheManager implements AutoCloseable {
    static {
        ManagerHooks.Access.install(manager -> manager.hooks);
    }

    /** The store's side of this manager, out of the public API (see {@link ManagerHooks}). */
    private final ManagerHooks hooks = new ManagerHooks() {
        @Override
        public void register(final EvictionSource source) {
            CacheManager.this.register(source);
        }

        @Override
        public void unregister(final EvictionSource source) {
            CacheManager.this.unregister(source);
        }

        @Override
        public int generation() {
            return CacheManager.this.generation();
        }

        @Override
        public void recordUse(final String segment, final ReadIndexEntry entry) {
            CacheManager.this.recordUse(segment, entry);
        }

        @Override
        public void recordTierRead(final PromotionTarget owner, final ReadIndexEntry entry) {
            CacheManager.this.recordTierRead(owner, entry);
        }

        @Override
        public ReadPins readPins() {
            return CacheManager.this.readPins();
        }
    };

    private static final Logger LOG = LoggerFactory.getLogger(CacheManager.class);
    /** How soon the manager's thread looks at the promotion queue again when it could not drain it. */
    private static final long PROMOTION_RETRY_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final BlockCache cache;
    private final EvictionPolicy policy;
    private final double targetUtilization;
    private final long periodNanos;
    private final String name;
    private final int blockLength;
    private final CopyOnWriteArrayList<EvictionSource> sources = new CopyOnWriteArrayList<>();
    private final AtomicInteger generation = new AtomicInteger();
    /** Longest wait of a full handler for another thread's pass before it lets the cache retry. */
    private static final long PASS_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ReentrantLock passLock = new ReentrantLock();
    private final SurveyScan survey = new SurveyScan();
    private final EvictScan evict = new EvictScan();
    private final LongAdder fullHandlerCalls = new LongAdder();
    private final CacheFullHandler fullHandler = new ManagerFullHandler(this);
    private final ReadPins readPins = new ReadPins();

    // Tiers (a cache of one tier leaves them unused).
    private final int tierCount;
    /** Target utilization of each tier: passes demote (or, in the last tier, evict) down to it. */
    private final double[] tierTargets;
    private final TierAdmission admission;
    private final int promoteAfterReads;
    /** Half the promotion interval: the unit of the promotion tick (see {@link #recordTierRead}). */
    private final long promotionTickNanos;
    private final TierScan tierScan = new TierScan();
    private final SizeHistogram histogram = new SizeHistogram();
    /** Free promotion requests (taken on the data path, given back by the draining thread). */
    private final MpmcArrayQueue<PromotionRequest> freeRequests;
    /** Queued promotion requests: many data-path producers, one consumer under {@link #promotionLock}. */
    private final MpscArrayQueue<PromotionRequest> pendingRequests;
    private final ReentrantLock promotionLock = new ReentrantLock();
    private final LongAdder[] tierDemotions;
    private final LongAdder[] tierPromotions;
    private final LongAdder[] tierEvictions;
    private final LongAdder[] tierRejections;
    private final LongAdder promotionRequests = new LongAdder();
    private final LongAdder promotionDrops = new LongAdder();
    private final LongAdder promotionSkips = new LongAdder();
    /** The last threshold {@link TierAdmission#auto()} computed (or the fixed one); written under the pass lock. */
    private volatile int admissionThreshold;
    private final ObjectName objectName;
    private final Thread thread;

    // Written under passLock only; volatile for stats() readers.
    private volatile long runs;
    private volatile long evictions;
    private volatile long evictedBytes;
    private volatile long busySkips;

    private volatile boolean passRequested;
    private volatile boolean closed;

    private CacheManager(final Builder builder) {
        this.cache = builder.cache;
        this.policy = builder.policy;
        this.targetUtilization = builder.targetUtilization;
        this.periodNanos = builder.generationPeriod.toNanos();
        this.name = builder.name != null ? builder.name : cache.name();
        this.blockLength = cache.blockLength();
        this.tierCount = cache.tierCount();
        this.tierTargets = builder.tierTargets(tierCount);
        this.admission = builder.admission;
        this.admissionThreshold = admission.maxLength();
        this.promoteAfterReads = builder.promoteAfterReads;
        this.promotionTickNanos = Math.max(1, builder.promotionInterval.toNanos() / 2);
        final int requests = Math.max(2, builder.promotionQueueCapacity);
        this.freeRequests = new MpmcArrayQueue<>(requests);
        this.pendingRequests = new MpscArrayQueue<>(requests);
        for (int i = 0; i < requests && freeRequests.offer(new PromotionRequest()); i++) {
            // fill the pool
        }
        this.tierDemotions = adders(tierCount);
        this.tierPromotions = adders(tierCount);
        this.tierEvictions = adders(tierCount);
        this.tierRejections = adders(tierCount);
        this.objectName = builder.registerMBean ? registerMBean() : null;
        cache.fullHandler(fullHandler);
        if (periodNanos > 0) {
            thread = new Thread(this::run, "streamcache-cache-manager-" + name);
            thread.setDaemon(true);
            thread.start();
        } else {
            thread = null;
        }
    }

    /**
     * @param cache the cache to manage; the manager installs itself as its full handler.
     * @return a builder with the defaults: {@link GenerationPolicy}, target utilization
     *         {@value Builder#TARGET_UTILIZATION_DEFAULT}, a generation every second.
     */
    public static Builder builder(final BlockCache cache) {
        return new Builder(cache);
    }

    // ------------------------------------------------------------------------------------------
    // Sources and the data path
    // ------------------------------------------------------------------------------------------

    /**
     * Adds a source whose entries passes may evict. Idempotent.
     */
    private void register(final EvictionSource source) {
        sources.addIfAbsent(Objects.requireNonNull(source, "source"));
    }

    /**
     * Removes a source; waits for a running pass to finish, so once this returns no pass scans it.
     */
    private void unregister(final EvictionSource source) {
        sources.remove(source);
        passLock.lock();
        passLock.unlock();
    }

    /**
     * @return the current generation (a volatile read).
     */
    public int generation() {
        return generation.get();
    }

    /**
     * Records a use of an entry through the policy, with the current generation. For the data
     * path: call under the segment's lock; allocates nothing.
     */
    private void recordUse(final String segment, final ReadIndexEntry entry) {
        policy.recordUse(segment, entry, generation.get());
    }

    /**
     * Advances the generation now, from any thread.
     *
     * @return the new generation.
     */
    public int advanceGeneration() {
        return generation.incrementAndGet();
    }

    // ------------------------------------------------------------------------------------------
    // Passes
    // ------------------------------------------------------------------------------------------

    /**
     * Asks the manager's thread to run a pass soon, without waiting (a no-op without a thread).
     */
    public void requestPass() {
        passRequested = true;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Advances the generation and runs one pass on the calling thread, down to the target
     * utilization. Waits for a pass running on another thread. Call it holding no segment lock.
     *
     * @return cache blocks freed (estimated from the evicted entries' lengths).
     */
    public long evictNow() {
        ensureOpen();
        passLock.lock();
        try {
            generation.incrementAndGet();
            return pass(Double.NaN, 0);
        } finally {
            passLock.unlock();
        }
    }

    /**
     * Advances the generation and runs one pass on the calling thread down to the given
     * utilization: {@code 0.0} evicts everything the policy selects. Waits for a pass running
     * on another thread. Call it holding no segment lock.
     *
     * @param utilization the target of this pass, in [0, 1]; in a tiered cache, the target of
     *                    every tier (0.0 demotes everything selected out of every tier but the
     *                    last, and evicts everything selected from the last).
     * @return cache blocks freed (estimated from the evicted entries' lengths).
     */
    public long evictDownTo(final double utilization) {
        if (!(utilization >= 0.0 && utilization <= 1.0)) {
            throw new IllegalArgumentException("utilization=" + utilization + " must be in [0, 1]");
        }
        ensureOpen();
        passLock.lock();
        try {
            generation.incrementAndGet();
            return pass(utilization, 0);
        } finally {
            passLock.unlock();
        }
    }

    /**
     * The cache's full handler: runs on the allocating thread, which may hold its segment's lock.
     * Never waits for a lock longer than {@link #PASS_WAIT_NANOS} (see the class documentation).
     */
    private boolean onCacheFull(final int blockCount) {
        fullHandlerCalls.increment();
        if (closed) {
            return false;
        }
        if (!passLock.tryLock()) {
            awaitRunningPass();
            return true;
        }
        try {
            generation.incrementAndGet();
            final long busyBefore = busySkips;
            final long freed = pass(Double.NaN, blockCount);
            return freed > 0 || busySkips != busyBefore;
        } catch (final CacheClosedException e) {
            return false;
        } finally {
            passLock.unlock();
        }
    }

    /**
     * Waits (at most {@link #PASS_WAIT_NANOS}) for the pass another thread is running, so that an
     * allocation on a full cache sleeps until that pass has freed blocks instead of spinning
     * against it for a core (on a 2-core machine the pass is what it would be spinning against).
     * A timed wait cannot deadlock: the pass never waits for a lock the caller may hold (it takes
     * segment locks with {@code tryLock}), and the wait ends on its own.
     */
    private void awaitRunningPass() {
        try {
            if (passLock.tryLock(PASS_WAIT_NANOS, TimeUnit.NANOSECONDS)) {
                passLock.unlock();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One pass; the caller holds the pass lock.
     *
     * @param target        the target utilization, or NaN for the configured one(s).
     * @param minimumBlocks blocks to free even if the cache is at or under the target.
     * @return blocks freed.
     */
    private long pass(final double target, final long minimumBlocks) {
        runs = runs + 1;
        if (cache.isClosed()) {
            throw new CacheClosedException("cache " + cache.name() + " is closed");
        }
        if (tierCount > 1) {
            return tieredPass(target, minimumBlocks);
        }
        final double utilization = Double.isNaN(target) ? targetUtilization : target;
        final CacheStats stats = cache.stats();
        final long targetBlocks = (long) Math.floor(utilization * stats.blockCount());
        final long wanted = Math.max(stats.usedBlockCount() - targetBlocks, minimumBlocks);
        if (wanted <= 0 || sources.isEmpty()) {
            return 0;
        }
        long busy = 0;
        policy.beginPass(generation.get());
        for (final EvictionSource source : sources) {
            busy += source.scan(survey);
        }
        evict.reset(wanted);
        while (!evict.isDone() && policy.advance()) {
            for (final EvictionSource source : sources) {
                busy += source.scan(evict);
                if (evict.isDone()) {
                    break;
                }
            }
        }
        evictions = evictions + evict.entries;
        evictedBytes = evictedBytes + evict.bytes;
        busySkips = busySkips + busy;
        tierEvictions[0].add(evict.entries);
        return evict.blocks;
    }

    /**
     * A pass over a tiered cache: evicts from the last tier down to its target (and at least
     * {@code minimumBlocks}), then, from the second-slowest tier up to tier 0, demotes out of
     * each tier over its target into the next one, so that every demotion finds the room the
     * step before made. The caller holds the pass lock.
     *
     * @return blocks freed (evicted or moved out of their tier).
     */
    private long tieredPass(final double target, final long minimumBlocks) {
        final int last = tierCount - 1;
        long freed = tierStep(last, Double.isNaN(target) ? tierTargets[last] : target, minimumBlocks, false);
        for (int tier = last - 1; tier >= 0; tier--) {
            freed += tierStep(tier, Double.isNaN(target) ? tierTargets[tier] : target, 0, true);
        }
        return freed;
    }

    /**
     * One tier's part of a pass: surveys the entries of the tier, then moves the policy's cut-off
     * and evicts (last tier) or demotes (other tiers, subject to the admission policy) what it
     * selects until the tier is back at its target.
     */
    private long tierStep(final int tier, final double target, final long minimumBlocks, final boolean demote) {
        final long blocks = cache.tierBlocks(tier);
        final long wanted = Math.max(cache.tierUsedBlocks(tier) - (long) Math.floor(target * blocks), minimumBlocks);
        if (wanted <= 0 || sources.isEmpty()) {
            return 0;
        }
        long busy = 0;
        policy.beginPass(generation.get());
        histogram.clear();
        tierScan.reset(tier, demote, wanted);
        for (final EvictionSource source : sources) {
            busy += source.scan(tierScan);
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
            for (final EvictionSource source : sources) {
                busy += source.scan(tierScan);
                if (tierScan.isDone()) {
                    break;
                }
            }
        }
        busySkips = busySkips + busy;
        return tierScan.blocks;
    }

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

        void reset(final int tier, final boolean demote, final long wanted) {
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
                tierRejections[tier].increment();
                evicted(entry);
                return EVICT;
            }
            return tier + 1;
        }

        private void evicted(final ReadIndexEntry entry) {
            blocks += blocksOf(entry.length());
            evictions = evictions + 1;
            evictedBytes = evictedBytes + entry.length();
            tierEvictions[tier].increment();
        }

        @Override
        public void relocated(final String segment, final ReadIndexEntry entry, final int fromTier) {
            blocks += blocksOf(entry.length());
            tierDemotions[fromTier].increment();
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
        public boolean isDone() {
            return !surveying && blocks >= wanted;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Promotion
    // ------------------------------------------------------------------------------------------

    /** A queued promotion: pooled, so that queueing allocates nothing. */
    private static final class PromotionRequest {
        PromotionTarget owner;
        ReadIndexEntry entry;
    }

    /**
     * Counts a read of an entry whose bytes are in a slower tier, and queues the entry for
     * promotion to tier 0 once it has been read {@link Builder#promotion promoteAfterReads}
     * times there, unless it was queued less than the promotion interval ago (CacheLib's
     * throttle: the entry keeps the time of its last request in a byte, in units of half the
     * interval, so two requests are always more than one interval apart). For the data path:
     * call under the segment's lock; allocates nothing, takes no lock (a full queue drops the
     * request and counts it).
     *
     * @param owner the entry's segment, which the promotion will lock.
     * @param entry the entry read.
     */
    private void recordTierRead(final PromotionTarget owner, final ReadIndexEntry entry) {
        if (promoteAfterReads == 0 || entry.countTierRead() < promoteAfterReads) {
            return;
        }
        final int now = 1 + (int) Math.floorMod(System.nanoTime() / promotionTickNanos, 255L);
        final int last = entry.promotionTick();
        if (last != 0 && Math.floorMod(now - last, 255) < 3) {
            return;
        }
        final PromotionRequest request = freeRequests.poll();
        if (request == null) {
            promotionDrops.increment();
            return;
        }
        request.owner = owner;
        request.entry = entry;
        entry.promotionTick(now);
        entry.resetTierReads();
        pendingRequests.offer(request);
        promotionRequests.increment();
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Runs the queued promotions on the calling thread (the manager's thread does it as they
     * arrive): moves each entry into tier 0 while tier 0 is under its promotion ceiling, halfway
     * between its target and full (see {@link #promotionCeiling()}). Returns at once if another
     * thread is draining. Call it holding no segment lock.
     *
     * @return entries promoted.
     */
    public int promoteNow() {
        if (!promotionLock.tryLock()) {
            return 0;
        }
        try {
            int promoted = 0;
            long room = Long.MIN_VALUE;
            PromotionRequest request;
            while ((request = pendingRequests.poll()) != null) {
                final PromotionTarget owner = request.owner;
                final ReadIndexEntry entry = request.entry;
                request.owner = null;
                request.entry = null;
                freeRequests.offer(request);
                if (closed || cache.isClosed()) {
                    continue;
                }
                if (room == Long.MIN_VALUE) {
                    room = (long) Math.floor(promotionCeiling() * cache.tierBlocks(0)) - cache.tierUsedBlocks(0);
                }
                final long moved = room > 0 ? owner.promote(entry, 0, room) : 0;
                if (moved > 0) {
                    room -= moved;
                    promoted++;
                    tierPromotions[0].increment();
                } else {
                    promotionSkips.increment();
                }
            }
            return promoted;
        } catch (final CacheClosedException e) {
            return 0;
        } finally {
            promotionLock.unlock();
        }
    }

    /**
     * @return the utilization of tier 0 up to which promotions may fill it: halfway between its
     *         target and full. Demotion passes keep tier 0 at its target, and appends push it over
     *         between passes, so a ceiling of the target itself would leave promotions no room;
     *         the other half of the headroom stays free for new data, and the next pass demotes
     *         colder entries back down to the target.
     */
    private double promotionCeiling() {
        return tierTargets[0] + (1.0 - tierTargets[0]) / 2;
    }

    private static LongAdder[] adders(final int count) {
        final LongAdder[] adders = new LongAdder[count];
        for (int i = 0; i < count; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
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
        public boolean isDone() {
            return blocks >= wanted;
        }
    }

    // ------------------------------------------------------------------------------------------
    // The manager's thread
    // ------------------------------------------------------------------------------------------

    private void run() {
        LOG.info("cache manager {} started: cache={} policy={} targetUtilization={} generationPeriod={}",
            name, cache.name(), policy.getClass().getSimpleName(), targetUtilization, Duration.ofNanos(periodNanos));
        long deadline = System.nanoTime() + periodNanos;
        while (!closed) {
            if (!pendingRequests.isEmpty()) {
                try {
                    promoteNow();
                } catch (final RuntimeException e) {
                    LOG.warn("cache manager {}: promotion failed", name, e);
                }
            }
            final long wait = deadline - System.nanoTime();
            if (wait > 0 && !passRequested) {
                // Requests still queued (another thread was draining): look again soon, without spinning.
                LockSupport.parkNanos(this, pendingRequests.isEmpty() ? wait : Math.min(wait, PROMOTION_RETRY_NANOS));
                continue;
            }
            if (closed) {
                break;
            }
            final long now = System.nanoTime();
            if (now - deadline >= 0) {
                generation.incrementAndGet();
                deadline = now - deadline > periodNanos ? now + periodNanos : deadline + periodNanos;
            }
            passRequested = false;
            try {
                final long evictionsBefore = evictions;
                final long bytesBefore = evictedBytes;
                final long freed;
                passLock.lock();
                try {
                    freed = pass(Double.NaN, 0);
                } finally {
                    passLock.unlock();
                }
                if (freed > 0 && LOG.isDebugEnabled()) {
                    LOG.debug("cache manager {}: generation={} evicted entries={} bytes={} blocks={} utilization={}",
                        name, generation.get(), evictions - evictionsBefore, evictedBytes - bytesBefore, freed,
                        cache.isClosed() ? 0.0 : cache.stats().utilization());
                }
            } catch (final CacheClosedException e) {
                LOG.info("cache manager {}: cache {} closed, stopping", name, cache.name());
                break;
            } catch (final RuntimeException e) {
                LOG.warn("cache manager {}: eviction pass failed", name, e);
            }
        }
        LOG.info("cache manager {} stopped: {}", name, stats());
    }

    // ------------------------------------------------------------------------------------------
    // Stats and lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * @return a snapshot of the counters; callable from any thread.
     */
    public CacheManagerStats stats() {
        final boolean open = !cache.isClosed();
        final List<ManagedTierStats> tiers = new ArrayList<>(tierCount);
        for (int t = 0; t < tierCount; t++) {
            final double utilization = open ? (double) cache.tierUsedBlocks(t) / cache.tierBlocks(t) : 0.0;
            tiers.add(new ManagedTierStats(t, cache.tierName(t), tierTargets[t], utilization, tierDemotions[t].sum(),
                tierPromotions[t].sum(), tierEvictions[t].sum(), tierRejections[t].sum()));
        }
        return new CacheManagerStats(generation.get(), runs, evictions, evictedBytes,
            open ? cache.stats().utilization() : 0.0, targetUtilization, fullHandlerCalls.sum(), busySkips,
            tiers, admissionThreshold, promotionRequests.sum(), promotionDrops.sum(), promotionSkips.sum(),
            readPins.pinnedResults(), readPins.entryPins(), readPins.leakedResults());
    }

    /**
     * @return the reads pinning this manager's entries: counts and leak tracking (the segment
     *         store's reads count themselves there); callable from any thread.
     */
    private ReadPins readPins() {
        return readPins;
    }

    /**
     * @return the admission policy for slower tiers.
     */
    public TierAdmission admission() {
        return admission;
    }

    /**
     * @param tier a tier of the cache.
     * @return the tier's target utilization.
     * @throws IndexOutOfBoundsException if there is no such tier.
     */
    public double tierTargetUtilization(final int tier) {
        return tierTargets[tier];
    }

    public String name() {
        return name;
    }

    public BlockCache cache() {
        return cache;
    }

    public EvictionPolicy policy() {
        return policy;
    }

    public double targetUtilization() {
        return targetUtilization;
    }

    /**
     * Stops the thread (waiting for it), unregisters the MBean and makes the cache's full handler
     * free nothing. Idempotent; the cache stays open (its owner closes it).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (thread != null) {
            LockSupport.unpark(thread);
            if (thread != Thread.currentThread()) {
                try {
                    thread.join(TimeUnit.SECONDS.toMillis(10));
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (!cache.isClosed() && cache.fullHandler() == fullHandler) {
            cache.fullHandler(CacheFullHandler.NONE);
        }
        if (objectName != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
            } catch (final JMException e) {
                throw new IllegalStateException("could not unregister " + objectName, e);
            }
        }
    }

    public boolean isClosed() {
        return closed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new CacheClosedException("cache manager " + name + " is closed");
        }
    }

    @Override
    public String toString() {
        return "CacheManager{name=" + name + ", cache=" + cache.name() + ", policy=" + policy.getClass().getSimpleName()
            + ", targetUtilization=" + targetUtilization + ", generation=" + generation.get() + '}';
    }

    private ObjectName registerMBean() {
        try {
            final ObjectName objectName = new ObjectName("io.streamcache:type=CacheManager,name=" + ObjectName.quote(name));
            ManagementFactory.getPlatformMBeanServer().registerMBean(new MXBeanAdapter(this), objectName);
            return objectName;
        } catch (final JMException e) {
            throw new CacheConfigurationException("could not register the cache manager's MBean (name=" + name
                + "): choose a unique name or disable registerMBean", e);
        }
    }

    private static final class MXBeanAdapter implements CacheManagerMXBean {
        private final CacheManager manager;

        MXBeanAdapter(final CacheManager manager) {
            this.manager = manager;
        }

        @Override
        public String getName() {
            return manager.name;
        }

        @Override
        public String getPolicy() {
            return manager.policy.getClass().getName();
        }

        @Override
        public int getGeneration() {
            return manager.generation.get();
        }

        @Override
        public long getRuns() {
            return manager.runs;
        }

        @Override
        public long getEvictions() {
            return manager.evictions;
        }

        @Override
        public long getEvictedBytes() {
            return manager.evictedBytes;
        }

        @Override
        public double getUtilization() {
            return manager.stats().utilization();
        }

        @Override
        public double getTargetUtilization() {
            return manager.targetUtilization;
        }

        @Override
        public long getFullHandlerCalls() {
            return manager.fullHandlerCalls.sum();
        }

        @Override
        public long getBusySkips() {
            return manager.busySkips;
        }

        @Override
        public int getSourceCount() {
            return manager.sources.size();
        }

        @Override
        public double[] getTierTargetUtilizations() {
            return manager.tierTargets.clone();
        }

        @Override
        public long[] getTierDemotions() {
            return sums(manager.tierDemotions);
        }

        @Override
        public long[] getTierPromotions() {
            return sums(manager.tierPromotions);
        }

        @Override
        public long[] getTierEvictions() {
            return sums(manager.tierEvictions);
        }

        @Override
        public long[] getTierAdmissionRejections() {
            return sums(manager.tierRejections);
        }

        @Override
        public int getAdmissionThreshold() {
            return manager.admissionThreshold;
        }

        @Override
        public long getPromotionRequests() {
            return manager.promotionRequests.sum();
        }

        @Override
        public long getPromotionDrops() {
            return manager.promotionDrops.sum();
        }

        @Override
        public long getPromotionSkips() {
            return manager.promotionSkips.sum();
        }

        @Override
        public long getPinnedResults() {
            return manager.readPins.pinnedResults();
        }

        @Override
        public long getEntryPins() {
            return manager.readPins.entryPins();
        }

        @Override
        public long getLeakedResults() {
            return manager.readPins.leakedResults();
        }

        private static long[] sums(final LongAdder[] adders) {
            final long[] sums = new long[adders.length];
            for (int i = 0; i < sums.length; i++) {
                sums[i] = adders[i].sum();
            }
            return sums;
        }

        @Override
        public int advanceGeneration() {
            return manager.advanceGeneration();
        }

        @Override
        public long evictNow() {
            return manager.evictNow();
        }
    }

    /** The manager's hook in the cache: lets a second manager see that the cache has one. */
    private static final class ManagerFullHandler implements CacheFullHandler {
        private final CacheManager manager;

        ManagerFullHandler(final CacheManager manager) {
            this.manager = manager;
        }

        @Override
        public boolean onCacheFull(final int blockCount) {
            return manager.onCacheFull(blockCount);
        }
    }

    /**
     * Configures and builds a {@link CacheManager}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        /** Default utilization passes evict down to. */
        public static final double TARGET_UTILIZATION_DEFAULT = 0.85;
        /** Default time between generations. */
        public static final Duration GENERATION_PERIOD_DEFAULT = Duration.ofSeconds(1);

        private final BlockCache cache;
        private EvictionPolicy policy;
        private double targetUtilization = TARGET_UTILIZATION_DEFAULT;
        private Duration generationPeriod = GENERATION_PERIOD_DEFAULT;
        /** Default reads from a slower tier after which an entry is queued for promotion. */
        public static final int PROMOTE_AFTER_READS_DEFAULT = 2;
        /** Default least time between two promotion requests of one entry. */
        public static final Duration PROMOTION_INTERVAL_DEFAULT = Duration.ofSeconds(1);
        /** Default capacity of the promotion queue. */
        public static final int PROMOTION_QUEUE_CAPACITY_DEFAULT = 1024;

        private String name;
        private boolean registerMBean = true;
        private final Map<Integer, Double> tierTargets = new HashMap<>();
        private TierAdmission admission = TierAdmission.all();
        private int promoteAfterReads = PROMOTE_AFTER_READS_DEFAULT;
        private Duration promotionInterval = PROMOTION_INTERVAL_DEFAULT;
        private int promotionQueueCapacity = PROMOTION_QUEUE_CAPACITY_DEFAULT;

        private Builder(final BlockCache cache) {
            this.cache = Objects.requireNonNull(cache, "cache");
        }

        /**
         * @param policy chooses what to evict; a new {@link GenerationPolicy} by default.
         */
        public Builder policy(final EvictionPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * @param targetUtilization used data blocks as a fraction of all, in (0, 1]: above it,
         *                          passes evict down to it.
         */
        public Builder targetUtilization(final double targetUtilization) {
            this.targetUtilization = targetUtilization;
            return this;
        }

        /**
         * @param generationPeriod time between generations (and timer passes); zero runs no
         *                         thread: generations advance and passes run only on demand and
         *                         when the cache is full.
         */
        public Builder generationPeriod(final Duration generationPeriod) {
            this.generationPeriod = Objects.requireNonNull(generationPeriod, "generationPeriod");
            return this;
        }

        /**
         * @param name the manager's name in logs, its thread and JMX; the cache's name if not set.
         */
        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder registerMBean(final boolean registerMBean) {
            this.registerMBean = registerMBean;
            return this;
        }

        /**
         * Sets one tier's target utilization (a tiered cache); tiers not set use
         * {@link #targetUtilization(double)}. Above its target, a pass demotes the tier's coldest
         * entries into the next tier (the last tier evicts).
         *
         * @param tier        a tier of the cache.
         * @param utilization in (0, 1].
         */
        public Builder tierTargetUtilization(final int tier, final double utilization) {
            tierTargets.put(tier, utilization);
            return this;
        }

        /**
         * @param admission which demoted entries a slower tier takes; {@link TierAdmission#all()} by default.
         */
        public Builder admission(final TierAdmission admission) {
            this.admission = Objects.requireNonNull(admission, "admission");
            return this;
        }

        /**
         * Configures promotion in a tiered cache: an entry read {@code afterReads} times while in a
         * slower tier is queued and moved into tier 0 if tier 0 is under its promotion ceiling
         * (halfway between its target and full), and queued at most once per {@code interval}
         * (CacheLib's throttle).
         *
         * @param afterReads reads in a slower tier before an entry is queued, in [0, 127]; 0 turns promotion off.
         * @param interval   least time between two promotion requests of one entry; positive.
         */
        public Builder promotion(final int afterReads, final Duration interval) {
            this.promoteAfterReads = afterReads;
            this.promotionInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * @param capacity promotion requests that may wait at once (a full queue drops new ones), &gt;= 2.
         */
        public Builder promotionQueueCapacity(final int capacity) {
            this.promotionQueueCapacity = capacity;
            return this;
        }

        double[] tierTargets(final int tierCount) {
            final double[] targets = new double[tierCount];
            for (int t = 0; t < tierCount; t++) {
                targets[t] = tierTargets.getOrDefault(t, targetUtilization);
            }
            return targets;
        }

        /**
         * Builds the manager, installs it as the cache's full handler and starts its thread.
         *
         * @throws CacheConfigurationException if a setting is out of range or the MBean name is taken.
         */
        public CacheManager build() {
            if (!(targetUtilization > 0.0 && targetUtilization <= 1.0)) {
                throw new CacheConfigurationException("targetUtilization=" + targetUtilization + " must be in (0, 1]");
            }
            for (final Map.Entry<Integer, Double> target : tierTargets.entrySet()) {
                if (target.getKey() < 0 || target.getKey() >= cache.tierCount()) {
                    throw new CacheConfigurationException("tierTargetUtilization: tier=" + target.getKey() + " is not a tier of cache "
                        + cache.name() + " (tierCount=" + cache.tierCount() + ")");
                }
                if (!(target.getValue() > 0.0 && target.getValue() <= 1.0)) {
                    throw new CacheConfigurationException("tierTargetUtilization of tier " + target.getKey() + "=" + target.getValue()
                        + " must be in (0, 1]");
                }
            }
            if (promoteAfterReads < 0 || promoteAfterReads > Byte.MAX_VALUE) {
                throw new CacheConfigurationException("promotion afterReads=" + promoteAfterReads + " must be in [0, 127]");
            }
            if (promotionInterval.isNegative() || promotionInterval.isZero()) {
                throw new CacheConfigurationException("promotion interval=" + promotionInterval + " must be positive");
            }
            if (promotionQueueCapacity < 2) {
                throw new CacheConfigurationException("promotionQueueCapacity=" + promotionQueueCapacity + " must be >= 2");
            }
            if (generationPeriod.isNegative()) {
                throw new CacheConfigurationException("generationPeriod=" + generationPeriod + " must not be negative");
            }
            if (cache.isClosed()) {
                throw new CacheClosedException("cache " + cache.name() + " is closed");
            }
            if (cache.fullHandler() instanceof ManagerFullHandler installed && !installed.manager.closed) {
                throw new CacheConfigurationException("cache " + cache.name() + " already has a cache manager (name="
                    + installed.manager.name + "), and a cache has at most one: to put several segment stores on this cache, "
                    + "build one CacheManager and pass it to each store with SegmentStore.Builder.cacheManager(manager), "
                    + "or close the other manager first");
            }
            if (policy == null) {
                policy = new GenerationPolicy();
            }
            return new CacheManager(this);
        }
    }
}
