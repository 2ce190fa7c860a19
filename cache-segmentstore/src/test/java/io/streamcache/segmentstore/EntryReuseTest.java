package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Index entries removed from a segment's tree are reused ({@code ReadIndexEntryPool}): a full
 * cache's steady appends allocate no entry, and a promotion request queued on an entry that has
 * since been reused by another segment does not move that segment's bytes.
 */
class EntryReuseTest {
    private static final int MAX_ENTRY = 1000;

    /**
     * Appends of one whole entry each into a 4 MiB cache (about 4,000 entries), round robin over
     * four segments, with the manager's passes running on the appending thread when the cache
     * is full: every append makes an entry, and every evicted entry is coalesced into the
     * placeholder before it. Over 20,000 appends (five times the cache) they must allocate less
     * than 4 bytes each on this thread; a new 48-byte entry per append (before the pool) is
     * 960,000 bytes. A pass allocates nothing itself once warmed ({@code PassAllocationTest}; it
     * was ~640 bytes to ~2 KB a pass before its lists became arrays).
     */
    @Test
    void shouldAllocateNoEntryPerAppendWhenEvictionFreesAsManyAsAppendsMake() {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "HotSpot's ThreadMXBean");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        try (BlockCache cache = TestSegments.cache(4 << 20); SegmentStore store = TestSegments.store(cache, MAX_ENTRY)) {
            final String[] names = {"a", "b", "c", "d"};
            for (final String name : names) {
                store.create(name);
            }
            final ByteBuf data = buffer(1, 0, MAX_ENTRY);
            final int appends = 20_000;
            final long thread = Thread.currentThread().getId();
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                final long before = threads.getThreadAllocatedBytes(thread);
                for (int i = 0; i < appends; i++) {
                    store.append(names[i & 3], data);
                }
                allocated = Math.min(allocated, threads.getThreadAllocatedBytes(thread) - before);
            }
            final long evictions = store.cacheManager().stats().evictions();
            assertTrue(evictions > 2L * appends, "the rounds evicted about as many entries as they appended: " + evictions);
            for (final String name : names) {
                final List<EntryView> index = entries(store, name);
                assertTrue(index.size() <= cache.stats().entryCount() + 1, "one placeholder before the cached tail: " + index.size());
                assertTrue(!index.get(0).cached(), "the evicted head is one placeholder");
            }
            assertTrue(allocated < 4L * appends, "bytes allocated by " + appends + " appends in the best round: " + allocated);
        }
    }

    /**
     * A promotion is queued for entry C of segment a; C is then evicted and coalesced away, and
     * segment b's fill reuses the very object for its own bytes, in the slow tier. The drained
     * request must find C gone from a's tree at the offset it recorded and leave b's entry where
     * it is: acting on it would move b's cache entry under a's lock.
     */
    @Test
    void shouldNotPromoteAnEntryAnotherSegmentReused() {
        try (BlockCache cache = TestSegments.tieredCache(2, 4)) {
            final OffsetSelectingPolicy policy = new OffsetSelectingPolicy();
            try (SegmentStore store = SegmentStore.builder(cache)
                .maxIndexEntryLength(MAX_ENTRY)
                .fillTier(1)
                .cacheManager(TestSegments.manualManager(cache).policy(policy).promotion(1, Duration.ofMillis(1)))
                .build()) {
                final CacheManager manager = store.cacheManager();
                store.create("a");
                store.create("b");
                // b: one entry, evicted: a placeholder [0, 1000) for the fill below.
                store.append("b", buffer(2, 0, MAX_ENTRY));
                evict(store, policy, "b", 0);
                assertEquals(List.of(new EntryView(0, MAX_ENTRY, false, 0)), entries(store, "b"));

                // a: [0, 1000) cached, [1000, 2000) evicted, then filled back into the slow tier.
                store.append("a", buffer(1, 0, 2 * MAX_ENTRY));
                evict(store, policy, "a", MAX_ENTRY);
                assertEquals(MAX_ENTRY, store.fill("a", MAX_ENTRY, buffer(1, MAX_ENTRY, MAX_ENTRY)));
                final ReadIndexEntry c = entryAt(store, "a", MAX_ENTRY);
                assertEquals(List.of(1), tierOf(store, "a", MAX_ENTRY), "filled into the slow tier");

                // One read in the slow tier queues C for promotion.
                try (ReadResult result = store.read("a", MAX_ENTRY, MAX_ENTRY)) {
                    assertArrayEquals(pattern(1, MAX_ENTRY, MAX_ENTRY), bytes(result));
                }
                // C and the entry before it evicted: C coalesces into that placeholder and goes to the pool.
                evict(store, policy, "a", 0, MAX_ENTRY);
                assertEquals(List.of(new EntryView(0, 2 * MAX_ENTRY, false, 0)), entries(store, "a"));

                // b's fill takes C from the pool for its own bytes, in the slow tier.
                store.fill("b", 0, buffer(2, 0, MAX_ENTRY));
                assertSame(c, entryAt(store, "b", 0), "the scenario needs b to reuse C itself");
                assertEquals(List.of(1), tierOf(store, "b", 0));

                manager.promoteNow();
                assertEquals(List.of(1), tierOf(store, "b", 0), "a's stale request left b's entry in its tier");
                assertEquals(1, manager.stats().promotionRequests(), "one request queued");
                assertEquals(1, manager.stats().promotionSkips(), "and skipped");
                try (ReadResult result = store.read("b", 0, MAX_ENTRY)) {
                    assertArrayEquals(pattern(2, 0, MAX_ENTRY), bytes(result));
                }
                assertEquals(List.of(new EntryView(0, 2 * MAX_ENTRY, false, 0)), entries(store, "a"));
            }
        }
    }

    private static void evict(final SegmentStore store, final OffsetSelectingPolicy policy, final String name, final long... offsets) {
        policy.selectOffsets(name, offsets);
        // A tiered pass evicts from the slow tier first, then demotes from the fast one: two
        // passes take an entry of the fast tier out of the cache.
        store.cacheManager().evictDownTo(0.0);
        store.cacheManager().evictDownTo(0.0);
        policy.selectOffsets(name);
        for (final long offset : offsets) {
            final ReadIndexEntry entry = entryAt(store, name, offset);
            assertTrue(entry == null || !entry.isCached(), () -> "evicted: " + name + "@" + offset);
        }
    }

    /** The entry containing {@code offset}, read under the segment's lock. */
    private static ReadIndexEntry entryAt(final SegmentStore store, final String name, final long offset) {
        final Segment segment = store.segmentOrNull(name);
        segment.lock();
        try {
            return ReadIndexTree.floorContaining(segment.indexRoot, offset);
        } finally {
            segment.unlock();
        }
    }

    /** The tier of the entry containing {@code offset}, as a one-element list. */
    private static List<Integer> tierOf(final SegmentStore store, final String name, final long offset) {
        final Segment segment = store.segmentOrNull(name);
        segment.lock();
        try {
            return List.of(store.cache().tierOf(ReadIndexTree.floorContaining(segment.indexRoot, offset).address()));
        } finally {
            segment.unlock();
        }
    }
}
