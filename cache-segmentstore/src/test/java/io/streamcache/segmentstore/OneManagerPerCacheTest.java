package io.streamcache.segmentstore;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache has at most one cache manager: a second store built on a cache with its own default
 * manager used to fail with an MBean name clash naming a manager the user never created (and,
 * with MBeans off, silently replaced the first manager's full handler).
 */
class OneManagerPerCacheTest {

    @Test
    void shouldRefuseASecondStoreWithItsOwnManagerNamingTheWayOut() {
        try (BlockCache cache = BlockCache.builder().capacity(8L << 20).name("one-manager").build();
             SegmentStore first = SegmentStore.builder(cache).build()) {
            final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
                () -> SegmentStore.builder(cache).build());
            assertTrue(e.getMessage().contains("already has a cache manager"), e.getMessage());
            assertTrue(e.getMessage().contains("SegmentStore.Builder.cacheManager"), e.getMessage());
            // The first store and its manager are untouched.
            first.create("s");
            first.append("s", Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
            assertFalse(first.cacheManager().isClosed());
        }
    }

    @Test
    void shouldRefuseASecondManagerEvenWithoutMBeans() {
        try (BlockCache cache = BlockCache.builder().capacity(8L << 20).registerMBean(false).build();
             CacheManager manager = CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO).build()) {
            assertThrows(CacheConfigurationException.class,
                () -> CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO).build());
            assertFalse(manager.isClosed());
        }
    }

    @Test
    void shouldShareOneManagerBetweenStoresAndAllowANewOneAfterClose() {
        try (BlockCache cache = BlockCache.builder().capacity(8L << 20).registerMBean(false).build()) {
            try (CacheManager shared = CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO).build();
                 SegmentStore a = SegmentStore.builder(cache).name("a").cacheManager(shared).build();
                 SegmentStore b = SegmentStore.builder(cache).name("b").cacheManager(shared).build()) {
                assertSame(a.cacheManager(), b.cacheManager());
                a.create("x");
                b.create("x");
                assertEquals(0, a.append("x", Unpooled.wrappedBuffer(new byte[] {1})));
                assertEquals(0, b.append("x", Unpooled.wrappedBuffer(new byte[] {2})));
            }
            try (CacheManager again = CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO).build()) {
                assertFalse(again.isClosed());
            }
        }
    }
}
