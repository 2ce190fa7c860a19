package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryMonitor;
import io.streamcache.core.memory.MemorySource;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store with a log over a cache in a persistent region, closed and reopened: a clean close
 * brings back every cached entry with identical reads; a stale catalog (the last checkpoint
 * before more changes, as after a crash) brings back only what is still intact and never a wrong
 * byte, checked against a model of every segment's bytes through random appends, evictions,
 * fills, truncations and deletions; a catalog of another log brings nothing back.
 */
@Timeout(120)
class WarmRestartStoreTest {
    private static final long CAPACITY = 64L * TestSegments.BUFFER_LENGTH;

    @TempDir
    Path dir;

    private BlockCache cache;
    private SegmentStore store;
    private int incarnation;
    /** The capacity the next open builds; with {@link #maxCapacity} above 0, a resizable tier up to it. */
    private long capacity = CAPACITY;
    private long maxCapacity;

    private LogConfig log(final Path directory) {
        return LogConfig.builder(directory).fileLength(256 * 1024).batchLength(16 * 1024).cutThreshold(8 * 1024).spareFiles(0)
            .preWrite(false).maxDelay(Duration.ofMillis(1)).registerMBeans(false).build();
    }

    private void open(final Path logDirectory) {
        final BlockCache.Builder builder = BlockCache.builder().capacity(capacity).blockLength(TestSegments.BLOCK_LENGTH)
            .bufferLength(TestSegments.BUFFER_LENGTH).fullRetryTimeout(Duration.ofSeconds(2)).registerMBean(false)
            .region(MappedFileRegion.persistent(dir.resolve("region"))).warmRestart(dir.resolve("catalog"));
        if (maxCapacity > 0) {
            builder.maxCapacity(maxCapacity);
        }
        cache = builder.build();
        store = SegmentStore.builder(cache).maxIndexEntryLength(2048).cacheManager(TestSegments.manualManager(cache))
            .log(log(logDirectory)).warmCheckpointInterval(Duration.ofHours(1)).healthWindow(Duration.ofHours(1)).build();
        awaitTheFirstCheckpoint();
    }

    /**
     * Waits for the checkpoint the store's checkpointer writes at once on its own thread. It
     * takes each segment's lock in turn, and an eviction pass skips a segment whose lock another
     * thread holds: a test that evicts while it runs sees the wrong entry go (it happened, about
     * once in 100 runs under load, in {@link #restoredEntriesKeepTheirEvictionOrder}).
     */
    private void awaitTheFirstCheckpoint() {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (store.warmCheckpointer().checkpoints() == 0) {
            assertTrue(System.nanoTime() - deadline < 0, "the store's first warm checkpoint was not written within 30 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private void open() {
        open(dir.resolve("log"));
    }

    private void close() {
        store.close();
        cache.close();
    }

    @AfterEach
    void closeQuietly() {
        if (store != null) {
            store.close();
        }
        if (cache != null) {
            cache.close();
        }
    }

    /** The seed of a segment's bytes: its name, never reused, so no segment's bytes match another's. */
    private static long seed(final String name) {
        return name.hashCode();
    }

    private String newSegment() {
        final String name = "s" + incarnation++;
        store.create(name);
        return name;
    }

    private void append(final String name, final int length) {
        final long offset = store.info(name).length();
        store.append(name, TestSegments.buffer(seed(name), offset, length));
    }

    /** The cached ranges of a segment: [offset, length] pairs. */
    private List<long[]> cachedRanges(final String name) {
        final List<long[]> ranges = new ArrayList<>();
        for (final TestSegments.EntryView entry : TestSegments.entries(store, name)) {
            if (entry.cached()) {
                ranges.add(new long[] {entry.offset(), entry.length()});
            }
        }
        return ranges;
    }

    /** Reads every cached range from the cache only (no log) and checks its bytes. */
    private long checkCachedBytes(final String name) {
        long bytes = 0;
        final long start = store.info(name).startOffset();
        for (final long[] range : cachedRanges(name)) {
            // An entry a truncation cut through starts before the start: its bytes from there.
            final long from = Math.max(range[0], start);
            final int length = (int) (range[0] + range[1] - from);
            final ByteBuf destination = Unpooled.buffer(length);
            final ReadStatus status = store.read(name, from, destination);
            assertTrue(destination.readableBytes() == length, () -> name + " " + status);
            final byte[] got = new byte[length];
            destination.readBytes(got);
            assertArrayEquals(TestSegments.pattern(seed(name), from, length), got, name + " at " + from);
            bytes += length;
        }
        return bytes;
    }

    /** Reads the whole segment through the cache and the log and checks every byte. */
    private void checkAllBytes(final String name) throws Exception {
        final SegmentInfo info = store.info(name);
        long offset = info.startOffset();
        while (offset < info.length()) {
            try (ReadResult result = store.readThrough(name, offset, 64 * 1024).get(10, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, () -> name + " read nothing at " + info);
                assertArrayEquals(TestSegments.pattern(seed(name), offset, result.length()), TestSegments.bytes(result), name);
                offset += result.length();
            }
        }
    }

    @Test
    void aCleanCloseBringsBackEveryCachedEntryWithIdenticalReads() throws Exception {
        open();
        assertTrue(store.warmRestore().enabled());
        assertFalse(store.warmRestore().warm());
        final Random random = new Random(1);
        final List<String> names = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            names.add(newSegment());
        }
        for (int i = 0; i < 300; i++) {
            append(names.get(random.nextInt(names.size())), 1 + random.nextInt(1500));
        }
        store.cacheManager().evictDownTo(0.3);
        store.truncate(names.get(0), store.info(names.get(0)).length() / 2);
        store.delete(names.remove(5));
        // A read-through brings evicted bytes back as fills.
        checkAllBytes(names.get(1));
        final Map<String, List<long[]>> before = new HashMap<>();
        final Map<String, SegmentInfo> infos = new HashMap<>();
        long cachedEntries = 0;
        for (final String name : names) {
            before.put(name, cachedRanges(name));
            infos.put(name, store.info(name));
            cachedEntries += before.get(name).size();
        }
        assertTrue(cachedEntries > 0);
        close();

        open();
        final WarmRestoreStats stats = store.warmRestore();
        assertTrue(stats.warm(), stats::toString);
        assertTrue(stats.cleanShutdown(), stats::toString);
        assertEquals(0, stats.discardedTotal(), stats::toString);
        assertEquals(cachedEntries, stats.restoredEntries(), stats::toString);
        for (final String name : names) {
            assertEquals(infos.get(name), store.info(name));
            final List<long[]> after = cachedRanges(name);
            assertEquals(before.get(name).size(), after.size(), name);
            for (int i = 0; i < after.size(); i++) {
                assertArrayEquals(before.get(name).get(i), after.get(i), name);
            }
            checkCachedBytes(name);
            checkAllBytes(name);
        }
        // Appends go on after the restored tails, and grow them in place.
        append(names.get(2), 100);
        checkAllBytes(names.get(2));
        assertEquals(cache.stats().entryCount(), names.stream().mapToLong(n -> cachedRanges(n).size()).sum());
        close();
    }

    /**
     * A warm store over a resizable persistent tier: shrunk by its cache manager (entries moved
     * out of the draining buffers, the region file truncated), grown back and appended to, closed,
     * reopened at the size it had; shrunk again by a memory monitor short of headroom, closed,
     * reopened at that smaller size: each time every cached entry comes back with
     * its read-index range and bytes.
     */
    @Test
    void aWarmStoreShrunkAndGrownByItsManagerBringsEveryCachedEntryBackAtItsNewSize() throws Exception {
        maxCapacity = CAPACITY;
        open();
        final Random random = new Random(3);
        final List<String> names = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            names.add(newSegment());
        }
        for (int i = 0; i < 300; i++) {
            append(names.get(random.nextInt(names.size())), 1 + random.nextInt(1500));
        }
        assertEquals(CAPACITY / 2, store.cacheManager().resizeTier(0, CAPACITY / 2));
        assertEquals(3 * CAPACITY / 4, store.cacheManager().resizeTier(0, 3 * CAPACITY / 4));
        for (int i = 0; i < 200; i++) {
            append(names.get(random.nextInt(names.size())), 1 + random.nextInt(1500));
        }
        capacity = 3 * CAPACITY / 4;
        reopenAndCheckEveryCachedEntry(names);

        // The memory monitor, ticked by hand, finds 1 % headroom and shrinks the warm cache by its step.
        final MemorySource tight = () -> new MemorySource.MemoryReading(100L << 20, 99L << 20, MemorySource.MemoryReading.UNKNOWN,
            MemorySource.MemoryReading.UNKNOWN, MemorySource.MemoryReading.UNKNOWN);
        try (MemoryMonitor monitor = MemoryMonitor.builder(tight, store.cacheManager().resizeTarget(0)).period(Duration.ZERO)
            .registerMBean(false).watermarks(0.10, 0.20).bounds(CAPACITY / 4, CAPACITY).maxStep(CAPACITY / 2).build()) {
            assertEquals(CAPACITY / 4, monitor.tick());
        }
        for (final String name : names) {
            checkAllBytes(name);
        }
        capacity = CAPACITY / 4;
        reopenAndCheckEveryCachedEntry(names);
        assertEquals(CAPACITY / 4, Files.size(dir.resolve("region")));
    }

    /** Closes the store cleanly, reopens it at {@link #capacity}, and checks every cached entry came back as it was. */
    private void reopenAndCheckEveryCachedEntry(final List<String> names) throws Exception {
        final Map<String, List<long[]>> before = new HashMap<>();
        long cachedEntries = 0;
        for (final String name : names) {
            before.put(name, cachedRanges(name));
            cachedEntries += before.get(name).size();
        }
        assertTrue(cachedEntries > 0);
        close();
        open();
        final WarmRestoreStats stats = store.warmRestore();
        assertTrue(stats.warm() && stats.cleanShutdown(), stats::toString);
        assertEquals(0, stats.discardedTotal(), stats::toString);
        assertEquals(cachedEntries, stats.restoredEntries(), stats::toString);
        assertEquals(capacity, cache.tierCapacity(0));
        for (final String name : names) {
            final List<long[]> after = cachedRanges(name);
            assertEquals(before.get(name).size(), after.size(), () -> name + " before " + ranges(before.get(name)) + " after "
                + ranges(after) + " " + stats);
            for (int i = 0; i < after.size(); i++) {
                assertArrayEquals(before.get(name).get(i), after.get(i), name);
            }
            checkCachedBytes(name);
        }
        // Last, as a read-through's fills may evict what the checks above read.
        for (final String name : names) {
            checkAllBytes(name);
        }
    }

    private static String ranges(final List<long[]> ranges) {
        final StringBuilder s = new StringBuilder();
        for (final long[] range : ranges) {
            s.append(range[0]).append('+').append(range[1]).append(' ');
        }
        return s.toString();
    }

    @Test
    void randomHistoriesWithStaleCatalogsNeverServeAWrongByte() throws Exception {
        final Random random = new Random(7);
        final List<String> names = new ArrayList<>();
        open();
        for (int round = 0; round < 6; round++) {
            for (int s = names.size(); s < 5; s++) {
                names.add(newSegment());
            }
            final boolean crash = round % 2 == 1;
            final int steps = 200;
            for (int step = 0; step < steps; step++) {
                if (crash && step == steps / 2) {
                    // The checkpoint a crash would leave: everything after it is unknown to the catalog.
                    store.warmCheckpointer().checkpoint(false);
                    Files.copy(dir.resolve("catalog"), dir.resolve("stale"), StandardCopyOption.REPLACE_EXISTING);
                }
                final int op = random.nextInt(100);
                final String name = names.get(random.nextInt(names.size()));
                if (op < 70) {
                    append(name, 1 + random.nextInt(3000));
                } else if (op < 80) {
                    store.cacheManager().evictDownTo(random.nextDouble() * 0.6);
                } else if (op < 88) {
                    final SegmentInfo info = store.info(name);
                    if (info.length() > info.startOffset()) {
                        final long offset = info.startOffset() + (long) (random.nextDouble() * (info.length() - info.startOffset()));
                        // Fills the cache.
                        store.readThrough(name, offset, 4096).get(10, TimeUnit.SECONDS).close();
                    }
                } else if (op < 94) {
                    final SegmentInfo info = store.info(name);
                    store.truncate(name, info.startOffset() + (info.length() - info.startOffset()) / 3);
                } else {
                    store.delete(name);
                    names.remove(name);
                    names.add(newSegment());
                }
            }
            final Map<String, SegmentInfo> infos = new HashMap<>();
            for (final String name : names) {
                infos.put(name, store.info(name));
            }
            close();
            if (crash) {
                Files.copy(dir.resolve("stale"), dir.resolve("catalog"), StandardCopyOption.REPLACE_EXISTING);
            }
            open();
            final WarmRestoreStats stats = store.warmRestore();
            assertTrue(stats.warm(), stats::toString);
            assertEquals(!crash, stats.cleanShutdown());
            if (!crash) {
                assertEquals(0, stats.discardedTotal(), stats::toString);
            }
            long cached = 0;
            for (final String name : names) {
                assertEquals(infos.get(name), store.info(name));
                cached += cachedRanges(name).size();
                checkCachedBytes(name);
            }
            // Every block is an indexed entry's or free: nothing adopted was left behind.
            assertEquals(cached, cache.stats().entryCount(), stats::toString);
            for (final String name : names) {
                checkAllBytes(name);
            }
        }
        close();
    }

    @Test
    void checkpointsUnderConcurrentAppendsReadsAndEvictionsNeverRecordAWrongEntry() throws Exception {
        open();
        final List<String> names = new ArrayList<>();
        for (int s = 0; s < 8; s++) {
            names.add(newSegment());
        }
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        final List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final List<String> owned = List.of(names.get(2 * t), names.get(2 * t + 1));
            final Random random = new Random(t);
            threads.add(new Thread(() -> {
                try {
                    while (!stop.get()) {
                        final String name = owned.get(random.nextInt(2));
                        append(name, 1 + random.nextInt(2000));
                        final SegmentInfo info = store.info(name);
                        final long at = info.startOffset() + (long) (random.nextDouble() * (info.length() - info.startOffset()));
                        try (ReadResult result = store.read(name, at, 1000)) {
                            assertArrayEquals(TestSegments.pattern(seed(name), at, result.length()), TestSegments.bytes(result));
                        }
                    }
                } catch (final Throwable e) {
                    failures.add(e);
                }
            }));
        }
        threads.add(new Thread(() -> {
            try {
                while (!stop.get()) {
                    store.cacheManager().evictDownTo(0.4);
                    Thread.sleep(1);
                }
            } catch (final Throwable e) {
                failures.add(e);
            }
        }));
        threads.forEach(Thread::start);
        for (int i = 0; i < 30; i++) {
            store.warmCheckpointer().checkpoint(false);
        }
        stop.set(true);
        for (final Thread thread : threads) {
            thread.join();
        }
        assertTrue(failures.isEmpty(), failures::toString);
        // The last running checkpoint, as a crash would leave it, then more changes and a reopen.
        store.warmCheckpointer().checkpoint(false);
        Files.copy(dir.resolve("catalog"), dir.resolve("stale"), StandardCopyOption.REPLACE_EXISTING);
        for (int i = 0; i < 10; i++) {
            append(names.get(i % names.size()), 3000);
        }
        close();
        Files.copy(dir.resolve("stale"), dir.resolve("catalog"), StandardCopyOption.REPLACE_EXISTING);
        open();
        assertTrue(store.warmRestore().warm(), store.warmRestore()::toString);
        assertTrue(store.warmRestore().restoredEntries() > 0, store.warmRestore()::toString);
        for (final String name : names) {
            checkCachedBytes(name);
            checkAllBytes(name);
        }
        close();
    }

    @Test
    void restoredEntriesKeepTheirEvictionOrder() {
        open();
        final String older = newSegment();
        final String newer = newSegment();
        append(older, 1000);
        for (int i = 0; i < 5; i++) {
            store.cacheManager().advanceGeneration();
        }
        append(newer, 1000);
        close();
        open();
        final int olderGeneration = TestSegments.generations(store, older).get(0);
        final int newerGeneration = TestSegments.generations(store, newer).get(0);
        assertEquals(5, newerGeneration - olderGeneration, "ages as they were at the close");
        // The older one goes first: one segment's worth evicted, the newer one stays cached.
        store.cacheManager().advanceGeneration();
        store.cacheManager().evictDownTo(cache.stats().utilization() * 0.6);
        assertTrue(cachedRanges(older).isEmpty(), "the older entry was evicted");
        assertEquals(1, cachedRanges(newer).size(), "the newer entry stays");
        close();
    }

    @Test
    void aCatalogOfAnotherLogBringsNothingBack() throws Exception {
        open();
        final String name = newSegment();
        for (int i = 0; i < 20; i++) {
            append(name, 1000);
        }
        close();
        open(dir.resolve("other-log"));
        final WarmRestoreStats stats = store.warmRestore();
        assertTrue(stats.warm());
        assertEquals(0, stats.restoredEntries());
        assertTrue(stats.discarded().get("IDENTITY") > 0, stats::toString);
        final StoreHealth health = store.health();
        assertEquals(StoreHealth.State.DEGRADED, health.state(), health.summary());
        assertTrue(health.has(StoreHealth.Reason.WARM_RESTART_DISCARDED), health.summary());
        assertEquals(0, cache.stats().entryCount());
        assertEquals(0, cache.stats().usedBlockCount());
        close();
    }

    @Test
    void aCheckpointHashesOnlyWhatChanged() throws Exception {
        open();
        final String name = newSegment();
        for (int i = 0; i < 40; i++) {
            append(name, 1000);
        }
        final WarmCheckpointer checkpointer = store.warmCheckpointer();
        final long records = checkpointer.checkpoint(false);
        assertTrue(records > 1);
        checkpointer.checkpoint(false);
        assertEquals(0, checkpointer.lastHashed());
        append(name, 10);
        checkpointer.checkpoint(false);
        assertEquals(1, checkpointer.lastHashed());
        close();
    }

    @Test
    void aWarmCacheNeedsALog() {
        cache = BlockCache.builder().capacity(CAPACITY).blockLength(TestSegments.BLOCK_LENGTH).bufferLength(TestSegments.BUFFER_LENGTH)
            .registerMBean(false).region(MappedFileRegion.persistent(dir.resolve("region"))).warmRestart(dir.resolve("catalog"))
            .build();
        try {
            assertThrows(CacheConfigurationException.class, () -> SegmentStore.builder(cache).build());
        } finally {
            cache.close();
        }
    }
}
