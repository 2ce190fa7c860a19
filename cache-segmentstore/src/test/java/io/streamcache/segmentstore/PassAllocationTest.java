package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What one eviction pass allocates on a warmed store (issue 14: the cache manager's passes were
 * the garbage left beside a steady append that allocates nothing). A store without a log, the
 * default {@code GenerationPolicy}, 64 segments: between two passes the test appends about 5% of
 * the cache, one 1,000-byte entry per append spread over the segments, so that every pass evicts
 * (the pass advances the generation, so each one also files the segments appended since the
 * last under a new generation). The bytes this thread allocates inside {@code evictNow()} are
 * counted ({@code com.sun.management.ThreadMXBean}), summed over 400 passes after 400 of
 * warm-up, and must stay under a bound per pass.
 */
class PassAllocationTest {
    private static final int MAX_ENTRY = 1000;
    private static final int SEGMENTS = 64;

    @Test
    void shouldAllocateAlmostNothingPerPassOnAWarmedStore() {
        assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean, "HotSpot's ThreadMXBean");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        final long thread = Thread.currentThread().getId();
        try (BlockCache cache = TestSegments.cache(4 << 20); SegmentStore store = TestSegments.store(cache, MAX_ENTRY)) {
            final CacheManager manager = store.cacheManager();
            final String[] names = new String[SEGMENTS];
            for (int s = 0; s < SEGMENTS; s++) {
                names[s] = "segment-" + s;
                store.create(names[s]);
            }
            final ByteBuf data = buffer(1, 0, MAX_ENTRY);
            final int appendsPerPass = (int) (0.05 * (4 << 20) / MAX_ENTRY);
            int next = 0;
            long measured = 0;
            long passes = 0;
            final long evictionsBefore = manager.stats().evictions();
            long evictionsMeasured = 0;
            for (int round = 0; round < 800; round++) {
                for (int i = 0; i < appendsPerPass; i++) {
                    store.append(names[next++ % SEGMENTS], data);
                }
                final long evictions = round == 400 ? manager.stats().evictions() : 0;
                final long before = threads.getThreadAllocatedBytes(thread);
                manager.evictNow();
                final long allocated = threads.getThreadAllocatedBytes(thread) - before;
                if (round >= 400) {
                    if (round == 400) {
                        evictionsMeasured = evictions;
                    }
                    measured += allocated;
                    passes++;
                }
            }
            final long evicted = manager.stats().evictions() - evictionsMeasured;
            assertTrue(evicted > passes * appendsPerPass / 2, "the measured passes evicted: " + evicted + " entries in " + passes
                + " passes (" + (manager.stats().evictions() - evictionsBefore) + " in all)");
            final double perPass = (double) measured / passes;
            System.out.printf("PassAllocationTest: %d passes, %.1f B allocated per pass, %d entries evicted%n", passes, perPass, evicted);
            assertTrue(perPass < 32, "bytes allocated per pass: " + perPass);
        }
    }
}
