package io.streamcache.micrometer;

import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The binders on a real durable store: every meter is registered with its tags, and the values
 * move as a workload appends, reads from the cache, is evicted and reads through the log.
 */
@Timeout(60)
class StreamcacheMetricsTest {
    @TempDir
    Path directory;

    private static double counter(final MeterRegistry registry, final String name, final String... tags) {
        return registry.get("streamcache." + name).tags(tags).functionCounter().count();
    }

    private static double gauge(final MeterRegistry registry, final String name, final String... tags) {
        return registry.get("streamcache." + name).tags(tags).gauge().value();
    }

    @Test
    void shouldMoveWithTheWorkload() throws Exception {
        try (Workload work = new Workload(directory.resolve("log"), "metrics-store")) {
            final MeterRegistry registry = new SimpleMeterRegistry();
            new StreamcacheMetrics(work.store, Tags.of("broker", "test")).bindTo(registry);
            final String tier = work.cache.tierName(0);
            assertEquals(0, counter(registry, "log.requests", "outcome", "success"));
            assertEquals(0, gauge(registry, "cache.used", "tier", tier));
            assertEquals(0, gauge(registry, "store.health"));

            final int appends = 64;
            work.run(appends);

            // Writer and log.
            assertTrue(counter(registry, "log.requests", "outcome", "success", "store", "metrics-store", "broker", "test") >= appends + 1);
            assertEquals(0, counter(registry, "log.requests", "outcome", "failure"));
            assertTrue(counter(registry, "log.payload") >= (double) appends * Workload.APPEND);
            assertTrue(counter(registry, "log.written") >= counter(registry, "log.payload"));
            assertTrue(counter(registry, "log.batches") >= 1);
            final FunctionTimer forces = registry.get("streamcache.log.forces").functionTimer();
            assertTrue(forces.count() >= 1, "forces counted");
            assertTrue(forces.totalTime(TimeUnit.NANOSECONDS) > 0, "force time measured");
            assertTrue(gauge(registry, "log.files") >= 1);
            assertTrue(gauge(registry, "log.disk.used") >= 1 << 20);
            assertEquals(0, gauge(registry, "log.failed"));
            assertTrue(counter(registry, "compaction.passes") >= 1);
            // Cache and manager: the first reads hit tier 0, the eviction evicted to the target.
            assertTrue(counter(registry, "cache.hits", "tier", tier) >= appends);
            assertTrue(counter(registry, "manager.evictions", "reason", "to_target") >= 1);
            assertEquals(0, counter(registry, "manager.evictions", "reason", "cache_full"));
            assertTrue(counter(registry, "manager.evicted") >= Workload.APPEND);
            assertTrue(counter(registry, "manager.passes") >= 1);
            assertEquals(work.cache.capacity(), gauge(registry, "cache.capacity", "tier", tier));
            assertTrue(gauge(registry, "cache.used", "tier", tier) > 0, "the fills are cached");
            assertTrue(gauge(registry, "cache.entries", "tier", tier) >= 1);
            assertEquals(0, gauge(registry, "manager.pinned.results"), "every result released");
            // Reads through the log and their fills.
            assertTrue(counter(registry, "reads.log.loads") >= 1);
            assertTrue(counter(registry, "reads.log.read") >= (double) appends * Workload.APPEND);
            assertTrue(counter(registry, "isolation.fills", "outcome", "admitted") >= 1);
            assertTrue(counter(registry, "isolation.fill.admitted") >= Workload.APPEND);
            assertEquals(0, counter(registry, "isolation.fills", "outcome", "refused_budget"));
            assertEquals(work.store.readBudget().limit(), gauge(registry, "isolation.read.budget.limit"));
            assertEquals(0, registry.get("streamcache.isolation.append.room.waits").functionTimer().count());
            assertEquals(1, gauge(registry, "store.segments"));
            // Warm restart: not configured, every reason at 0.
            assertEquals(0, gauge(registry, "warm.restore.warm"));
            assertEquals(0, gauge(registry, "warm.restore.discarded", "reason", "DIGEST_MISMATCH"));
            // Health.
            assertEquals(0, gauge(registry, "store.health"));
            assertEquals(0, gauge(registry, "store.health.issue", "reason", "LOG_FAILED"));

            final double written = counter(registry, "log.written");
            final double hits = counter(registry, "cache.hits", "tier", tier);
            work.run(8);
            assertTrue(counter(registry, "log.written") > written, "counters follow the next workload");
            assertTrue(counter(registry, "cache.hits", "tier", tier) > hits);
        }
    }

    @Test
    @SuppressWarnings("try") // closes the store inside its try to see the health of a closed store
    void shouldReportHealthAsAGaugeAndEveryMeterTagged() throws Exception {
        try (BlockCache cache = BlockCache.builder().capacity(4L << 20).name("health-cache").registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).name("health-store")
                 .log(LogConfig.builder(directory.resolve("log")).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0)
                     .preWrite(false).registerMBeans(false).build())
                 .diskReserve(Long.MAX_VALUE).build()) {
            final MeterRegistry registry = new SimpleMeterRegistry();
            new StreamcacheMetrics(store).bindTo(registry);
            assertEquals(1, gauge(registry, "store.health"), "degraded: no file system has Long.MAX_VALUE bytes free");
            assertEquals(1, gauge(registry, "store.health.issue", "reason", "DISK_BELOW_RESERVE"));
            assertEquals(0, gauge(registry, "store.health.issue", "reason", "CACHE_FULL"));
            // No compaction configured: no compaction meters; every other meter is tagged with its owner.
            assertTrue(registry.find("streamcache.compaction.passes").meters().isEmpty());
            registry.getMeters().forEach(meter -> {
                final String name = meter.getId().getName();
                assertTrue(name.startsWith("streamcache."), name);
                final boolean owned = meter.getId().getTag("store") != null || meter.getId().getTag("cache") != null;
                assertTrue(owned, "tagged with its store or cache: " + meter.getId());
            });
            assertNotNull(registry.get("streamcache.manager.evictions").tags("reason", "truncated_or_deleted", "policy",
                store.cacheManager().policy().getClass().getSimpleName()).functionCounter());
            store.close();
            assertEquals(2, gauge(registry, "store.health"), "failed once closed");
        }
    }

    @Test
    void shouldBindAStoreWithoutALogAndStoresSharingACache() {
        try (BlockCache cache = BlockCache.builder().capacity(4L << 20).name("shared-cache").registerMBean(false).build()) {
            final io.streamcache.segmentstore.eviction.CacheManager manager =
                io.streamcache.segmentstore.eviction.CacheManager.builder(cache).registerMBean(false).build();
            try (SegmentStore a = SegmentStore.builder(cache).name("a").cacheManager(manager).build();
                 SegmentStore b = SegmentStore.builder(cache).name("b").cacheManager(manager).build()) {
                final MeterRegistry registry = new SimpleMeterRegistry();
                new BlockCacheMetrics(cache).bindTo(registry);
                new CacheManagerMetrics(manager).bindTo(registry);
                StreamcacheMetrics.storeOnly(a, Tags.empty()).bindTo(registry);
                StreamcacheMetrics.storeOnly(b, Tags.empty()).bindTo(registry);
                a.create("x");
                a.append("x", java.nio.ByteBuffer.wrap(new byte[1000]));
                assertEquals(1, gauge(registry, "store.segments", "store", "a"));
                assertEquals(0, gauge(registry, "store.segments", "store", "b"));
                assertEquals(1, registry.find("streamcache.cache.capacity").meters().size(), "the shared cache once");
                assertTrue(registry.find("streamcache.log.written").meters().isEmpty(), "no log, no log meters");
                assertTrue(gauge(registry, "cache.stored", "tier", cache.tierName(0)) >= 1000);
            } finally {
                manager.close();
            }
        }
    }
}
