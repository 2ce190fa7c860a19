package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.jctools.queues.MpmcArrayQueue;
import org.jctools.queues.MpscArrayQueue;

import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The promotion of a {@link CacheManager} over a tiered cache: counts reads of entries whose
 * bytes are in a slower tier, queues those read often enough, and moves queued entries into
 * tier 0 while tier 0 is under its promotion ceiling.
 *
 * <h2>Threading</h2>
 * {@link #record} is for the data path: many threads, each under its segment's lock; it takes a
 * pooled request from a jctools {@code MpmcArrayQueue} and offers it to a jctools
 * {@code MpscArrayQueue}: nothing allocated, no lock (a full pool drops the request and counts
 * it). {@link #drain} is the single consumer: it runs on the manager's thread or a caller of
 * {@code CacheManager.promoteNow()}, under a private lock taken with {@code tryLock} (a second
 * drainer returns at once), holding no segment lock; each promotion locks its segment with
 * {@code tryLock} ({@link PromotionTarget#promote}). Counters are {@link LongAdder}s, read by
 * any thread.
 */
final class Promotions {
    private final BlockCache cache;
    /** Tier 0's target utilization (the promotion ceiling lies halfway between it and full). */
    private final double tier0Target;
    private final int promoteAfterReads;
    /** Half the promotion interval: the unit of the promotion tick (see {@link #record}). */
    private final long promotionTickNanos;
    /** Whether the manager is closed: queued requests are then dropped, not promoted. */
    private final BooleanSupplier managerClosed;
    private final TierCounters tiers;
    /** Free promotion requests (taken on the data path, given back by the draining thread). */
    private final MpmcArrayQueue<PromotionRequest> freeRequests;
    /** Queued promotion requests: many data-path producers, one consumer under {@link #promotionLock}. */
    private final MpscArrayQueue<PromotionRequest> pendingRequests;
    private final ReentrantLock promotionLock = new ReentrantLock();
    private final LongAdder promotionRequests = new LongAdder();
    private final LongAdder promotionDrops = new LongAdder();
    private final LongAdder promotionSkips = new LongAdder();

    /**
     * @param cache             the managed cache.
     * @param tier0Target       tier 0's target utilization.
     * @param promoteAfterReads reads in a slower tier before an entry is queued; 0 turns promotion off.
     * @param intervalNanos     least time between two requests of one entry, positive.
     * @param capacity          requests that may wait at once (at least 2 are pooled).
     * @param managerClosed     whether the manager is closed.
     * @param tiers             the per-tier counters (promotions into tier 0).
     */
    Promotions(final BlockCache cache, final double tier0Target, final int promoteAfterReads, final long intervalNanos,
               final int capacity, final BooleanSupplier managerClosed, final TierCounters tiers) {
        this.cache = cache;
        this.tier0Target = tier0Target;
        this.promoteAfterReads = promoteAfterReads;
        this.promotionTickNanos = Math.max(1, intervalNanos / 2);
        this.managerClosed = managerClosed;
        this.tiers = tiers;
        final int requests = Math.max(2, capacity);
        this.freeRequests = new MpmcArrayQueue<>(requests);
        this.pendingRequests = new MpscArrayQueue<>(requests);
        for (int i = 0; i < requests && freeRequests.offer(new PromotionRequest()); i++) {
            // fill the pool
        }
    }

    /** A queued promotion: pooled, so that queueing allocates nothing. */
    private static final class PromotionRequest {
        PromotionTarget owner;
        ReadIndexEntry entry;
        /** The entry's offset when queued: the promotion acts only if the owner still holds the entry there. */
        long offset;
    }

    /**
     * Counts a read of an entry whose bytes are in a slower tier, and queues the entry for
     * promotion to tier 0 once it has been read {@code promoteAfterReads} times there, unless it
     * was queued less than the promotion interval ago (CacheLib's throttle: the entry keeps the
     * time of its last request in a byte, in units of half the interval, so two requests are
     * always more than one interval apart). For the data path: call under the segment's lock;
     * allocates nothing, takes no lock (a full queue drops the request and counts it).
     *
     * @param owner the entry's segment, which the promotion will lock.
     * @param entry the entry read.
     * @return whether the entry was queued (the caller wakes the draining thread).
     */
    boolean record(final PromotionTarget owner, final ReadIndexEntry entry) {
        if (promoteAfterReads == 0 || entry.countTierRead() < promoteAfterReads) {
            return false;
        }
        final int now = 1 + (int) Math.floorMod(System.nanoTime() / promotionTickNanos, 255L);
        final int last = entry.promotionTick();
        if (last != 0 && Math.floorMod(now - last, 255) < 3) {
            return false;
        }
        final PromotionRequest request = freeRequests.poll();
        if (request == null) {
            promotionDrops.increment();
            return false;
        }
        request.owner = owner;
        request.entry = entry;
        request.offset = entry.offset();
        entry.promotionTick(now);
        entry.resetTierReads();
        pendingRequests.offer(request);
        promotionRequests.increment();
        return true;
    }

    /** @return whether requests are queued (any thread). */
    boolean hasPending() {
        return !pendingRequests.isEmpty();
    }

    /**
     * Runs the queued promotions on the calling thread: moves each entry into tier 0 while tier 0
     * is under its promotion ceiling, halfway between its target and full (see
     * {@link #promotionCeiling()}). Returns at once if another thread is draining. Call it
     * holding no segment lock.
     *
     * @return entries promoted.
     */
    int drain() {
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
                final long offset = request.offset;
                request.owner = null;
                request.entry = null;
                freeRequests.offer(request);
                if (managerClosed.getAsBoolean() || cache.isClosed()) {
                    continue;
                }
                if (room == Long.MIN_VALUE) {
                    room = (long) Math.floor(promotionCeiling() * cache.tierBlocks(0)) - cache.tierUsedBlocks(0);
                }
                final long moved = room > 0 ? owner.promote(entry, offset, 0, room) : 0;
                if (moved > 0) {
                    room -= moved;
                    promoted++;
                    tiers.promotions[0].increment();
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
    double promotionCeiling() {
        return tier0Target + (1.0 - tier0Target) / 2;
    }

    /** @return entries queued for promotion so far. */
    long requests() {
        return promotionRequests.sum();
    }

    /** @return requests dropped because the queue was full. */
    long drops() {
        return promotionDrops.sum();
    }

    /** @return queued entries not promoted. */
    long skips() {
        return promotionSkips.sum();
    }
}
