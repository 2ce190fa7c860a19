package io.streamcache.segmentstore.eviction;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheFullHandler;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManagerFullHandlerTest {
    private final BlockCache cache = TestSegments.cache(4L * TestSegments.BUFFER_LENGTH);
    private final CacheManager manager = CacheManager.builder(cache).generationPeriod(Duration.ZERO)
        .registerMBean(false).build();

    @AfterEach
    void tearDown() {
        manager.close();
        cache.close();
    }

    @Test
    void shouldLetTheCacheFailAtOnceWhenAPassFreesNothing() {
        final ManagerFullHandler handler = assertInstanceOf(ManagerFullHandler.class, cache.fullHandler());
        assertSame(manager, handler.manager());
        final int generation = manager.generation();
        assertFalse(handler.onCacheFull(1), "no source: nothing to free, nothing busy");
        assertEquals(generation + 1, manager.generation(), "the pass advanced the generation");
        assertEquals(1, handler.calls());
        assertEquals(1, manager.stats().fullHandlerCalls());
        assertEquals(1, manager.stats().runs());
    }

    @Test
    @Timeout(10)
    void shouldAskForARetryInsteadOfWaitingForAPassAnotherThreadRuns() throws Exception {
        final AtomicInteger generation = new AtomicInteger();
        final EvictionPasses passes = new EvictionPasses(cache, new GenerationPolicy(), generation, 0.85,
            new double[] {0.85}, TierAdmission.all(), new TierCounters(1), 0);
        final ManagerFullHandler handler = new ManagerFullHandler(manager, passes, generation);
        final CountDownLatch locked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Thread pass = new Thread(() -> {
            assertTrue(passes.tryLock());
            try {
                locked.countDown();
                release.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                passes.unlock();
            }
        }, "full-handler-test-pass");
        pass.start();
        assertTrue(locked.await(5, TimeUnit.SECONDS));
        try {
            assertTrue(handler.onCacheFull(1), "a pass is running: the cache retries once it had time to free blocks");
            assertEquals(0, generation.get(), "the handler ran no pass of its own");
            assertEquals(0, passes.runs());
        } finally {
            release.countDown();
            pass.join();
        }
        assertFalse(handler.onCacheFull(1), "the lock is free again: its own pass frees nothing");
        assertEquals(1, passes.runs());
        assertEquals(2, handler.calls());
    }

    @Test
    void shouldFreeNothingOnceTheManagerIsClosed() {
        final ManagerFullHandler handler = assertInstanceOf(ManagerFullHandler.class, cache.fullHandler());
        manager.close();
        assertSame(CacheFullHandler.NONE, cache.fullHandler(), "close uninstalls the handler");
        final int generation = manager.generation();
        assertFalse(handler.onCacheFull(1));
        assertEquals(generation, manager.generation(), "no pass ran");
        assertEquals(1, handler.calls());
    }
}
