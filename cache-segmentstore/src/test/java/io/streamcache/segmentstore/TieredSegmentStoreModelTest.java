package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.cache.TierStats;
import io.streamcache.segmentstore.TestSegments.EntryView;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import io.streamcache.segmentstore.eviction.TierAdmission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A store over a two-tier cache (a small fast tier in front of a larger slow one) against a map
 * of byte arrays, under random appends, reads (some held open, pinning their entries),
 * truncates and deletes, while the cache manager's thread demotes, evicts from the last tier and
 * promotes, and the test thread forces passes and promotions too. Every read must return the
 * reference's bytes; it may stop at NOT_CACHED only once the manager has evicted something, and
 * a held result's views must keep their bytes however entries move; each read is repeated as a
 * copying read, held to the same rules. Then a concurrency test:
 * appenders, readers and the manager's thread at once.
 */
class TieredSegmentStoreModelTest {
    private static final String[] NAMES = {"alpha", "beta", "gamma", "delta"};
    private static final int OPERATIONS = 12_000;

    private record Held(ReadResult result, byte[] expected) {
    }

    private static BlockCache cache() {
        // 2 fast buffers (62 blocks, 15.5 KB) in front of 4 slow ones (124 blocks, 31 KB): the
        // segments outgrow both, so the last tier evicts.
        return TestSegments.tieredCache(2, 4);
    }

    private static TierAdmission admission(final String name) {
        return switch (name) {
            case "all" -> TierAdmission.all();
            case "size" -> TierAdmission.sizeThreshold(700);
            case "auto" -> TierAdmission.auto();
            default -> throw new IllegalArgumentException(name);
        };
    }

    @ParameterizedTest(name = "seed={0} admission={1} maxEntry={2}")
    @CsvSource({"1, all, 1000", "2, size, 1000", "3, auto, 1000", "4, all, 300", "5, auto, 4096"})
    @Timeout(120)
    void shouldMatchAMapOfByteArraysWhileEntriesMoveBetweenTiers(final long seed, final String admissionName, final int maxEntry)
        throws Exception {
        final BlockCache cache = cache();
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(maxEntry)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ofMillis(1))
                .tierTargetUtilization(0, 0.5).tierTargetUtilization(1, 0.8)
                .admission(admission(admissionName)).promotion(1, Duration.ofMillis(1)))
            .build();
        final CacheManager manager = store.cacheManager();
        final Random random = new Random(seed);
        final Map<String, byte[]> model = new HashMap<>();
        final Map<String, Long> starts = new HashMap<>();
        final List<Held> held = new ArrayList<>();
        int reads = 0;
        int copies = 0;
        int notCached = 0;
        try {
            for (int step = 0; step < OPERATIONS; step++) {
                final String name = NAMES[random.nextInt(NAMES.length)];
                final byte[] data = model.get(name);
                final int op = random.nextInt(100);
                if (data == null) {
                    store.create(name);
                    model.put(name, new byte[0]);
                    starts.put(name, 0L);
                } else if (op < 40) {
                    final byte[] piece = new byte[1 + random.nextInt(1500)];
                    random.nextBytes(piece);
                    try {
                        store.append(name, Unpooled.wrappedBuffer(piece));
                        final byte[] grown = Arrays.copyOf(data, data.length + piece.length);
                        System.arraycopy(piece, 0, grown, data.length, piece.length);
                        model.put(name, grown);
                    } catch (final CacheException e) {
                        // All or nothing: the store is as it was (held results may pin the cache full).
                    }
                } else if (op < 80) {
                    final long start = starts.get(name);
                    if (data.length == start) {
                        continue;
                    }
                    final long offset = start + random.nextInt((int) (data.length - start));
                    final int max = 1 + random.nextInt(4000);
                    final ReadResult result = store.read(name, offset, max);
                    reads++;
                    final byte[] got = bytes(result);
                    final byte[] expected = Arrays.copyOfRange(data, (int) offset, (int) offset + got.length);
                    assertArrayEquals(expected, got, "read " + name + " at " + offset + ", step " + step);
                    if (result.status() == ReadStatus.NOT_CACHED) {
                        notCached++;
                        assertTrue(manager.stats().evictions() > 0, "NOT_CACHED before any eviction, step " + step);
                    } else {
                        assertEquals(Math.min(max, data.length - offset), got.length, "a read stops short only at NOT_CACHED");
                    }
                    // The same read copied: the manager's thread may have moved or evicted entries
                    // since, so the copy is checked against the reference on its own.
                    final ByteBuf destination = (step & 1) == 0 ? Unpooled.buffer(max, max) : Unpooled.directBuffer(max, max);
                    try {
                        final ReadStatus copyStatus = store.read(name, offset, destination);
                        copies++;
                        final byte[] copied = ByteBufUtil.getBytes(destination);
                        assertArrayEquals(Arrays.copyOfRange(data, (int) offset, (int) offset + copied.length), copied,
                            "copying read " + name + " at " + offset + ", step " + step);
                        if (copyStatus == ReadStatus.NOT_CACHED) {
                            assertTrue(manager.stats().evictions() > 0, "NOT_CACHED before any eviction, step " + step);
                        } else {
                            assertEquals(Math.min(max, data.length - offset), copied.length, "a copy stops short only at NOT_CACHED");
                            assertEquals(max < data.length - offset ? ReadStatus.MAX_LENGTH : ReadStatus.END_OF_DATA, copyStatus,
                                "copying read status, step " + step);
                        }
                    } finally {
                        destination.release();
                    }
                    if (random.nextInt(10) == 0 && held.size() < 6) {
                        held.add(new Held(result, got));
                    } else {
                        result.release();
                    }
                } else if (op < 86) {
                    final long start = starts.get(name);
                    final long to = start + random.nextInt((int) (data.length - start) + 1);
                    store.truncate(name, to);
                    starts.put(name, to);
                } else if (op < 88) {
                    store.delete(name);
                    model.remove(name);
                    starts.remove(name);
                } else if (op < 93) {
                    manager.evictNow();
                } else if (op < 96) {
                    manager.promoteNow();
                } else if (!held.isEmpty()) {
                    final Held h = held.remove(random.nextInt(held.size()));
                    assertArrayEquals(h.expected(), bytes(h.result()), "a held result's views changed, step " + step);
                    h.result().release();
                }
            }
            for (final Held h : held) {
                assertArrayEquals(h.expected(), bytes(h.result()), "a held result's views changed");
                h.result().release();
            }
            held.clear();
            // Every cached entry reads back the reference's bytes, whatever tier holds it.
            for (final Map.Entry<String, byte[]> segment : model.entrySet()) {
                final long start = starts.get(segment.getKey());
                for (final EntryView entry : entries(store, segment.getKey())) {
                    final long from = Math.max(start, entry.offset());
                    final long end = entry.offset() + entry.length();
                    if (entry.cached() && from < end) {
                        try (ReadResult result = store.read(segment.getKey(), from, (int) (end - from))) {
                            // The manager's thread may evict the entry after the listing: then a prefix (or nothing).
                            final byte[] got = bytes(result);
                            assertEquals(result.status() == ReadStatus.NOT_CACHED ? got.length : end - from, got.length);
                            assertArrayEquals(Arrays.copyOfRange(segment.getValue(), (int) from, (int) from + got.length), got,
                                segment.getKey() + " entry at " + entry.offset());
                        }
                    }
                }
            }
            final CacheManagerStats stats = manager.stats();
            assertTrue(stats.tier(0).demotions() > 0, "the run demoted: " + stats);
            assertTrue(stats.tier(0).promotions() > 0, "the run promoted: " + stats);
            assertTrue(stats.evictions() > 0, "the run evicted: " + stats);
            assertTrue(reads > 1000 && copies == reads && notCached > 0, "reads=" + reads + " copies=" + copies + " notCached=" + notCached);
            if (admissionName.equals("all")) {
                assertEquals(0, stats.tier(0).admissionRejections());
                assertTrue(stats.tier(1).evictions() > 0, "the run evicted from the last tier: " + stats);
            } else {
                assertTrue(stats.tier(0).admissionRejections() > 0, "the admission policy refused entries: " + stats);
            }
        } finally {
            for (final Held h : held) {
                h.result().release();
            }
            store.close();
        }
        final CacheStats stats = cache.stats();
        assertEquals(0, stats.usedBlockCount(), "closing the store frees every block: nothing leaked by relocation");
        for (final TierStats tier : stats.tiers()) {
            assertEquals(0, tier.entryCount(), tier.name());
            assertEquals(0, tier.storedBytes(), tier.name());
        }
        cache.close();
    }

    // ------------------------------------------------------------------------------------------
    // Concurrency

    @Test
    @Timeout(120)
    void shouldKeepEveryReadRightWithAppendersReadersAndTheManagerAtOnce() throws Exception {
        final BlockCache cache = cache();
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(1024)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ofMillis(1))
                .tierTargetUtilization(0, 0.5).tierTargetUtilization(1, 0.8).promotion(1, Duration.ofMillis(1)))
            .build();
        final int appenders = 3;
        final int readers = 3;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong readBytes = new AtomicLong();
        final ExecutorService pool = Executors.newFixedThreadPool(appenders + readers);
        try {
            for (int a = 0; a < appenders; a++) {
                store.create("s" + a);
            }
            final List<Future<?>> futures = new ArrayList<>();
            for (int a = 0; a < appenders; a++) {
                final String name = "s" + a;
                final long seed = a;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(seed);
                    long length = 0;
                    for (int i = 0; i < 3000; i++) {
                        final int n = 1 + random.nextInt(800);
                        try {
                            store.append(name, TestSegments.buffer(seed, length, n));
                            length += n;
                        } catch (final CacheException e) {
                            // The cache was full of pinned entries for a moment: the append did nothing.
                        }
                        if (i % 500 == 499) {
                            store.truncate(name, length / 2);
                        }
                    }
                    return null;
                }));
            }
            for (int r = 0; r < readers; r++) {
                final long readerSeed = 100 + r;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(readerSeed);
                    while (!stop.get()) {
                        final int a = random.nextInt(appenders);
                        final String name = "s" + a;
                        final SegmentInfo info = store.info(name);
                        if (info.length() == info.startOffset()) {
                            continue;
                        }
                        // Tail readers mostly, some catch-up reads further back (slow tier, promotions).
                        final long span = info.length() - info.startOffset();
                        final long offset = random.nextBoolean()
                            ? Math.max(info.startOffset(), info.length() - 1 - random.nextInt(2000))
                            : info.startOffset() + (long) (random.nextDouble() * span);
                        try (ReadResult result = store.read(name, offset, 1 + random.nextInt(3000))) {
                            final byte[] got = bytes(result);
                            assertArrayEquals(TestSegments.pattern(a, offset, got.length), got, name + " at " + offset);
                            readBytes.addAndGet(got.length);
                        } catch (final SegmentTruncatedException e) {
                            // The appender truncated past the offset after info(): fine.
                        }
                    }
                    return null;
                }));
            }
            for (int i = 0; i < appenders; i++) {
                futures.get(i).get(100, TimeUnit.SECONDS);
            }
            // The appenders are done: the readers go on while the manager promotes what they read
            // from the slow tier (the fast tier now has room), until it has promoted some.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (store.cacheManager().stats().tier(0).promotions() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            stop.set(true);
            for (final Future<?> future : futures) {
                future.get(30, TimeUnit.SECONDS);
            }
        } catch (final java.util.concurrent.ExecutionException e) {
            stop.set(true);
            fail(e.getCause());
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        final CacheManagerStats stats = store.cacheManager().stats();
        assertTrue(readBytes.get() > 0);
        assertTrue(stats.tier(0).demotions() > 0, "demotions ran concurrently: " + stats);
        assertTrue(stats.tier(0).promotions() > 0, "promotions ran concurrently with readers: " + stats);
        store.close();
        assertEquals(0, cache.stats().usedBlockCount(), "no block leaked");
        cache.close();
    }
}
