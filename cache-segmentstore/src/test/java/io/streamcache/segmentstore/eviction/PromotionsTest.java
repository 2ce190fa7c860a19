package io.streamcache.segmentstore.eviction;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.internal.eviction.PromotionTarget;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PromotionsTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    /** 2 fast buffers and 4 slow ones: tier 0 starts empty, so the drain has room. */
    private final BlockCache cache = TestSegments.tieredCache(2, 4);
    private final TierCounters tiers = new TierCounters(cache.tierCount());
    private final AtomicBoolean closed = new AtomicBoolean();

    @AfterEach
    void tearDown() {
        cache.close();
    }

    private Promotions promotions(final int afterReads, final int capacity) {
        return new Promotions(cache, 0.8, afterReads, HOUR, capacity, closed::get, tiers);
    }

    private static ReadIndexEntry entry(final int index) {
        return new ReadIndexEntry(index * 1024L, 1024, 1, 0);
    }

    /** A segment that records what the drain asks it to promote and moves {@code moved} blocks. */
    private static final class Owner implements PromotionTarget {
        final List<ReadIndexEntry> asked = new ArrayList<>();
        final List<Long> rooms = new ArrayList<>();
        long moved;

        @Override
        public long promote(final ReadIndexEntry entry, final long offset, final int targetTier, final long maxBlocks) {
            assertEquals(0, targetTier);
            assertEquals(entry.offset(), offset, "the request carries the offset the entry had when queued");
            asked.add(entry);
            rooms.add(maxBlocks);
            return moved;
        }
    }

    @Test
    void shouldQueueAnEntryAfterItsReadsAndNotAgainWithinTheInterval() {
        final Promotions promotions = promotions(2, 8);
        final ReadIndexEntry entry = entry(0);
        final Owner owner = new Owner();
        assertFalse(promotions.record(owner, entry), "one read of two");
        assertFalse(promotions.hasPending());
        assertTrue(promotions.record(owner, entry), "the second read queues it");
        assertTrue(promotions.hasPending());
        assertEquals(0, entry.tierReads(), "queueing starts the count again");
        assertFalse(promotions.record(owner, entry));
        assertFalse(promotions.record(owner, entry), "queued less than an interval ago");
        assertEquals(1, promotions.requests());
        assertEquals(0, promotions.drops());
    }

    @Test
    void shouldDropRequestsWhenThePoolIsEmptyAndCountThem() {
        final Promotions promotions = promotions(1, 2);
        final Owner owner = new Owner();
        assertTrue(promotions.record(owner, entry(0)));
        assertTrue(promotions.record(owner, entry(1)));
        assertFalse(promotions.record(owner, entry(2)), "both pooled requests are queued");
        assertEquals(2, promotions.requests());
        assertEquals(1, promotions.drops());
        // The drain gives the requests back to the pool.
        promotions.drain();
        assertTrue(promotions.record(owner, entry(3)));
    }

    @Test
    void shouldPromoteQueuedEntriesIntoTheRoomUnderTheCeiling() {
        final Promotions promotions = promotions(1, 8);
        final Owner owner = new Owner();
        owner.moved = 4;
        promotions.record(owner, entry(0));
        promotions.record(owner, entry(1));
        assertEquals(2, promotions.drain());
        assertEquals(List.of(entry(0).offset(), entry(1).offset()),
            owner.asked.stream().map(ReadIndexEntry::offset).toList());
        final long room = (long) Math.floor(promotions.promotionCeiling() * cache.tierBlocks(0)) - cache.tierUsedBlocks(0);
        assertEquals(List.of(room, room - 4), owner.rooms, "each promotion uses up the room it moved into");
        assertEquals(2, tiers.promotions[0].sum());
        assertEquals(0, promotions.skips());
        assertFalse(promotions.hasPending());
    }

    @Test
    void shouldCountEntriesTheOwnerCouldNotMoveAsSkips() {
        final Promotions promotions = promotions(1, 8);
        final Owner owner = new Owner();
        promotions.record(owner, entry(0));
        assertEquals(0, promotions.drain());
        assertEquals(1, promotions.skips());
        assertEquals(0, tiers.promotions[0].sum());
    }

    @Test
    void shouldDropQueuedEntriesOnceTheManagerIsClosed() {
        final Promotions promotions = promotions(1, 8);
        final Owner owner = new Owner();
        owner.moved = 1;
        promotions.record(owner, entry(0));
        closed.set(true);
        assertEquals(0, promotions.drain());
        assertTrue(owner.asked.isEmpty());
        assertFalse(promotions.hasPending());
    }

    @Test
    void shouldPlaceTheCeilingHalfwayBetweenTheTargetAndFull() {
        assertEquals(0.9, promotions(1, 2).promotionCeiling(), 1e-12);
    }
}
