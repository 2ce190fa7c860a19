package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The segments listed by generation, which eviction passes under the generation policy walk
 * oldest first: a walk reaches only the segments holding old entries, passes evict the oldest
 * entries as a full survey would, and the listing stays true while appends race the passes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SegmentsByGenerationTest {
    private static final int SEGMENTS = 200;
    private static final int ENTRY = 1000;

    private BlockCache cache;
    private SegmentStore store;
    private CacheManager manager;
    private EvictionSource source;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        store = TestSegments.store(cache, ENTRY);
        manager = store.cacheManager();
        source = store.evictionSourceForTests();
    }

    @AfterEach
    void tearDown() {
        store.close();
        cache.close();
    }

    /** Appends one entry into each of {@code count} segments named from {@code first}, then advances the generation. */
    private void appendGeneration(final int first, final int count) {
        for (int i = first; i < first + count; i++) {
            final String name = "s" + i;
            if (!store.exists(name)) {
                store.create(name);
            }
            store.append(name, buffer(i, store.info(name).length(), ENTRY));
        }
        manager.advanceGeneration();
    }

    /** A survey that counts what it is offered and stops before {@code stopAt}. */
    private static final class Counting implements EvictionScan {
        final List<String> segments = new ArrayList<>();
        final int stopAt;

        Counting(final int stopAt) {
            this.stopAt = stopAt;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            segments.add(segment);
            return false;
        }

        @Override
        public boolean beforeGeneration(final int generation) {
            return generation - stopAt < 0;
        }

        @Override
        public boolean isDone() {
            return false;
        }
    }

    @Test
    void shouldWalkOnlyTheSegmentsListedBeforeAGeneration() {
        final int first = manager.generation();
        appendGeneration(0, 10);
        appendGeneration(10, SEGMENTS - 10);
        final Counting oldest = new Counting(first + 1);
        source.scanOldestFirst(oldest, manager.generation());
        assertEquals(10, oldest.segments.size(), "only the 10 segments appended in the first generation: " + oldest.segments);
        for (final String name : oldest.segments) {
            assertTrue(Integer.parseInt(name.substring(1)) < 10, name);
        }
        final Counting all = new Counting(manager.generation() + 1);
        source.scanOldestFirst(all, manager.generation());
        assertEquals(SEGMENTS, all.segments.size());
    }

    @Test
    void shouldEvictTheOldestGenerationFirstAndUnlistEmptiedSegments() {
        appendGeneration(0, 50);
        appendGeneration(50, 50);
        appendGeneration(100, 100);
        final double used = cache.stats().utilization();
        // Down by about the first generation's bytes: a quarter of what is cached.
        manager.evictDownTo(used * 0.74);
        for (int i = 0; i < 50; i++) {
            assertFalse(TestSegments.entries(store, "s" + i).get(0).cached(), "s" + i + " is of the oldest generation");
            assertFalse(store.segmentOrNull("s" + i).listed, "s" + i + " has no cached entry left");
        }
        for (int i = 100; i < SEGMENTS; i++) {
            assertTrue(TestSegments.entries(store, "s" + i).get(0).cached(), "s" + i + " is of the newest generation");
        }
        manager.evictDownTo(0.0);
        for (int i = 0; i < SEGMENTS; i++) {
            assertFalse(store.segmentOrNull("s" + i).listed, "s" + i);
        }
        // Appending again lists the segment again, at the entry's generation.
        store.append("s7", buffer(7, store.info("s7").length(), ENTRY));
        final Segment seven = store.segmentOrNull("s7");
        assertTrue(seven.listed);
        assertEquals(manager.generation(), seven.listedGeneration);
    }

    @Test
    void shouldKeepEverySegmentWithACachedEntryListedWhileAppendsRacePasses() throws Exception {
        final int threads = 4;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch started = new CountDownLatch(threads);
        final List<Thread> appenders = new ArrayList<>();
        for (int i = 0; i < SEGMENTS; i++) {
            store.create("s" + i);
        }
        for (int t = 0; t < threads; t++) {
            final int id = t;
            final Thread thread = new Thread(() -> {
                final SplittableRandom random = new SplittableRandom(id);
                started.countDown();
                try {
                    while (!stop.get()) {
                        // Each thread owns the segments congruent to its id: offsets stay its own.
                        final String name = "s" + (random.nextInt(SEGMENTS / threads) * threads + id);
                        store.append(name, buffer(id, store.info(name).length(), 1 + random.nextInt(2 * ENTRY)));
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "appender-" + t);
            appenders.add(thread);
            thread.start();
        }
        started.await();
        for (int pass = 0; pass < 200 && failure.get() == null; pass++) {
            manager.evictDownTo(pass % 2 == 0 ? 0.5 : 0.2);
        }
        stop.set(true);
        for (final Thread thread : appenders) {
            thread.join();
        }
        assertNull(failure.get());
        for (int i = 0; i < SEGMENTS; i++) {
            final Segment segment = store.segmentOrNull("s" + i);
            segment.lock();
            try {
                final long oldest = segment.oldestCachedGenerationLocked(manager.generation());
                if (oldest != Segment.NO_CACHED_ENTRY) {
                    assertTrue(segment.listed, segment.name + " holds a cached entry");
                    assertTrue(segment.listedGeneration - (int) oldest <= 0,
                        segment.name + " listed at " + segment.listedGeneration + ", oldest entry " + oldest);
                }
            } finally {
                segment.unlock();
            }
        }
    }
}
