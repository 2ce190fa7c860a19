package io.streamcache.segmentstore.eviction;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CacheManagerStats#evictionsByReason()}: each reason's counter moves when, and only when,
 * entries leave for that reason (to the target, cache full, demotion, resize, truncate or
 * delete), and the MBean's attributes read the same counters.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EvictionReasonsTest {
    private static final int ENTRY = 1000;
    private static final int BLOCK_LENGTH = 256;
    private static final int BUFFER_LENGTH = 8 * 1024;

    private final List<AutoCloseable> closing = new ArrayList<>();

    private <T extends AutoCloseable> T closeLater(final T closeable) {
        closing.add(0, closeable);
        return closeable;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (final AutoCloseable closeable : closing) {
            closeable.close();
        }
    }

    private static void append(final SegmentStore store, final String name, final int entries) {
        for (int i = 0; i < entries; i++) {
            store.append(name, buffer(name.hashCode(), store.info(name).length(), ENTRY));
            store.cacheManager().advanceGeneration();
        }
    }

    @Test
    void shouldCountEvictionsWhenFullToTargetAndByTruncateOrDelete() {
        // 2 buffers of 31 blocks: 15 entries of 4 blocks fit.
        final BlockCache cache = closeLater(TestSegments.cache(2 * BUFFER_LENGTH));
        final SegmentStore store = closeLater(TestSegments.store(cache, ENTRY));
        final CacheManager manager = store.cacheManager();
        store.create("a");
        assertEquals(new EvictionReasons(0, 0, 0, 0, 0), manager.stats().evictionsByReason());

        append(store, "a", 20);
        EvictionReasons reasons = manager.stats().evictionsByReason();
        assertTrue(reasons.cacheFull() >= 5, "appends past the capacity: full-cache passes evicted: " + reasons);
        assertEquals(0, reasons.toTarget(), reasons.toString());
        assertEquals(manager.stats().evictions(), reasons.cacheFull() + reasons.toTarget());

        final long full = reasons.cacheFull();
        store.truncate("a", store.info("a").length() - 2 * ENTRY);
        reasons = manager.stats().evictionsByReason();
        assertTrue(reasons.truncatedOrDeleted() > 0, "cached entries truncated away: " + reasons);
        assertEquals(full, reasons.cacheFull());

        final long truncated = reasons.truncatedOrDeleted();
        assertTrue(manager.evictDownTo(0.0) > 0);
        reasons = manager.stats().evictionsByReason();
        assertTrue(reasons.toTarget() > 0, "a pass down to a target: " + reasons);
        assertEquals(full, reasons.cacheFull());
        assertEquals(truncated, reasons.truncatedOrDeleted());
        assertEquals(0, reasons.demoted());
        assertEquals(0, reasons.resized());

        store.create("b");
        append(store, "b", 3);
        store.delete("b");
        reasons = manager.stats().evictionsByReason();
        assertEquals(truncated + 3, reasons.truncatedOrDeleted(), "b's 3 cached entries deleted: " + reasons);

        final CacheManagerMXBean bean = new ManagerMXBean(manager, null, null, null, null);
        assertEquals(reasons.toTarget(), bean.getEvictionsToTarget());
        assertEquals(reasons.cacheFull(), bean.getEvictionsCacheFull());
        assertEquals(reasons.truncatedOrDeleted(), bean.getEvictionsTruncatedOrDeleted());
        assertEquals(0, bean.getEvictionsDemoted());
        assertEquals(0, bean.getEvictionsResized());
    }

    @Test
    void shouldCountDemotions() {
        final BlockCache cache = closeLater(TestSegments.tieredCache(4, 16));
        final SegmentStore store = closeLater(SegmentStore.builder(cache).maxIndexEntryLength(ENTRY)
            .cacheManager(TestSegments.manualManager(cache).tierTargetUtilization(0, 0.5)).build());
        final CacheManager manager = store.cacheManager();
        store.create("a");
        append(store, "a", 20);
        assertEquals(0, manager.stats().evictionsByReason().demoted());
        manager.evictNow();
        final EvictionReasons reasons = manager.stats().evictionsByReason();
        assertTrue(reasons.demoted() > 0, "the fast tier over its target: entries demoted: " + reasons);
        assertEquals(manager.stats().tier(0).demotions(), reasons.demoted());
        assertEquals(0, reasons.resized());
        assertEquals(0, reasons.truncatedOrDeleted());
    }

    @Test
    void shouldCountEntriesAShrinkMovesOrDrops() {
        final BlockCache cache = closeLater(BlockCache.builder().blockLength(BLOCK_LENGTH).bufferLength(BUFFER_LENGTH)
            .capacity(8L * BUFFER_LENGTH).maxCapacity(8L * BUFFER_LENGTH).fullRetryTimeout(Duration.ofSeconds(2))
            .registerMBean(false).build());
        final SegmentStore store = closeLater(TestSegments.store(cache, ENTRY));
        final CacheManager manager = store.cacheManager();
        store.create("a");
        append(store, "a", 40);
        assertEquals(0, manager.stats().evictionsByReason().resized());
        manager.resizeTier(0, 2L * BUFFER_LENGTH);
        final EvictionReasons reasons = manager.stats().evictionsByReason();
        final ResizeStats resize = manager.resizeStats();
        assertTrue(reasons.resized() > 0, "the shrink moved or dropped entries: " + reasons + " " + resize);
        assertEquals(resize.relocatedEntries() + resize.evictedEntries(), reasons.resized());
        assertEquals(0, reasons.truncatedOrDeleted());
    }
}
