package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What one eviction pass allocates on a warmed store (the cache manager's passes were
 * the garbage left beside a steady append that allocates nothing). A store without a log, the
 * default {@code GenerationPolicy}, 64 segments: between two passes the test appends about 5% of
 * the cache, one 1,000-byte entry per append spread over the segments, so that every pass evicts
 * (the pass advances the generation, so each one also files the segments appended since the
 * last under a new generation). The bytes this thread allocates inside {@code evictNow()} are
 * counted ({@code com.sun.management.ThreadMXBean}), summed over 400 passes after 400 of
 * warm-up, and must stay under a bound per pass (32 bytes; 2,332 were measured before the pass's
 * lists became arrays and it stopped taking a {@code CacheStats} snapshot).
 */
class PassAllocationTest {
    private static final int MAX_ENTRY = 1000;
    private static final int SEGMENTS = 64;

    @Test
    void shouldAllocateAlmostNothingPerPassOnAWarmedStore() {
        try (BlockCache cache = TestSegments.cache(4 << 20)) {
            final double perPass = bytesPerPass(cache, TestSegments.manualManager(cache), "generations, one tier");
            assertTrue(perPass < 32, "bytes allocated per pass: " + perPass);
        }
    }

    /** The tiered pass (evict from the slow tier, demote from the fast one) under the same policy. */
    @Test
    void shouldAllocateAlmostNothingPerTieredPass() {
        try (BlockCache cache = TestSegments.tieredCache(256, 256)) {
            final double perPass = bytesPerPass(cache, TestSegments.manualManager(cache), "generations, two tiers");
            assertTrue(perPass < 32, "bytes allocated per tiered pass: " + perPass);
        }
    }

    /**
     * The reader-aware policy keeps one view of each segment it knows from pass to pass (its
     * readers' positions and speeds), refreshed in place; it made them anew every pass (~20 KB a
     * pass over these 64 segments). What is left is per pass, not per segment: the copy of the
     * re-read model's coverage it publishes to fill admission (208 doubles, 1.7 KB) and the
     * registry's iterators.
     */
    @Test
    void shouldReuseTheReaderAwarePolicysViews() {
        try (BlockCache cache = TestSegments.cache(4 << 20)) {
            final double perPass = bytesPerPass(cache, TestSegments.manualManager(cache).policy(new ReaderAwarePolicy()),
                "reader-aware, one tier");
            assertTrue(perPass < 4096, "bytes allocated per reader-aware pass: " + perPass);
        }
    }

    /**
     * @return bytes this thread allocated per {@code evictNow()} over 400 passes after 400 of warm-up,
     *         each after appends of ~5% of the cache spread over {@link #SEGMENTS} segments.
     */
    private static double bytesPerPass(final BlockCache cache, final CacheManager.Builder managerBuilder, final String label) {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "HotSpot's ThreadMXBean");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        final long thread = Thread.currentThread().getId();
        try (SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(MAX_ENTRY).cacheManager(managerBuilder).build()) {
            final CacheManager manager = store.cacheManager();
            final String[] names = new String[SEGMENTS];
            for (int s = 0; s < SEGMENTS; s++) {
                names[s] = "segment-" + s;
                store.create(names[s]);
            }
            final ByteBuf data = buffer(1, 0, MAX_ENTRY);
            final int appendsPerPass = (int) (0.05 * cache.capacity() / MAX_ENTRY);
            int next = 0;
            long measured = 0;
            long passes = 0;
            long evictionsBefore = 0;
            for (int round = 0; round < 800; round++) {
                for (int i = 0; i < appendsPerPass; i++) {
                    store.append(names[next++ % SEGMENTS], data);
                }
                if (round == 400) {
                    evictionsBefore = manager.stats().evictions() + manager.stats().tier(0).demotions();
                }
                final long before = threads.getThreadAllocatedBytes(thread);
                manager.evictNow();
                final long allocated = threads.getThreadAllocatedBytes(thread) - before;
                if (round >= 400) {
                    measured += allocated;
                    passes++;
                }
            }
            final long moved = manager.stats().evictions() + manager.stats().tier(0).demotions() - evictionsBefore;
            assertTrue(moved > passes * appendsPerPass / 2, label + ": the measured passes evicted or demoted: " + moved);
            final double perPass = (double) measured / passes;
            System.out.printf("PassAllocationTest (%s): %d passes, %.1f B allocated per pass, %d entries evicted or demoted%n",
                label, passes, perPass, moved);
            return perPass;
        }
    }
}
