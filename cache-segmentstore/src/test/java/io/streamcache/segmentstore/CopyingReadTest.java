package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.GenerationPolicy;
import io.streamcache.segmentstore.eviction.HitmapPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.generations;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static io.streamcache.segmentstore.TestSegments.tiers;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The copying read ({@link SegmentStore#read(String, long, ByteBuf)} and its {@link ByteBuffer}
 * overload) against the view read: the same bytes and statuses into every kind of destination,
 * with the destination's indices moved by exactly the bytes copied and nothing written outside
 * them; the same bookkeeping (uses, hits, tier reads) and no pins. Bad input is in
 * {@link SegmentStoreBadInputTest}.
 */
class CopyingReadTest extends ManualStoreFixture {
    private static final long SEED = 11;
    /** Bytes before the destination's writer index / position, and the junk they hold. */
    private static final int PREFIX = 3;
    private static final byte JUNK = (byte) 0x5A;

    /** Four destinations of {@code room} writable bytes after {@link #PREFIX} junk bytes, all junk. */
    private enum Kind {
        HEAP_BUF, DIRECT_BUF, HEAP_NIO, DIRECT_NIO
    }

    /**
     * Copies from {@code offset} into a destination of each kind with {@code room} bytes of room
     * and checks the status, the bytes, the indices and the junk around them; the view read
     * with {@code maxLength = room} must agree.
     */
    private void assertCopies(final String name, final long seed, final long offset, final int room, final int expectedLength,
                              final ReadStatus expectedStatus) {
        final String what = "copy offset=" + offset + " room=" + room;
        for (final Kind kind : Kind.values()) {
            final byte[] got;
            final ReadStatus status;
            switch (kind) {
                case HEAP_BUF, DIRECT_BUF -> {
                    final ByteBuf destination = kind == Kind.HEAP_BUF ? Unpooled.buffer(PREFIX + room, PREFIX + room)
                        : Unpooled.directBuffer(PREFIX + room, PREFIX + room);
                    try {
                        destination.writeBytes(junk(PREFIX + room));
                        destination.writerIndex(PREFIX).readerIndex(1);
                        status = store.read(name, offset, destination);
                        assertEquals(1, destination.readerIndex(), what + " " + kind + ": reader index moved");
                        assertEquals(PREFIX + expectedLength, destination.writerIndex(), what + " " + kind);
                        got = ByteBufUtil.getBytes(destination, 0, destination.capacity());
                    } finally {
                        destination.release();
                    }
                }
                default -> {
                    final ByteBuffer destination = kind == Kind.HEAP_NIO ? ByteBuffer.allocate(PREFIX + room + 2)
                        : ByteBuffer.allocateDirect(PREFIX + room + 2);
                    destination.put(junk(PREFIX + room + 2)).clear();
                    destination.position(PREFIX).limit(PREFIX + room);
                    status = store.read(name, offset, destination);
                    assertEquals(PREFIX + room, destination.limit(), what + " " + kind + ": limit moved");
                    assertEquals(PREFIX + expectedLength, destination.position(), what + " " + kind);
                    got = new byte[PREFIX + room];
                    destination.clear().get(got);
                }
            }
            assertEquals(expectedStatus, status, what + " " + kind);
            final byte[] expected = junk(PREFIX + room);
            System.arraycopy(pattern(seed, offset, expectedLength), 0, expected, PREFIX, expectedLength);
            assertArrayEquals(expected, got, what + " " + kind + ": the bytes, and junk everywhere else");
        }
        try (ReadResult view = store.read(name, offset, room)) {
            assertEquals(expectedStatus, view.status(), what + ": the view read agrees");
            assertEquals(expectedLength, view.length(), what + ": the view read agrees");
        }
    }

    private static byte[] junk(final int length) {
        final byte[] junk = new byte[length];
        Arrays.fill(junk, JUNK);
        return junk;
    }

    @Test
    void shouldCopyAcrossEntriesWithEachStatus() {
        store.append("s", buffer(SEED, 0, 3500));
        assertEquals(4, entries(store, "s").size());
        assertCopies("s", SEED, 0, 10_000, 3500, ReadStatus.END_OF_DATA);
        assertCopies("s", SEED, 500, 2000, 2000, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 999, 2, 2, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 1, 3498, 3498, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 100, 3400, 3400, ReadStatus.END_OF_DATA);
        assertCopies("s", SEED, 3499, 100, 1, ReadStatus.END_OF_DATA);
        assertCopies("s", SEED, 3500, 100, 0, ReadStatus.END_OF_DATA);
        assertCopies("s", SEED, 9000, 100, 0, ReadStatus.END_OF_DATA);
        assertEquals(4, cache.stats().entryCount(), "nothing inserted");
        for (final EntryView entry : entries(store, "s")) {
            assertEquals(0, entry.pins(), "a copy pins nothing");
        }
    }

    @Test
    void shouldCopyNothingIntoAFullDestination() {
        store.append("s", buffer(SEED, 0, 1500));
        assertCopies("s", SEED, 0, 0, 0, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 1499, 0, 0, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 1500, 0, 0, ReadStatus.END_OF_DATA);
        store.seal("s");
        assertCopies("s", SEED, 1500, 0, 0, ReadStatus.SEALED_END);
        assertCopies("s", SEED, 10, 0, 0, ReadStatus.MAX_LENGTH);
    }

    @Test
    void shouldStopAtAnEvictedEntryAfterTheCachedPrefix() {
        store.append("s", buffer(SEED, 0, 3500));
        policy.selectOffsets("s", 1000, 3000);
        store.cacheManager().evictDownTo(0.0);
        assertEquals(List.of(
            new EntryView(0, 1000, true, 0),
            new EntryView(1000, 1000, false, 0),
            new EntryView(2000, 1000, true, 0),
            new EntryView(3000, 500, false, 0)), entries(store, "s"));

        assertCopies("s", SEED, 0, 3500, 1000, ReadStatus.NOT_CACHED);
        assertCopies("s", SEED, 500, 5000, 500, ReadStatus.NOT_CACHED);
        assertCopies("s", SEED, 1000, 5000, 0, ReadStatus.NOT_CACHED);
        assertCopies("s", SEED, 1999, 5000, 0, ReadStatus.NOT_CACHED);
        assertCopies("s", SEED, 2000, 5000, 1000, ReadStatus.NOT_CACHED);
        assertCopies("s", SEED, 2000, 1000, 1000, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 2500, 0, 0, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 3200, 10, 0, ReadStatus.NOT_CACHED);

        store.fill("s", 1000, buffer(SEED, 1000, 1000));
        assertCopies("s", SEED, 0, 3500, 3000, ReadStatus.NOT_CACHED);
    }

    @Test
    void shouldReportTheSealedEnd() {
        store.append("s", buffer(SEED, 0, 1200));
        store.seal("s");
        assertCopies("s", SEED, 0, 5000, 1200, ReadStatus.SEALED_END);
        assertCopies("s", SEED, 200, 1000, 1000, ReadStatus.SEALED_END);
        assertCopies("s", SEED, 200, 999, 999, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 1200, 10, 0, ReadStatus.SEALED_END);
        assertCopies("s", SEED, 5000, 10, 0, ReadStatus.SEALED_END);
    }

    @Test
    void shouldCopyFromTheStartOfATruncatedSegmentAndRefuseBeforeIt() {
        store.append("s", buffer(SEED, 0, 3500));
        store.truncate("s", 1500);
        assertEquals(1000, entries(store, "s").get(0).offset(), "the entry straddling the start stays");
        assertCopies("s", SEED, 1500, 700, 700, ReadStatus.MAX_LENGTH);
        assertCopies("s", SEED, 1500, 5000, 2000, ReadStatus.END_OF_DATA);

        final ByteBuf destination = Unpooled.buffer(100, 100).writerIndex(7);
        final SegmentTruncatedException e = assertThrows(SegmentTruncatedException.class, () -> store.read("s", 1499, destination));
        assertEquals(1499, e.offset());
        assertEquals(1500, e.startOffset());
        assertEquals(7, destination.writerIndex());
        final ByteBuffer nio = ByteBuffer.allocate(100).position(7);
        assertThrows(SegmentTruncatedException.class, () -> store.read("s", 0, nio));
        assertEquals(7, nio.position());
        assertEquals(100, nio.limit());
    }

    @Test
    void shouldRecordUsesAndHitsLikeTheViewRead() {
        store.append("s", buffer(SEED, 0, 2500));
        final CacheManager manager = store.cacheManager();
        final int before = manager.generation();
        manager.advanceGeneration();
        manager.advanceGeneration();
        final int now = manager.generation();
        assertEquals(List.of(before, before, before), generations(store, "s"));
        final long hits = cache.stats().tier(0).hits();

        final ByteBuf destination = Unpooled.buffer(1100, 1100);
        assertEquals(ReadStatus.MAX_LENGTH, store.read("s", 500, destination));
        assertEquals(List.of(now, now, before), generations(store, "s"), "every entry copied from counts as used, the others not");
        assertEquals(hits + 2, cache.stats().tier(0).hits(), "one hit per entry copied from, as a view read counts");

        try (ReadResult view = store.read("s", 500, 1100)) {
            assertEquals(2, view.viewCount());
        }
        assertEquals(hits + 4, cache.stats().tier(0).hits());
    }

    @Test
    void shouldCountReadsFromTheSlowTierTowardsPromotion() {
        try (BlockCache tiered = TestSegments.tieredCache(4, 16);
             SegmentStore tieredStore = SegmentStore.builder(tiered).maxIndexEntryLength(MAX_ENTRY)
                 .cacheManager(TestSegments.manualManager(tiered).promotion(2, Duration.ofHours(1))).build()) {
            tieredStore.create("a");
            tieredStore.append("a", buffer(SEED, 0, 3000));
            final CacheManager manager = tieredStore.cacheManager();
            manager.advanceGeneration();
            manager.evictDownTo(0.0);
            assertEquals(List.of(1, 1, 1), tiers(tieredStore, "a"), "demoted into the slow tier");
            final long slowHits = tiered.stats().tier(1).hits();

            final ByteBuffer destination = ByteBuffer.allocateDirect(100);
            assertEquals(ReadStatus.MAX_LENGTH, tieredStore.read("a", 0, destination));
            assertEquals(0, manager.stats().promotionRequests(), "one read is not enough");
            destination.clear();
            assertEquals(ReadStatus.MAX_LENGTH, tieredStore.read("a", 0, destination));
            assertEquals(1, manager.stats().promotionRequests(), "the second read from the slow tier asks for a promotion");
            assertEquals(slowHits + 2, tiered.stats().tier(1).hits(), "the slow tier counted the copies as hits");
            assertEquals(1, manager.promoteNow());
            assertEquals(List.of(0, 1, 1), tiers(tieredStore, "a"));

            final ByteBuf all = Unpooled.buffer(3000, 3000);
            assertEquals(ReadStatus.END_OF_DATA, tieredStore.read("a", 0, all));
            assertArrayEquals(pattern(SEED, 0, 3000), ByteBufUtil.getBytes(all), "the bytes survive the moves");
        }
    }

    @Test
    void shouldCopyWhatAHeldViewReadShowsAndSeeLaterAppends() {
        store.append("s", buffer(SEED, 0, 600));
        try (ReadResult held = store.read("s", 0, 600)) {
            store.append("s", buffer(SEED, 600, 900));
            final ByteBuf destination = Unpooled.buffer(2000, 2000);
            assertEquals(ReadStatus.END_OF_DATA, store.read("s", 0, destination));
            assertArrayEquals(pattern(SEED, 0, 1500), ByteBufUtil.getBytes(destination));
            assertArrayEquals(pattern(SEED, 0, 600), bytes(held));
            assertEquals(1, entries(store, "s").get(0).pins(), "the view read's pin only");
        }
    }

    /**
     * The copying read's path allocates nothing with any policy's {@code recordUse}, nor when
     * it reads from a slow tier ({@code recordTierRead}, the promotion queue): per-thread
     * allocation counters over thousands of reads into heap and direct {@code ByteBuf}s and a
     * direct {@code ByteBuffer}.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"generation", "readerAware", "hitmap", "tiered"})
    void shouldAllocateNothingPerCopyingReadInSteadyState(final String setup) {
        assumeTrue(java.lang.management.ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
            "HotSpot's ThreadMXBean");
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counters");
        final boolean tiered = setup.equals("tiered");
        final BlockCache measured = tiered ? TestSegments.tieredCache(4, 16) : TestSegments.cache(1 << 20);
        final CacheManager.Builder manager = TestSegments.manualManager(measured);
        switch (setup) {
            case "readerAware" -> manager.policy(new ReaderAwarePolicy());
            case "hitmap" -> manager.policy(HitmapPolicy.forEntries(1000));
            case "tiered" -> manager.promotion(1, Duration.ofMillis(1));
            default -> manager.policy(new GenerationPolicy());
        }
        final ByteBuf heap = Unpooled.buffer(1500, 1500);
        final ByteBuf direct = Unpooled.directBuffer(1500, 1500);
        final ByteBuffer nio = ByteBuffer.allocateDirect(1500);
        try (measured; SegmentStore measuredStore = SegmentStore.builder(measured).maxIndexEntryLength(MAX_ENTRY)
                 .cacheManager(manager).build()) {
            measuredStore.create("s");
            measuredStore.append("s", buffer(SEED, 0, 2500));
            if (tiered) {
                measuredStore.cacheManager().advanceGeneration();
                measuredStore.cacheManager().evictDownTo(0.0);
                assertEquals(List.of(1, 1, 1), tiers(measuredStore, "s"), "the reads come from the slow tier");
            }
            final long thread = Thread.currentThread().getId();
            long allocated = Long.MAX_VALUE;
            // The least of several rounds: steady state is reached once the path is compiled.
            for (int round = 0; round < 5; round++) {
                final long before = threads.getThreadAllocatedBytes(thread);
                for (int i = 0; i < 2_000; i++) {
                    heap.clear();
                    direct.clear();
                    nio.clear();
                    measuredStore.read("s", 600, heap);
                    measuredStore.read("s", 600, direct);
                    measuredStore.read("s", 600, nio);
                }
                allocated = Math.min(allocated, threads.getThreadAllocatedBytes(thread) - before);
            }
            assertArrayEquals(pattern(SEED, 600, 1500), ByteBufUtil.getBytes(direct));
            if (tiered) {
                assertTrue(measuredStore.cacheManager().stats().promotionRequests() > 0, "the reads asked for promotions");
                assertEquals(List.of(1, 1, 1), tiers(measuredStore, "s"), "nothing drained the queue: still in the slow tier");
            }
            // 6,000 reads of two entries each: a single result object each (24 bytes) would be 144,000.
            assertTrue(allocated <= 256, "bytes allocated by 6,000 copying reads: " + allocated);
        } finally {
            heap.release();
            direct.release();
        }
    }
}
