package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerMXBean;
import io.streamcache.segmentstore.eviction.EntryPoolStats;
import org.junit.jupiter.api.Test;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The index-entry pool's counters as an operator sees them: in the cache manager's stats and,
 * through the platform MBean server, in its MBean, after a known sequence of appends, a
 * truncation and a deletion on a store (entries of exactly one index-entry length each).
 */
class EntryPoolStatsTest {
    private static final int MAX_ENTRY = 1000;

    @Test
    void shouldCountTheStoresEntriesInTheManagersStatsAndMBean() throws Exception {
        final String name = "entry-pool-" + System.nanoTime();
        try (BlockCache cache = TestSegments.cache(4 << 20);
             SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(MAX_ENTRY)
                 .cacheManager(CacheManager.builder(cache).name(name).generationPeriod(Duration.ZERO)).build()) {
            final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            final ObjectName objectName = new ObjectName("io.streamcache:type=CacheManager,name=" + ObjectName.quote(name));
            final CacheManagerMXBean bean = JMX.newMXBeanProxy(server, objectName, CacheManagerMXBean.class);
            assertEquals(new EntryPoolStats(0, 0, 0, 0, 0, 4096), store.cacheManager().stats().entryPool());

            store.create("a");
            for (int i = 0; i < 5; i++) {
                store.append("a", buffer(1, (long) i * MAX_ENTRY, MAX_ENTRY));
            }
            assertEquals(new EntryPoolStats(0, 5, 0, 0, 0, 4096), store.cacheManager().stats().entryPool(), "an empty pool makes 5");

            store.truncate("a", 2L * MAX_ENTRY);
            assertEquals(new EntryPoolStats(0, 5, 2, 0, 2, 4096), store.cacheManager().stats().entryPool(), "the truncation gives 2 back");
            store.delete("a");
            assertEquals(new EntryPoolStats(0, 5, 5, 0, 5, 4096), store.cacheManager().stats().entryPool(), "the deletion 3 more");

            store.create("b");
            for (int i = 0; i < 7; i++) {
                store.append("b", buffer(2, (long) i * MAX_ENTRY, MAX_ENTRY));
            }
            final EntryPoolStats stats = store.cacheManager().stats().entryPool();
            assertEquals(new EntryPoolStats(5, 7, 5, 0, 0, 4096), stats, "5 reused, then 2 made");

            assertEquals(5L, server.getAttribute(objectName, "EntryPoolTaken"));
            assertEquals(7L, server.getAttribute(objectName, "EntryPoolMade"));
            assertEquals(5L, server.getAttribute(objectName, "EntryPoolRecycled"));
            assertEquals(0L, server.getAttribute(objectName, "EntryPoolDropped"));
            assertEquals(0, server.getAttribute(objectName, "EntryPoolSize"));
            store.delete("b");
            assertEquals(12, bean.getEntryPoolRecycled(), "the proxy reads the counters now");
            assertEquals(7, bean.getEntryPoolSize());
        }
    }
}
