package io.streamcache.segmentstore;

import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.HistoricalReadStats;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.TestSegments.EntryView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import io.streamcache.segmentstore.SegmentTruncatedException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentStore#readThrough}: bytes that are not cached come back from the log a range at
 * a time, into the cache, once per range however many readers miss on it.
 */
@Timeout(60)
class ReadThroughTest {
    private static final int RANGE = 64 * 1024;
    private static final int APPEND = 8000;
    private static final int APPENDS = 125;
    private static final long LENGTH = (long) APPEND * APPENDS;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    /** The store the tests read through: 4 KB index entries, a manual manager, a small log of 256 KiB files. */
    private SegmentStore.Builder builder(final BlockCache cache, final int rangeLength) {
        return SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).fileLength(256 * 1024).build())
            .readThroughRangeLength(rangeLength);
    }

    private SegmentStore store(final long cacheCapacity, final int rangeLength) {
        final BlockCache cache = TestSegments.cache(cacheCapacity);
        closer.add(cache);
        final SegmentStore store = builder(cache, rangeLength).build();
        closer.add(store);
        return store;
    }

    private static void fill(final SegmentStore store, final String name) {
        store.create(name);
        final List<CompletableFuture<Long>> appends = new ArrayList<>();
        for (int i = 0; i < APPENDS; i++) {
            appends.add(store.appendAsync(name, TestSegments.buffer(7, (long) i * APPEND, APPEND)));
        }
        appends.forEach(CompletableFuture::join);
    }

    private static long freeBlocks(final BlockCache cache) {
        return cache.stats().blockCount() - cache.stats().usedBlockCount();
    }

    private static void evictAll(final SegmentStore store, final String name) {
        for (int i = 0; i < 4; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
        try (ReadResult result = store.read(name, 0, 10)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status(), "evicted");
        }
    }

    @Test
    void shouldLetACatchUpReaderReadAWholeEvictedSegmentLoadingEachRangeOnce() throws Exception {
        final SegmentStore store = store(8 << 20, RANGE);
        fill(store, "s");
        evictAll(store, "s");
        final byte[] read = new byte[(int) LENGTH];
        long at = 0;
        int cachedReads = 0;
        int reads = 0;
        while (at < LENGTH) {
            try (ReadResult result = store.readThrough("s", at, 5000).get(10, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, "bytes at " + at);
                result.data().getBytes(result.data().readerIndex(), read, (int) at, result.length());
                at += result.length();
                reads++;
            }
            try (ReadResult again = store.read("s", Math.max(0, at - 1), 1)) {
                cachedReads += again.length();
            }
        }
        assertArrayEquals(TestSegments.pattern(7, 0, (int) LENGTH), read);
        assertEquals(reads, cachedReads, "what was read through is cached from then on");
        final HistoricalReadStats stats = store.historicalReader().stats();
        assertEquals((LENGTH + RANGE - 1) / RANGE, stats.loads(), "one load per range: " + stats);
        try (ReadResult result = store.readThrough("s", LENGTH - 10, 100).get(10, TimeUnit.SECONDS)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status());
            assertEquals(10, result.length());
        }
    }

    @Test
    void shouldReadARangeOnceWhenManyReadersMissOnItAtOnce() throws Exception {
        final SegmentStore store = store(8 << 20, RANGE);
        fill(store, "s");
        evictAll(store, "s");
        final int readers = 16;
        final CountDownLatch start = new CountDownLatch(1);
        final ExecutorService threads = Executors.newFixedThreadPool(readers);
        try {
            final List<Future<byte[]>> results = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                final long offset = 3L * RANGE + 100L * i;
                results.add(threads.submit(() -> {
                    start.await();
                    try (ReadResult result = store.readThrough("s", offset, 1000).get(10, TimeUnit.SECONDS)) {
                        return TestSegments.bytes(result);
                    }
                }));
            }
            start.countDown();
            for (int i = 0; i < readers; i++) {
                assertArrayEquals(TestSegments.pattern(7, 3L * RANGE + 100L * i, 1000), results.get(i).get(10, TimeUnit.SECONDS));
            }
        } finally {
            threads.shutdownNow();
        }
        assertEquals(1, store.historicalReader().stats().loads(), "one read of the range: " + store.historicalReader().stats());
    }

    @Test
    void shouldServeTheBytesFromTheLogWhenTheCacheCannotTakeThem() throws Exception {
        final BlockCache cache = BlockCache.builder().capacity(64 * 1024).blockLength(TestSegments.BLOCK_LENGTH)
            .bufferLength(TestSegments.BUFFER_LENGTH).fullRetryTimeout(Duration.ofMillis(5)).registerMBean(false).build();
        closer.add(cache);
        final SegmentStore store = builder(cache, RANGE).build();
        closer.add(store);
        fill(store, "s");
        evictAll(store, "s");
        // Readers pin a segment that fills the cache: nothing can be evicted for the ranges.
        store.create("hog");
        final List<ReadResult> pins = new ArrayList<>();
        final List<Integer> foreign = new ArrayList<>();
        // Filling "s" may already have found the cache full (its appends run concurrently with
        // the evictions they cause): only a commit the hog could not cache counts.
        final long uncachedBefore = store.uncachedCommitBytes();
        try {
            for (int i = 0; i < 40 && store.uncachedCommitBytes() == uncachedBefore; i++) {
                final long offset = store.append("hog", TestSegments.buffer(9, i * 4000L, 4000));
                pins.add(store.read("hog", offset, 4000));
            }
            assertTrue(store.uncachedCommitBytes() > uncachedBefore, "the cache is full of pinned entries");
            // The hog leaves a few blocks free (an append that did not fit may need more than
            // remain). Entries the store does not own take them, so no range can be cached: the
            // store's own ranges would otherwise evict each other and the fill would succeed.
            // A full cache may fail an insert while another thread's eviction pass is still
            // freeing blocks (the test's retry timeout is 5 ms), so top up until none is free.
            for (int round = 0; round < 100 && freeBlocks(cache) > 0; round++) {
                try {
                    foreign.add(cache.insert(Unpooled.wrappedBuffer(new byte[1])));
                } catch (final CacheFullException e) {
                    Thread.sleep(10);
                }
            }
            assertEquals(0, freeBlocks(cache), "no block free");
            final int length = 5 * RANGE;
            final byte[] read = new byte[length];
            int at = 0;
            while (at < length) {
                try (ReadResult result = store.readThrough("s", at, Math.min(20_000, length - at)).get(10, TimeUnit.SECONDS)) {
                    assertTrue(result.length() > 0, "bytes at " + at);
                    result.data().getBytes(result.data().readerIndex(), read, at, result.length());
                    at += result.length();
                }
            }
            assertArrayEquals(TestSegments.pattern(7, 0, length), read);
        } finally {
            pins.forEach(ReadResult::release);
            foreign.forEach(cache::delete);
        }
        // A fill that finds no free room gives up (it never waits for memory): counted, not failed.
        assertTrue(store.isolationStats().fillsRefusedNoRoom() > 0, "the cache could not take the ranges: " + store.isolationStats());
    }

    /**
     * An evicted segment is one placeholder, much longer than the maximum entry length, and so is
     * a recovered one; reading through into its middle caches the range in entries of at most
     * the maximum entry length, with placeholders on both sides.
     */
    @Test
    void shouldReadThroughIntoTheMiddleOfOneLongPlaceholder() throws Exception {
        final SegmentStore store = store(8 << 20, RANGE);
        fill(store, "s");
        evictAll(store, "s");
        assertEquals(List.of(new EntryView(0, (int) LENGTH, false, 0)), TestSegments.entries(store, "s"),
            "the evicted segment is one placeholder");
        readThroughRangeAndCheck(store, 3L * RANGE);
        store.close();

        final BlockCache cache = TestSegments.cache(8 << 20);
        closer.add(cache);
        final SegmentStore recovered = builder(cache, RANGE).build();
        closer.add(recovered);
        assertEquals(List.of(new EntryView(0, (int) LENGTH, false, 0)), TestSegments.entries(recovered, "s"),
            "a recovered segment is one placeholder too");
        readThroughRangeAndCheck(recovered, 5L * RANGE);
    }

    private static void readThroughRangeAndCheck(final SegmentStore store, final long rangeStart) throws Exception {
        try (ReadResult result = store.readThrough("s", rangeStart + 100, 1000).get(10, TimeUnit.SECONDS)) {
            assertEquals(1000, result.length());
            assertArrayEquals(TestSegments.pattern(7, rangeStart + 100, 1000), TestSegments.bytes(result));
        }
        final List<EntryView> expected = new ArrayList<>();
        expected.add(new EntryView(0, (int) rangeStart, false, 0));
        for (long at = rangeStart; at < rangeStart + RANGE; at += 4096) {
            expected.add(new EntryView(at, 4096, true, 0));
        }
        expected.add(new EntryView(rangeStart + RANGE, (int) (LENGTH - rangeStart - RANGE), false, 0));
        assertEquals(expected, TestSegments.entries(store, "s"), "the range in pieces of at most 4096, placeholders around it");
        try (ReadResult result = store.read("s", rangeStart, 10 * RANGE)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status());
            assertEquals(rangeStart + RANGE, result.nextOffset(), "the range is cached, the bytes after it are not");
            assertArrayEquals(TestSegments.pattern(7, rangeStart, RANGE), TestSegments.bytes(result));
        }
        try (ReadResult result = store.read("s", rangeStart - 1, 10)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status());
            assertEquals(0, result.length(), "the bytes before the range are not cached");
        }
    }

    @Test
    void shouldReadOnTheMissingCallersThreadWithNoReadingThreads() throws Exception {
        final BlockCache cache = TestSegments.cache(8 << 20);
        closer.add(cache);
        final SegmentStore store = builder(cache, RANGE)
            .readThroughThreads(0)
            .readThroughMaxGap(0)
            .build();
        closer.add(store);
        fill(store, "s");
        evictAll(store, "s");
        final CompletableFuture<ReadResult> future = store.readThrough("s", 3L * RANGE + 5, 1000);
        assertTrue(future.isDone(), "no reading thread: the range was read before readThrough returned");
        try (ReadResult result = future.get()) {
            assertArrayEquals(TestSegments.pattern(7, 3L * RANGE + 5, 1000), TestSegments.bytes(result));
        }
        assertEquals(1, store.historicalReader().stats().loads());
    }

    @Test
    void shouldRefuseNegativeReadingThreadsOrGapWhenBuilt() {
        final BlockCache cache = TestSegments.cache(1 << 20);
        closer.add(cache);
        final CacheConfigurationException threads = assertThrows(CacheConfigurationException.class,
            () -> SegmentStore.builder(cache).log(TestLogs.small(directory).build()).readThroughThreads(-1).build());
        assertTrue(threads.getMessage().contains("readThroughThreads=-1"), threads.getMessage());
        final CacheConfigurationException gap = assertThrows(CacheConfigurationException.class,
            () -> SegmentStore.builder(cache).log(TestLogs.small(directory).build()).readThroughMaxGap(-1).build());
        assertTrue(gap.getMessage().contains("readThroughMaxGap=-1"), gap.getMessage());
    }

    @Test
    void shouldFailACatchUpReadRacingRetentionOnlyWithSegmentTruncated() throws Exception {
        // Retention truncates behind a catch-up reader while its ranges are read through the log,
        // and the log deletes the files truncation left dead. A read whose range located records
        // in such a file just before it was deleted used to fail with NoSuchFileException (seen
        // in the stress harness under load); it must read again, and fail, if at all, only with
        // SegmentTruncatedException, never with an I/O error.
        final BlockCache cache = TestSegments.cache(256 * 1024);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).build())
            .readThroughRangeLength(16 * 1024)
            .build();
        closer.add(store);
        store.create("s");
        final long keep = 192 * 1024;
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            final Future<?> writer = threads.submit(() -> {
                long length = 0;
                while (!stop.get()) {
                    store.append("s", TestSegments.buffer(7, length, 4000));
                    length += 4000;
                    if (length > 2 * keep) {
                        store.truncate("s", length - keep);
                    }
                    store.cacheManager().advanceGeneration();
                    store.cacheManager().evictDownTo(0.0);
                }
                return null;
            });
            final Future<Long> reader = threads.submit(() -> {
                long position = 0;
                long read = 0;
                while (!stop.get()) {
                    final long start = store.info("s").startOffset();
                    if (position < start) {
                        position = start;
                    }
                    try (ReadResult result = store.readThrough("s", position, 8000).get(10, TimeUnit.SECONDS)) {
                        if (result.length() > 0) {
                            assertArrayEquals(TestSegments.pattern(7, position, result.length()), TestSegments.bytes(result));
                            position += result.length();
                            read += result.length();
                        } else {
                            Thread.onSpinWait();
                        }
                    } catch (final ExecutionException e) {
                        if (!(e.getCause() instanceof SegmentTruncatedException)) {
                            failures.add(e.getCause());
                            return read;
                        }
                    }
                }
                return read;
            });
            final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until && failures.isEmpty() && !writer.isDone() && !reader.isDone()) {
                Thread.sleep(20);
            }
            stop.set(true);
            writer.get(10, TimeUnit.SECONDS);
            final long read = reader.get(10, TimeUnit.SECONDS);
            assertEquals(List.of(), failures);
            assertTrue(read > 0, "the reader read");
            assertTrue(store.historicalReader().stats().loads() > 0, "ranges were read through the log");
            assertTrue(store.logDirectory().filesDeleted() > 0, "retention left files dead and the log deleted them");
        } finally {
            stop.set(true);
            threads.shutdownNow();
        }
    }

    @Test
    void shouldReturnAReadAsIsWithoutALog() throws Exception {
        final BlockCache cache = TestSegments.cache(1 << 20);
        closer.add(cache);
        final SegmentStore store = TestSegments.store(cache, 4096);
        closer.add(store);
        store.create("s");
        store.append("s", TestSegments.buffer(1, 0, 100));
        try (ReadResult result = store.readThrough("s", 0, 1000).get(10, TimeUnit.SECONDS)) {
            assertEquals(ReadStatus.END_OF_DATA, result.status());
            assertArrayEquals(TestSegments.pattern(1, 0, 100), TestSegments.bytes(result));
        }
    }
}
