package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.index.ReadIndexEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
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
 * for blocks: the pass lock is taken with {@code tryLock} (when busy, the handler asks the cache
 * to retry: the running pass is freeing blocks), and sources take segment locks with
 * {@code tryLock} and skip busy segments (see {@link EvictionSource}). The handler asks for a
 * retry when its pass freed blocks or skipped busy segments (whose owners may free their own),
 * and lets the cache fail at once when nothing could be freed.
 *
 * <h2>Lifecycle</h2>
 * Close the manager (or the store that owns it) before the cache: a pass reads the cache's
 * buffers, which closing the cache releases.
 *
 * <h2>Logging and metrics</h2>
 * Only the manager's thread logs; passes on data-path threads only count. {@link #stats()} gives
 * an immutable snapshot, also published as a {@link CacheManagerMXBean}.
 */
public final class CacheManager implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CacheManager.class);

    private final BlockCache cache;
    private final EvictionPolicy policy;
    private final double targetUtilization;
    private final long periodNanos;
    private final String name;
    private final int blockLength;
    private final CopyOnWriteArrayList<EvictionSource> sources = new CopyOnWriteArrayList<>();
    private final AtomicInteger generation = new AtomicInteger();
    private final ReentrantLock passLock = new ReentrantLock();
    private final SurveyScan survey = new SurveyScan();
    private final EvictScan evict = new EvictScan();
    private final LongAdder fullHandlerCalls = new LongAdder();
    private final CacheFullHandler fullHandler = this::onCacheFull;
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
    public void register(final EvictionSource source) {
        sources.addIfAbsent(Objects.requireNonNull(source, "source"));
    }

    /**
     * Removes a source; waits for a running pass to finish, so once this returns no pass scans it.
     */
    public void unregister(final EvictionSource source) {
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
    public void recordUse(final String segment, final ReadIndexEntry entry) {
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
        return evictDownTo(targetUtilization);
    }

    /**
     * Advances the generation and runs one pass on the calling thread down to the given
     * utilization: {@code 0.0} evicts everything the policy selects. Waits for a pass running
     * on another thread. Call it holding no segment lock.
     *
     * @param utilization the target of this pass, in [0, 1].
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
     * Never blocks on a lock (see the class documentation).
     */
    private boolean onCacheFull(final int blockCount) {
        fullHandlerCalls.increment();
        if (closed) {
            return false;
        }
        if (!passLock.tryLock()) {
            return true;
        }
        try {
            generation.incrementAndGet();
            final long busyBefore = busySkips;
            final long freed = pass(targetUtilization, blockCount);
            return freed > 0 || busySkips != busyBefore;
        } catch (final CacheClosedException e) {
            return false;
        } finally {
            passLock.unlock();
        }
    }

    /**
     * One pass; the caller holds the pass lock.
     *
     * @param utilization   the target.
     * @param minimumBlocks blocks to free even if the cache is at or under the target.
     * @return blocks freed.
     */
    private long pass(final double utilization, final long minimumBlocks) {
        runs = runs + 1;
        if (cache.isClosed()) {
            throw new CacheClosedException("cache " + cache.name() + " is closed");
        }
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
        return evict.blocks;
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
            final long wait = deadline - System.nanoTime();
            if (wait > 0 && !passRequested) {
                LockSupport.parkNanos(this, wait);
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
                    freed = pass(targetUtilization, 0);
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
        return new CacheManagerStats(generation.get(), runs, evictions, evictedBytes,
            cache.isClosed() ? 0.0 : cache.stats().utilization(), targetUtilization, fullHandlerCalls.sum(), busySkips);
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
        if (!cache.isClosed()) {
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
        public int advanceGeneration() {
            return manager.advanceGeneration();
        }

        @Override
        public long evictNow() {
            return manager.evictNow();
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
        private String name;
        private boolean registerMBean = true;

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
         * Builds the manager, installs it as the cache's full handler and starts its thread.
         *
         * @throws CacheConfigurationException if a setting is out of range or the MBean name is taken.
         */
        public CacheManager build() {
            if (!(targetUtilization > 0.0 && targetUtilization <= 1.0)) {
                throw new CacheConfigurationException("targetUtilization=" + targetUtilization + " must be in (0, 1]");
            }
            if (generationPeriod.isNegative()) {
                throw new CacheConfigurationException("generationPeriod=" + generationPeriod + " must not be negative");
            }
            if (cache.isClosed()) {
                throw new CacheClosedException("cache " + cache.name() + " is closed");
            }
            if (policy == null) {
                policy = new GenerationPolicy();
            }
            return new CacheManager(this);
        }
    }
}
