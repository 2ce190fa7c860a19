package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.generations;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheManagerTest {
    /** 32 buffers of 31 data blocks of 256 bytes: 992 blocks, 253,952 bytes. */
    private static final long CAPACITY = 32L * TestSegments.BUFFER_LENGTH;
    /** 8 blocks. */
    private static final int ENTRY = 2048;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(final T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private SegmentStore store(final BlockCache cache, final CacheManager.Builder manager, final boolean appendsDurable) {
        return closeLater(SegmentStore.builder(cache).maxIndexEntryLength(ENTRY).appendsDurable(appendsDurable)
            .cacheManager(manager).build());
    }

    private static void fill(final SegmentStore store, final String name, final long seed, final int length) {
        store.create(name);
        for (int offset = 0; offset < length; offset += 512) {
            store.append(name, buffer(seed, offset, Math.min(512, length - offset)));
        }
    }

    private static ReadStatus firstStatus(final SegmentStore store, final String name) {
        try (ReadResult result = store.read(name, 0, 1)) {
            return result.status();
        }
    }

    private static void assertAllCached(final SegmentStore store, final String name, final long seed, final int length) {
        try (ReadResult result = store.read(name, 0, Integer.MAX_VALUE)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status(), name);
            assertArrayEquals(pattern(seed, 0, length), bytes(result), name);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Generations

    @Test
    void shouldAdvanceTheGenerationOnDemand() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final CacheManager manager = closeLater(TestSegments.manualManager(cache).build());
        final int start = manager.generation();
        assertEquals(start + 1, manager.advanceGeneration());
        manager.evictNow();
        assertEquals(start + 2, manager.generation(), "every pass starts a generation");
        assertEquals(start + 2, manager.stats().generation());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldAdvanceTheGenerationOnItsTimer() throws InterruptedException {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final CacheManager manager = closeLater(CacheManager.builder(cache).registerMBean(false)
            .generationPeriod(Duration.ofMillis(2)).build());
        final int start = manager.generation();
        while (manager.generation() < start + 3) {
            Thread.sleep(1);
        }
        assertTrue(manager.stats().runs() > 0, "the timer also runs passes");
    }

    @Test
    void shouldStampTheGenerationOnAppendAndRead() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache), true);
        final CacheManager manager = store.cacheManager();
        store.create("s");
        final int g0 = manager.generation();
        store.append("s", buffer(1, 0, ENTRY + 10));
        assertEquals(List.of(g0, g0), generations(store, "s"));
        final int g1 = manager.advanceGeneration();
        store.append("s", buffer(1, ENTRY + 10, 10));
        assertEquals(List.of(g0, g1), generations(store, "s"), "an append into the last entry stamps it");
        final int g2 = manager.advanceGeneration();
        store.read("s", 0, 10).release();
        assertEquals(List.of(g2, g1), generations(store, "s"), "a read stamps the entries it covers");
    }

    // ------------------------------------------------------------------------------------------
    // Passes

    @Test
    void shouldEvictTheOldestEntriesDownToTheTarget() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).targetUtilization(0.5), true);
        final CacheManager manager = store.cacheManager();
        fill(store, "a", 1, 30 * ENTRY);
        manager.advanceGeneration();
        fill(store, "b", 2, 30 * ENTRY);
        manager.advanceGeneration();
        fill(store, "c", 3, 30 * ENTRY);
        assertEquals(720.0 / 992, cache.stats().utilization(), 1e-9);

        final long freed = manager.evictNow();
        assertEquals(224, freed, "992 * 0.5 = 496 blocks kept: 28 entries of 8 blocks go");
        assertTrue(cache.stats().utilization() <= 0.5);
        assertEquals(28L * ENTRY, entries(store, "a").stream().filter(e -> !e.cached()).mapToLong(e -> e.length()).sum(),
            "the oldest generation goes first");
        assertEquals(List.of(new TestSegments.EntryView(0, 28 * ENTRY, false, 0)),
            entries(store, "a").stream().filter(e -> !e.cached()).toList(), "the evicted run is one placeholder");
        assertAllCached(store, "b", 2, 30 * ENTRY);
        assertAllCached(store, "c", 3, 30 * ENTRY);
        final CacheManagerStats stats = manager.stats();
        assertEquals(28, stats.evictions());
        assertEquals(28L * ENTRY, stats.evictedBytes());
        assertEquals(1, stats.runs());
        assertEquals(0.5, stats.targetUtilization());

        assertEquals(0, manager.evictNow(), "under the target: nothing to do");
        assertEquals(2, manager.stats().runs());
    }

    @Test
    void shouldSpareEntriesThatAReadMadeYoung() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache).targetUtilization(0.5), true);
        final CacheManager manager = store.cacheManager();
        fill(store, "a", 1, 30 * ENTRY);
        manager.advanceGeneration();
        fill(store, "b", 2, 30 * ENTRY);
        manager.advanceGeneration();
        fill(store, "c", 3, 30 * ENTRY);
        manager.advanceGeneration();
        assertAllCached(store, "a", 1, 30 * ENTRY);

        manager.evictNow();
        assertAllCached(store, "a", 1, 30 * ENTRY);
        assertEquals(ReadStatus.NOT_CACHED, firstStatus(store, "b"), "b is now the oldest");
        assertAllCached(store, "c", 3, 30 * ENTRY);
    }

    @Test
    void shouldEvictOnlyDurableEntries() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache), false);
        final CacheManager manager = store.cacheManager();
        fill(store, "s", 1, 5 * ENTRY);
        assertEquals(0, manager.evictDownTo(0.0), "nothing is durable yet");
        assertAllCached(store, "s", 1, 5 * ENTRY);

        store.markDurable("s", 2 * ENTRY + 100);
        manager.evictDownTo(0.0);
        assertEquals(List.of(false, true, true, true), entries(store, "s").stream().map(e -> e.cached()).toList(),
            "only entries wholly below the durable length go (the two evicted ones as one placeholder)");
        assertEquals(2 * ENTRY, entries(store, "s").get(0).length());
        store.markDurable("s", 5 * ENTRY);
        manager.evictDownTo(0.0);
        assertEquals(0, cache.stats().entryCount());
    }

    @Test
    void shouldSkipPinnedEntries() {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, TestSegments.manualManager(cache), true);
        final CacheManager manager = store.cacheManager();
        fill(store, "s", 1, 4 * ENTRY);
        final ReadResult held = store.read("s", ENTRY + 5, ENTRY);
        manager.evictDownTo(0.0);
        assertEquals(List.of(false, true, true, false), entries(store, "s").stream().map(e -> e.cached()).toList());
        assertArrayEquals(pattern(1, ENTRY + 5, ENTRY), bytes(held));
        held.release();
        manager.evictDownTo(0.0);
        assertEquals(0, cache.stats().entryCount(), "released entries go in the next pass");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldEvictOnItsTimerWhenOverTheTarget() throws InterruptedException {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final SegmentStore store = store(cache, CacheManager.builder(cache).registerMBean(false).targetUtilization(0.3)
            .generationPeriod(Duration.ofMillis(5)), true);
        fill(store, "s", 1, 60 * ENTRY);
        while (cache.stats().utilization() > 0.3) {
            Thread.sleep(1);
        }
        assertTrue(store.cacheManager().stats().evictions() > 0);
        assertEquals(ReadStatus.NOT_CACHED, firstStatus(store, "s"));
    }

    // ------------------------------------------------------------------------------------------
    // A full cache

    @Test
    void shouldEvictWhenTheCacheIsFull() {
        // 2 buffers: 62 blocks of 256 bytes.
        final BlockCache tiny = closeLater(TestSegments.cache(2L * TestSegments.BUFFER_LENGTH));
        final SegmentStore store = store(tiny, TestSegments.manualManager(tiny).targetUtilization(0.9), true);
        fill(store, "a", 1, 6 * ENTRY);
        fill(store, "b", 2, 2 * ENTRY);
        assertTrue(store.cacheManager().stats().fullHandlerCalls() > 0);
        assertEquals(ReadStatus.NOT_CACHED, firstStatus(store, "a"), "a's oldest entries made room for b");
        assertAllCached(store, "b", 2, 2 * ENTRY);
    }

    @Test
    void shouldSleepUntilAnotherThreadsPassHasFreedBlocksRatherThanSpin() throws Exception {
        // A pass on another thread is held inside its policy while an appender finds the cache
        // full: the appender must wait for that pass (parked, TIMED_WAITING), not spin against it
        // (RUNNABLE in a yield loop), and its append must succeed on the blocks the pass frees.
        final CountDownLatch passEntered = new CountDownLatch(1);
        final CountDownLatch releasePass = new CountDownLatch(1);
        final AtomicBoolean armed = new AtomicBoolean();
        final GenerationPolicy generations = new GenerationPolicy();
        final EvictionPolicy held = new EvictionPolicy() {
            @Override
            public void beginPass(final int currentGeneration) {
                if (armed.compareAndSet(true, false)) {
                    passEntered.countDown();
                    try {
                        releasePass.await(30, TimeUnit.SECONDS);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                generations.beginPass(currentGeneration);
            }

            @Override
            public void survey(final String segment, final CachedEntry entry) {
                generations.survey(segment, entry);
            }

            @Override
            public boolean advance() {
                return generations.advance();
            }

            @Override
            public boolean select(final String segment, final CachedEntry entry) {
                return generations.select(segment, entry);
            }
        };
        final BlockCache tiny = closeLater(BlockCache.builder().capacity(2L * TestSegments.BUFFER_LENGTH)
            .blockLength(TestSegments.BLOCK_LENGTH).bufferLength(TestSegments.BUFFER_LENGTH)
            .fullRetryTimeout(Duration.ofSeconds(30)).registerMBean(false).build());
        final SegmentStore store = store(tiny, TestSegments.manualManager(tiny).policy(held), true);
        fill(store, "a", 1, 6 * ENTRY);
        store.create("b");
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            armed.set(true);
            final Future<?> pass = threads.submit(() -> store.cacheManager().evictDownTo(0.5));
            assertTrue(passEntered.await(10, TimeUnit.SECONDS), "the pass started");
            final Thread[] appender = new Thread[1];
            final Future<Long> append = threads.submit(() -> {
                appender[0] = Thread.currentThread();
                return store.append("b", buffer(2, 0, 4 * ENTRY));
            });
            boolean parked = false;
            for (int i = 0; i < 10_000 && !parked && !append.isDone(); i++) {
                final Thread t = appender[0];
                parked = t != null && t.getState() == Thread.State.TIMED_WAITING && store.cacheManager().stats().fullHandlerCalls() > 0;
                Thread.sleep(1);
            }
            assertTrue(parked, "the appender waited for the running pass, parked");
            releasePass.countDown();
            pass.get(10, TimeUnit.SECONDS);
            assertEquals(0L, append.get(10, TimeUnit.SECONDS));
            assertAllCached(store, "b", 2, 4 * ENTRY);
        } finally {
            releasePass.countDown();
            threads.shutdownNow();
        }
    }

    @Test
    void shouldLetAnAppenderEvictItsOwnSegmentsOlderEntries() {
        final BlockCache tiny = closeLater(TestSegments.cache(2L * TestSegments.BUFFER_LENGTH));
        final SegmentStore store = store(tiny, TestSegments.manualManager(tiny), true);
        final int length = 40 * ENTRY;
        fill(store, "s", 1, length);
        try (ReadResult tail = store.read("s", length - ENTRY, ENTRY)) {
            assertArrayEquals(pattern(1, length - ENTRY, ENTRY), bytes(tail), "the newest entry is whole");
        }
        assertEquals(ReadStatus.NOT_CACHED, firstStatus(store, "s"));
    }

    @Test
    void shouldFailFastWhenNothingCanBeEvicted() {
        final BlockCache tiny = closeLater(TestSegments.cache(2L * TestSegments.BUFFER_LENGTH));
        final SegmentStore store = store(tiny, TestSegments.manualManager(tiny), false);
        store.create("s");
        final long before = System.nanoTime();
        final CacheFullException e = org.junit.jupiter.api.Assertions.assertThrows(CacheFullException.class,
            () -> store.append("s", buffer(1, 0, 20_000)));
        assertTrue(e.getMessage().contains("freed nothing"), e.getMessage());
        assertEquals(0, store.info("s").length());
        assertTrue(System.nanoTime() - before >= 0);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldNotDeadlockWhenTwoSegmentsFillTheCacheAtOnce() throws Exception {
        // 4 buffers: 124 blocks; each appender holds its segment's lock while the cache is full.
        final BlockCache tiny = closeLater(TestSegments.cache(4L * TestSegments.BUFFER_LENGTH));
        final SegmentStore store = store(tiny, TestSegments.manualManager(tiny), true);
        final int appends = 3_000;
        final int appendLength = 300;
        final List<String> names = List.of("a", "b");
        final ExecutorService threads = Executors.newFixedThreadPool(names.size());
        try {
            final CyclicBarrier start = new CyclicBarrier(names.size());
            final List<Future<Integer>> failures = new ArrayList<>();
            for (final String name : names) {
                store.create(name);
                failures.add(threads.submit(() -> {
                    start.await();
                    int failed = 0;
                    for (int i = 0; i < appends; i++) {
                        final long offset = store.info(name).length();
                        try {
                            store.append(name, buffer(name.hashCode(), offset, appendLength));
                        } catch (final CacheFullException e) {
                            failed++;
                        }
                    }
                    return failed;
                }));
            }
            // Wait for both appenders before reading: one still appending evicts the other's entries.
            final int[] failedCounts = new int[names.size()];
            for (int i = 0; i < names.size(); i++) {
                failedCounts[i] = failures.get(i).get(50, TimeUnit.SECONDS);
            }
            for (int i = 0; i < names.size(); i++) {
                final String name = names.get(i);
                final int failed = failedCounts[i];
                assertTrue(failed < appends / 10, "most appends found room: failed=" + failed);
                assertEquals((long) (appends - failed) * appendLength, store.info(name).length(), "a failed append leaves nothing");
                for (final TestSegments.EntryView entry : entries(store, name)) {
                    if (entry.cached()) {
                        try (ReadResult result = store.read(name, entry.offset(), entry.length())) {
                            assertArrayEquals(pattern(name.hashCode(), entry.offset(), entry.length()), bytes(result), name);
                        }
                    }
                }
            }
            assertTrue(store.cacheManager().stats().fullHandlerCalls() > 0, "the cache was full");
        } finally {
            threads.shutdownNow();
        }
    }

    // ------------------------------------------------------------------------------------------
    // JMX

    @Test
    void shouldPublishAnMXBeanUntilClosed() throws Exception {
        final BlockCache cache = closeLater(TestSegments.cache(CAPACITY));
        final String name = "manager-test-" + System.nanoTime();
        final CacheManager manager = CacheManager.builder(cache).name(name).generationPeriod(Duration.ZERO).build();
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName objectName = new ObjectName("io.streamcache:type=CacheManager,name=" + ObjectName.quote(name));
        try {
            assertTrue(server.isRegistered(objectName));
            assertEquals(name, server.getAttribute(objectName, "Name"));
            final int generation = (Integer) server.getAttribute(objectName, "Generation");
            assertEquals(generation + 1, server.invoke(objectName, "advanceGeneration", null, null));
            assertEquals(0.0, (Double) server.getAttribute(objectName, "Utilization"));
        } finally {
            manager.close();
        }
        assertFalse(server.isRegistered(objectName));
    }
}
