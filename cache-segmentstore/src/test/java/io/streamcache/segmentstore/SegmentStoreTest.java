package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.List;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class SegmentStoreTest extends ManualStoreFixture {
    private static final long SEED = 7;

    private long append(final String name, final long seed, final long from, final int length) {
        return store.append(name, buffer(seed, from, length));
    }

    private void assertReads(final String name, final long seed, final long offset, final int maxLength,
                             final int expectedLength, final ReadStatus expectedStatus) {
        try (ReadResult result = store.read(name, offset, maxLength)) {
            assertEquals(expectedStatus, result.status(), () -> "read offset=" + offset + " maxLength=" + maxLength);
            assertEquals(expectedLength, result.length());
            assertEquals(offset, result.offset());
            assertEquals(offset + expectedLength, result.nextOffset());
            assertArrayEquals(pattern(seed, offset, expectedLength), bytes(result));
        }
    }

    // ------------------------------------------------------------------------------------------
    // Append and read

    @Test
    void shouldAppendAtTheEndAndReadBack() {
        assertEquals(0, append("s", SEED, 0, 100));
        assertEquals(100, append("s", SEED, 100, 250));
        assertEquals(350, append("s", SEED, 350, 1));
        assertReads("s", SEED, 0, 10_000, 351, ReadStatus.END_OF_DATA);
        assertEquals(new SegmentInfo("s", 0, 351, 351, false), store.info("s"));
    }

    @Test
    void shouldLeaveTheDataIndicesAlone() {
        final ByteBuf data = buffer(SEED, 0, 2500);
        final int readerIndex = data.readerIndex();
        final int writerIndex = data.writerIndex();
        store.append("s", data);
        assertEquals(readerIndex, data.readerIndex());
        assertEquals(writerIndex, data.writerIndex());
    }

    @Test
    void shouldAcceptAnEmptyAppendWithoutChange() {
        append("s", SEED, 0, 10);
        assertEquals(10, store.append("s", Unpooled.EMPTY_BUFFER));
        assertEquals(1, entries(store, "s").size());
        assertEquals(10, store.info("s").length());
    }

    @Test
    void shouldAppendAByteBufferFromItsPosition() {
        final ByteBuffer data = ByteBuffer.allocateDirect(300);
        data.put(new byte[50]).put(pattern(SEED, 0, 250)).flip().position(50);
        assertEquals(0, store.append("s", data));
        assertEquals(50, data.position(), "position not moved");
        assertReads("s", SEED, 0, 1000, 250, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldGrowTheLastEntryInPlaceUntilTheMaxEntryLength() {
        for (int i = 0; i < 10; i++) {
            append("s", SEED, i * 100L, 100);
            assertEquals(List.of(new EntryView(0, (i + 1) * 100, true, 0)), entries(store, "s"), "append " + i);
        }
        append("s", SEED, 1000, 100);
        assertEquals(List.of(new EntryView(0, 1000, true, 0), new EntryView(1000, 100, true, 0)), entries(store, "s"));
        assertEquals(2, cache.stats().entryCount());
        assertReads("s", SEED, 0, 5000, 1100, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldGrowTheIndexWithBytesNotAppends() {
        for (int i = 0; i < 2000; i++) {
            append("s", SEED, i * 5L, 5);
        }
        assertEquals(10, entries(store, "s").size(), "10,000 bytes in entries of 1,000");
        assertReads("s", SEED, 0, 20_000, 10_000, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldSplitAnAppendAcrossEntriesAtTheMaxEntryLength() {
        append("s", SEED, 0, 600);
        append("s", SEED, 600, 2500);
        assertEquals(List.of(
            new EntryView(0, 1000, true, 0),
            new EntryView(1000, 1000, true, 0),
            new EntryView(2000, 1000, true, 0),
            new EntryView(3000, 100, true, 0)), entries(store, "s"));
        append("s", SEED, 3100, 50);
        assertEquals(new EntryView(3000, 150, true, 0), entries(store, "s").get(3));
        assertReads("s", SEED, 0, 10_000, 3150, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldReadAcrossEntriesFromAnyOffset() {
        append("s", SEED, 0, 3500);
        for (long offset = 0; offset < 3500; offset += 97) {
            for (final int maxLength : new int[] {0, 1, 13, 999, 1000, 1001, 2500}) {
                final int expected = (int) Math.min(maxLength, 3500 - offset);
                final ReadStatus status = offset + expected == 3500 ? ReadStatus.END_OF_DATA : ReadStatus.MAX_LENGTH;
                assertReads("s", SEED, offset, maxLength, expected, status);
            }
        }
        try (ReadResult result = store.read("s", 900, 1200)) {
            assertEquals(3, result.viewCount(), "one view per entry covered");
            assertEquals(100, result.view(0).readableBytes());
            assertEquals(1000, result.view(1).readableBytes());
            assertEquals(100, result.view(2).readableBytes());
            assertArrayEquals(pattern(SEED, 1000, 1000), io.netty.buffer.ByteBufUtil.getBytes(result.view(1)));
        }
    }

    @Test
    void shouldReportEndOfDataAtAndPastTheEnd() {
        append("s", SEED, 0, 10);
        try (ReadResult atEnd = store.read("s", 10, 100); ReadResult past = store.read("s", 50, 100)) {
            assertEquals(ReadStatus.END_OF_DATA, atEnd.status());
            assertEquals(0, atEnd.length());
            assertEquals(0, atEnd.viewCount());
            assertEquals(0, atEnd.data().readableBytes());
            assertEquals(ReadStatus.END_OF_DATA, past.status());
            assertEquals(50, past.nextOffset());
        }
    }

    @Test
    void shouldPreferEndOfDataOverMaxLengthWhenBothHold() {
        append("s", SEED, 0, 10);
        assertReads("s", SEED, 0, 10, 10, ReadStatus.END_OF_DATA);
        assertReads("s", SEED, 0, 9, 9, ReadStatus.MAX_LENGTH);
    }

    @Test
    void shouldGiveReadOnlyViews() {
        append("s", SEED, 0, 1500);
        try (ReadResult result = store.read("s", 0, 1500)) {
            assertTrue(result.view(0).isReadOnly());
            assertTrue(result.data().isReadOnly());
            assertThrows(ReadOnlyBufferException.class, () -> result.view(0).setByte(0, 1));
            assertThrows(ReadOnlyBufferException.class, () -> result.data().setByte(0, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> result.view(2));
        }
    }

    @Test
    void shouldKeepSegmentsApart() {
        store.create("t");
        append("s", 1, 0, 1500);
        append("t", 2, 0, 700);
        append("s", 1, 1500, 100);
        assertReads("s", 1, 0, 5000, 1600, ReadStatus.END_OF_DATA);
        assertReads("t", 2, 0, 5000, 700, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldAllocateNothingPerAppendInSteadyState() {
        assumeTrue(java.lang.management.ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
            "HotSpot's ThreadMXBean");
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        try (BlockCache own = TestSegments.cache(1 << 20); SegmentStore large = TestSegments.store(own, 1 << 20)) {
            // Steady state is a cache that has filled once: the default direct region gives a
            // buffer its memory (and its few objects) when the cache first needs it, once.
            final java.util.List<Integer> fill = new java.util.ArrayList<>();
            try {
                while (true) {
                    fill.add(own.insert(io.netty.buffer.Unpooled.wrappedBuffer(new byte[TestSegments.BUFFER_LENGTH / 2])));
                }
            } catch (final io.streamcache.core.CacheFullException e) {
                fill.forEach(own::delete);
            }
            assertEquals(own.capacity() / own.bufferLength(), own.allocatedBufferCount());
            large.create("a");
            final ByteBuf data = buffer(SEED, 0, 100);
            final long thread = Thread.currentThread().getId();
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                final long before = threads.getThreadAllocatedBytes(thread);
                for (int i = 0; i < 2_000; i++) {
                    large.append("a", data);
                }
                allocated = threads.getThreadAllocatedBytes(thread) - before;
            }
            // 200,000 bytes in 1 MiB entries: at most one new entry (48 bytes) per round.
            assertTrue(allocated <= 256, "bytes allocated by 2,000 appends: " + allocated);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Gaps

    @Test
    void shouldStopAtAnEvictedEntryWithNotCached() {
        append("s", SEED, 0, 3500);
        policy.selectOffsets("s", 1000, 3000);
        store.cacheManager().evictDownTo(0.0);
        assertEquals(List.of(
            new EntryView(0, 1000, true, 0),
            new EntryView(1000, 1000, false, 0),
            new EntryView(2000, 1000, true, 0),
            new EntryView(3000, 500, false, 0)), entries(store, "s"));

        assertReads("s", SEED, 500, 5000, 500, ReadStatus.NOT_CACHED);
        assertReads("s", SEED, 1000, 5000, 0, ReadStatus.NOT_CACHED);
        assertReads("s", SEED, 1999, 5000, 0, ReadStatus.NOT_CACHED);
        assertReads("s", SEED, 2000, 5000, 1000, ReadStatus.NOT_CACHED);
        assertReads("s", SEED, 2000, 1000, 1000, ReadStatus.MAX_LENGTH);
        assertReads("s", SEED, 3200, 10, 0, ReadStatus.NOT_CACHED);
        assertEquals(2, cache.stats().entryCount(), "evicted entries freed their cache entries");
    }

    @Test
    void shouldStartANewEntryAfterTheTailWasEvicted() {
        append("s", SEED, 0, 300);
        policy.selectOffsets("s", 0);
        store.cacheManager().evictDownTo(0.0);
        append("s", SEED, 300, 200);
        assertEquals(List.of(new EntryView(0, 300, false, 0), new EntryView(300, 200, true, 0)), entries(store, "s"));
        assertReads("s", SEED, 300, 1000, 200, ReadStatus.END_OF_DATA);
        assertReads("s", SEED, 0, 1000, 0, ReadStatus.NOT_CACHED);
    }

    @Test
    void shouldFillAnEvictedRangeBackAndSplitTheEntry() {
        append("s", SEED, 0, 2500);
        policy.selectOffsets("s", 1000);
        store.cacheManager().evictDownTo(0.0);
        policy.selectOffsets("s");

        assertEquals(500, store.fill("s", 1200, buffer(SEED, 1200, 500)));
        assertEquals(List.of(
            new EntryView(0, 1000, true, 0),
            new EntryView(1000, 200, false, 0),
            new EntryView(1200, 500, true, 0),
            new EntryView(1700, 300, false, 0),
            new EntryView(2000, 500, true, 0)), entries(store, "s"));
        assertReads("s", SEED, 1200, 5000, 500, ReadStatus.NOT_CACHED);
        assertReads("s", SEED, 0, 5000, 1000, ReadStatus.NOT_CACHED);

        assertEquals(500, store.fill("s", 0, buffer(SEED, 0, 2500)), "only the evicted bytes are copied");
        assertEquals(5, entries(store, "s").size());
        assertTrue(entries(store, "s").stream().allMatch(EntryView::cached));
        assertReads("s", SEED, 0, 5000, 2500, ReadStatus.END_OF_DATA);
        assertEquals(0, store.fill("s", 0, buffer(SEED, 0, 2500)), "nothing left to fill");
    }

    @Test
    void shouldLetAppendsGrowAFilledTail() {
        append("s", SEED, 0, 500);
        policy.selectOffsets("s", 0);
        store.cacheManager().evictDownTo(0.0);
        store.truncate("s", 100);
        assertEquals(400, store.fill("s", 0, buffer(SEED, 0, 500)), "bytes before the start offset are skipped");
        append("s", SEED, 500, 100);
        assertEquals(List.of(new EntryView(0, 100, false, 0), new EntryView(100, 500, true, 0)), entries(store, "s"));
        assertReads("s", SEED, 100, 5000, 500, ReadStatus.END_OF_DATA);
    }

    // ------------------------------------------------------------------------------------------
    // Seal, truncate, delete, durability

    @Test
    void shouldSealAndReportTheSealedEnd() {
        append("s", SEED, 0, 1200);
        assertEquals(1200, store.seal("s"));
        assertEquals(1200, store.seal("s"), "sealing again changes nothing");
        assertTrue(store.info("s").sealed());
        assertReads("s", SEED, 0, 5000, 1200, ReadStatus.SEALED_END);
        assertReads("s", SEED, 100, 100, 100, ReadStatus.MAX_LENGTH);
        assertReads("s", SEED, 1200, 100, 0, ReadStatus.SEALED_END);
        assertReads("s", SEED, 5000, 100, 0, ReadStatus.SEALED_END);
    }

    @Test
    void shouldTruncateAPrefixAndFreeWholeEntries() {
        append("s", SEED, 0, 3500);
        store.truncate("s", 2100);
        assertEquals(new SegmentInfo("s", 2100, 3500, 3500, false), store.info("s"));
        assertEquals(List.of(new EntryView(2000, 1000, true, 0), new EntryView(3000, 500, true, 0)), entries(store, "s"),
            "the entry straddling the new start stays");
        assertEquals(2, cache.stats().entryCount());
        assertReads("s", SEED, 2100, 5000, 1400, ReadStatus.END_OF_DATA);
        final SegmentTruncatedException e = assertThrows(SegmentTruncatedException.class, () -> store.read("s", 2099, 10));
        assertEquals(2099, e.offset());
        assertEquals(2100, e.startOffset());
        assertEquals("s", e.segment());

        store.truncate("s", 1000);
        assertEquals(2100, store.info("s").startOffset(), "truncating before the start is a no-op");
        store.truncate("s", 3500);
        assertEquals(List.of(), entries(store, "s"));
        assertEquals(0, cache.stats().entryCount());
        assertEquals(3500, append("s", SEED, 3500, 10));
        assertReads("s", SEED, 3500, 100, 10, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldDeleteAndFreeTheNameAndTheMemory() {
        append("s", SEED, 0, 3500);
        store.delete("s");
        assertFalse(store.exists("s"));
        assertEquals(0, cache.stats().entryCount());
        assertEquals(0, cache.stats().storedBytes());
        store.create("s");
        assertEquals(new SegmentInfo("s", 0, 0, 0, false), store.info("s"));
        assertReads("s", SEED, 0, 100, 0, ReadStatus.END_OF_DATA);
    }

    @Test
    void shouldCountAppendsDurableAtOnceByDefault() {
        append("s", SEED, 0, 10);
        assertEquals(10, store.info("s").durableLength());
        assertTrue(store.appendsDurable());
    }

    @Test
    void shouldMoveTheDurableLengthOnlyForwardWhenAppendsAreNotDurable() {
        try (SegmentStore manual = SegmentStore.builder(cache).appendsDurable(false).maxIndexEntryLength(MAX_ENTRY)
                 .cacheManager(store.cacheManager()).build()) {
            manual.create("m");
            manual.append("m", buffer(SEED, 0, 500));
            assertEquals(0, manual.info("m").durableLength());
            manual.markDurable("m", 300);
            assertEquals(300, manual.info("m").durableLength());
            manual.markDurable("m", 100);
            assertEquals(300, manual.info("m").durableLength(), "never back");
            manual.markDurable("m", 500);
            assertEquals(500, manual.info("m").durableLength());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Pinning

    @Test
    void shouldKeepPinnedViewsValidAcrossTruncateUntilRelease() {
        append("s", SEED, 0, 3500);
        final ReadResult held = store.read("s", 500, 2000);
        assertEquals(List.of(1, 1, 1, 0), entries(store, "s").stream().map(EntryView::pins).toList());
        store.truncate("s", 3000);
        assertEquals(4, cache.stats().entryCount(), "removed but pinned entries keep their blocks");
        store.append("s", buffer(SEED + 1, 3500, 3000));
        assertArrayEquals(pattern(SEED, 500, 2000), bytes(held), "the views still read the original bytes");
        held.release();
        assertTrue(held.isReleased());
        assertEquals(1 + 3, cache.stats().entryCount(), "the last release freed the retired entries");
        held.close();
        assertEquals(4, cache.stats().entryCount(), "close after the last release is a no-op");
        assertThrows(io.netty.util.IllegalReferenceCountException.class, held::release, "a second release is Netty's error");
        assertEquals(4, cache.stats().entryCount(), "and changes nothing");
    }

    @Test
    void shouldKeepPinnedViewsValidAcrossDeleteUntilTheLastRelease() {
        append("s", SEED, 0, 2500);
        final ReadResult first = store.read("s", 0, 2500);
        final ReadResult second = store.read("s", 1500, 100);
        store.delete("s");
        assertEquals(3, cache.stats().entryCount());
        first.release();
        assertEquals(1, cache.stats().entryCount(), "the entry the second result pins stays");
        assertArrayEquals(pattern(SEED, 1500, 100), bytes(second));
        second.release();
        assertEquals(0, cache.stats().entryCount());
    }

    @Test
    void shouldLetAppendsGrowAPinnedEntry() {
        append("s", SEED, 0, 100);
        try (ReadResult held = store.read("s", 0, 100)) {
            append("s", SEED, 100, 500);
            assertEquals(List.of(new EntryView(0, 600, true, 1)), entries(store, "s"));
            assertArrayEquals(pattern(SEED, 0, 100), bytes(held));
        }
        assertReads("s", SEED, 0, 1000, 600, ReadStatus.END_OF_DATA);
        assertEquals(0, entries(store, "s").get(0).pins());
    }

    // ------------------------------------------------------------------------------------------
    // Failure and lifecycle

    @Test
    void shouldLeaveTheSegmentUnchangedWhenTheCacheIsFull() {
        try (BlockCache tiny = TestSegments.cache(2 * TestSegments.BUFFER_LENGTH);
             SegmentStore nothingEvictable = SegmentStore.builder(tiny).maxIndexEntryLength(1024).appendsDurable(false)
                 .cacheManager(TestSegments.manualManager(tiny)).build()) {
            // 2 buffers of 31 data blocks of 256 bytes: 15,872 bytes in all.
            nothingEvictable.create("f");
            nothingEvictable.append("f", buffer(SEED, 0, 1000));
            final long entriesBefore = tiny.stats().entryCount();
            assertThrows(CacheFullException.class, () -> nothingEvictable.append("f", buffer(SEED, 1000, 40_000)));
            assertEquals(new SegmentInfo("f", 0, 1000, 0, false), nothingEvictable.info("f"));
            assertEquals(List.of(new EntryView(0, 1000, true, 0)), entries(nothingEvictable, "f"));
            assertEquals(entriesBefore, tiny.stats().entryCount(), "the entries the failed append inserted were freed");
            assertThrows(CacheFullException.class, () -> nothingEvictable.append("f", buffer(SEED, 1000, 40_000)),
                "a second failure, this time starting with new entries");
            assertEquals(List.of(new EntryView(0, 1000, true, 0)), entries(nothingEvictable, "f"));

            assertEquals(1000, nothingEvictable.append("f", buffer(SEED, 1000, 10)));
            assertEquals(List.of(new EntryView(0, 1000, true, 0), new EntryView(1000, 10, true, 0)), entries(nothingEvictable, "f"),
                "the entry the failed append grew is closed to appends");
            try (ReadResult result = nothingEvictable.read("f", 0, 5000)) {
                assertArrayEquals(pattern(SEED, 0, 1010), bytes(result));
            }
        }
    }

    @Test
    void shouldRefuseEverythingAfterClose() {
        append("s", SEED, 0, 2500);
        final ReadResult held = store.read("s", 0, 100);
        store.close();
        store.close();
        assertTrue(store.isClosed());
        assertThrows(CacheClosedException.class, () -> store.read("s", 0, 10));
        assertThrows(CacheClosedException.class, () -> store.append("s", buffer(SEED, 0, 1)));
        assertThrows(CacheClosedException.class, () -> store.create("x"));
        assertTrue(store.cacheManager().isClosed(), "the owned manager is closed");
        assertEquals(1, cache.stats().entryCount(), "only the pinned entry is left");
        held.release();
        assertEquals(0, cache.stats().entryCount());
    }

    @Test
    void shouldNotCloseASharedManager() {
        try (BlockCache own = TestSegments.cache(1 << 20)) {
            final CacheManager shared = CacheManager.builder(own).generationPeriod(java.time.Duration.ZERO).registerMBean(false).build();
            try (SegmentStore other = SegmentStore.builder(own).cacheManager(shared).build()) {
                assertEquals(shared, other.cacheManager());
            }
            assertFalse(shared.isClosed());
            shared.close();
        }
    }
}
