package io.streamcache.segmentstore.eviction;

import io.streamcache.core.StreamcacheThreads;
import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.SpmcArrayQueue;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Catalyst's Hitmap (VLDB 2023) as a thread-safe eviction policy (uses recorded lock-free under the
 * segment's lock, the counters changed under a private lock): frequency counted in multi-level hash
 * counters, updated off the data path, aged by rolling compaction; eviction takes the coldest
 * zone first.
 *
 * <h2>Structure</h2>
 * The counters are a {@code Hitmap}: {@code M} levels of bit arrays, each twice the size of the
 * one below; a use marks its key (segment and entry start offset, hashed) in the lowest level
 * where it is not yet marked, so the key's <em>zone</em> (consecutive marked levels from level 0)
 * approximates its use count, up to {@code M}. After every {@code compactionPeriod} applied uses
 * a rolling compaction drops every count by one. The layout and the fold are described there.
 * This class owns the queue of uses, the updater and the ranking of a pass.
 *
 * <h2>Thread model</h2>
 * <ul>
 *   <li>{@link #recordUse}: data-path threads, under the segment's lock. Stamps the generation
 *       into the entry (the tie-break within a zone) and enqueues the key's hash: it takes a
 *       pre-allocated slot from a jctools {@code SpmcArrayQueue} free pool, writes the hash into
 *       it and offers it to a jctools {@code MpscArrayQueue}. No allocation, no lock, no
 *       blocking; when the pool is empty the use is dropped and counted ({@link #drops()}).</li>
 *   <li>{@link #drain()}: the single consumer; applies queued hashes to the Hitmap and runs
 *       compactions. Called by the updater thread ({@link #startUpdater(StreamcacheThreads, String, long)}), by the pass
 *       ({@link #beginPass} drains first) or by a simulator that wants determinism. Every access
 *       to the bit arrays holds a private lock, so these callers may overlap.</li>
 *   <li>{@link #beginPass}, {@link #survey}, {@link #advance}, {@link #select}: the cache
 *       manager's pass, one thread at a time ({@link EvictionPolicy}).</li>
 * </ul>
 *
 * <h2>Eviction</h2>
 * The pass drains the queue, then the survey computes for every evictable entry (the manager
 * offers them all: the survey is the candidate sample) a rank of (zone, age). The cut-off
 * moves one surveyed rank at a time: zone 0 first (keys no longer counted), then zone 1, and so
 * on; within a zone the oldest generation goes first. Entries used in the current generation
 * are never selected.
 */
public final class HitmapPolicy implements EvictionPolicy, AutoCloseable {
    /** Default number of levels. */
    public static final int LEVELS_DEFAULT = 4;
    /** Default number of hash functions. */
    public static final int HASH_FUNCTIONS_DEFAULT = 2;

    private final int levels;
    private final int hashFunctions;
    private final long compactionPeriod;
    /** The counters; every access holds {@link #lock}. */
    private final Hitmap hitmap;
    private final ReentrantLock lock = new ReentrantLock();
    private final SpmcArrayQueue<Slot> free;
    private final MpscArrayQueue<Slot> pending;
    private final AtomicLong drops = new AtomicLong();

    // Under lock.
    private long appliedSinceCompaction;
    private long applied;
    private long compactions;

    private volatile Thread updater;
    private volatile boolean closed;

    // Pass state: confined to the pass.
    private long[] ranks = new long[64];
    private int rankCount;
    private int nextRank;
    private boolean sorted;
    private int current;
    private long cutoff = Long.MIN_VALUE;

    /**
     * @param levels           number of levels M, in [1, 16].
     * @param level0Bits       bits of level 0, a power of two &gt;= 64; level m has
     *                         {@code level0Bits << m}.
     * @param hashFunctions    bits per key and level N, in [1, 8].
     * @param queueCapacity    uses that may wait for the updater before uses are dropped, &gt;= 1.
     * @param compactionPeriod applied uses between two compactions, &gt;= 1.
     */
    public HitmapPolicy(final int levels, final int level0Bits, final int hashFunctions, final int queueCapacity,
                        final long compactionPeriod) {
        if (levels < 1 || levels > 16) {
            throw new IllegalArgumentException("levels=" + levels + " must be in [1, 16]");
        }
        if (level0Bits < 64 || Integer.bitCount(level0Bits) != 1 || ((long) level0Bits << (levels - 1)) > (1L << 34)) {
            throw new IllegalArgumentException("level0Bits=" + level0Bits + " must be a power of two >= 64 (top level at most 2^34 bits)");
        }
        if (hashFunctions < 1 || hashFunctions > 8) {
            throw new IllegalArgumentException("hashFunctions=" + hashFunctions + " must be in [1, 8]");
        }
        if (queueCapacity < 1) {
            throw new IllegalArgumentException("queueCapacity=" + queueCapacity + " must be >= 1");
        }
        if (compactionPeriod < 1) {
            throw new IllegalArgumentException("compactionPeriod=" + compactionPeriod + " must be >= 1");
        }
        this.levels = levels;
        this.hashFunctions = hashFunctions;
        this.compactionPeriod = compactionPeriod;
        this.hitmap = new Hitmap(levels, level0Bits, hashFunctions);
        free = new SpmcArrayQueue<>(queueCapacity);
        pending = new MpscArrayQueue<>(queueCapacity);
        final int slots = free.capacity();
        for (int i = 0; i < slots; i++) {
            free.offer(new Slot());
        }
    }

    /**
     * A Hitmap sized for a cache of about {@code entries} entries: {@value #LEVELS_DEFAULT}
     * levels, level 0 with 8 bits per entry (rounded up to a power of two),
     * {@value #HASH_FUNCTIONS_DEFAULT} hash functions, a queue of 64 Ki uses and a compaction
     * every {@code 2 * entries} applied uses.
     */
    public static HitmapPolicy forEntries(final long entries) {
        if (entries < 1) {
            throw new IllegalArgumentException("entries=" + entries + " must be >= 1");
        }
        final long wanted = Math.max(64, entries * 8);
        final int level0Bits = (int) Math.min(1L << 30, Long.highestOneBit(wanted - 1) << 1);
        return new HitmapPolicy(LEVELS_DEFAULT, level0Bits, HASH_FUNCTIONS_DEFAULT, 1 << 16, 2 * entries);
    }

    // ------------------------------------------------------------------------------------------
    // The data path
    // ------------------------------------------------------------------------------------------

    @Override
    public void recordUse(final String segment, final CachedEntry entry, final int generation) {
        entry.generation(generation);
        final Slot slot = free.relaxedPoll();
        if (slot == null) {
            drops.getAndIncrement();
            return;
        }
        slot.hash = hash(segment, entry.offset());
        if (!pending.offer(slot)) {
            // Cannot happen (the pending queue holds every slot), kept for safety: no slot is lost.
            free.offer(slot);
            drops.getAndIncrement();
        }
    }

    /** The key's 64-bit hash: the segment name's hash and the entry's start offset, mixed. */
    static long hash(final String segment, final long offset) {
        long h = segment.hashCode() * 0x9E3779B97F4A7C15L + offset;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    // ------------------------------------------------------------------------------------------
    // The updater
    // ------------------------------------------------------------------------------------------

    /**
     * Applies every queued use to the Hitmap (and the compactions they trigger). Any thread; the
     * single consumer of the queue (concurrent callers serialize on a lock).
     *
     * @return uses applied.
     */
    public int drain() {
        lock.lock();
        try {
            int count = 0;
            Slot slot;
            while ((slot = pending.poll()) != null) {
                final long hash = slot.hash;
                free.offer(slot);
                hitmap.mark(hash);
                count++;
                applied++;
                if (++appliedSinceCompaction >= compactionPeriod) {
                    compactLocked();
                }
            }
            return count;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Starts the updater with the default threads: a daemon thread named
     * {@code streamcache-hitmap-updater-<name>} that drains the queue, parking {@code idleNanos}
     * when it is empty. At most once; {@link #close()} stops it.
     *
     * @param name      the policy's name in the thread's name.
     * @param idleNanos how long the updater parks when the queue is empty.
     */
    public void startUpdater(final String name, final long idleNanos) {
        startUpdater(StreamcacheThreads.defaults(), name, idleNanos);
    }

    /**
     * Starts the updater: a thread of role {@link StreamcacheThreads.Role#HITMAP_UPDATER} from
     * {@code threads} (pass the store's or the manager's) that drains the queue, parking
     * {@code idleNanos} when it is empty. At most once; {@link #close()} stops it.
     *
     * @param threads   creates the thread (owner: {@code name}).
     * @param name      the policy's name, the thread's owner.
     * @param idleNanos how long the updater parks when the queue is empty.
     * @throws IllegalStateException if the updater was started already or the policy is closed.
     */
    public synchronized void startUpdater(final StreamcacheThreads threads, final String name, final long idleNanos) {
        Objects.requireNonNull(threads, "threads");
        Objects.requireNonNull(name, "name");
        if (updater != null || closed) {
            throw new IllegalStateException("updater already started or policy closed");
        }
        final Thread thread = threads.newThread(StreamcacheThreads.Role.HITMAP_UPDATER, name, () -> {
            while (!closed) {
                if (drain() == 0) {
                    LockSupport.parkNanos(this, idleNanos);
                }
            }
        });
        updater = thread;
        thread.start();
    }

    /** Stops the updater thread (waiting for it) and drains what is left. Idempotent. */
    @Override
    public void close() {
        closed = true;
        final Thread thread = updater;
        if (thread != null && thread != Thread.currentThread()) {
            LockSupport.unpark(thread);
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        drain();
    }

    /** Runs a rolling compaction now: every count drops by one. Any thread. */
    public void compact() {
        lock.lock();
        try {
            compactLocked();
        } finally {
            lock.unlock();
        }
    }

    private void compactLocked() {
        hitmap.compact();
        appliedSinceCompaction = 0;
        compactions++;
    }

    /**
     * @return the key's zone: how many consecutive levels from level 0 mark it, in [0, levels].
     *         Any thread (takes the Hitmap's lock).
     */
    public int zone(final String segment, final long offset) {
        final long hash = hash(segment, offset);
        lock.lock();
        try {
            return hitmap.zone(hash);
        } finally {
            lock.unlock();
        }
    }

    /** @return uses dropped because the queue was full (any thread). */
    public long drops() {
        return drops.get();
    }

    /** @return uses applied to the Hitmap so far (any thread). */
    public long applied() {
        lock.lock();
        try {
            return applied;
        } finally {
            lock.unlock();
        }
    }

    /** @return rolling compactions so far (any thread). */
    public long compactions() {
        lock.lock();
        try {
            return compactions;
        } finally {
            lock.unlock();
        }
    }

    /** @return the number of levels M. */
    public int levels() {
        return levels;
    }

    // ------------------------------------------------------------------------------------------
    // The pass
    // ------------------------------------------------------------------------------------------

    @Override
    public void beginPass(final int currentGeneration) {
        drain();
        current = currentGeneration;
        rankCount = 0;
        nextRank = 0;
        sorted = false;
        cutoff = Long.MIN_VALUE;
    }

    @Override
    public void survey(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        if (age >= 0) {
            return;
        }
        final long rank = rank(segment, entry, age);
        if (rankCount > 0 && ranks[rankCount - 1] == rank) {
            return;
        }
        if (rankCount == ranks.length) {
            ranks = Arrays.copyOf(ranks, rankCount * 2);
        }
        ranks[rankCount++] = rank;
    }

    @Override
    public boolean advance() {
        if (!sorted) {
            Arrays.sort(ranks, 0, rankCount);
            int distinct = 0;
            for (int i = 0; i < rankCount; i++) {
                if (distinct == 0 || ranks[distinct - 1] != ranks[i]) {
                    ranks[distinct++] = ranks[i];
                }
            }
            rankCount = distinct;
            sorted = true;
        }
        if (nextRank == rankCount) {
            return false;
        }
        cutoff = ranks[nextRank++];
        return true;
    }

    @Override
    public boolean select(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        return age < 0 && rank(segment, entry, age) <= cutoff;
    }

    private long rank(final String segment, final CachedEntry entry, final int age) {
        return ((long) zone(segment, entry.offset()) << 32) | ((long) age + Integer.MAX_VALUE + 1L);
    }

    @Override
    public String toString() {
        return "HitmapPolicy{levels=" + levels + ", hashFunctions=" + hashFunctions + ", compactionPeriod=" + compactionPeriod
            + ", drops=" + drops.get() + '}';
    }

    /** A pre-allocated carrier of one hash through the queue. */
    private static final class Slot {
        long hash;
    }
}
