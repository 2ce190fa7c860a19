package io.streamcache.segmentstore.eviction;

import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.SpmcArrayQueue;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Catalyst's Hitmap (VLDB 2023) as an eviction policy: frequency counted in multi-level hash
 * counters, updated off the data path, aged by rolling compaction; eviction takes the coldest
 * zone first.
 *
 * <h2>Layout</h2>
 * {@code M} levels of bit arrays, level {@code m} holding {@code level0Bits << m} bits (an
 * inverted pyramid: each level twice the size of the one below). A key (segment and entry start
 * offset, hashed to 64 bits) is <em>marked</em> in a level if all {@code N} of its bits there are
 * set; the {@code N} bit indexes are {@code (h1 + i * h2) mod size}, i = 0..N-1. A use marks the
 * key in the lowest level where it is not yet marked, so the number of consecutive marked levels
 * from level 0, the key's <em>zone</em>, approximates its use count, up to {@code M}.
 *
 * <h2>Rolling compaction</h2>
 * After every {@code compactionPeriod} applied uses, level 0 is dropped, every level {@code m}
 * is folded into the size of level {@code m-1} by OR-ing its two halves (the indexes are taken
 * modulo a power of two, so the fold keeps every mark) and becomes level {@code m-1}, and the
 * top level starts empty: every count drops by one. Folding reuses the arrays: no allocation.
 *
 * <h2>Thread model</h2>
 * <ul>
 *   <li>{@link #recordUse}: data-path threads, under the segment's lock. Stamps the generation
 *       into the entry (the tie-break within a zone) and enqueues the key's hash: it takes a
 *       pre-allocated slot from a jctools {@code SpmcArrayQueue} free pool, writes the hash into
 *       it and offers it to a jctools {@code MpscArrayQueue}. No allocation, no lock, no
 *       blocking; when the pool is empty the use is dropped and counted ({@link #drops()}).</li>
 *   <li>{@link #drain()}: the single consumer; applies queued hashes to the Hitmap and runs
 *       compactions. Called by the updater thread ({@link #startUpdater}), by the pass
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
    private final long[][] bits;
    private final long[] masks;
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
        this.bits = new long[levels][];
        this.masks = new long[levels];
        for (int m = 0; m < levels; m++) {
            final long size = (long) level0Bits << m;
            bits[m] = new long[(int) (size >>> 6)];
            masks[m] = size - 1;
        }
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
                mark(hash);
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
     * Starts a daemon thread that drains the queue, parking {@code idleNanos} when it is empty.
     * At most once; {@link #close()} stops it.
     */
    public synchronized void startUpdater(final String name, final long idleNanos) {
        if (updater != null || closed) {
            throw new IllegalStateException("updater already started or policy closed");
        }
        final Thread thread = new Thread(() -> {
            while (!closed) {
                if (drain() == 0) {
                    LockSupport.parkNanos(this, idleNanos);
                }
            }
        }, name);
        thread.setDaemon(true);
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
        // Ascending, in place: old level 0 is dropped first, so its array takes folded level 1;
        // old level 1 was just folded, so its array takes folded level 2; and so on. Each level
        // keeps an array of its own size.
        for (int m = 1; m < levels; m++) {
            final long[] upper = bits[m];
            final long[] lower = bits[m - 1];
            final int half = upper.length >>> 1;
            for (int w = 0; w < half; w++) {
                lower[w] = upper[w] | upper[w + half];
            }
        }
        Arrays.fill(bits[levels - 1], 0L);
        appliedSinceCompaction = 0;
        compactions++;
    }

    private void mark(final long hash) {
        final long h1 = hash;
        final long h2 = (hash >>> 32) | 1L;
        for (int m = 0; m < levels; m++) {
            if (!markedIn(m, h1, h2)) {
                final long[] level = bits[m];
                final long mask = masks[m];
                for (int i = 0; i < hashFunctions; i++) {
                    final long bit = (h1 + i * h2) & mask;
                    level[(int) (bit >>> 6)] |= 1L << bit;
                }
                return;
            }
        }
    }

    private boolean markedIn(final int m, final long h1, final long h2) {
        final long[] level = bits[m];
        final long mask = masks[m];
        for (int i = 0; i < hashFunctions; i++) {
            final long bit = (h1 + i * h2) & mask;
            if ((level[(int) (bit >>> 6)] & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return the key's zone: how many consecutive levels from level 0 mark it, in [0, levels].
     *         Any thread (takes the Hitmap's lock).
     */
    public int zone(final String segment, final long offset) {
        final long hash = hash(segment, offset);
        final long h2 = (hash >>> 32) | 1L;
        lock.lock();
        try {
            int m = 0;
            while (m < levels && markedIn(m, hash, h2)) {
                m++;
            }
            return m;
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
