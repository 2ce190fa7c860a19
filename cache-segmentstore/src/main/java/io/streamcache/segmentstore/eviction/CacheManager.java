package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.core.memory.ResizeTarget;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.eviction.ReadPins;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexEntryPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.ObjectName;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps a {@link BlockCache} under a target utilization by evicting read-index entries:
 * thread-safe; one eviction pass runs at a time (under the pass lock), on the manager's own
 * thread, on a thread that calls {@link #evictNow()}, or on an allocating thread that found the
 * cache full. This class is the facade: it owns the generation counter, the manager's thread
 * and the lifecycle, and delegates the passes ({@code EvictionPasses}), the full-cache handling
 * ({@code ManagerFullHandler}), promotion ({@code Promotions}), the per-tier counters
 * ({@code TierCounters}) and JMX ({@code ManagerMXBean}).
 *
 * <h2>Threading contract</h2>
 * <ul>
 *   <li>The data path (the segment store, under a segment's lock) records uses and tier reads
 *       through the store's internal hooks: a volatile read of the generation and the policy's
 *       {@link EvictionPolicy#recordUse}, or a pooled promotion request on a jctools queue;
 *       nothing allocated, no lock taken.</li>
 *   <li>{@link #evictNow()}, {@link #evictDownTo(double)} and {@link #promoteNow()} run on the
 *       calling thread, which must hold no segment lock; the first two wait for a running
 *       pass, the last returns at once if another thread is draining.</li>
 *   <li>A full cache calls the manager on the allocating thread, which may hold a segment lock:
 *       nothing there waits for a lock another thread may hold (see
 *       {@code ManagerFullHandler}).</li>
 *   <li>The manager's thread (role {@link StreamcacheThreads.Role#CACHE_MANAGER}, created
 *       through the {@link Builder#threads(StreamcacheThreads) builder's threads}; none when
 *       the {@link Builder#generationPeriod(Duration) generation period} is zero) advances the
 *       generation, drains the promotion queue and runs timer and requested passes.</li>
 *   <li>{@link #stats()}, the MXBean and the accessors may be called from any thread.</li>
 * </ul>
 *
 * <h2>Generations</h2>
 * The manager owns a generation counter. Data paths stamp the current generation into every
 * entry they append into or read (through the policy's {@code recordUse}); the manager advances
 * it every {@link Builder#generationPeriod(Duration) generation period} on its thread, and on
 * demand ({@link #advanceGeneration()}, and at the start of every pass). An entry's age is thus
 * the number of periods (and passes) since its last use.
 *
 * <h2>Passes</h2>
 * After each advance the manager checks the cache's utilization; above the target it runs a pass
 * that frees blocks until the cache is back at the target: it asks its {@link EvictionPolicy} to
 * survey the evictable entries of every registered source, then moves the policy's cut-off step
 * by step (oldest generations first, for the default {@link GenerationPolicy}) and evicts the
 * entries behind it. Evicting is {@code cache.delete(address)} and setting the entry's address
 * to {@code ReadIndexEntry#NULL_ADDRESS}: a read reports the range as not cached. Only entries
 * that are durable, unpinned and not being appended to are ever offered (see
 * {@code EvictionSource}). {@code EvictionPasses} describes a pass step by step.
 *
 * <h2>A full cache</h2>
 * The manager installs a {@link CacheFullHandler} in the cache, so an allocation that finds no
 * free block runs a pass on the allocating thread (freeing at least the blocks it needs) before
 * the cache gives up with a {@code CacheFullException}. The pass lock is taken there with
 * {@code tryLock} (when busy, the handler waits up to 1 ms for the running pass, then asks the
 * cache to retry), and sources take segment locks with {@code tryLock} and skip busy segments.
 * The handler asks for a retry when its pass freed blocks or skipped busy segments, and lets the
 * cache fail at once when nothing could be freed.
 *
 * <h2>Tiers</h2>
 * Over a cache of several tiers ({@code BlockCache.Builder.tier}), every tier has a target
 * utilization ({@link Builder#tierTargetUtilization}, by default the cache's target). A pass
 * works from the slowest tier up: the last tier evicts down to its target as a one-tier cache
 * does; then every other tier over its target <em>demotes</em> the entries its policy selects
 * (surveyed among the entries of that tier only) into the next tier: the source relocates the
 * cache entry ({@code BlockCache.relocate}) and updates the index entry's address under the
 * segment's lock ({@code EvictionScan.action}). The {@link TierAdmission admission policy}
 * decides which selected entries the next tier takes; the others, and those the next tier has no
 * room for, are evicted. A read of an entry whose bytes are in a slower tier counts toward its
 * promotion; an entry read often enough is queued (a pooled request on a jctools queue: nothing
 * allocated, no lock on the data path) at most once per promotion interval, and the manager's
 * thread (or {@link #promoteNow()}) moves it into tier 0 while tier 0 is under its promotion
 * ceiling (halfway between its target and full: passes keep it at the target, appends push it
 * over between passes), re-validating it under its segment's lock (see {@code Promotions}).
 * Per-tier counters are in {@link CacheManagerStats#tiers()}.
 *
 * <h2>Lifecycle</h2>
 * Close the manager (or the store that owns it) before the cache: a pass reads the cache's
 * buffers, which closing the cache releases.
 *
 * <h2>Logging and metrics</h2>
 * Only the manager's thread logs; passes on data-path threads only count. {@link #stats()} gives
 * an immutable snapshot, also published as a {@link CacheManagerMXBean}. It includes the reads
 * that pin entries now and the unreleased reads Netty's leak detector found (the store's read
 * pins): a pinned entry is never evicted, so a count that only grows is a reader that does not
 * release.
 */
public final class CacheManager implements AutoCloseable {
    /**
     * The side of this manager the segment stores of this module use (the sources its passes
     * scan, the uses and fills the data path records, the read pins): a store takes it once, when
     * it is built on this manager, and hands it to its parts. Its type lives in a package the
     * module does not export, so a broker on the module path cannot call it, and one on the
     * class path must not (a wrong call corrupts the manager's view of the cache). The same object
     * every time; thread-safe as {@code ManagerHooks} says (an internal type: no link).
     *
     * @return the manager's hooks.
     */
    @SuppressWarnings("exports")
    public ManagerHooks hooks() {
        return hooks;
    }

    /** The store's side of this manager, out of the public API (see {@link #hooks()}). */
    private final ManagerHooks hooks = new ManagerHooks() {
        @Override
        public void register(final EvictionSource source) {
            passes.register(source);
        }

        @Override
        public void unregister(final EvictionSource source) {
            passes.unregister(source);
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
        public void recordRead(final String segment, final long offset, final long end) {
            if (readerAware != null) {
                readerAware.observeRead(segment, offset, end);
            }
        }

        @Override
        public int fillTier(final String segment, final long offset, final long end, final int tier) {
            return fills.tier(segment, offset, end, tier);
        }

        @Override
        public boolean makeRoomForFill(final int tier, final int length, final boolean full) {
            return fills.makeRoom(tier, length, full);
        }

        @Override
        public void cachedEntryDropped() {
            droppedEntries.increment();
        }

        @Override
        public void segmentDeleted(final String segment) {
            if (readerAware != null) {
                readerAware.forget(segment);
            }
        }

        @Override
        public void recordTierRead(final PromotionTarget owner, final ReadIndexEntry entry) {
            CacheManager.this.recordTierRead(owner, entry);
        }

        @Override
        public ReadPins readPins() {
            return CacheManager.this.readPins();
        }

        @Override
        public ReadIndexEntryPool entryPool() {
            return entryPool;
        }
    };

    private static final Logger LOG = LoggerFactory.getLogger(CacheManager.class);
    /** How soon the manager's thread looks at the promotion queue again when it could not drain it. */
    private static final long PROMOTION_RETRY_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    /**
     * Dead index entries the manager's pool keeps for reuse: 4,096, that is 196 KB of heap when
     * full plus the queue's arrays (about 48 KB, made with the manager). Entries die in bursts (a
     * pass coalesces many at once) and are made one by one by the appends after it; a pass that
     * frees more than this leaves the rest to the garbage collector ({@link EntryPoolStats#dropped}).
     */
    static final int ENTRY_POOL_CAPACITY = 4096;

    private final BlockCache cache;
    private final EvictionPolicy policy;
    /** The policy if it infers readers from the reads, else null (the data path tests this field only). */
    private final ReaderAwarePolicy readerAware;
    private final double targetUtilization;
    /** How long a sequential reader stays live without reading, for the sparing of its unread bytes; 0: off. */
    private final long readerIdleNanos;
    private final long periodNanos;
    private final String name;
    private final AtomicInteger generation = new AtomicInteger();
    /** Target utilization of each tier: passes demote (or, in the last tier, evict) down to it. */
    private final double[] tierTargets;
    private final TierAdmission admission;
    private final TierCounters tierCounters;
    /** Cached entries dropped by a truncate or delete of their segment ({@link ManagerHooks#cachedEntryDropped}). */
    private final LongAdder droppedEntries = new LongAdder();
    private final EvictionPasses passes;
    private final Promotions promotions;
    private final ManagerFullHandler fullHandler;
    /** Where a fill from the log goes, and the room made for it. */
    private final FillRoom fills;
    private final TierResizing resizing;
    private final ReadPins readPins = new ReadPins();
    /**
     * Dead index entries for reuse by the stores on this cache: entries die on the thread of a
     * pass (one per cache) and are made by the stores' appends and fills.
     */
    private final ReadIndexEntryPool entryPool = new ReadIndexEntryPool(ENTRY_POOL_CAPACITY);
    private final ObjectName objectName;
    private final Thread thread;

    private volatile boolean passRequested;
    private volatile boolean closed;

    private CacheManager(final Builder builder) {
        this.cache = builder.cache;
        this.policy = builder.policy;
        this.readerAware = policy instanceof ReaderAwarePolicy ? (ReaderAwarePolicy) policy : null;
        this.targetUtilization = builder.targetUtilization;
        this.periodNanos = builder.generationPeriod.toNanos();
        this.name = builder.name != null ? builder.name : cache.name();
        final int tierCount = cache.tierCount();
        this.tierTargets = builder.tierTargets(tierCount);
        this.admission = builder.admission;
        this.tierCounters = new TierCounters(tierCount);
        this.readerIdleNanos = builder.readerIdleTimeout.toNanos();
        this.passes = new EvictionPasses(cache, policy, generation, targetUtilization, tierTargets, admission, tierCounters,
            readerIdleNanos);
        this.promotions = new Promotions(cache, tierTargets[0], builder.promoteAfterReads,
            builder.promotionInterval.toNanos(), builder.promotionQueueCapacity, this::isClosed, tierCounters);
        this.fullHandler = new ManagerFullHandler(this, passes, generation);
        this.fills = new FillRoom(cache, tierTargets, readerAware, readerIdleNanos, passes, generation, this::isClosed);
        this.resizing = new TierResizing(name, cache, passes);
        this.objectName = builder.registerMBean
            ? new ManagerMXBean(this, passes, promotions, tierCounters, fullHandler).register() : null;
        cache.fullHandler(fullHandler);
        if (periodNanos > 0) {
            thread = builder.threads.newThread(StreamcacheThreads.Role.CACHE_MANAGER, name, this::run);
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
    // The data path
    // ------------------------------------------------------------------------------------------

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
     * Counts a read of an entry whose bytes are in a slower tier and queues it for promotion
     * when it has been read often enough (see {@link Promotions#record}); wakes the manager's
     * thread when it queued. For the data path: call under the segment's lock; allocates
     * nothing, takes no lock.
     *
     * @param owner the entry's segment, which the promotion will lock.
     * @param entry the entry read.
     */
    private void recordTierRead(final PromotionTarget owner, final ReadIndexEntry entry) {
        if (promotions.record(owner, entry) && thread != null) {
            LockSupport.unpark(thread);
        }
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
    // Passes and promotion on demand
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
        return passes.passNow(Double.NaN, true);
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
        return passes.passNow(utilization, true);
    }

    /**
     * Runs the queued promotions on the calling thread (the manager's thread does it as they
     * arrive): moves each entry into tier 0 while tier 0 is under its promotion ceiling, halfway
     * between its target and full. Returns at once if another thread is draining. Call it
     * holding no segment lock.
     *
     * @return entries promoted.
     */
    public int promoteNow() {
        return promotions.drain();
    }

    // ------------------------------------------------------------------------------------------
    // Resizing
    // ------------------------------------------------------------------------------------------

    /** Default time a shrink waits for pinned and not-yet-durable entries before it stops short. */
    public static final Duration RESIZE_TIMEOUT_DEFAULT = Duration.ofSeconds(10);

    /**
     * Sets a tier's capacity while the store runs, in whole buffers (see
     * {@code BlockCache.resize}). Growing is immediate. Shrinking drains the buffers to give
     * back and moves every entry with a block in them, each under its segment's lock: into
     * other buffers of the same tier, else into a slower tier, else (durable entries only)
     * evicts it; an entry pinned by a zero-copy read, or not yet durable with no room anywhere,
     * is retried until {@code timeout}; data that is not durable is never dropped. Reads, appends
     * and eviction passes go on meanwhile. Call it holding no segment lock; it waits for a resize
     * running on another thread.
     *
     * @param tier     a tier of the cache, built with a maxCapacity.
     * @param capacity the bytes it should have: at least one buffer, at most its maxCapacity.
     * @param timeout  how long a shrink may wait for entries that cannot move yet.
     * @return the tier's capacity after the call: {@code capacity} rounded down to whole buffers,
     *         or more if the shrink stopped at its timeout (the buffers left stay in service).
     * @throws IndexOutOfBoundsException     if there is no such tier.
     * @throws IllegalArgumentException      if the capacity is out of the tier's bounds; nothing changes.
     * @throws UnsupportedOperationException if the tier was built without a maxCapacity; nothing changes.
     */
    public long resizeTier(final int tier, final long capacity, final Duration timeout) {
        ensureOpen();
        Objects.requireNonNull(timeout, "timeout");
        return resizing.resize(tier, capacity, timeout);
    }

    /**
     * {@link #resizeTier(int, long, Duration)} with {@link #RESIZE_TIMEOUT_DEFAULT}.
     */
    public long resizeTier(final int tier, final long capacity) {
        return resizeTier(tier, capacity, RESIZE_TIMEOUT_DEFAULT);
    }

    /**
     * @param tier a resizable tier of the cache.
     * @return the tier as a {@link ResizeTarget} for a {@link io.streamcache.core.memory.MemoryMonitor},
     *         resized through {@link #resizeTier(int, long)} (entries are moved out of what a shrink gives back).
     * @throws UnsupportedOperationException if the tier cannot change size.
     */
    public ResizeTarget resizeTarget(final int tier) {
        final ResizeTarget cacheTier = cache.resizeTarget(tier);
        return new ResizeTarget() {
            @Override
            public long capacity() {
                return cacheTier.capacity();
            }

            @Override
            public long maxCapacity() {
                return cacheTier.maxCapacity();
            }

            @Override
            public long granularity() {
                return cacheTier.granularity();
            }

            @Override
            public long resize(final long capacity) {
                return resizeTier(tier, capacity);
            }

            @Override
            public String name() {
                return "manager " + name + ", " + cacheTier.name();
            }
        };
    }

    /**
     * @return a snapshot of the resizes run so far; any thread.
     */
    public ResizeStats resizeStats() {
        return resizing.stats();
    }

    // ------------------------------------------------------------------------------------------
    // The manager's thread
    // ------------------------------------------------------------------------------------------

    private void run() {
        LOG.info("cache manager {} started: cache={} policy={} targetUtilization={} generationPeriod={}",
            name, cache.name(), policy.getClass().getSimpleName(), targetUtilization, Duration.ofNanos(periodNanos));
        long deadline = System.nanoTime() + periodNanos;
        while (!closed) {
            if (promotions.hasPending()) {
                try {
                    promotions.drain();
                } catch (final RuntimeException e) {
                    LOG.warn("cache manager {}: promotion failed", name, e);
                }
            }
            final long wait = deadline - System.nanoTime();
            if (wait > 0 && !passRequested) {
                // Requests still queued (another thread was draining): look again soon, without spinning.
                LockSupport.parkNanos(this, promotions.hasPending() ? Math.min(wait, PROMOTION_RETRY_NANOS) : wait);
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
                final long evictionsBefore = passes.evictions();
                final long bytesBefore = passes.evictedBytes();
                final long freed = passes.passNow(Double.NaN, false);
                if (freed > 0 && LOG.isDebugEnabled()) {
                    LOG.debug("cache manager {}: generation={} evicted entries={} bytes={} blocks={} utilization={}",
                        name, generation.get(), passes.evictions() - evictionsBefore, passes.evictedBytes() - bytesBefore,
                        freed, cache.isClosed() ? 0.0 : cache.stats().utilization());
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
        return new CacheManagerStats(generation.get(), passes.runs(), passes.evictions(), passes.evictedBytes(),
            open ? cache.stats().utilization() : 0.0, targetUtilization, fullHandler.calls(), passes.busySkips(),
            tierCounters.snapshot(cache, tierTargets), passes.admissionThreshold(), promotions.requests(),
            promotions.drops(), promotions.skips(), readPins.pinnedResults(), readPins.entryPins(),
            readPins.leakedResults(), entryPoolStats(), evictionReasons());
    }

    private static long total(final long[] counts) {
        long sum = 0;
        for (final long count : counts) {
            sum += count;
        }
        return sum;
    }

    /** @return the eviction counters by reason now; any thread. */
    EvictionReasons evictionReasons() {
        final long full = passes.evictionsWhenFull();
        final ResizeStats resized = resizing.stats();
        return new EvictionReasons(passes.evictions() - full, full, total(TierCounters.sums(tierCounters.demotions)),
            resized.relocatedEntries() + resized.evictedEntries(), droppedEntries.sum());
    }

    /** @return the index-entry pool's counters now; any thread. */
    EntryPoolStats entryPoolStats() {
        return new EntryPoolStats(entryPool.taken(), entryPool.made(), entryPool.recycled(), entryPool.dropped(),
            entryPool.size(), entryPool.capacity());
    }

    /**
     * @return the reads pinning this manager's entries: counts and leak tracking (the segment
     *         store's reads count themselves there); callable from any thread.
     */
    ReadPins readPins() {
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
            ManagerMXBean.unregister(objectName);
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
        private StreamcacheThreads threads = StreamcacheThreads.defaults();
        /** Default time a sequential reader stays live without reading, for the sparing of its unread bytes. */
        public static final Duration READER_IDLE_TIMEOUT_DEFAULT = Duration.ofSeconds(10);
        private Duration readerIdleTimeout = READER_IDLE_TIMEOUT_DEFAULT;

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
         * Catch-up isolation, under every policy: the segment store infers each segment's
         * sequential readers from its reads, and a reader that read within this time is
         * <em>live</em>. Every pass ranks and evicts the bytes no live reader still has to read
         * before those one has (its unread tail, the bytes ahead of a catch-up reader), and a
         * fill from the log never evicts the latter: it is refused, and its read served from the
         * log without caching. Appends and the timer's passes still evict them when nothing else
         * is left, so the memory bound and the appends' room are as without it. See
         * {@code docs/reading.md}, <em>Tail and historical reads</em>.
         *
         * @param readerIdleTimeout how long a reader stays live without reading, {@link #READER_IDLE_TIMEOUT_DEFAULT}
         *                          by default; zero turns the sparing off (fills then evict as any append does).
         */
        public Builder readerIdleTimeout(final Duration readerIdleTimeout) {
            Objects.requireNonNull(readerIdleTimeout, "readerIdleTimeout");
            if (readerIdleTimeout.isNegative()) {
                throw new IllegalArgumentException("readerIdleTimeout=" + readerIdleTimeout + " must be >= 0");
            }
            this.readerIdleTimeout = readerIdleTimeout;
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

        /**
         * @param threads creates the manager's thread (role
         *                {@link StreamcacheThreads.Role#CACHE_MANAGER}, owner: the manager's
         *                name); {@link StreamcacheThreads#defaults()} by default.
         */
        public Builder threads(final StreamcacheThreads threads) {
            this.threads = Objects.requireNonNull(threads, "threads");
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
            if (cache.fullHandler() instanceof ManagerFullHandler installed && !installed.manager().isClosed()) {
                throw new CacheConfigurationException("cache " + cache.name() + " already has a cache manager (name="
                    + installed.manager().name() + "), and a cache has at most one: to put several segment stores on this cache, "
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
