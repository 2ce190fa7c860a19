package io.streamcache.segmentstore;

import io.streamcache.core.CacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerMXBean;
import io.streamcache.segmentstore.eviction.ResizeStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.JMX;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

import static io.streamcache.segmentstore.TestSegments.BLOCK_LENGTH;
import static io.streamcache.segmentstore.TestSegments.BUFFER_LENGTH;
import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Resizing the cache under a segment store through its manager ({@code CacheManager.resizeTier}):
 * a shrink moves every entry out of the buffers it gives back (same tier, slower tier, or
 * eviction of durable data), waits for pinned entries, and the store keeps answering every read
 * with the bytes appended, under appenders, readers and the manager's passes at once.
 *
 * <p>{@code -Dstreamcache.resize.rounds=N} runs a longer contention variant (default 30 resizes).
 */
class ResizingSegmentStoreTest {
    private static final int ROUNDS = Integer.getInteger("streamcache.resize.rounds", 30);

    private static BlockCache cache(final int buffers, final int maxBuffers) {
        return BlockCache.builder().blockLength(BLOCK_LENGTH).bufferLength(BUFFER_LENGTH).capacity((long)buffers * BUFFER_LENGTH)
            .maxCapacity((long)maxBuffers * BUFFER_LENGTH).fullRetryTimeout(Duration.ofSeconds(2)).registerMBean(false).build();
    }

    private static void checkReads(final SegmentStore store, final String name, final long seed, final long length,
                                   final boolean allCached) {
        for (long offset = 0; offset < length; offset += 1000) {
            final int want = (int)Math.min(1000, length - offset);
            try (ReadResult result = store.read(name, offset, want)) {
                final byte[] got = bytes(result);
                assertArrayEquals(pattern(seed, offset, got.length), got, name + " at " + offset);
                if (allCached) {
                    assertEquals(want, got.length, name + " at " + offset + ": " + result.status());
                }
            }
        }
    }

    @Test
    void aShrinkWithRoomMovesEveryEntryAndDropsNothing() {
        try (BlockCache cache = cache(16, 16);
             SegmentStore store = TestSegments.store(cache, 1000)) {
            final CacheManager manager = store.cacheManager();
            for (int s = 0; s < 4; s++) {
                store.create("s" + s);
            }
            // About 6 buffers of data spread over the 16 (appends interleaved between segments).
            final int pieces = 6 * 31 * BLOCK_LENGTH / 400;
            final long[] lengths = new long[4];
            for (int i = 0; i < pieces; i++) {
                final int s = i % 4;
                store.append("s" + s, buffer(s, lengths[s], 400));
                lengths[s] += 400;
            }
            final long used = cache.stats().usedBlockCount();
            assertEquals(8L * BUFFER_LENGTH, manager.resizeTier(0, 8L * BUFFER_LENGTH, Duration.ofSeconds(10)));
            assertEquals(8L * BUFFER_LENGTH, cache.capacity());
            assertEquals(used, cache.stats().usedBlockCount(), "every entry moved, none dropped");
            final ResizeStats stats = manager.resizeStats();
            assertEquals(1, stats.shrinks());
            assertEquals(8, stats.releasedBuffers());
            assertEquals(0, stats.evictedEntries());
            for (int s = 0; s < 4; s++) {
                checkReads(store, "s" + s, s, lengths[s], true);
            }
            assertEquals(16L * BUFFER_LENGTH, manager.resizeTier(0, 16L * BUFFER_LENGTH));
            assertEquals(1, manager.resizeStats().grows());
        }
    }

    @Test
    void aShrinkWithoutRoomEvictsDurableEntriesAsEvictionDoes() {
        try (BlockCache cache = cache(8, 8);
             SegmentStore store = TestSegments.store(cache, 1000)) {
            store.create("s");
            long length = 0;
            while (cache.stats().utilization() < 0.7) {
                store.append("s", buffer(7, length, 500));
                length += 500;
            }
            final long after = store.cacheManager().resizeTier(0, 2L * BUFFER_LENGTH, Duration.ofSeconds(10));
            assertEquals(2L * BUFFER_LENGTH, after);
            assertTrue(store.cacheManager().resizeStats().evictedEntries() > 0);
            assertTrue(cache.stats().usedBlockCount() <= 2 * 31);
            checkReads(store, "s", 7, length, false);
        }
    }

    @Test
    void notYetDurableEntriesAreMovedButNeverDropped() {
        try (BlockCache cache = cache(8, 8);
             SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(1000).appendsDurable(false)
                 .cacheManager(TestSegments.manualManager(cache)).build()) {
            final CacheManager manager = store.cacheManager();
            store.create("s");
            long length = 0;
            while (cache.stats().utilization() < 0.7) {
                store.append("s", buffer(9, length, 500));
                length += 500;
            }
            final long used = cache.stats().usedBlockCount();
            // 70 % of 8 buffers cannot fit in 2: only moves are allowed, so the shrink stops short.
            final long stopped = manager.resizeTier(0, 2L * BUFFER_LENGTH, Duration.ofMillis(100));
            assertTrue(stopped > 2L * BUFFER_LENGTH && stopped < 8L * BUFFER_LENGTH, "stopped at " + stopped);
            assertEquals(0, manager.resizeStats().evictedEntries());
            assertEquals(1, manager.resizeStats().partialShrinks());
            assertEquals(used, cache.stats().usedBlockCount(), "nothing dropped");
            checkReads(store, "s", 9, length, true);
            // Once durable, the rest may be evicted: the shrink completes.
            store.markDurable("s", length);
            assertEquals(2L * BUFFER_LENGTH, manager.resizeTier(0, 2L * BUFFER_LENGTH, Duration.ofSeconds(10)));
            assertTrue(manager.resizeStats().evictedEntries() > 0);
            checkReads(store, "s", 9, length, false);
        }
    }

    @Test
    void aPinnedEntryHoldsItsBufferUntilReleased() {
        try (BlockCache cache = cache(4, 4);
             SegmentStore store = TestSegments.store(cache, 1000)) {
            final CacheManager manager = store.cacheManager();
            store.create("s");
            long length = 0;
            // Fill every buffer, so whichever buffers drain hold entries.
            while (cache.stats().utilization() < 0.9) {
                store.append("s", buffer(3, length, 600));
                length += 600;
            }
            final List<ReadResult> pins = new ArrayList<>();
            for (long offset = 0; offset < length; offset += 600) {
                pins.add(store.read("s", offset, 600));
            }
            final long stopped = manager.resizeTier(0, BUFFER_LENGTH, Duration.ofMillis(50));
            assertEquals(4L * BUFFER_LENGTH, stopped, "every buffer holds a pinned entry: nothing can go");
            assertEquals(1, manager.resizeStats().partialShrinks());
            for (int i = 0; i < pins.size(); i++) {
                assertArrayEquals(pattern(3, i * 600L, 600), bytes(pins.get(i)), "a pinned read's views keep their bytes");
                pins.get(i).release();
            }
            assertEquals(BUFFER_LENGTH, manager.resizeTier(0, BUFFER_LENGTH, Duration.ofSeconds(10)));
            checkReads(store, "s", 3, length, false);
        }
    }

    @Test
    void aShrinkOfTheFastTierDemotesIntoTheSlowOne() {
        try (BlockCache cache = BlockCache.builder().blockLength(BLOCK_LENGTH).bufferLength(BUFFER_LENGTH).registerMBean(false)
            .tier("fast", 4L * BUFFER_LENGTH, 4L * BUFFER_LENGTH, DirectMemoryRegion.factory())
            .tier("slow", 8L * BUFFER_LENGTH, DirectMemoryRegion.factory()).build();
             SegmentStore store = TestSegments.store(cache, 1000)) {
            store.create("s");
            long length = 0;
            while (cache.tierUsedBlocks(0) < 3 * 31) {
                store.append("s", buffer(5, length, 300));
                length += 300;
            }
            final long used = cache.stats().usedBlockCount();
            assertEquals(BUFFER_LENGTH, store.cacheManager().resizeTier(0, BUFFER_LENGTH, Duration.ofSeconds(10)));
            assertTrue(cache.tierUsedBlocks(1) > 0, "demoted into the slow tier");
            assertEquals(used, cache.stats().usedBlockCount(), "the slow tier had room: nothing evicted");
            assertThrows(UnsupportedOperationException.class, () -> store.cacheManager().resizeTier(1, BUFFER_LENGTH));
            checkReads(store, "s", 5, length, true);
        }
    }

    @Test
    void theManagersMBeanResizes() throws Exception {
        try (BlockCache cache = cache(4, 8);
             SegmentStore store = SegmentStore.builder(cache)
                 .cacheManager(CacheManager.builder(cache).generationPeriod(Duration.ZERO).name("resize-mbean")).build()) {
            final CacheManagerMXBean bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
                new ObjectName("io.streamcache:type=CacheManager,name=\"resize-mbean\""), CacheManagerMXBean.class);
            assertArrayEquals(new long[] {8L * BUFFER_LENGTH}, bean.getTierMaxCapacities());
            assertEquals(8L * BUFFER_LENGTH, bean.resizeTier(0, 8L * BUFFER_LENGTH));
            assertEquals(2L * BUFFER_LENGTH, bean.resizeTier(0, 2L * BUFFER_LENGTH));
            assertArrayEquals(new long[] {2L * BUFFER_LENGTH}, bean.getTierCapacities());
            assertEquals(1, bean.getResizeGrows());
            assertEquals(1, bean.getResizeShrinks());
            store.create("s");
            store.append("s", buffer(1, 0, 100));
        }
    }

    /**
     * Appenders, readers (some holding their results a moment, pinning entries) and the
     * manager's thread run while the test thread resizes the tier between random sizes. Every
     * read returns the bytes appended (a prefix stopping at NOT_CACHED at most: eviction and
     * shrinks drop durable data); every shrink that returns reached its target (pins are short).
     */
    @Test
    @Timeout(180)
    void resizesUnderAppendsAndReadsKeepEveryByte() throws Exception {
        final int segments = 6;
        try (BlockCache cache = cache(16, 24);
             SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(1000)
                 .cacheManager(CacheManager.builder(cache).generationPeriod(Duration.ofMillis(2)).registerMBean(false)
                     .targetUtilization(0.8)).build()) {
            final AtomicLongArray lengths = new AtomicLongArray(segments);
            for (int s = 0; s < segments; s++) {
                store.create("s" + s);
            }
            final AtomicBoolean stop = new AtomicBoolean();
            // The resizes start once every task has done some work: on a loaded machine the
            // rounds could otherwise all finish before a thread ran (the test took 20 ms once).
            final CountDownLatch working = new CountDownLatch(4);
            final ExecutorService pool = Executors.newFixedThreadPool(4);
            final List<Future<Long>> tasks = new ArrayList<>();
            for (int a = 0; a < 2; a++) {
                final int first = a;
                tasks.add(pool.submit(() -> {
                    final Random random = new Random(first);
                    long appends = 0;
                    while (!stop.get()) {
                        final int s = first + 2 * random.nextInt(segments / 2);
                        final int n = 1 + random.nextInt(700);
                        try {
                            store.append("s" + s, buffer(s, lengths.get(s), n));
                            lengths.addAndGet(s, n);
                            if (appends++ == 0) {
                                working.countDown();
                            }
                        } catch (final CacheException e) {
                            // a full cache while pinned: all or nothing
                        }
                    }
                    return appends;
                }));
            }
            for (int r = 0; r < 2; r++) {
                final int seed = 100 + r;
                tasks.add(pool.submit(() -> {
                    final Random random = new Random(seed);
                    long reads = 0;
                    final List<ReadResult> held = new ArrayList<>();
                    while (!stop.get()) {
                        final int s = random.nextInt(segments);
                        final long length = lengths.get(s);
                        if (length == 0) {
                            continue;
                        }
                        final long offset = (long)(random.nextDouble() * length);
                        final ReadResult result = store.read("s" + s, offset, 1 + random.nextInt(3000));
                        final byte[] got = bytes(result);
                        assertArrayEquals(pattern(s, offset, got.length), got, "s" + s + " at " + offset);
                        if (reads++ == 0) {
                            working.countDown();
                        }
                        held.add(result);
                        if (held.size() > 3) {
                            held.remove(0).release();
                        }
                    }
                    held.forEach(ReadResult::release);
                    return reads;
                }));
            }
            final Random random = new Random(42);
            try {
                assertTrue(working.await(60, TimeUnit.SECONDS), "the appenders and readers did not start");
                for (int round = 0; round < ROUNDS; round++) {
                    final long target = (long)(2 + random.nextInt(23)) * BUFFER_LENGTH;
                    final long after = store.cacheManager().resizeTier(0, target, Duration.ofSeconds(30));
                    assertEquals(target, after, "round " + round);
                    assertTrue(cache.capacity() <= 24L * BUFFER_LENGTH);
                }
            } finally {
                stop.set(true);
                pool.shutdown();
                assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
            }
            for (final Future<Long> task : tasks) {
                assertTrue(task.get() > 0);
            }
            for (int s = 0; s < segments; s++) {
                checkReads(store, "s" + s, s, lengths.get(s), false);
            }
            final ResizeStats stats = store.cacheManager().resizeStats();
            assertEquals(0, stats.partialShrinks(), stats.toString());
            assertTrue(stats.shrinks() > 0 && stats.grows() > 0, stats.toString());
        }
    }
}
