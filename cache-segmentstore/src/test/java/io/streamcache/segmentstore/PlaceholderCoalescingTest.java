package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placeholders (index entries not cached) are coalesced: evicting next to a placeholder grows it
 * instead of leaving one placeholder per evicted entry, fills cut a long placeholder into cached
 * pieces of at most the maximum entry length, and a store that never truncates keeps an index
 * bounded by what it caches, not by what it ever appended.
 */
class PlaceholderCoalescingTest extends ManualStoreFixture {
    private static final long SEED = 11;

    private void append(final long from, final int length) {
        assertEquals(from, store.append("s", buffer(SEED, from, length)));
    }

    private void evict(final long... offsets) {
        policy.selectOffsets("s", offsets);
        store.cacheManager().evictDownTo(0.0);
        policy.selectOffsets("s");
    }

    private void assertReads(final long offset, final int maxLength, final int expectedLength, final ReadStatus expectedStatus) {
        try (ReadResult result = store.read("s", offset, maxLength)) {
            assertEquals(expectedStatus, result.status(), () -> "read offset=" + offset + " maxLength=" + maxLength);
            assertEquals(offset + expectedLength, result.nextOffset(), () -> "read offset=" + offset);
            assertArrayEquals(pattern(SEED, offset, expectedLength), bytes(result));
        }
    }

    private static EntryView cached(final long offset, final int length) {
        return new EntryView(offset, length, true, 0);
    }

    private static EntryView placeholder(final long offset, final int length) {
        return new EntryView(offset, length, false, 0);
    }

    // ------------------------------------------------------------------------------------------
    // Eviction

    @Test
    void shouldCoalesceNeighboursEvictedInOnePass() {
        append(0, 5000);
        evict(1000, 2000, 3000);
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 3000), cached(4000, 1000)), entries(store, "s"));
        assertEquals(2, cache.stats().entryCount(), "the evicted entries freed their cache entries");
        assertReads(0, 10_000, 1000, ReadStatus.NOT_CACHED);
        assertReads(2500, 10, 0, ReadStatus.NOT_CACHED);
        assertReads(4000, 10_000, 1000, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldGrowAPlaceholderOnEitherSideWhenANeighbourIsEvictedLater() {
        append(0, 5000);
        evict(1000);
        evict(2000);
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 2000), cached(3000, 1000), cached(4000, 1000)), entries(store, "s"),
            "evicted after a placeholder: the placeholder grows");
        evict(0);
        assertEquals(List.of(placeholder(0, 3000), cached(3000, 1000), cached(4000, 1000)), entries(store, "s"),
            "evicted before a placeholder: it absorbs the placeholder");
        assertReads(2999, 10, 0, ReadStatus.NOT_CACHED);
        assertReads(3000, 10_000, 2000, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldMergeAnEntryEvictedBetweenTwoPlaceholdersIntoOne() {
        append(0, 5000);
        evict(1000, 3000);
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 1000), cached(2000, 1000), placeholder(3000, 1000),
            cached(4000, 1000)), entries(store, "s"));
        evict(2000);
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 3000), cached(4000, 1000)), entries(store, "s"));
        for (final long offset : new long[] {1000, 1999, 2000, 2999, 3000, 3999}) {
            assertReads(offset, 100, 0, ReadStatus.NOT_CACHED);
        }
        assertReads(500, 10_000, 500, ReadStatus.NOT_CACHED);
        assertEquals(2, cache.stats().entryCount());
    }

    @Test
    void shouldNotCoalesceAcrossAPinnedEntry() {
        append(0, 3000);
        try (ReadResult held = store.read("s", 1000, 10)) {
            evict(0, 1000, 2000);
            assertEquals(List.of(placeholder(0, 1000), new EntryView(1000, 1000, true, 1), placeholder(2000, 1000)), entries(store, "s"));
            assertArrayEquals(pattern(SEED, 1000, 10), bytes(held));
        }
        evict(1000);
        assertEquals(List.of(placeholder(0, 3000)), entries(store, "s"), "released and evicted: one placeholder");
        assertEquals(0, cache.stats().entryCount());
    }

    @Test
    void shouldNotCoalesceBeyondTheDurableLength() {
        // A cache of its own: the fixture's cache has the fixture store's manager, and a cache takes one.
        final BlockCache own = TestSegments.cache(1 << 20);
        final SegmentStore undurable = SegmentStore.builder(own).maxIndexEntryLength(MAX_ENTRY).appendsDurable(false)
            .cacheManager(TestSegments.manualManager(own).policy(policy)).build();
        try {
            undurable.create("u");
            undurable.append("u", buffer(SEED, 0, 4000));
            undurable.markDurable("u", 2500);
            policy.selectOffsets("u", 0, 1000, 2000, 3000);
            undurable.cacheManager().evictDownTo(0.0);
            assertEquals(List.of(placeholder(0, 2000), cached(2000, 1000), cached(3000, 1000)), entries(undurable, "u"));
        } finally {
            undurable.close();
            own.close();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Fill and append after a placeholder

    @Test
    void shouldFillALongPlaceholderInPiecesOfAtMostTheMaxEntryLength() {
        append(0, 6000);
        evict(0, 1000, 2000, 3000, 4000, 5000);
        assertEquals(List.of(placeholder(0, 6000)), entries(store, "s"));

        assertEquals(2700, store.fill("s", 1500, buffer(SEED, 1500, 2700)));
        assertEquals(List.of(placeholder(0, 1500), cached(1500, 1000), cached(2500, 1000), cached(3500, 700), placeholder(4200, 1800)),
            entries(store, "s"));
        assertReads(0, 100, 0, ReadStatus.NOT_CACHED);
        assertReads(1499, 100, 0, ReadStatus.NOT_CACHED);
        assertReads(1500, 10_000, 2700, ReadStatus.NOT_CACHED);
        assertReads(4199, 10_000, 1, ReadStatus.NOT_CACHED);
        assertReads(4200, 100, 0, ReadStatus.NOT_CACHED);
        assertReads(5999, 100, 0, ReadStatus.NOT_CACHED);

        assertEquals(6000 - 2700, store.fill("s", 0, buffer(SEED, 0, 6000)), "only the bytes not cached are copied");
        final List<EntryView> entries = entries(store, "s");
        assertTrue(entries.stream().allMatch(e -> e.cached() && e.length() <= MAX_ENTRY), entries.toString());
        assertEquals(List.of(cached(0, 1000), cached(1000, 500), cached(1500, 1000), cached(2500, 1000), cached(3500, 700),
            cached(4200, 1000), cached(5200, 800)), entries);
        assertReads(0, 10_000, 6000, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldLeaveAConsistentIndexWhenAFillOfALongPlaceholderRunsOutOfRoom() {
        // A cache of one 8 KB buffer: 31 blocks of 256 bytes, 4 per 1000-byte piece.
        final BlockCache small = TestSegments.cache(TestSegments.BUFFER_LENGTH);
        final OffsetSelectingPolicy none = new OffsetSelectingPolicy();
        final SegmentStore tiny = SegmentStore.builder(small).maxIndexEntryLength(MAX_ENTRY)
            .cacheManager(TestSegments.manualManager(small).policy(none)).build();
        try {
            tiny.create("t");
            for (int i = 0; i < 7; i++) {
                tiny.append("t", buffer(SEED, i * 1000L, 1000));
            }
            none.select((name, entry) -> true);
            tiny.cacheManager().evictDownTo(0.0);
            none.select((name, entry) -> false);
            assertEquals(List.of(placeholder(0, 7000)), entries(tiny, "t"));
            tiny.append("t", buffer(SEED, 7000, 6000));
            // 24 blocks used, 7 free: the fill's first piece takes 4, the second finds 3.
            assertThrows(io.streamcache.core.CacheFullException.class, () -> tiny.fill("t", 1000, buffer(SEED, 1000, 3000)));
            assertEquals(List.of(placeholder(0, 1000), cached(1000, 1000), placeholder(2000, 5000)), entries(tiny, "t").subList(0, 3));
            try (ReadResult result = tiny.read("t", 1000, 5000)) {
                assertEquals(ReadStatus.NOT_CACHED, result.status());
                assertEquals(2000, result.nextOffset());
                assertArrayEquals(pattern(SEED, 1000, 1000), bytes(result));
            }
        } finally {
            tiny.close();
            small.close();
        }
    }

    /**
     * A fill's cache insert that finds the cache full runs an eviction pass on the filling
     * thread, which holds the segment's lock again (reentrant): the pass may evict the entry
     * before the placeholder being filled and coalesce the placeholder into it. The fill must
     * split the placeholder that covers its bytes after the insert, not the one it found before.
     */
    @Test
    void shouldFillAPlaceholderThatTheFullHandlerCoalescedIntoItsNeighbour() {
        // One 8 KB buffer: 31 blocks of 256 bytes, 4 per 1000-byte entry.
        final BlockCache small = TestSegments.cache(TestSegments.BUFFER_LENGTH);
        final OffsetSelectingPolicy selecting = new OffsetSelectingPolicy();
        final SegmentStore tiny = SegmentStore.builder(small).maxIndexEntryLength(MAX_ENTRY)
            .cacheManager(TestSegments.manualManager(small).policy(selecting)).build();
        try {
            tiny.create("t");
            tiny.append("t", buffer(SEED, 0, 7000));
            selecting.selectOffsets("t", 1000);
            tiny.cacheManager().evictDownTo(0.0);
            tiny.append("t", buffer(SEED, 7000, 1000));
            assertEquals(3, small.stats().blockCount() - small.stats().usedBlockCount(), "28 blocks used");
            // The fill needs 4 blocks: the full handler evicts the entry at 0, which absorbs the placeholder.
            selecting.selectOffsets("t", 0);
            assertEquals(1000, tiny.fill("t", 1000, buffer(SEED, 1000, 1000)));
            assertEquals(List.of(placeholder(0, 1000), cached(1000, 1000), cached(2000, 1000)), entries(tiny, "t").subList(0, 3));
            assertEquals(8, entries(tiny, "t").size());
            try (ReadResult result = tiny.read("t", 0, 10)) {
                assertEquals(ReadStatus.NOT_CACHED, result.status());
            }
            try (ReadResult result = tiny.read("t", 1000, 10_000)) {
                assertEquals(ReadStatus.END_OF_DATA, result.status());
                assertArrayEquals(pattern(SEED, 1000, 7000), bytes(result));
            }
        } finally {
            tiny.close();
            small.close();
        }
    }

    @Test
    void shouldGrowATrailingPlaceholderWithAGapInsteadOfAddingEntries() {
        append(0, 2000);
        evict(1000);
        final Segment segment = store.segmentOrNull("s");
        segment.lock();
        try {
            segment.appendGapLocked(5500L);
        } finally {
            segment.unlock();
        }
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 6500)), entries(store, "s"));
        assertEquals(7500, store.info("s").length());
        assertReads(7000, 100, 0, ReadStatus.NOT_CACHED);
        append(7500, 300);
        assertEquals(List.of(cached(0, 1000), placeholder(1000, 6500), cached(7500, 300)), entries(store, "s"),
            "appends never grow a placeholder");
        assertReads(7500, 1000, 300, ReadStatus.END_OF_DATA);
    }

    // ------------------------------------------------------------------------------------------
    // Truncation

    @Test
    void shouldTruncateIntoAndThroughAPlaceholder() {
        append(0, 5000);
        evict(1000, 2000, 3000);
        store.truncate("s", 2500);
        assertEquals(List.of(placeholder(1000, 3000), cached(4000, 1000)), entries(store, "s"), "the placeholder straddles the start");
        assertThrows(SegmentTruncatedException.class, () -> store.read("s", 2499, 10));
        assertReads(2500, 100, 0, ReadStatus.NOT_CACHED);
        assertReads(3999, 100, 0, ReadStatus.NOT_CACHED);

        assertEquals(1500, store.fill("s", 2000, buffer(SEED, 2000, 2000)), "bytes before the start are skipped");
        assertEquals(List.of(placeholder(1000, 1500), cached(2500, 1000), cached(3500, 500), cached(4000, 1000)), entries(store, "s"));
        assertReads(2500, 10_000, 2500, ReadStatus.END_OF_DATA);

        evict(2500, 3500);
        assertEquals(List.of(placeholder(1000, 3000), cached(4000, 1000)), entries(store, "s"));
        store.truncate("s", 4000);
        assertEquals(List.of(cached(4000, 1000)), entries(store, "s"), "truncated through the whole placeholder");
        assertEquals(1, cache.stats().entryCount());
        assertReads(4000, 10_000, 1000, ReadStatus.END_OF_DATA);
    }

    // ------------------------------------------------------------------------------------------
    // The bound

    /**
     * A store that never truncates appends 50x what its cache holds, with the full handler and
     * passes evicting and fills putting random ranges back: before coalescing its index kept one
     * placeholder per evicted entry (about 2,000 per segment here); now the placeholders never
     * outnumber the cached entries by more than one, whatever was appended.
     */
    @Test
    void shouldKeepTheIndexOfAStoreThatNeverTruncatesBoundedByWhatItCaches() {
        final BlockCache small = TestSegments.cache(16 * TestSegments.BUFFER_LENGTH);
        final SegmentStore untruncated = SegmentStore.builder(small).maxIndexEntryLength(MAX_ENTRY)
            .cacheManager(TestSegments.manualManager(small).targetUtilization(0.6)).build();
        final Random random = new Random(42);
        final String[] names = {"a", "b", "c"};
        final long[] lengths = new long[names.length];
        try {
            for (final String name : names) {
                untruncated.create(name);
            }
            long appended = 0;
            int maxPlaceholders = 0;
            for (int op = 0; appended < 50L * small.stats().capacity(); op++) {
                final int i = random.nextInt(names.length);
                final String name = names[i];
                final int choice = random.nextInt(100);
                if (choice < 80) {
                    final int length = 1 + random.nextInt(2 * MAX_ENTRY);
                    untruncated.append(name, buffer(i, lengths[i], length));
                    lengths[i] += length;
                    appended += length;
                } else if (choice < 90 && lengths[i] > 0) {
                    final long from = (long) (random.nextDouble() * lengths[i]);
                    final int length = (int) Math.min(lengths[i] - from, 1 + random.nextInt(3 * MAX_ENTRY));
                    untruncated.fill(name, from, buffer(i, from, length));
                } else if (choice < 95) {
                    untruncated.cacheManager().advanceGeneration();
                    untruncated.cacheManager().evictNow();
                } else if (lengths[i] > 0) {
                    final long from = (long) (random.nextDouble() * lengths[i]);
                    try (ReadResult result = untruncated.read(name, from, 3 * MAX_ENTRY)) {
                        assertArrayEquals(pattern(i, from, result.length()), bytes(result), name + " at " + from);
                    }
                }
                // Each operation its own generation: the full handler always finds older entries.
                untruncated.cacheManager().advanceGeneration();
                for (final String each : names) {
                    final List<EntryView> entries = entries(untruncated, each);
                    final long cachedCount = entries.stream().filter(EntryView::cached).count();
                    final long placeholders = entries.size() - cachedCount;
                    maxPlaceholders = (int) Math.max(maxPlaceholders, placeholders);
                    assertTrue(placeholders <= cachedCount + 1,
                        "op " + op + ": segment " + each + " holds " + placeholders + " placeholders for " + cachedCount + " cached entries");
                    for (int k = 1; k < entries.size(); k++) {
                        assertTrue(entries.get(k - 1).cached() || entries.get(k).cached(), "op " + op + ": adjacent placeholders in " + each
                            + " at " + entries.get(k).offset());
                    }
                }
            }
            // The cache holds about 500 blocks (128 KB); each segment appended about 2 MB.
            for (int i = 0; i < names.length; i++) {
                final int size = entries(untruncated, names[i]).size();
                assertTrue(lengths[i] / MAX_ENTRY > 1500, "the segment appended " + lengths[i] + " bytes");
                assertTrue(size < 300, names[i] + " holds " + size + " index entries for " + lengths[i] + " bytes appended");
            }
            assertTrue(untruncated.cacheManager().stats().evictions() > 1000, "evictions ran: " + untruncated.cacheManager().stats());
            assertTrue(maxPlaceholders > 1, "the run made gaps: " + maxPlaceholders);
        } finally {
            untruncated.close();
            small.close();
        }
    }
}
