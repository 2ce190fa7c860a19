package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.segmentstore.internal.index.ReadIndexTree;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Index entries are reused across segments ({@code ReadIndexEntryPool}) while appenders,
 * readers holding and releasing zero-copy results, fills, truncations, deletions, the cache
 * manager's thread (passes and promotions over two tiers) and a thread forcing passes and
 * promotions all run at once on a small cache. The reference is arithmetic: every segment
 * incarnation has a seed of its own and its byte at offset {@code o} is
 * {@code TestSegments.at(seed, o)}, so a result that shows another segment's bytes, another
 * offset's, or bytes a reused cache block overwrote fails the byte check; a held result is
 * checked again just before its release. A reused entry that a stale holder acted on shows up
 * that way, or as an entry that cannot be pinned, recycled or unpinned (an exception on the
 * thread), or in the final checks: each tree's invariants, the entries covering each segment
 * without overlap, every cached byte, and an empty cache once every segment is deleted (a cache
 * entry freed twice or never).
 */
class EntryReuseConcurrencyTest {
    private static final int SLOTS = 6;
    private static final int APPENDERS = 2;
    private static final int READERS = 2;
    private static final int OPERATIONS_PER_APPENDER = 15_000;

    /** One segment's life: a name and a seed that no other incarnation shares. */
    private record Incarnation(String name, long seed) {
    }

    @ParameterizedTest(name = "seed={0} maxEntry={1}")
    @CsvSource({"1, 1000", "2, 300", "3, 4096"})
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void shouldReadOnlyEachSegmentsOwnBytesWhileEntriesAreReused(final long seed, final int maxEntry) throws Exception {
        final BlockCache cache = TestSegments.tieredCache(4, 8);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(maxEntry).fillTier(1)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ofMillis(1))
                .tierTargetUtilization(0, 0.5).tierTargetUtilization(1, 0.8).promotion(1, Duration.ofMillis(1)))
            .build();
        final CacheManager manager = store.cacheManager();
        final AtomicReferenceArray<Incarnation> slots = new AtomicReferenceArray<>(SLOTS);
        final AtomicLong incarnations = new AtomicLong();
        for (int slot = 0; slot < SLOTS; slot++) {
            slots.set(slot, create(store, slot, incarnations.incrementAndGet(), seed));
        }
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicBoolean appending = new AtomicBoolean(true);
        final AtomicLong verifiedBytes = new AtomicLong();
        final AtomicLong fills = new AtomicLong();
        final List<Thread> threads = new ArrayList<>();
        final List<Thread> appenders = new ArrayList<>();
        try {
            for (int a = 0; a < APPENDERS; a++) {
                final int id = a;
                final Thread t = new Thread(() -> guard(failure, () -> append(store, slots, incarnations, seed, id, failure)), "appender-" + a);
                appenders.add(t);
                threads.add(t);
            }
            for (int r = 0; r < READERS; r++) {
                final long readerSeed = seed * 31 + r;
                threads.add(new Thread(() -> guard(failure, () -> read(store, slots, readerSeed, appending, verifiedBytes, fills, failure)),
                    "reader-" + r));
            }
            threads.add(new Thread(() -> guard(failure, () -> {
                final SplittableRandom random = new SplittableRandom(seed * 17);
                while (appending.get() && failure.get() == null) {
                    manager.evictDownTo(0.2 + 0.7 * random.nextDouble());
                    manager.promoteNow();
                }
            }), "passes"));
            for (final Thread t : threads) {
                t.start();
            }
            for (final Thread t : appenders) {
                t.join();
            }
            appending.set(false);
            for (final Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("a thread failed", failure.get());
            }
            assertTrue(verifiedBytes.get() > 0, "the readers checked bytes");
            assertTrue(manager.stats().evictions() > 0, "entries were evicted (and coalesced, and recycled)");

            for (int slot = 0; slot < SLOTS; slot++) {
                checkSegment(store, slots.get(slot));
            }
            final SegmentContext context = store.segmentOrNull(slots.get(0).name()).context;
            for (int slot = 0; slot < SLOTS; slot++) {
                store.delete(slots.get(slot).name());
            }
            assertEquals(0, cache.stats().entryCount(), "every cache entry freed exactly once");
            assertTrue(context.entries.size() > 0, "removed entries went back to the pool");
            assertEquals(0, manager.stats().entryPins(), "no pin left");
        } finally {
            appending.set(false);
            store.close();
            cache.close();
        }
    }

    private static Incarnation create(final SegmentStore store, final int slot, final long incarnation, final long seed) {
        final Incarnation created = new Incarnation("s" + slot + "." + incarnation, seed * 1_000_003L + incarnation);
        store.create(created.name());
        return created;
    }

    /** Appends to this appender's slots; now and then truncates one, or deletes it and makes its next incarnation. */
    private static void append(final SegmentStore store, final AtomicReferenceArray<Incarnation> slots, final AtomicLong incarnations,
                               final long seed, final int id, final AtomicReference<Throwable> failure) {
        final SplittableRandom random = new SplittableRandom(seed * 7 + id);
        for (int i = 0; i < OPERATIONS_PER_APPENDER && failure.get() == null; i++) {
            final int slot = id + APPENDERS * random.nextInt(SLOTS / APPENDERS);
            final Incarnation segment = slots.get(slot);
            final SegmentInfo info = store.info(segment.name());
            final int op = random.nextInt(100);
            if (op < 85) {
                final int length = 1 + random.nextInt(1500);
                try {
                    assertEquals(info.length(), store.append(segment.name(), buffer(segment.seed(), info.length(), length)));
                } catch (final CacheException e) {
                    // Held results may pin the cache full: the append changed nothing.
                    assertEquals(info.length(), store.info(segment.name()).length(), "all or nothing");
                }
            } else if (op < 97) {
                final long span = info.length() - info.startOffset();
                store.truncate(segment.name(), info.startOffset() + (span == 0 ? 0 : random.nextLong(span + 1)));
            } else {
                final Incarnation next = create(store, slot, incarnations.incrementAndGet(), seed);
                slots.set(slot, next);
                store.delete(segment.name());
            }
        }
    }

    /**
     * Reads random ranges of random segments, checks every byte, holds some results and checks
     * them again before releasing them; fills what it finds not cached, and copies too.
     */
    private static void read(final SegmentStore store, final AtomicReferenceArray<Incarnation> slots, final long seed,
                             final AtomicBoolean appending, final AtomicLong verified, final AtomicLong fills,
                             final AtomicReference<Throwable> failure) {
        final SplittableRandom random = new SplittableRandom(seed);
        final List<ReadResult> held = new ArrayList<>();
        final List<Long> heldSeeds = new ArrayList<>();
        final ByteBuf copy = Unpooled.buffer(4096);
        try {
            while (appending.get() && failure.get() == null) {
                final Incarnation segment = slots.get(random.nextInt(SLOTS));
                try {
                    final SegmentInfo info = store.info(segment.name());
                    if (info.length() == info.startOffset()) {
                        continue;
                    }
                    final long offset = info.startOffset() + random.nextLong(info.length() - info.startOffset());
                    final int max = 1 + random.nextInt(4000);
                    if (random.nextInt(4) == 0) {
                        copy.clear();
                        copy.capacity(max);
                        store.read(segment.name(), offset, copy);
                        check(segment.seed(), offset, ByteBufUtil.getBytes(copy), "copy of " + segment.name());
                        verified.addAndGet(copy.readableBytes());
                        continue;
                    }
                    final ReadResult result = store.read(segment.name(), offset, max);
                    check(segment.seed(), offset, TestSegments.bytes(result), "read of " + segment.name());
                    verified.addAndGet(result.length());
                    if (result.status() == ReadStatus.NOT_CACHED && result.length() == 0) {
                        final int n = (int) Math.min(max, info.length() - offset);
                        store.fill(segment.name(), offset, buffer(segment.seed(), offset, n));
                        fills.incrementAndGet();
                    }
                    if (result.length() > 0 && held.size() < 8 && random.nextBoolean()) {
                        held.add(result);
                        heldSeeds.add(segment.seed());
                    } else {
                        result.close();
                    }
                } catch (final SegmentNotFoundException | SegmentTruncatedException | CacheException e) {
                    // Deleted or truncated meanwhile, or the cache is pinned full: nothing to check.
                }
                if (!held.isEmpty() && random.nextInt(3) == 0) {
                    final int i = random.nextInt(held.size());
                    final ReadResult result = held.remove(i);
                    final long resultSeed = heldSeeds.remove(i);
                    check(resultSeed, result.offset(), TestSegments.bytes(result), "held " + result);
                    result.close();
                }
            }
        } finally {
            for (int i = 0; i < held.size(); i++) {
                check(heldSeeds.get(i), held.get(i).offset(), TestSegments.bytes(held.get(i)), "held at the end " + held.get(i));
                held.get(i).close();
            }
        }
    }

    private static void check(final long seed, final long offset, final byte[] got, final String what) {
        final byte[] expected = pattern(seed, offset, got.length);
        if (!Arrays.equals(expected, got)) {
            int at = 0;
            while (expected[at] == got[at]) {
                at++;
            }
            throw new AssertionError(what + ": wrong byte at offset " + (offset + at) + " of " + got.length + " from " + offset);
        }
    }

    /** The tree's invariants, entries covering the segment without overlap, and every cached byte. */
    private static void checkSegment(final SegmentStore store, final Incarnation incarnation) {
        final Segment segment = store.segmentOrNull(incarnation.name());
        final SegmentInfo info = store.info(incarnation.name());
        segment.lock();
        try {
            ReadIndexTree.checkInvariants(segment.indexRoot);
            long end = -1;
            for (ReadIndexEntry e = ReadIndexTree.first(segment.indexRoot); e != null; e = ReadIndexTree.next(segment.indexRoot, e)) {
                assertTrue(end < 0 || e.offset() == end, incarnation + ": gap or overlap at " + e);
                assertTrue(!e.isRetired() && e.pinCount() == 0, incarnation + ": a live entry is retired or pinned: " + e);
                end = e.endOffset();
            }
            assertTrue(end < 0 || end == info.length(), incarnation + ": the entries end at the length");
        } finally {
            segment.unlock();
        }
        long offset = info.startOffset();
        while (offset < info.length()) {
            try (ReadResult result = store.read(incarnation.name(), offset, 1 << 16)) {
                check(incarnation.seed(), offset, TestSegments.bytes(result), "final read of " + incarnation.name());
                offset = result.length() > 0 ? result.nextOffset() : offset + 1;
            }
        }
    }

    private static void guard(final AtomicReference<Throwable> failure, final Runnable body) {
        try {
            body.run();
        } catch (final Throwable e) {
            failure.compareAndSet(null, e);
        }
    }
}
