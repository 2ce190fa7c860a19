package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.management.JMX;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static io.streamcache.segmentstore.TestSegments.tiers;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cache manager over a two-tier cache: demotion instead of eviction, eviction from the last
 * tier only, admission policies, throttled promotion and the per-tier stats. Caches of 256-byte
 * blocks in 8 KB buffers (31 data blocks each); entries of 2 KB (8 blocks) unless said otherwise.
 */
class TieredCacheManagerTest {
    private static final int ENTRY = 2048;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(final T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private SegmentStore store(final BlockCache cache, final CacheManager.Builder manager) {
        return closeLater(SegmentStore.builder(cache).maxIndexEntryLength(ENTRY).cacheManager(manager).build());
    }

    /** Creates segment {@code name} of {@code entries} full entries of pattern {@code seed}. */
    private static void fill(final SegmentStore store, final String name, final long seed, final int entries) {
        store.create(name);
        for (int offset = 0; offset < entries * ENTRY; offset += 512) {
            store.append(name, buffer(seed, offset, 512));
        }
    }

    private static void assertIntact(final SegmentStore store, final String name, final long seed, final int length) {
        try (ReadResult result = store.read(name, 0, Integer.MAX_VALUE)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status(), name + " is wholly cached");
            assertArrayEquals(pattern(seed, 0, length), bytes(result), name);
        }
    }

    /** The scan stops once enough is moved, in offset order: a segment's moved entries come first. */
    private static void assertMovedInOffsetOrder(final List<Integer> tiers) {
        final int moved = Collections.frequency(tiers, 1);
        final List<Integer> expected = repeat(1, moved);
        expected.addAll(repeat(0, tiers.size() - moved));
        assertEquals(expected, tiers, "moved in offset order");
    }

    private static List<Integer> repeat(final int tier, final int count) {
        return new ArrayList<>(Collections.nCopies(count, tier));
    }

    // ------------------------------------------------------------------------------------------
    // Demotion

    @Test
    void shouldDemoteTheColdestEntriesIntoTheNextTierInsteadOfEvictingThem() {
        // Fast tier: 4 buffers = 124 blocks; slow tier: 16 buffers = 496 blocks.
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).tierTargetUtilization(0, 0.5));
        final CacheManager manager = store.cacheManager();
        fill(store, "a", 1, 6);
        manager.advanceGeneration();
        fill(store, "b", 2, 6);
        manager.advanceGeneration();
        fill(store, "c", 3, 3);
        assertEquals(120, cache.tierUsedBlocks(0), "15 entries of 8 blocks, all in the fast tier");
        assertEquals(0, cache.tierUsedBlocks(1));

        final long freed = manager.evictNow();
        // 124 * 0.5 = 62 blocks may stay: 58 must go, from the oldest generations: a's 48 blocks
        // are not enough, so the cut-off takes a's and b's generations at once, and which of
        // their entries move depends on the order the scan walks the segments in, which the
        // store does not specify (EvictionSource.scan): 8 entries of a and b, none of c's.
        assertEquals(64, freed);
        final List<Integer> a = tiers(store, "a");
        final List<Integer> b = tiers(store, "b");
        assertEquals(8, Collections.frequency(a, 1) + Collections.frequency(b, 1), a + " " + b);
        assertMovedInOffsetOrder(a);
        assertMovedInOffsetOrder(b);
        assertEquals(repeat(0, 3), tiers(store, "c"));
        assertIntact(store, "a", 1, 6 * ENTRY);
        assertIntact(store, "b", 2, 6 * ENTRY);
        assertIntact(store, "c", 3, 3 * ENTRY);

        final CacheStats cacheStats = cache.stats();
        assertEquals(56, cacheStats.tier(0).usedBlockCount());
        assertEquals(64, cacheStats.tier(1).usedBlockCount());
        assertEquals(8, cacheStats.tier(0).demotions());
        final CacheManagerStats stats = manager.stats();
        assertEquals(8, stats.tier(0).demotions());
        assertEquals(0, stats.tier(0).evictions());
        assertEquals(0, stats.tier(1).evictions());
        assertEquals(0, stats.evictions(), "nothing was dropped");
        assertEquals(0.5, stats.tier(0).targetUtilization());
        assertEquals(56.0 / 124, stats.tier(0).utilization(), 1e-9);
    }

    @Test
    void shouldEvictOnlyFromTheLastTier() {
        // Fast: 2 buffers = 62 blocks, target 0.5 = 31; slow: 4 buffers = 124 blocks, target 0.3 = 37.
        final BlockCache cache = closeLater(TestSegments.tieredCache(2, 4));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).targetUtilization(0.5)
            .tierTargetUtilization(1, 0.3));
        final CacheManager manager = store.cacheManager();
        fill(store, "old", 1, 7);
        manager.advanceGeneration();
        fill(store, "new", 2, 7);
        assertEquals(62, cache.tierUsedBlocks(0), "the fast tier filled up");
        assertEquals(50, cache.tierUsedBlocks(1), "and new entries fell through to the slow tier");
        assertEquals(List.of(1, 1, 1, 1, 1, 1, 1), tiers(store, "new"), "the first entry straddles: 6 blocks fast, 2 slow");

        manager.evictNow();
        // The slow tier (50 blocks) evicts toward 37 first: 13 blocks, counted by entry length, so
        // the straddling entry (8, of which 2 are slow) and one more; then the fast tier (56 blocks
        // left) demotes down to 31: 4 entries (32 blocks), into the slow tier.
        final CacheManagerStats stats = manager.stats();
        assertEquals(2, stats.tier(1).evictions());
        assertEquals(0, stats.tier(0).evictions(), "the fast tier never drops what the next tier can take");
        assertEquals(4, stats.tier(0).demotions());
        assertEquals(24, cache.tierUsedBlocks(0));
        assertEquals(72, cache.tierUsedBlocks(1));
        assertEquals(List.of(1, 1, 1, 1, 0, 0, 0), tiers(store, "old"));
        assertEquals(List.of(-1, 1, 1, 1, 1, 1), tiers(store, "new"), "the two evicted entries coalesced into one placeholder");
        int cached = 0;
        for (final String name : List.of("old", "new")) {
            for (final int tier : tiers(store, name)) {
                cached += tier >= 0 ? 1 : 0;
            }
        }
        assertEquals(12, cached, "14 entries, 2 evicted");
        // What is cached reads back right, whichever tier it is in.
        try (ReadResult result = store.read("new", 0, Integer.MAX_VALUE)) {
            assertArrayEquals(pattern(2, 0, result.length()), bytes(result));
        }
    }

    @Test
    void shouldDemoteEverythingSelectedWhenAskedForAZeroTarget() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache));
        final CacheManager manager = store.cacheManager();
        fill(store, "a", 1, 5);
        manager.advanceGeneration();
        manager.evictDownTo(0.0);
        assertEquals(repeat(1, 5), tiers(store, "a"), "the last tier had nothing old to evict; the fast tier moved all down");
        assertIntact(store, "a", 1, 5 * ENTRY);
        assertEquals(0, cache.tierUsedBlocks(0));
    }

    @Test
    void shouldMakeRoomThroughTheFullHandlerWhenEveryTierIsFull() {
        // No manager thread: only the full handler (on the appending thread, holding its
        // segment's lock) can make room. 62 + 62 blocks; the segments write 3x that.
        final BlockCache cache = closeLater(TestSegments.tieredCache(2, 2));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache));
        final CacheManager manager = store.cacheManager();
        for (int round = 0; round < 12; round++) {
            fill(store, "s" + round, round, 3);
            manager.advanceGeneration();
        }
        assertTrue(manager.stats().fullHandlerCalls() > 0);
        assertTrue(manager.stats().tier(1).evictions() > 0, "the last tier evicted: " + manager.stats());
        assertTrue(manager.stats().tier(0).demotions() > 0, "the fast tier demoted: " + manager.stats());
        assertEquals(repeat(0, 3), tiers(store, "s11"), "the newest segment is in the fast tier");
        assertIntact(store, "s11", 11, 3 * ENTRY);
        for (int round = 0; round < 12; round++) {
            try (ReadResult result = store.read("s" + round, 0, Integer.MAX_VALUE)) {
                assertArrayEquals(pattern(round, 0, result.length()), bytes(result), "s" + round);
            }
        }
    }

    @Test
    void shouldFillEvictedRangesIntoTheConfiguredTier() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = closeLater(SegmentStore.builder(cache).maxIndexEntryLength(ENTRY).fillTier(1)
            .cacheManager(TestSegments.manualManager(cache).tierTargetUtilization(1, 0.01)).build());
        fill(store, "a", 1, 2);
        store.cacheManager().advanceGeneration();
        store.cacheManager().evictDownTo(0.0);
        store.cacheManager().evictDownTo(0.0);
        assertEquals(List.of(-1), tiers(store, "a"), "evicted, as one placeholder");
        store.fill("a", 0, buffer(1, 0, 2 * ENTRY));
        assertEquals(List.of(1, 1), tiers(store, "a"), "historical bytes go to the slow tier");
        assertIntact(store, "a", 1, 2 * ENTRY);
        store.append("a", buffer(1, 2 * ENTRY, 10));
        assertEquals(List.of(1, 1, 0), tiers(store, "a"), "appends still start in the fast tier");
        assertThrows(CacheConfigurationException.class, () -> SegmentStore.builder(cache).fillTier(2)
            .cacheManager(TestSegments.manualManager(cache)).build());
        assertThrows(CacheConfigurationException.class, () -> SegmentStore.builder(cache).fillTier(-1)
            .cacheManager(TestSegments.manualManager(cache)).build());
    }

    // ------------------------------------------------------------------------------------------
    // Admission

    /**
     * Segments l0.. of one full entry (8 blocks) and, a generation later, s0.. of one small
     * entry (300 bytes, 2 blocks).
     */
    private static void smallAndLarge(final SegmentStore store, final int small, final int large) {
        for (int i = 0; i < large; i++) {
            store.create("l" + i);
            store.append("l" + i, buffer(200 + i, 0, ENTRY));
        }
        store.cacheManager().advanceGeneration();
        for (int i = 0; i < small; i++) {
            store.create("s" + i);
            store.append("s" + i, buffer(100 + i, 0, 300));
        }
    }

    @Test
    void shouldDemoteOnlyEntriesUnderTheSizeThresholdAndEvictTheOthers() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).admission(TierAdmission.sizeThreshold(1000)));
        final CacheManager manager = store.cacheManager();
        smallAndLarge(store, 5, 5);
        manager.advanceGeneration();
        manager.evictDownTo(0.0);
        for (int i = 0; i < 5; i++) {
            assertEquals(List.of(1), tiers(store, "s" + i), "small entries are admitted");
            assertIntact(store, "s" + i, 100 + i, 300);
            assertEquals(List.of(-1), tiers(store, "l" + i), "large entries are evicted");
        }
        final CacheManagerStats stats = manager.stats();
        assertEquals(5, stats.tier(0).demotions());
        assertEquals(5, stats.tier(0).admissionRejections());
        assertEquals(5, stats.tier(0).evictions());
        assertEquals(1000, stats.admissionThreshold());
    }

    @Test
    void shouldComputeTheAutomaticThresholdSoThatTheTiersFillExactly() {
        // Fast 2 + slow 2 buffers: 124 blocks, 110 at targets of 0.9 (55 + 55).
        final BlockCache cache = closeLater(TestSegments.tieredCache(2, 2));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).targetUtilization(0.9)
            .admission(TierAdmission.auto()));
        final CacheManager manager = store.cacheManager();
        // 12 large (96 blocks), older, + 10 small (20 blocks) = 116 blocks: not everything fits in 110.
        smallAndLarge(store, 10, 12);
        manager.advanceGeneration();
        manager.evictNow();
        final int threshold = manager.stats().admissionThreshold();
        assertTrue(threshold >= 300 && threshold < ENTRY, "the small entries fit, the large ones do not: " + threshold);
        assertEquals(SizeHistogram.upperBound(SizeHistogram.bucket(300)), threshold);
        for (int i = 0; i < 10; i++) {
            assertTrue(tiers(store, "s" + i).get(0) >= 0, "small entries stay cached");
        }
        final CacheManagerStats stats = manager.stats();
        assertTrue(stats.tier(0).admissionRejections() > 0, "the (older) large entries leaving the fast tier are refused");
        assertEquals(0, stats.tier(0).demotions());
        assertEquals(stats.tier(0).admissionRejections(), stats.tier(0).evictions());

        // With room for everything, everything is admitted.
        final BlockCache roomy = closeLater(TestSegments.tieredCache(2, 8));
        final SegmentStore roomyStore = store(roomy, TestSegments.manualManager(roomy).targetUtilization(0.9)
            .admission(TierAdmission.auto()));
        smallAndLarge(roomyStore, 10, 12);
        roomyStore.cacheManager().advanceGeneration();
        roomyStore.cacheManager().evictDownTo(0.5);
        assertEquals(Integer.MAX_VALUE, roomyStore.cacheManager().stats().admissionThreshold());
        assertEquals(0, roomyStore.cacheManager().stats().tier(0).admissionRejections());
        assertTrue(roomyStore.cacheManager().stats().tier(0).demotions() > 0);
    }

    @Test
    void shouldBucketSizesFourToAPowerOfTwo() {
        assertEquals(0, SizeHistogram.bucket(0));
        assertEquals(3, SizeHistogram.upperBound(SizeHistogram.bucket(3)));
        for (final int length : new int[] {4, 5, 7, 8, 9, 10, 255, 256, 300, 4095, 4096, 1 << 20, Integer.MAX_VALUE}) {
            final int bucket = SizeHistogram.bucket(length);
            assertTrue(bucket < SizeHistogram.BUCKETS, "length " + length);
            assertTrue(SizeHistogram.upperBound(bucket) >= length, "length " + length);
            assertTrue(bucket == 0 || SizeHistogram.upperBound(bucket - 1) < length, "length " + length);
        }
        final SizeHistogram histogram = new SizeHistogram();
        histogram.add(100, 1);
        histogram.add(100, 1);
        histogram.add(5000, 20);
        assertEquals(Integer.MAX_VALUE, histogram.threshold(22));
        assertEquals(SizeHistogram.upperBound(SizeHistogram.bucket(100)), histogram.threshold(21));
        assertEquals(-1, histogram.threshold(1));
    }

    // ------------------------------------------------------------------------------------------
    // Promotion

    private SegmentStore demotedStore(final BlockCache cache, final Duration interval) {
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).promotion(2, interval));
        fill(store, "a", 1, 3);
        store.cacheManager().advanceGeneration();
        store.cacheManager().evictDownTo(0.0);
        assertEquals(repeat(1, 3), tiers(store, "a"));
        return store;
    }

    private static void readFirstEntry(final SegmentStore store) {
        try (ReadResult result = store.read("a", 0, 100)) {
            assertArrayEquals(pattern(1, 0, 100), bytes(result));
        }
    }

    @Test
    void shouldPromoteAnEntryReadOftenFromTheSlowTier() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = demotedStore(cache, Duration.ofHours(1));
        final CacheManager manager = store.cacheManager();
        readFirstEntry(store);
        assertEquals(0, manager.stats().promotionRequests(), "one read is not enough");
        readFirstEntry(store);
        assertEquals(1, manager.stats().promotionRequests());
        assertEquals(repeat(1, 3), tiers(store, "a"), "promotion is asynchronous");
        assertEquals(1, manager.promoteNow());
        assertEquals(List.of(0, 1, 1), tiers(store, "a"));
        assertIntact(store, "a", 1, 3 * ENTRY);
        assertEquals(1, manager.stats().tier(0).promotions());
        assertEquals(1, cache.stats().tier(0).promotions());
        assertTrue(cache.stats().tier(1).hits() >= 2, "the slow tier counted its hits");
    }

    @Test
    void shouldNotRequestAPromotionOfOneEntryTwiceWithinTheInterval() throws InterruptedException {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = demotedStore(cache, Duration.ofHours(1));
        final CacheManager manager = store.cacheManager();
        readFirstEntry(store);
        readFirstEntry(store);
        assertEquals(1, manager.promoteNow());
        manager.advanceGeneration();
        manager.evictDownTo(0.0);
        assertEquals(1, tiers(store, "a").get(0), "demoted again (the others, already in the last tier, were evicted)");
        for (int i = 0; i < 10; i++) {
            readFirstEntry(store);
        }
        assertEquals(1, manager.stats().promotionRequests(), "throttled: one request per interval");
        assertEquals(0, manager.promoteNow());

        // With a short interval, the entry may be requested again once the interval has passed.
        final BlockCache other = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore quick = demotedStore(other, Duration.ofMillis(5));
        readFirstEntry(quick);
        readFirstEntry(quick);
        assertEquals(1, quick.cacheManager().promoteNow());
        quick.cacheManager().advanceGeneration();
        quick.cacheManager().evictDownTo(0.0);
        Thread.sleep(50);
        readFirstEntry(quick);
        readFirstEntry(quick);
        assertEquals(2, quick.cacheManager().stats().promotionRequests());
        assertEquals(1, quick.cacheManager().promoteNow());
    }

    @Test
    void shouldSkipAPromotionOfAPinnedEntryOrWithoutRoom() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = demotedStore(cache, Duration.ofHours(1));
        final CacheManager manager = store.cacheManager();
        readFirstEntry(store);
        try (ReadResult held = store.read("a", 0, 100)) {
            assertEquals(0, manager.promoteNow(), "a reader holds a view of the entry: it must not move");
            assertArrayEquals(pattern(1, 0, 100), bytes(held));
        }
        assertEquals(1, manager.stats().promotionSkips());
        assertEquals(repeat(1, 3), tiers(store, "a"));

        // Fill the fast tier past its target: no room, no promotion.
        final BlockCache full = closeLater(TestSegments.tieredCache(1, 16));
        final SegmentStore fullStore = demotedStore(full, Duration.ofMillis(1));
        fill(fullStore, "hot", 9, 4);
        assertTrue(full.tierUsedBlocks(0) > 0.85 * full.tierBlocks(0));
        try (ReadResult r = fullStore.read("a", 0, 10)) {
            assertEquals(10, r.length());
        }
        try (ReadResult r = fullStore.read("a", 0, 10)) {
            assertEquals(10, r.length());
        }
        assertEquals(1, fullStore.cacheManager().stats().promotionRequests());
        assertEquals(0, fullStore.cacheManager().promoteNow());
        assertEquals(repeat(1, 3), tiers(fullStore, "a"));
    }

    @Test
    void shouldSkipAQueuedPromotionOfAnEntryTruncatedOrDeletedMeanwhile() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = demotedStore(cache, Duration.ofHours(1));
        final CacheManager manager = store.cacheManager();
        readFirstEntry(store);
        readFirstEntry(store);
        assertEquals(1, manager.stats().promotionRequests());
        store.truncate("a", ENTRY);
        assertEquals(0, manager.promoteNow(), "the queued entry left the index");
        assertEquals(1, manager.stats().promotionSkips());
        assertEquals(repeat(1, 2), tiers(store, "a"));
        assertEquals(2 * 8, cache.stats().usedBlockCount(), "the truncated entry's blocks were freed, once");

        try (ReadResult result = store.read("a", ENTRY, 10)) {
            assertEquals(10, result.length());
        }
        try (ReadResult result = store.read("a", ENTRY, 10)) {
            assertEquals(10, result.length());
        }
        assertEquals(2, manager.stats().promotionRequests());
        store.delete("a");
        assertEquals(0, manager.promoteNow(), "the segment is gone");
        assertEquals(0, cache.stats().usedBlockCount());
    }

    @Test
    void shouldCascadeDemotionsDownThreeTiers() {
        final BlockCache cache = closeLater(BlockCache.builder()
            .tier("t0", 2L * TestSegments.BUFFER_LENGTH, io.streamcache.core.memory.DirectMemoryRegion.factory())
            .tier("t1", 2L * TestSegments.BUFFER_LENGTH, io.streamcache.core.memory.DirectMemoryRegion.factory())
            .tier("t2", 8L * TestSegments.BUFFER_LENGTH, io.streamcache.core.memory.DirectMemoryRegion.factory())
            .blockLength(TestSegments.BLOCK_LENGTH).bufferLength(TestSegments.BUFFER_LENGTH)
            .fullRetryTimeout(Duration.ofMillis(200)).registerMBean(false).build());
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).targetUtilization(0.5));
        final CacheManager manager = store.cacheManager();
        fill(store, "old", 1, 3);
        manager.advanceGeneration();
        fill(store, "mid", 2, 3);
        manager.advanceGeneration();
        assertEquals(48, cache.tierUsedBlocks(0));
        manager.evictNow();
        // Tier 0 (62 blocks, target 31) demoted the 3 old entries into tier 1.
        assertEquals(repeat(1, 3), tiers(store, "old"));
        assertEquals(repeat(0, 3), tiers(store, "mid"));
        fill(store, "new", 3, 3);
        manager.advanceGeneration();
        manager.evictNow();
        // Tier 1 was at 24 of 62; now tier 0 pushes mid down, and tier 1 is over its target: the
        // next pass moves old on to tier 2 before tier 0 demotes again.
        manager.evictNow();
        assertEquals(repeat(2, 3), tiers(store, "old"));
        assertEquals(repeat(1, 3), tiers(store, "mid"));
        assertEquals(repeat(0, 3), tiers(store, "new"));
        assertIntact(store, "old", 1, 3 * ENTRY);
        assertIntact(store, "mid", 2, 3 * ENTRY);
        assertEquals(0, manager.stats().evictions(), "nothing dropped: the last tier has room");
        assertEquals(3, manager.stats().tier(1).demotions());
    }

    @Test
    void shouldPromoteOnTheManagersThread() throws InterruptedException {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        // A short promotion interval: the read queues its request while it still holds the
        // segment's lock and then its pin, and the manager's thread, woken at once, may find the
        // entry locked or pinned and skip it (promotion never waits); a later read queues it again.
        final SegmentStore store = store(cache, CacheManager.builder(cache).registerMBean(false)
            .generationPeriod(Duration.ofHours(1)).promotion(1, Duration.ofMillis(1)));
        fill(store, "a", 1, 3);
        store.cacheManager().advanceGeneration();
        store.cacheManager().evictDownTo(0.0);
        final long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        do {
            readFirstEntry(store);
            Thread.sleep(5);
        } while (tiers(store, "a").get(0) != 0 && System.nanoTime() < deadline);
        assertEquals(List.of(0, 1, 1), tiers(store, "a"), "the manager's thread drained the request: " + store.cacheManager().stats());
        assertEquals(1, store.cacheManager().stats().tier(0).promotions(), "promoted once, by the manager's thread");
        assertIntact(store, "a", 1, 3 * ENTRY);
    }

    // ------------------------------------------------------------------------------------------
    // Configuration and JMX

    @Test
    void shouldRejectBadTierSettings() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(2, 2));
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).tierTargetUtilization(2, 0.5).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).tierTargetUtilization(-1, 0.5).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).tierTargetUtilization(0, 0.0).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).tierTargetUtilization(1, 1.5).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).promotion(128, Duration.ofSeconds(1)).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).promotion(-1, Duration.ofSeconds(1)).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).promotion(2, Duration.ZERO).build());
        assertThrows(CacheConfigurationException.class, () -> TestSegments.manualManager(cache).promotionQueueCapacity(1).build());
        assertThrows(IllegalArgumentException.class, () -> TierAdmission.sizeThreshold(-1));
        final CacheManager manager = closeLater(TestSegments.manualManager(cache).tierTargetUtilization(1, 0.7).build());
        assertEquals(0.85, manager.tierTargetUtilization(0));
        assertEquals(0.7, manager.tierTargetUtilization(1));
    }

    @Test
    void shouldPublishPerTierCountersInTheMBean() throws Exception {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final String name = "tiered-manager-" + System.nanoTime();
        final SegmentStore store = store(cache, CacheManager.builder(cache).name(name).generationPeriod(Duration.ZERO)
            .admission(TierAdmission.sizeThreshold(5000)));
        fill(store, "a", 1, 2);
        store.cacheManager().advanceGeneration();
        store.cacheManager().evictDownTo(0.0);
        final CacheManagerMXBean proxy = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
            new ObjectName("io.streamcache:type=CacheManager,name=" + ObjectName.quote(name)), CacheManagerMXBean.class);
        assertArrayEquals(new long[] {2, 0}, proxy.getTierDemotions());
        assertArrayEquals(new long[] {0, 0}, proxy.getTierEvictions());
        assertArrayEquals(new long[] {0, 0}, proxy.getTierPromotions());
        assertArrayEquals(new long[] {0, 0}, proxy.getTierAdmissionRejections());
        assertArrayEquals(new double[] {0.85, 0.85}, proxy.getTierTargetUtilizations());
        assertEquals(5000, proxy.getAdmissionThreshold());
        final CacheManagerStats stats = store.cacheManager().stats();
        assertEquals(stats.promotionRequests(), proxy.getPromotionRequests());
        assertEquals(stats.promotionDrops(), proxy.getPromotionDrops());
        assertEquals(stats.promotionSkips(), proxy.getPromotionSkips());
    }
}
