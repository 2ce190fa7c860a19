package io.streamcache.segmentstore.eviction;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The threads the eviction package starts come from the {@link StreamcacheThreads} it is given. */
class ManagerThreadsTest {
    private final BlockCache cache = TestSegments.cache(4L * TestSegments.BUFFER_LENGTH);
    private final Recording threads = new Recording();

    @AfterEach
    void tearDown() {
        cache.close();
    }

    /** Records every thread it creates (the default threads make them), with its role and owner. */
    private static final class Recording implements StreamcacheThreads {
        record Created(Role role, String owner, Thread thread) {
        }

        final List<Created> created = new CopyOnWriteArrayList<>();

        @Override
        public Thread newThread(final Role role, final String owner, final Runnable task) {
            final Thread thread = StreamcacheThreads.defaults().newThread(role, owner, task);
            created.add(new Created(role, owner, thread));
            return thread;
        }
    }

    @Test
    @Timeout(30)
    void shouldRunTheManagersThreadFromTheGivenThreadsAndStopItAtClose() throws Exception {
        final CacheManager manager = CacheManager.builder(cache).name("m1").generationPeriod(Duration.ofMillis(5))
            .registerMBean(false).threads(threads).build();
        final Thread thread;
        try {
            assertEquals(1, threads.created.size());
            final Recording.Created created = threads.created.get(0);
            assertEquals(StreamcacheThreads.Role.CACHE_MANAGER, created.role());
            assertEquals("m1", created.owner());
            thread = created.thread();
            assertEquals("streamcache-cache-manager-m1", thread.getName());
            assertTrue(thread.isDaemon());
            final int generation = manager.generation();
            while (manager.generation() == generation) {
                TimeUnit.MILLISECONDS.sleep(1);
            }
        } finally {
            manager.close();
        }
        assertFalse(thread.isAlive(), "close waits for the thread");
    }

    @Test
    void shouldStartNoThreadWithoutAGenerationPeriod() {
        try (CacheManager manager = CacheManager.builder(cache).generationPeriod(Duration.ZERO).registerMBean(false)
            .threads(threads).build()) {
            assertTrue(threads.created.isEmpty());
            assertEquals(1, manager.advanceGeneration());
        }
    }

    @Test
    void shouldRejectNoThreads() {
        final NullPointerException e = assertThrows(NullPointerException.class, () -> CacheManager.builder(cache).threads(null));
        assertEquals("threads", e.getMessage());
    }

    @Test
    @Timeout(30)
    void shouldRunTheHitmapUpdaterFromTheGivenThreadsAndStopItAtClose() throws Exception {
        final HitmapPolicy policy = new HitmapPolicy(2, 1024, 2, 64, 1_000);
        final Thread thread;
        try {
            policy.startUpdater(threads, "h1", TimeUnit.MILLISECONDS.toNanos(1));
            assertEquals(1, threads.created.size());
            final Recording.Created created = threads.created.get(0);
            assertEquals(StreamcacheThreads.Role.HITMAP_UPDATER, created.role());
            assertEquals("h1", created.owner());
            thread = created.thread();
            assertEquals("streamcache-hitmap-updater-h1", thread.getName());
            assertThrows(IllegalStateException.class, () -> policy.startUpdater(threads, "h2", 1));
            policy.recordUse("s", new io.streamcache.segmentstore.internal.index.ReadIndexEntry(0, 1, 1, 0), 1);
            while (policy.applied() == 0) {
                TimeUnit.MILLISECONDS.sleep(1);
            }
        } finally {
            policy.close();
        }
        assertFalse(thread.isAlive(), "close waits for the updater");
        assertEquals(1, threads.created.size(), "the second start created no thread");
    }
}
