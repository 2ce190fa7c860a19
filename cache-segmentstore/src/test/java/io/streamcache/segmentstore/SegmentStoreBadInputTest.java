package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.entries;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every bad input gets its own exception and leaves the store as it was.
 */
class SegmentStoreBadInputTest {
    private static final long SEED = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private BlockCache cache;
    private SegmentStore store;
    private SegmentInfo before;
    private List<TestSegments.EntryView> entriesBefore;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        store = TestSegments.store(cache, 1000);
        store.create("s");
        store.append("s", buffer(SEED, 0, 2500));
        store.truncate("s", 500);
        before = store.info("s");
        entriesBefore = entries(store, "s");
    }

    @AfterEach
    void tearDown() {
        store.close();
        cache.close();
    }

    /** Asserts that "s" is exactly as set up. */
    private void assertUnchanged() {
        assertEquals(before, store.info("s"));
        assertEquals(entriesBefore, entries(store, "s"));
        try (ReadResult result = store.read("s", 500, 10_000)) {
            assertArrayEquals(pattern(SEED, 500, 2000), bytes(result));
        }
        assertEquals(1, store.segmentCount());
    }

    private static <T extends Throwable> T assertFailsWith(final Class<T> type, final CompletableFuture<ReadResult> future) {
        final ExecutionException e = assertThrows(ExecutionException.class, () -> future.get());
        return assertInstanceOf(type, e.getCause());
    }

    @Test
    void shouldRejectEveryOperationOnAnUnknownSegment() {
        final List<Executable> operations = List.of(
            () -> store.append("x", buffer(SEED, 0, 10)),
            () -> store.append("x", ByteBuffer.allocate(10)),
            () -> store.read("x", 0, 10),
            () -> store.seal("x"),
            () -> store.truncate("x", 0),
            () -> store.delete("x"),
            () -> store.info("x"),
            () -> store.markDurable("x", 0),
            () -> store.fill("x", 0, buffer(SEED, 0, 10)));
        for (final Executable operation : operations) {
            final SegmentNotFoundException e = assertThrows(SegmentNotFoundException.class, operation);
            assertEquals("x", e.segment());
            assertEquals("segment=x does not exist", e.getMessage());
        }
        assertFailsWith(SegmentNotFoundException.class, store.readOrWait("x", 0, 10, WAIT));
        assertUnchanged();
    }

    @Test
    void shouldRejectEveryOperationOnADeletedSegment() {
        store.create("d");
        store.append("d", buffer(SEED, 0, 10));
        store.delete("d");
        assertThrows(SegmentNotFoundException.class, () -> store.append("d", buffer(SEED, 0, 10)));
        assertThrows(SegmentNotFoundException.class, () -> store.read("d", 0, 10));
        assertThrows(SegmentNotFoundException.class, () -> store.seal("d"));
        assertThrows(SegmentNotFoundException.class, () -> store.truncate("d", 0));
        assertThrows(SegmentNotFoundException.class, () -> store.delete("d"));
        assertThrows(SegmentNotFoundException.class, () -> store.info("d"));
        assertThrows(SegmentNotFoundException.class, () -> store.markDurable("d", 0));
        assertThrows(SegmentNotFoundException.class, () -> store.fill("d", 0, buffer(SEED, 0, 10)));
        assertFailsWith(SegmentNotFoundException.class, store.readOrWait("d", 0, 10, WAIT));
        assertUnchanged();
    }

    @Test
    void shouldRejectNegativeOffsetsAndLengths() {
        final List<Executable> operations = List.of(
            () -> store.read("s", -1, 10),
            () -> store.read("s", 600, -1),
            () -> store.readOrWait("s", -1, 10, WAIT),
            () -> store.readOrWait("s", 600, -1, WAIT),
            () -> store.readOrWait("s", 600, 10, Duration.ofMillis(-1)),
            () -> store.truncate("s", -1),
            () -> store.markDurable("s", -1),
            () -> store.fill("s", -1, buffer(SEED, 0, 10)),
            () -> store.read("s", Long.MIN_VALUE, 10));
        for (final Executable operation : operations) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, operation);
            assertTrue(e.getMessage().matches("(offset|maxLength|timeout)=\\S+ must .*"), e.getMessage());
        }
        assertUnchanged();
    }

    @Test
    void shouldRejectReadsBeforeTheStartOffset() {
        final SegmentTruncatedException e = assertThrows(SegmentTruncatedException.class, () -> store.read("s", 499, 10));
        assertEquals(499, e.offset());
        assertEquals(500, e.startOffset());
        assertEquals("segment=s offset=499 is before startOffset=500 (truncated)", e.getMessage());
        assertThrows(SegmentTruncatedException.class, () -> store.read("s", 0, 0));
        final SegmentTruncatedException waiting = assertFailsWith(SegmentTruncatedException.class, store.readOrWait("s", 10, 10, WAIT));
        assertEquals(10, waiting.offset());
        assertUnchanged();
    }

    @Test
    void shouldRejectAppendsToASealedSegment() {
        store.seal("s");
        before = store.info("s");
        final SegmentSealedException e = assertThrows(SegmentSealedException.class, () -> store.append("s", buffer(SEED, 2500, 10)));
        assertEquals(2500, e.length());
        assertEquals("segment=s is sealed at length=2500", e.getMessage());
        assertThrows(SegmentSealedException.class, () -> store.append("s", ByteBuffer.allocate(0)), "even an empty append");
        assertUnchanged();
    }

    @Test
    void shouldRejectNullArguments() {
        assertEquals("data", assertThrows(NullPointerException.class, () -> store.append("s", (ByteBuf) null)).getMessage());
        assertEquals("data", assertThrows(NullPointerException.class, () -> store.append("s", (ByteBuffer) null)).getMessage());
        assertEquals("data", assertThrows(NullPointerException.class, () -> store.fill("s", 0, null)).getMessage());
        final List<Executable> nullNames = List.of(
            () -> store.create(null),
            () -> store.append(null, buffer(SEED, 0, 1)),
            () -> store.read(null, 0, 1),
            () -> store.readOrWait(null, 0, 1, WAIT),
            () -> store.seal(null),
            () -> store.truncate(null, 0),
            () -> store.delete(null),
            () -> store.info(null),
            () -> store.markDurable(null, 0),
            () -> store.fill(null, 0, buffer(SEED, 0, 1)),
            () -> store.exists(null));
        for (final Executable operation : nullNames) {
            assertEquals("name", assertThrows(NullPointerException.class, operation).getMessage());
        }
        assertEquals("timeout", assertThrows(NullPointerException.class, () -> store.readOrWait("s", 0, 1, null)).getMessage());
        assertUnchanged();
    }

    /** A copying read's destination of each kind, its indices recorded so that a change shows. */
    private static final class Destinations {
        final ByteBuf heap = io.netty.buffer.Unpooled.buffer(100, 100).writerIndex(7).readerIndex(2);
        final ByteBuf direct = io.netty.buffer.Unpooled.directBuffer(100, 100).writerIndex(7).readerIndex(2);
        final ByteBuffer nio = ByteBuffer.allocate(100).position(7).limit(90);
        final ByteBuffer directNio = ByteBuffer.allocateDirect(100).position(7).limit(90);

        void assertUnchanged(final String what) {
            for (final ByteBuf buf : List.of(heap, direct)) {
                assertEquals(7, buf.writerIndex(), what);
                assertEquals(2, buf.readerIndex(), what);
            }
            for (final ByteBuffer buffer : List.of(nio, directNio)) {
                assertEquals(7, buffer.position(), what);
                assertEquals(90, buffer.limit(), what);
            }
        }

        void release() {
            heap.release();
            direct.release();
        }
    }

    /** Asserts that a copying read from {@code offset} fails with {@code type} into every kind of destination, changing none. */
    private static <T extends Throwable> void assertCopyFails(final Class<T> type, final SegmentStore store, final String name,
                                                              final long offset) {
        final Destinations d = new Destinations();
        try {
            assertThrows(type, () -> store.read(name, offset, d.heap));
            assertThrows(type, () -> store.read(name, offset, d.direct));
            assertThrows(type, () -> store.read(name, offset, d.nio));
            assertThrows(type, () -> store.read(name, offset, d.directNio));
            d.assertUnchanged("copy from segment=" + name + " offset=" + offset);
        } finally {
            d.release();
        }
    }

    @Test
    void shouldRejectBadCopyingReadsAndLeaveTheDestinationAlone() {
        assertCopyFails(SegmentNotFoundException.class, store, "x", 0);
        assertEquals("segment=x does not exist",
            assertThrows(SegmentNotFoundException.class, () -> store.read("x", 0, ByteBuffer.allocate(1))).getMessage());
        assertCopyFails(IllegalArgumentException.class, store, "s", -1);
        assertCopyFails(IllegalArgumentException.class, store, "s", Long.MIN_VALUE);
        assertEquals("offset=-1 must be >= 0",
            assertThrows(IllegalArgumentException.class, () -> store.read("s", -1, ByteBuffer.allocate(1))).getMessage());
        assertCopyFails(SegmentTruncatedException.class, store, "s", 499);
        assertCopyFails(SegmentTruncatedException.class, store, "s", 0);
        final SegmentTruncatedException truncated = assertThrows(SegmentTruncatedException.class,
            () -> store.read("s", 499, io.netty.buffer.Unpooled.buffer(10)));
        assertEquals(499, truncated.offset());
        assertEquals(500, truncated.startOffset());
        assertCopyFails(NullPointerException.class, store, null, 0);
        assertEquals("name", assertThrows(NullPointerException.class, () -> store.read(null, 0, ByteBuffer.allocate(1))).getMessage());
        assertEquals("destination", assertThrows(NullPointerException.class, () -> store.read("s", 0, (ByteBuf) null)).getMessage());
        assertEquals("destination", assertThrows(NullPointerException.class, () -> store.read("s", 0, (ByteBuffer) null)).getMessage());

        store.create("d");
        store.append("d", buffer(SEED, 0, 10));
        store.delete("d");
        assertCopyFails(SegmentNotFoundException.class, store, "d", 0);
        assertUnchanged();
    }

    @Test
    void shouldRejectAReadOnlyOrReleasedDestination() {
        final ByteBuf readOnly = io.netty.buffer.Unpooled.buffer(100, 100).writerIndex(7).asReadOnly();
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> store.read("s", 600, readOnly));
        assertEquals(7, readOnly.writerIndex());
        final ByteBuffer readOnlyNio = ByteBuffer.allocate(100).position(7).asReadOnlyBuffer();
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> store.read("s", 600, readOnlyNio));
        assertEquals(7, readOnlyNio.position());
        assertEquals(100, readOnlyNio.limit());
        // Even where there would be nothing to copy: the destination is checked first.
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> store.read("s", 2500, readOnly));
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> store.read("s", 2500, readOnlyNio));

        final ByteBuf released = io.netty.buffer.Unpooled.directBuffer(100, 100);
        released.release();
        assertThrows(IllegalReferenceCountException.class, () -> store.read("s", 600, released));
        assertThrows(IllegalReferenceCountException.class, () -> store.read("s", 2500, released));
        assertUnchanged();
    }

    @Test
    void shouldRejectCopyingReadsAfterClose() {
        store.close();
        assertCopyFails(io.streamcache.core.CacheClosedException.class, store, "s", 600);
        assertCopyFails(io.streamcache.core.CacheClosedException.class, store, "x", 600);
    }

    @Test
    void shouldRejectASecondCreate() {
        final SegmentExistsException e = assertThrows(SegmentExistsException.class, () -> store.create("s"));
        assertEquals("segment=s exists already", e.getMessage());
        assertUnchanged();
    }

    @Test
    void shouldRejectTruncatingMarkingDurableOrFillingPastTheEnd() {
        assertEquals("offset=2501 is past length=2500 of segment=s",
            assertThrows(IllegalArgumentException.class, () -> store.truncate("s", 2501)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.markDurable("s", 2501));
        assertEquals("offset=2400 length=101 ends past length=2500 of segment=s",
            assertThrows(IllegalArgumentException.class, () -> store.fill("s", 2400, buffer(SEED, 2400, 101))).getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.fill("s", Long.MAX_VALUE, buffer(SEED, 0, 1)));
        assertUnchanged();
    }

    @Test
    void shouldRejectReleasedData() {
        final ByteBuf released = buffer(SEED, 2500, 10);
        released.release();
        // An argument error, not Netty's IllegalReferenceCountException (an IllegalStateException).
        assertThrows(IllegalArgumentException.class, () -> store.append("s", released));
        assertUnchanged();
    }

    @Test
    void shouldRejectABadConfiguration() {
        assertThrows(CacheConfigurationException.class, () -> SegmentStore.builder(cache).maxIndexEntryLength(0).build());
        assertThrows(CacheConfigurationException.class,
            () -> SegmentStore.builder(cache).maxIndexEntryLength(cache.maxEntryLength() + 1).build());
        try (BlockCache other = TestSegments.cache(1 << 16);
             CacheManager otherManager = TestSegments.manualManager(other).build()) {
            assertThrows(CacheConfigurationException.class, () -> SegmentStore.builder(cache).cacheManager(otherManager).build());
        }
        assertThrows(CacheConfigurationException.class, () -> CacheManager.builder(cache).targetUtilization(0).build());
        assertThrows(CacheConfigurationException.class, () -> CacheManager.builder(cache).targetUtilization(1.5).build());
        assertThrows(CacheConfigurationException.class, () -> CacheManager.builder(cache).generationPeriod(Duration.ofSeconds(-1)).build());
        assertThrows(IllegalArgumentException.class, () -> store.cacheManager().evictDownTo(-0.1));
        assertUnchanged();
    }
}
