package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.EntryTooLongException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.InvalidAddressException.Reason;
import io.streamcache.core.cache.TestBytes.Destination;
import io.streamcache.core.cache.TestBytes.Source;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static io.streamcache.core.cache.TestBytes.concat;
import static io.streamcache.core.cache.TestBytes.copyOf;
import static io.streamcache.core.cache.TestBytes.pattern;
import static io.streamcache.core.cache.TestBytes.readable;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The conformance suite of {@link BlockCache}: every memory region passes it, through a
 * subclass that supplies the region with {@link #region()}.
 *
 * <p>Unless a test says otherwise, a cache is 8 buffers of 64 KB with 4 KB blocks: 15 data
 * blocks per buffer (block 0 holds metadata), 120 data blocks in all, so that entries of a few
 * blocks cross buffers and the cache fills quickly.
 */
abstract class AbstractBlockCacheTest {
    static final int BLOCK = 4096;
    static final int BUFFER = 64 * 1024;
    static final int BUFFERS = 8;
    static final int BLOCKS_PER_BUFFER = BUFFER / BLOCK;
    static final int DATA_BLOCKS_PER_BUFFER = BLOCKS_PER_BUFFER - 1;
    static final int DATA_BLOCKS = BUFFERS * DATA_BLOCKS_PER_BUFFER;
    static final int BLOCK_INDEX_BITS = BlockAddressDescriptor.blockIndexBits(BLOCKS_PER_BUFFER);
    /** Set to rerun the randomized tests with one seed: {@code -Dstreamcache.seed=...}. */
    static final String SEED_PROPERTY = "streamcache.seed";

    private final List<BlockCache> caches = new ArrayList<>();

    /**
     * @return a factory of regions of the kind under test; regions it opens must not share memory
     *         (each cache gets its own).
     */
    protected abstract MemoryRegionFactory region();

    /**
     * @return a builder of the standard small cache in the region under test, without JMX.
     */
    protected BlockCache.Builder builder() {
        return BlockCache.builder()
            .region(region())
            .registerMBean(false)
            .blockLength(BLOCK)
            .bufferLength(BUFFER)
            .capacity((long)BUFFERS * BUFFER);
    }

    /**
     * @return a builder of a cache of the given geometry in the region(s) under test, without
     *         JMX; a tiered subclass splits the capacity between its tiers.
     */
    protected BlockCache.Builder builder(final int blockLength, final int bufferLength, final long capacity) {
        return builder().blockLength(blockLength).bufferLength(bufferLength).capacity(capacity);
    }

    /**
     * @return a builder of the standard small cache whose memory comes from {@code regions}: the
     *         one-tier builder, for the tests of the builder's checks.
     */
    protected BlockCache.Builder builder(final MemoryRegionFactory regions) {
        return builder().region(regions);
    }

    protected BlockCache newCache() {
        return track(builder().build());
    }

    /**
     * Closes {@code cache} after the test.
     */
    protected BlockCache track(final BlockCache cache) {
        caches.add(cache);
        return cache;
    }

    @AfterEach
    void closeCaches() {
        for (final BlockCache cache : caches) {
            cache.close();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Assertions
    // ------------------------------------------------------------------------------------------

    static int blockCount(final int length, final int blockLength) {
        return length == 0 ? 1 : (length + blockLength - 1) / blockLength;
    }

    static int blockCount(final int length) {
        return blockCount(length, BLOCK);
    }

    /**
     * Checks an entry's length and contents through every read path: length, a whole view, a
     * copy into a ByteBuffer and a copy into a ByteBuf.
     */
    static void assertEntry(final BlockCache cache, final int address, final byte[] expected) {
        assertEquals(expected.length, cache.length(address), "length");
        final ByteBuf view = cache.view(address);
        assertTrue(view.isReadOnly(), "views are read-only");
        assertEquals(expected.length, view.readableBytes(), "view length");
        assertArrayEquals(expected, readable(view), "view contents");
        assertArrayEquals(expected, copyOf(cache, address), "copyTo(ByteBuffer) contents");
        final ByteBuf copy = Unpooled.buffer(expected.length, expected.length);
        cache.copyTo(address, 0, copy, 0, expected.length);
        assertArrayEquals(expected, copy.array(), "copyTo(ByteBuf) contents");
        final ByteBuf whole = Unpooled.buffer(expected.length + 3, expected.length + 3);
        assertEquals(expected.length, cache.copyTo(address, whole, 3), "copyTo(address, ByteBuf, index) returns the length");
        assertArrayEquals(expected, Arrays.copyOfRange(whole.array(), 3, 3 + expected.length), "copyTo(address, ByteBuf, index) contents");
    }

    /**
     * Checks the block accounting of the cache against the entries it should hold.
     */
    static void assertAccounting(final BlockCache cache, final Iterable<byte[]> entries, final int blockLength) {
        long blocks = 0;
        long bytes = 0;
        long count = 0;
        for (final byte[] entry : entries) {
            blocks += blockCount(entry.length, blockLength);
            bytes += entry.length;
            count++;
        }
        final CacheStats stats = cache.stats();
        assertEquals(blocks, stats.usedBlockCount(), "usedBlockCount == sum of max(1, ceil(length / blockLength))");
        assertEquals(bytes, stats.storedBytes(), "storedBytes == sum of lengths");
        assertEquals(count, stats.entryCount(), "entryCount");
        assertEquals(stats.blockCount(), stats.usedBlockCount() + stats.freeBlockCount(), "used + free == total");
        assertTrue(stats.usedBytes() <= stats.capacity(), "data plus metadata never exceed the capacity");
    }

    /**
     * @return the stats without the read counters (hits per tier), which every read moves: what
     *         an operation that must change nothing is compared on.
     */
    static CacheStats unread(final CacheStats stats) {
        final List<TierStats> tiers = new ArrayList<>();
        for (final TierStats tier : stats.tiers()) {
            tiers.add(new TierStats(tier.index(), tier.name(), tier.region(), tier.capacity(), tier.bufferCount(), tier.blockCount(),
                tier.usedBlockCount(), tier.storedBytes(), tier.entryCount(), 0, tier.demotions(), tier.promotions()));
        }
        return new CacheStats(stats.capacity(), stats.bufferCount(), stats.bufferLength(), stats.blockLength(), stats.blockCount(),
            stats.usedBlockCount(), stats.metadataBytes(), stats.storedBytes(), stats.entryCount(), stats.fullHandlerCalls(),
            stats.fullFailures(), tiers);
    }

    static void assertOccupancy(final CacheStats expected, final CacheStats actual) {
        assertEquals(expected.usedBlockCount(), actual.usedBlockCount(), "usedBlockCount changed");
        assertEquals(expected.storedBytes(), actual.storedBytes(), "storedBytes changed");
        assertEquals(expected.entryCount(), actual.entryCount(), "entryCount changed");
    }

    static InvalidAddressException assertInvalid(final Reason reason, final int address, final Executable operation) {
        final InvalidAddressException e = assertThrows(InvalidAddressException.class, operation);
        assertEquals(reason, e.reason(), e.getMessage());
        assertEquals(address, e.address(), e.getMessage());
        return e;
    }

    /**
     * Fills every free block with one-block entries, checks that exactly
     * {@code stats().freeBlockCount()} fit (the free lists and the buffer queue account for every
     * free block), then deletes them again. The cache must have no full handler.
     */
    static void assertEveryFreeBlockAllocatable(final BlockCache cache) {
        final CacheStats before = cache.stats();
        final long free = before.freeBlockCount();
        final int[] addresses = new int[(int)free];
        for (int i = 0; i < free; i++) {
            addresses[i] = cache.insert(ByteBuffer.wrap(new byte[]{(byte)i}));
        }
        assertEquals(0, cache.stats().freeBlockCount());
        assertThrows(CacheFullException.class, () -> cache.insert(ByteBuffer.allocate(0)), "no block may be left over");
        final Set<Integer> distinct = new HashSet<>();
        for (final int address : addresses) {
            assertTrue(distinct.add(address), "a block was handed out twice");
        }
        for (int i = 0; i < free; i++) {
            assertArrayEquals(new byte[]{(byte)i}, copyOf(cache, addresses[i]));
            cache.delete(addresses[i]);
        }
        assertOccupancy(before, cache.stats());
    }

    /**
     * @return addresses of {@code count} new one-block entries, entry i holding pattern {@code 1000 + i}.
     */
    static int[] fillWithOneBlockEntries(final BlockCache cache, final int count) {
        final int[] addresses = new int[count];
        for (int i = 0; i < count; i++) {
            addresses[i] = cache.insert(Unpooled.wrappedBuffer(pattern(1000 + i, BLOCK)));
        }
        return addresses;
    }

    static void assertOneBlockEntries(final BlockCache cache, final int[] addresses) {
        for (int i = 0; i < addresses.length; i++) {
            if (addresses[i] != 0) {
                assertArrayEquals(pattern(1000 + i, BLOCK), copyOf(cache, addresses[i]), "entry " + i);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Insert and read
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 100, 4095, 4096, 4097, 8191, 8192, 8193, 10 * 1024, 12288, 61440, 61441, 100 * 1024})
    void shouldInsertAndReadBackEntriesAtBlockEdges(final int length) {
        final BlockCache cache = newCache();
        final byte[] data = pattern(length, length);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        assertNotEquals(BlockAddressDescriptor.NULL_ADDRESS, address);
        assertNotEquals(0, BlockAddressDescriptor.blockIndex(address, BLOCK_INDEX_BITS), "an entry never lives in block 0");
        assertEntry(cache, address, data);
        assertAccounting(cache, List.of(data), BLOCK);
        assertEquals(blockCount(length), cache.stats().usedBlockCount());
    }

    @Test
    void shouldInsertAnEntryThatSpansEveryBuffer() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(7, (DATA_BLOCKS - 1) * BLOCK - 5);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        assertEntry(cache, address, data);
        assertEquals(DATA_BLOCKS - 1, cache.stats().usedBlockCount());
        final byte[] small = pattern(8, 5);
        final int last = cache.insert(Unpooled.wrappedBuffer(small));
        assertEquals(0, cache.stats().freeBlockCount());
        assertEquals(cache.capacity(), cache.stats().usedBytes(), "a full cache uses exactly its capacity, metadata included");
        assertEntry(cache, address, data);
        assertEntry(cache, last, small);
        cache.delete(address);
        cache.delete(last);
        final byte[] whole = pattern(9, DATA_BLOCKS * BLOCK);
        final int all = cache.insert(Unpooled.wrappedBuffer(whole));
        assertEntry(cache, all, whole);
        assertEquals(DATA_BLOCKS, cache.stats().usedBlockCount());
    }

    @Test
    void shouldKeepManyEntriesApart() {
        final BlockCache cache = newCache();
        final Map<Integer, byte[]> entries = new HashMap<>();
        final Random random = new Random(11);
        int usedBlocks = 0;
        for (int i = 0; usedBlocks < DATA_BLOCKS - 3; i++) {
            final int length = random.nextInt(3 * BLOCK);
            if (usedBlocks + blockCount(length) > DATA_BLOCKS) {
                continue;
            }
            final byte[] data = pattern(i, length);
            entries.put(cache.insert(Unpooled.wrappedBuffer(data)), data);
            usedBlocks += blockCount(length);
        }
        entries.forEach((address, data) -> assertEntry(cache, address, data));
        assertAccounting(cache, entries.values(), BLOCK);
    }

    @ParameterizedTest
    @EnumSource(Source.class)
    void shouldTakeDataFromEverySourceKind(final Source source) {
        final BlockCache cache = newCache();
        final byte[] first = pattern(1, 10 * 1024);
        int address = source.insert(cache, first);
        assertEntry(cache, address, first);

        final byte[] second = pattern(2, 5 * 1024);
        address = source.append(cache, address, second);
        byte[] expected = concat(first, second);
        assertEntry(cache, address, expected);

        assertEquals(address, source.append(cache, address, new byte[0]));
        assertEntry(cache, address, expected);

        final byte[] small = pattern(3, 17);
        address = source.append(cache, address, small);
        expected = concat(expected, small);
        assertEntry(cache, address, expected);

        final byte[] replacement = pattern(4, 3 * BLOCK + 1);
        address = source.replace(cache, address, replacement);
        assertEntry(cache, address, replacement);

        final int empty = source.insert(cache, new byte[0]);
        assertEntry(cache, empty, new byte[0]);
        assertAccounting(cache, List.of(replacement, new byte[0]), BLOCK);
    }

    @ParameterizedTest
    @EnumSource(Destination.class)
    void shouldCopyIntoEveryDestinationKind(final Destination destination) {
        final BlockCache cache = newCache();
        cache.insert(Unpooled.wrappedBuffer(pattern(0, 13 * BLOCK)));
        final byte[] data = pattern(5, 3 * BLOCK + 100);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final int length = data.length;
        final int[][] ranges = {
            {0, 0}, {0, 1}, {0, length}, {1, length - 1}, {BLOCK - 1, 2}, {BLOCK, BLOCK}, {BLOCK - 1, BLOCK + 2},
            {100, 9000}, {length - 1, 1}, {length, 0}, {3 * BLOCK, 100}, {5000, length - 5000}, {2 * BLOCK + 7, 1}};
        for (final int[] range : ranges) {
            final byte[] copy = destination.copy(cache, address, range[0], range[1]);
            assertArrayEquals(Arrays.copyOfRange(data, range[0], range[0] + range[1]), copy,
                () -> destination + " offset=" + range[0] + " length=" + range[1]);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Destination.class, names = {"HEAP_BYTE_BUF", "DIRECT_BYTE_BUF", "COMPOSITE_BYTE_BUF"})
    void shouldCopyWholeEntriesIntoEveryByteBufKind(final Destination destination) {
        final BlockCache cache = newCache();
        cache.insert(Unpooled.wrappedBuffer(pattern(0, 13 * BLOCK + 5)));
        for (final int length : new int[]{0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 100, 2 * BUFFER}) {
            final byte[] data = pattern(length, length);
            final int address = cache.insert(Unpooled.wrappedBuffer(data));
            assertArrayEquals(data, destination.copyWhole(cache, address, length), () -> destination + " length=" + length);
        }
        // A chain of blocks that are not adjacent in memory: pieces appended between other inserts.
        int address = cache.insert(Unpooled.wrappedBuffer(pattern(1, BLOCK / 2)));
        byte[] expected = pattern(1, BLOCK / 2);
        for (int i = 2; i < 8; i++) {
            cache.insert(Unpooled.wrappedBuffer(pattern(i, BLOCK)));
            final byte[] piece = pattern(10 + i, BLOCK + i);
            address = cache.append(address, Unpooled.wrappedBuffer(piece));
            expected = concat(expected, piece);
        }
        assertTrue(cache.view(address).nioBufferCount() > 1, "the appended entry lies in several runs");
        assertArrayEquals(expected, destination.copyWhole(cache, address, expected.length), destination + " fragmented entry");
    }

    @Test
    void shouldRejectAWholeEntryCopyThatDoesNotFitAndWriteNothing() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(2, 2 * BLOCK + 9);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final CacheStats before = cache.stats();
        final int length = data.length;
        final ByteBuf destination = Unpooled.buffer(length + 4, length + 4);
        for (final int index : new int[]{-1, 5, length + 4, length + 5, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            assertThrows(IndexOutOfBoundsException.class, () -> cache.copyTo(address, destination, index), "index=" + index);
        }
        assertThrows(IndexOutOfBoundsException.class, () -> cache.copyTo(address, Unpooled.buffer(length - 1, length - 1), 0));
        assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, destination.asReadOnly(), 0));
        assertThrows(NullPointerException.class, () -> cache.copyTo(address, null, 0));
        final ByteBuf released = Unpooled.directBuffer(length, length);
        assertTrue(released.release());
        assertThrows(IllegalReferenceCountException.class, () -> cache.copyTo(address, released, 0));
        assertEquals(before, cache.stats(), "a rejected copy changes nothing, not even the hits");
        final ByteBuf view = cache.view(address);
        assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, view, 0), "a view of the cache is no destination");
        assertArrayEquals(new byte[length + 4], destination.array(), "a rejected copy writes nothing");
        assertEquals(0, destination.writerIndex());
        assertEquals(unread(before), unread(cache.stats()));
        assertEquals(length, cache.copyTo(address, destination, 4), "the last index at which the entry fits");
        assertArrayEquals(data, Arrays.copyOfRange(destination.array(), 4, 4 + length));
    }

    @Test
    void shouldCountAWholeEntryCopyAsOneHit() {
        final BlockCache cache = newCache();
        final int address = cache.insert(Unpooled.wrappedBuffer(pattern(3, 5000)));
        final long hits = cache.stats().tier(0).hits();
        final ByteBuf destination = Unpooled.buffer(5000, 5000);
        for (int i = 0; i < 7; i++) {
            cache.copyTo(address, destination, 0);
        }
        assertEquals(hits + 7, cache.stats().tier(0).hits());
    }

    // ------------------------------------------------------------------------------------------
    // Append
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldAppendManySmallPiecesAcrossBlocks() {
        final BlockCache cache = newCache();
        final Random random = new Random(21);
        int address = cache.insert(Unpooled.EMPTY_BUFFER);
        byte[] expected = new byte[0];
        int piece = 0;
        while (expected.length < 6 * BLOCK) {
            final byte[] data = pattern(100 + piece++, 1 + random.nextInt(700));
            final int before = address;
            final int oldBlocks = blockCount(expected.length);
            address = cache.append(address, Unpooled.wrappedBuffer(data));
            expected = concat(expected, data);
            if (blockCount(expected.length) == oldBlocks) {
                assertEquals(before, address, "an append that fits the last block keeps the address");
            } else {
                assertNotEquals(before, address, "an append that links a block moves the address");
                assertInvalid(Reason.NOT_LAST_BLOCK, before, () -> cache.length(before));
            }
            assertEntry(cache, address, expected);
            assertAccounting(cache, List.of(expected), BLOCK);
        }
    }

    @Test
    void shouldAppendExactlyTheRemainderOfTheLastBlock() {
        final BlockCache cache = newCache();
        final byte[] head = pattern(1, 1000);
        final int address = cache.insert(Unpooled.wrappedBuffer(head));
        final byte[] rest = pattern(2, BLOCK - 1000);
        assertEquals(address, cache.append(address, Unpooled.wrappedBuffer(rest)));
        final byte[] full = concat(head, rest);
        assertEntry(cache, address, full);
        assertEquals(1, cache.stats().usedBlockCount());

        final byte[] one = pattern(3, 1);
        final int next = cache.append(address, Unpooled.wrappedBuffer(one));
        assertNotEquals(address, next);
        assertEntry(cache, next, concat(full, one));
        assertEquals(2, cache.stats().usedBlockCount());
        assertInvalid(Reason.NOT_LAST_BLOCK, address, () -> cache.length(address));
    }

    @Test
    void shouldAppendToEmptyEntries() {
        final BlockCache cache = newCache();
        final int empty = cache.insert(ByteBuffer.allocate(0));
        assertEquals(empty, cache.append(empty, Unpooled.EMPTY_BUFFER));
        assertEquals(empty, cache.append(empty, ByteBuffer.allocate(0)));
        assertEntry(cache, empty, new byte[0]);
        assertEquals(1, cache.stats().usedBlockCount(), "an empty entry holds one block");

        final byte[] block = pattern(1, BLOCK);
        assertEquals(empty, cache.append(empty, Unpooled.wrappedBuffer(block)), "a full block still fits the empty entry's block");
        assertEntry(cache, empty, block);

        final int other = cache.insert(Unpooled.EMPTY_BUFFER);
        final byte[] overflow = pattern(2, BLOCK + 1);
        final int grown = cache.append(other, Unpooled.wrappedBuffer(overflow));
        assertNotEquals(other, grown);
        assertEntry(cache, grown, overflow);
        assertAccounting(cache, List.of(block, overflow), BLOCK);
    }

    @Test
    void shouldAppendPiecesOfManyBlocks() {
        final BlockCache cache = newCache();
        byte[] expected = pattern(1, 100);
        int address = cache.insert(Unpooled.wrappedBuffer(expected));
        final int[] pieces = {10 * BLOCK + 17, 3 * BLOCK, BLOCK - 117, 1, 20 * BLOCK, 0, 2 * BLOCK - 1};
        for (int i = 0; i < pieces.length; i++) {
            final byte[] data = pattern(10 + i, pieces[i]);
            address = cache.append(address, Unpooled.wrappedBuffer(data));
            expected = concat(expected, data);
            assertEntry(cache, address, expected);
            assertAccounting(cache, List.of(expected), BLOCK);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Replace and delete
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource({"100,10000", "10000,100", "5000,6000", "6000,5000", "10000,0", "0,9000", "4096,4096", "4097,4096",
        "4096,4097", "0,0", "40960,1", "1,40960", "8192,12288"})
    void shouldReplaceGrowingShrinkingOrKeepingTheBlockCount(final int oldLength, final int newLength) {
        final BlockCache cache = newCache();
        final byte[] before = pattern(1, 3000);
        final int neighbourBefore = cache.insert(Unpooled.wrappedBuffer(before));
        final int address = cache.insert(Unpooled.wrappedBuffer(pattern(2, oldLength)));
        final byte[] after = pattern(3, 5000);
        final int neighbourAfter = cache.insert(Unpooled.wrappedBuffer(after));

        final byte[] replacement = pattern(4, newLength);
        final int replaced = cache.replace(address, Unpooled.wrappedBuffer(replacement));
        assertEntry(cache, replaced, replacement);
        if (blockCount(newLength) > blockCount(oldLength)) {
            assertNotEquals(address, replaced, "a replace that links blocks moves the address");
            assertInvalid(Reason.NOT_LAST_BLOCK, address, () -> cache.length(address));
        } else {
            assertEquals(address, replaced, "a replace that links no block keeps the address");
        }
        assertEntry(cache, neighbourBefore, before);
        assertEntry(cache, neighbourAfter, after);
        assertAccounting(cache, List.of(before, replacement, after), BLOCK);
        assertEveryFreeBlockAllocatable(cache);
        assertEntry(cache, replaced, replacement);
    }

    @Test
    void shouldDeleteEntriesAndFreeEveryBlock() {
        final BlockCache cache = newCache();
        final int[] lengths = {0, 1, 4095, 4096, 4097, 10 * 1024, 100 * 1024};
        final List<byte[]> live = new ArrayList<>();
        final int[] addresses = new int[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            final byte[] data = pattern(i, lengths[i]);
            addresses[i] = cache.insert(Unpooled.wrappedBuffer(data));
            live.add(data);
        }
        assertAccounting(cache, live, BLOCK);
        for (int i = 0; i < lengths.length; i++) {
            final int address = addresses[i];
            cache.delete(address);
            live.set(i, null);
            assertInvalid(Reason.FREED_BLOCK, address, () -> cache.length(address));
            for (int j = i + 1; j < lengths.length; j++) {
                assertEntry(cache, addresses[j], pattern(j, lengths[j]));
            }
            assertAccounting(cache, live.subList(i + 1, live.size()), BLOCK);
        }
        final CacheStats stats = cache.stats();
        assertEquals(0, stats.usedBlockCount());
        assertEquals(DATA_BLOCKS, stats.freeBlockCount());
        assertEquals(0, stats.storedBytes());
        assertEquals(0, stats.entryCount());
        assertEveryFreeBlockAllocatable(cache);
    }

    @Test
    void shouldReuseBlocksAfterDelete() {
        final BlockCache cache = newCache();
        final int[] addresses = fillWithOneBlockEntries(cache, DATA_BLOCKS);
        assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[1])));

        final Random random = new Random(31);
        for (int round = 0; round < 200; round++) {
            final int victim = random.nextInt(DATA_BLOCKS);
            final int freed = addresses[victim];
            cache.delete(freed);
            final byte[] data = pattern(1000 + victim, BLOCK);
            addresses[victim] = cache.insert(Unpooled.wrappedBuffer(data));
            assertEquals(freed, addresses[victim], "the only free block is the one just freed");
            assertEquals(DATA_BLOCKS, cache.stats().usedBlockCount());
        }
        assertOneBlockEntries(cache, addresses);
        for (final int address : addresses) {
            cache.delete(address);
        }
        final byte[] whole = pattern(3, DATA_BLOCKS * BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(whole)), whole);
    }

    @Test
    void shouldNotLeakBlocksOverManyFillAndDrainRounds() {
        final BlockCache cache = newCache();
        final Random random = new Random(41);
        for (int round = 0; round < 30; round++) {
            final Map<Integer, byte[]> entries = new HashMap<>();
            int blocks = 0;
            while (blocks < DATA_BLOCKS) {
                final int length = Math.min(random.nextInt(4 * BLOCK), (DATA_BLOCKS - blocks) * BLOCK);
                final byte[] data = pattern(round * 1000L + entries.size(), length);
                entries.put(cache.insert(Unpooled.wrappedBuffer(data)), data);
                blocks += blockCount(length);
            }
            assertEquals(0, cache.stats().freeBlockCount(), "round " + round);
            entries.forEach((address, data) -> assertArrayEquals(data, copyOf(cache, address)));
            assertAccounting(cache, entries.values(), BLOCK);
            entries.keySet().forEach(cache::delete);
            assertEquals(0, cache.stats().usedBlockCount(), "round " + round);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Views
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldViewAndCopyEveryRangeOfASmallMultiBlockEntry() {
        final int block = 64;
        final BlockCache cache = track(builder(block, 512, 4 * 512).build());
        cache.insert(Unpooled.wrappedBuffer(pattern(0, 4 * block)));
        final byte[] data = pattern(1, 5 * block - 20);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        assertEquals(9, cache.stats().usedBlockCount());
        final int length = data.length;
        final byte[] scratch = new byte[length];
        for (int offset = 0; offset <= length; offset++) {
            for (int count = 0; count <= length - offset; count++) {
                final ByteBuf view = cache.view(address, offset, count);
                final byte[] expected = Arrays.copyOfRange(data, offset, offset + count);
                if (view.readableBytes() != count || !Arrays.equals(expected, readable(view))) {
                    assertArrayEquals(expected, readable(view), "view offset=" + offset + " length=" + count);
                }
                cache.copyTo(address, offset, ByteBuffer.wrap(scratch, 0, count));
                if (!Arrays.equals(expected, 0, count, scratch, 0, count)) {
                    assertArrayEquals(expected, Arrays.copyOf(scratch, count), "copyTo offset=" + offset + " length=" + count);
                }
            }
        }
    }

    @Test
    void shouldReturnReadOnlyViews() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 3 * BLOCK + 10);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final ByteBuf[] views = {
            cache.view(address), cache.view(address, 10, 100), cache.view(address, BLOCK - 5, 10), cache.view(address, 0, 0),
            cache.view(cache.insert(Unpooled.EMPTY_BUFFER))};
        for (final ByteBuf view : views) {
            assertTrue(view.isReadOnly());
            assertThrows(ReadOnlyBufferException.class, () -> view.setByte(0, 1));
            assertThrows(ReadOnlyBufferException.class, () -> view.setBytes(0, new byte[]{1, 2}));
            assertThrows(ReadOnlyBufferException.class, () -> view.setInt(0, -1));
            assertThrows(ReadOnlyBufferException.class, () -> view.setBytes(0, ByteBuffer.allocate(1)));
        }
        assertEntry(cache, address, data);
    }

    @Test
    void shouldIgnoreReleaseOfAView() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 3 * BLOCK + 10);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final ByteBuf[] views = {cache.view(address), cache.view(address, 10, 100), cache.view(address, 0, 0)};
        for (final ByteBuf view : views) {
            final int refCnt = view.refCnt();
            assertFalse(view.release(), "releasing a view must not free it");
            assertFalse(view.release(refCnt));
            assertEquals(refCnt, view.refCnt());
            view.retain().release();
        }
        assertArrayEquals(data, readable(views[0]), "a released view stays readable");
        assertArrayEquals(Arrays.copyOfRange(data, 10, 110), readable(views[1]));
        assertEntry(cache, address, data);
        for (int i = 0; i < 10; i++) {
            cache.view(address, BLOCK, 5).release();
        }
        final byte[] more = pattern(2, 100);
        final int grown = cache.append(address, Unpooled.wrappedBuffer(more));
        assertEntry(cache, grown, concat(data, more));
    }

    // ------------------------------------------------------------------------------------------
    // A full cache
    // ------------------------------------------------------------------------------------------

    /**
     * With {@link CacheFullHandler#NONE} a full cache fails at once: the retry timeout is an hour,
     * so a cache that waited for it would hit the test's timeout instead.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void shouldFailAtOnceWhenFullWithoutAHandler() {
        final BlockCache cache = track(builder().fullRetryTimeout(Duration.ofHours(1)).build());
        final int[] addresses = fillWithOneBlockEntries(cache, DATA_BLOCKS);
        final CacheStats before = cache.stats();
        final CacheFullException e = assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[10])));
        assertEquals(1, e.blocksNeeded());
        final CacheStats after = cache.stats();
        assertOccupancy(before, after);
        assertEquals(before.fullFailures() + 1, after.fullFailures());
        assertEquals(before.fullHandlerCalls() + 1, after.fullHandlerCalls());
        assertOneBlockEntries(cache, addresses);
    }

    @Test
    void shouldGiveBackPartlyAllocatedBlocksWhenAnInsertFails() {
        final BlockCache cache = newCache();
        final int[] addresses = fillWithOneBlockEntries(cache, DATA_BLOCKS - 2);
        final CacheStats before = cache.stats();
        assertEquals(2, before.freeBlockCount());
        final CacheFullException e = assertThrows(CacheFullException.class,
            () -> cache.insert(Unpooled.wrappedBuffer(pattern(1, 2 * BLOCK + 1))));
        assertEquals(3, e.blocksNeeded());
        assertOccupancy(before, cache.stats());
        assertOneBlockEntries(cache, addresses);
        final byte[] fits = pattern(2, 2 * BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(fits)), fits);
        assertEquals(0, cache.stats().freeBlockCount());
    }

    @Test
    void shouldLeaveTheEntryUnchangedWhenAnAppendFails() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 100);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final int[] others = fillWithOneBlockEntries(cache, DATA_BLOCKS - 3);
        final CacheStats before = cache.stats();
        assertEquals(2, before.freeBlockCount());

        assertThrows(CacheFullException.class, () -> cache.append(address, Unpooled.wrappedBuffer(pattern(2, 3 * BLOCK))));
        assertThrows(CacheFullException.class, () -> cache.append(address, ByteBuffer.wrap(pattern(2, 3 * BLOCK))));
        assertOccupancy(before, cache.stats());
        assertEntry(cache, address, data);
        assertOneBlockEntries(cache, others);

        final byte[] more = pattern(3, 3 * BLOCK - 100);
        final int grown = cache.append(address, Unpooled.wrappedBuffer(more));
        assertEntry(cache, grown, concat(data, more));
        assertEquals(0, cache.stats().freeBlockCount());
    }

    @Test
    void shouldLeaveTheEntryUnchangedWhenAReplaceFails() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 100);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        fillWithOneBlockEntries(cache, DATA_BLOCKS - 3);
        final CacheStats before = cache.stats();
        assertThrows(CacheFullException.class, () -> cache.replace(address, Unpooled.wrappedBuffer(pattern(2, 4 * BLOCK))));
        assertOccupancy(before, cache.stats());
        assertEntry(cache, address, data);
        final byte[] fits = pattern(3, 3 * BLOCK);
        assertEntry(cache, cache.replace(address, Unpooled.wrappedBuffer(fits)), fits);
    }

    @Test
    void shouldFailAtOnceWhenAnEntryNeedsMoreBlocksThanTheCacheHas() {
        final AtomicInteger calls = new AtomicInteger();
        final BlockCache cache = track(builder().fullHandler(count -> calls.incrementAndGet() > 0).build());
        final CacheFullException e = assertThrows(CacheFullException.class,
            () -> cache.insert(Unpooled.wrappedBuffer(new byte[DATA_BLOCKS * BLOCK + 1])));
        assertEquals(DATA_BLOCKS + 1, e.blocksNeeded());
        assertEquals(0, calls.get(), "no handler can make room for more than the whole cache");
        assertEquals(0, cache.stats().usedBlockCount());
        assertEquals(1, cache.stats().fullFailures());
    }

    @Test
    void shouldSucceedWhenTheHandlerDeletesAnEntry() {
        final BlockCache cache = track(builder().fullRetryTimeout(Duration.ofSeconds(10)).build());
        final int[] addresses = fillWithOneBlockEntries(cache, DATA_BLOCKS);
        final ArrayDeque<Integer> victims = new ArrayDeque<>();
        for (int i = 0; i < 3; i++) {
            victims.add(i);
        }
        final List<Integer> requested = new ArrayList<>();
        cache.fullHandler(count -> {
            requested.add(count);
            final Integer victim = victims.poll();
            if (victim == null) {
                return false;
            }
            cache.delete(addresses[victim]);
            addresses[victim] = 0;
            return true;
        });

        final byte[] one = pattern(1, BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(one)), one);
        assertEquals(List.of(1), requested);

        final byte[] two = pattern(2, BLOCK + 1);
        final int two1 = cache.insert(Unpooled.wrappedBuffer(two));
        assertEntry(cache, two1, two);
        assertTrue(requested.size() >= 2, "the handler is called until enough blocks are free");
        for (final int count : requested.subList(1, requested.size())) {
            assertEquals(2, count, "the handler is told how many blocks the operation needs");
        }
        assertEquals(requested.size(), cache.stats().fullHandlerCalls());
        assertEquals(0, cache.stats().fullFailures());
        assertOneBlockEntries(cache, addresses);

        victims.clear();
        assertThrows(CacheFullException.class, () -> cache.append(two1, Unpooled.wrappedBuffer(pattern(3, BLOCK))));
        assertEntry(cache, two1, two);
    }

    @Test
    void shouldSucceedWhenTheHandlerFreesBlocksForAnAppend() {
        final BlockCache cache = track(builder().fullRetryTimeout(Duration.ofSeconds(10)).build());
        final byte[] data = pattern(1, 10);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final int[] others = fillWithOneBlockEntries(cache, DATA_BLOCKS - 1);
        final AtomicInteger next = new AtomicInteger();
        cache.fullHandler(count -> {
            final int victim = next.getAndIncrement();
            cache.delete(others[victim]);
            others[victim] = 0;
            return true;
        });
        final byte[] more = pattern(2, 5 * BLOCK);
        final int grown = cache.append(address, Unpooled.wrappedBuffer(more));
        assertEntry(cache, grown, concat(data, more));
        assertEquals(5, next.get(), "exactly the blocks needed were freed");
        assertOneBlockEntries(cache, others);
        assertEquals(DATA_BLOCKS, cache.stats().usedBlockCount());
    }

    @Test
    void shouldFailAfterTheRetryTimeoutWhenTheHandlerFreesNothing() {
        final Duration timeout = Duration.ofMillis(30);
        final LongAdder calls = new LongAdder();
        final BlockCache cache = track(builder().fullRetryTimeout(timeout).fullHandler(count -> {
            calls.increment();
            return true;
        }).build());
        final byte[] data = pattern(1, 100);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final int[] others = fillWithOneBlockEntries(cache, DATA_BLOCKS - 3);
        final CacheStats before = cache.stats();

        final long start = System.nanoTime();
        assertThrows(CacheFullException.class, () -> cache.append(address, Unpooled.wrappedBuffer(pattern(2, 3 * BLOCK))));
        assertTrue(System.nanoTime() - start >= timeout.toNanos(), "the operation retries for the whole timeout");
        assertTrue(calls.sum() >= 1);
        assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(pattern(2, 3 * BLOCK))));

        final CacheStats after = cache.stats();
        assertOccupancy(before, after);
        assertEquals(before.fullFailures() + 2, after.fullFailures());
        assertEquals(calls.sum(), after.fullHandlerCalls());
        assertEntry(cache, address, data);
        assertOneBlockEntries(cache, others);
        final byte[] fits = pattern(3, 2 * BLOCK);
        assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(fits)), fits);
    }

    // ------------------------------------------------------------------------------------------
    // Bad input
    // ------------------------------------------------------------------------------------------

    /** Addresses that name no entry, and why. */
    enum BadAddress {
        NULL(Reason.NULL_ADDRESS),
        BUFFER_PAST_THE_END(Reason.OUT_OF_RANGE),
        ALL_ONES(Reason.OUT_OF_RANGE),
        METADATA_BLOCK(Reason.METADATA_BLOCK),
        FREED_BLOCK(Reason.FREED_BLOCK),
        MIDDLE_BLOCK(Reason.NOT_LAST_BLOCK);

        final Reason reason;

        BadAddress(final Reason reason) {
            this.reason = reason;
        }
    }

    /** Every operation that takes an address. */
    enum AddressOperation {
        APPEND_BYTE_BUF(c -> a -> c.append(a, Unpooled.wrappedBuffer(new byte[10]))),
        APPEND_EMPTY(c -> a -> c.append(a, Unpooled.EMPTY_BUFFER)),
        APPEND_BYTE_BUFFER(c -> a -> c.append(a, ByteBuffer.allocate(5000))),
        REPLACE(c -> a -> c.replace(a, Unpooled.wrappedBuffer(new byte[5000]))),
        REPLACE_EMPTY(c -> a -> c.replace(a, Unpooled.EMPTY_BUFFER)),
        DELETE(c -> c::delete),
        LENGTH(c -> c::length),
        VIEW(c -> c::view),
        VIEW_EMPTY_RANGE(c -> a -> c.view(a, 0, 0)),
        COPY_TO_BYTE_BUF(c -> a -> c.copyTo(a, 0, Unpooled.buffer(1, 1), 0, 0)),
        COPY_TO_BYTE_BUFFER(c -> a -> c.copyTo(a, 0, ByteBuffer.allocate(0))),
        COPY_WHOLE_TO_BYTE_BUF(c -> a -> c.copyTo(a, Unpooled.buffer(3 * BLOCK, 3 * BLOCK), 0));

        final Function<BlockCache, Consumer<Integer>> operation;

        AddressOperation(final Function<BlockCache, Consumer<Integer>> operation) {
            this.operation = operation;
        }

        void apply(final BlockCache cache, final int address) {
            operation.apply(cache).accept(address);
        }
    }

    static Stream<Arguments> badAddressCases() {
        return Arrays.stream(BadAddress.values())
            .flatMap(bad -> Arrays.stream(AddressOperation.values()).map(operation -> Arguments.of(bad, operation)));
    }

    /**
     * A cache with one live entry of two blocks, the address its first block had before an
     * append made it a middle block, and the address of a deleted entry whose block is free.
     */
    private final class AddressFixture {
        final BlockCache cache = newCache();
        final byte[] content = pattern(1, BLOCK + 100);
        final int middle = cache.insert(Unpooled.wrappedBuffer(Arrays.copyOf(content, BLOCK)));
        final int live = cache.append(middle, Unpooled.wrappedBuffer(Arrays.copyOfRange(content, BLOCK, content.length)));
        final int freed;

        AddressFixture() {
            final int victim = cache.insert(Unpooled.wrappedBuffer(new byte[10]));
            cache.delete(victim);
            freed = victim;
            assertNotEquals(middle, live);
        }

        int address(final BadAddress bad) {
            switch (bad) {
                case NULL:
                    return BlockAddressDescriptor.NULL_ADDRESS;
                case BUFFER_PAST_THE_END:
                    return BlockAddressDescriptor.pack(BUFFERS, 1, BLOCK_INDEX_BITS);
                case ALL_ONES:
                    return -1;
                case METADATA_BLOCK:
                    return BlockAddressDescriptor.pack(3, BlockAddressDescriptor.METADATA_BLOCK_INDEX, BLOCK_INDEX_BITS);
                case FREED_BLOCK:
                    return freed;
                default:
                    return middle;
            }
        }

        void assertUnchanged(final CacheStats before) {
            assertEquals(unread(before), unread(cache.stats()), "a rejected operation must change nothing");
            assertEntry(cache, live, content);
            assertInvalid(Reason.FREED_BLOCK, freed, () -> cache.length(freed));
            assertInvalid(Reason.NOT_LAST_BLOCK, middle, () -> cache.length(middle));
        }
    }

    @ParameterizedTest
    @MethodSource("badAddressCases")
    void shouldRejectBadAddressesAndChangeNothing(final BadAddress bad, final AddressOperation operation) {
        final AddressFixture fixture = new AddressFixture();
        final CacheStats before = fixture.cache.stats();
        final int address = fixture.address(bad);
        assertInvalid(bad.reason, address, () -> operation.apply(fixture.cache, address));
        fixture.assertUnchanged(before);
    }

    @Test
    void shouldRejectAnAddressWhoseBlockWasReusedAsAMiddleBlock() {
        final BlockCache cache = newCache();
        final int[] addresses = fillWithOneBlockEntries(cache, DATA_BLOCKS);
        final int a = addresses[17];
        final int b = addresses[90];
        cache.delete(a);
        cache.delete(b);
        addresses[17] = 0;
        addresses[90] = 0;
        final byte[] data = pattern(2, 2 * BLOCK);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        assertTrue(address == a || address == b, "the only two free blocks hold the new entry");
        final int middle = address == a ? b : a;
        final CacheStats before = cache.stats();
        assertInvalid(Reason.NOT_LAST_BLOCK, middle, () -> cache.delete(middle));
        assertInvalid(Reason.NOT_LAST_BLOCK, middle, () -> cache.append(middle, Unpooled.wrappedBuffer(new byte[1])));
        assertInvalid(Reason.NOT_LAST_BLOCK, middle, () -> cache.replace(middle, Unpooled.EMPTY_BUFFER));
        assertEquals(unread(before), unread(cache.stats()));
        assertEntry(cache, address, data);
        assertOneBlockEntries(cache, addresses);
    }

    @Test
    void shouldRejectNullDataAndChangeNothing() {
        final AddressFixture fixture = new AddressFixture();
        final BlockCache cache = fixture.cache;
        final CacheStats before = cache.stats();
        assertThrows(NullPointerException.class, () -> cache.insert((ByteBuf)null));
        assertThrows(NullPointerException.class, () -> cache.insert((ByteBuffer)null));
        assertThrows(NullPointerException.class, () -> cache.append(fixture.live, (ByteBuf)null));
        assertThrows(NullPointerException.class, () -> cache.append(fixture.live, (ByteBuffer)null));
        assertThrows(NullPointerException.class, () -> cache.replace(fixture.live, null));
        assertThrows(NullPointerException.class, () -> cache.copyTo(fixture.live, 0, (ByteBuf)null, 0, 0));
        assertThrows(NullPointerException.class, () -> cache.copyTo(fixture.live, 0, (ByteBuffer)null));
        assertThrows(NullPointerException.class, () -> cache.fullHandler(null));
        fixture.assertUnchanged(before);
    }

    @Test
    void shouldRejectReleasedDataAndChangeNothing() {
        final AddressFixture fixture = new AddressFixture();
        final BlockCache cache = fixture.cache;
        final CacheStats before = cache.stats();
        for (final ByteBuf released : List.of(Unpooled.buffer(100).writeZero(100), Unpooled.directBuffer(100).writeZero(100),
            Unpooled.compositeBuffer().addComponent(true, Unpooled.buffer(100).writeZero(100)))) {
            assertTrue(released.release());
            assertThrows(IllegalReferenceCountException.class, () -> cache.insert(released));
            assertThrows(IllegalReferenceCountException.class, () -> cache.append(fixture.live, released));
            assertThrows(IllegalReferenceCountException.class, () -> cache.replace(fixture.live, released));
        }
        fixture.assertUnchanged(before);
    }

    @Test
    void shouldRefuseToCopyIntoAReleasedDestination() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(3, 300);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        for (final ByteBuf released : List.of(Unpooled.buffer(300), Unpooled.directBuffer(300))) {
            assertTrue(released.release());
            assertThrows(IllegalReferenceCountException.class, () -> cache.copyTo(address, 0, released, 0, 300));
        }
        assertEntry(cache, address, data);
    }

    /**
     * @return a composite of {@code okLength} readable bytes then {@code badLength} bytes whose
     *         component is released: it passes the reference-count check and throws mid-copy.
     */
    private static ByteBuf failingMidCopy(final int okLength, final int badLength) {
        final ByteBuf ok = Unpooled.buffer(okLength).writeZero(okLength);
        final ByteBuf gone = Unpooled.buffer(badLength).writeZero(badLength);
        final ByteBuf composite = Unpooled.compositeBuffer().addComponents(true, ok, gone);
        assertTrue(gone.release());
        assertEquals(1, composite.refCnt());
        return composite;
    }

    @ParameterizedTest
    @CsvSource({"100,100", "100,5000", "5000,100", "5000,5000", "0,9000", "9000,1"})
    void shouldLeakNothingWhenTheSourceFailsMidCopy(final int okLength, final int badLength) {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, BLOCK + 100);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final byte[] small = pattern(2, 10);
        final int other = cache.insert(Unpooled.wrappedBuffer(small));
        final CacheStats before = cache.stats();

        assertThrows(IllegalReferenceCountException.class, () -> cache.insert(failingMidCopy(okLength, badLength)));
        assertEquals(unread(before), unread(cache.stats()));
        assertThrows(IllegalReferenceCountException.class, () -> cache.append(address, failingMidCopy(okLength, badLength)));
        assertEquals(unread(before), unread(cache.stats()));
        assertEntry(cache, address, data);

        assertThrows(IllegalReferenceCountException.class, () -> cache.replace(other, failingMidCopy(okLength, badLength)));
        assertEquals(unread(before), unread(cache.stats()), "a failed replace keeps the entry's blocks and leaks none");
        assertEquals(small.length, cache.length(other), "a failed replace keeps the entry's length");
        assertThrows(IllegalReferenceCountException.class, () -> cache.replace(address, failingMidCopy(okLength, badLength)));
        assertEquals(unread(before), unread(cache.stats()));
        assertEquals(data.length, cache.length(address));

        cache.delete(address);
        cache.delete(other);
        assertEquals(0, cache.stats().usedBlockCount());
        assertEveryFreeBlockAllocatable(cache);
    }

    @Test
    void shouldRejectEntriesOverTheMaximumLengthAndChangeNothing() {
        final int max = 10_000;
        final BlockCache cache = track(builder().maxEntryLength(max).build());
        assertEquals(max, cache.maxEntryLength());
        final byte[] full = pattern(1, max);
        final int atMax = cache.insert(Unpooled.wrappedBuffer(full));
        final byte[] part = pattern(2, 9_000);
        final int partial = cache.insert(ByteBuffer.wrap(part));
        final CacheStats before = cache.stats();

        assertThrows(EntryTooLongException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[max + 1])));
        assertThrows(EntryTooLongException.class, () -> cache.insert(ByteBuffer.allocate(max + 1)));
        assertThrows(EntryTooLongException.class, () -> cache.append(atMax, Unpooled.wrappedBuffer(new byte[1])));
        assertThrows(EntryTooLongException.class, () -> cache.append(atMax, ByteBuffer.allocate(1)));
        assertThrows(EntryTooLongException.class, () -> cache.append(partial, Unpooled.wrappedBuffer(new byte[1_001])));
        assertThrows(EntryTooLongException.class, () -> cache.replace(partial, Unpooled.wrappedBuffer(new byte[max + 1])));
        final EntryTooLongException e = assertThrows(EntryTooLongException.class,
            () -> cache.append(partial, ByteBuffer.allocate(max)));
        assertTrue(e.getMessage().contains("maxEntryLength=" + max), e.getMessage());

        assertEquals(unread(before), unread(cache.stats()));
        assertEntry(cache, atMax, full);
        assertEntry(cache, partial, part);
        assertEquals(atMax, cache.append(atMax, Unpooled.EMPTY_BUFFER));
        final byte[] rest = pattern(3, 1_000);
        assertEntry(cache, cache.append(partial, Unpooled.wrappedBuffer(rest)), concat(part, rest));
    }

    @Test
    void shouldDefaultTheMaximumEntryLengthToWhatTheLayoutHolds() {
        assertEquals(BlockMetadataDescriptor.MAX_ENTRY_LENGTH, newCache().maxEntryLength());
    }

    @Test
    void shouldRejectBadRangesAndChangeNothing() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 10_000);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final CacheStats before = cache.stats();
        final int length = data.length;
        final int[][] ranges = {
            {-1, 0}, {0, -1}, {-1, 1}, {0, length + 1}, {1, length}, {length, 1}, {length + 1, 0}, {Integer.MAX_VALUE, 1},
            {1, Integer.MAX_VALUE}, {Integer.MIN_VALUE, 0}, {5000, Integer.MAX_VALUE - 4000}, {Integer.MAX_VALUE, Integer.MAX_VALUE}};
        final ByteBuf destination = Unpooled.buffer(2 * length, 2 * length);
        for (final int[] range : ranges) {
            final String what = "offset=" + range[0] + " length=" + range[1];
            assertThrows(IndexOutOfBoundsException.class, () -> cache.view(address, range[0], range[1]), what);
            if (range[1] <= destination.capacity()) {
                assertThrows(IndexOutOfBoundsException.class, () -> cache.copyTo(address, range[0], destination, 0, range[1]), what);
            }
        }
        final int[][] destinationRanges = {{-1, 10}, {2 * length - 9, 10}, {2 * length + 1, 0}, {Integer.MIN_VALUE, 1}, {Integer.MAX_VALUE, 1}};
        for (final int[] range : destinationRanges) {
            assertThrows(IndexOutOfBoundsException.class, () -> cache.copyTo(address, 0, destination, range[0], range[1]),
                "destinationIndex=" + range[0] + " length=" + range[1]);
        }
        assertArrayEquals(new byte[2 * length], destination.array(), "a rejected copy writes nothing");
        assertEquals(0, destination.readerIndex());
        assertEquals(0, destination.writerIndex());

        final int[][] bufferRanges = {{-1, 1}, {0, length + 1}, {length - 1, 2}, {length + 1, 0}, {Integer.MIN_VALUE, 0}};
        for (final int[] range : bufferRanges) {
            final ByteBuffer target = ByteBuffer.allocate(range[1] + 4).position(2).limit(2 + range[1]);
            assertThrows(IndexOutOfBoundsException.class, () -> cache.copyTo(address, range[0], target),
                "offset=" + range[0] + " remaining=" + range[1]);
            assertEquals(2, target.position(), "a rejected copy leaves the position alone");
            assertArrayEquals(new byte[range[1] + 4], target.array());
        }
        assertEquals(unread(before), unread(cache.stats()));
        assertEntry(cache, address, data);
    }

    @Test
    void shouldRejectReadOnlyDestinations() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 5000);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final ByteBuf heap = Unpooled.buffer(100, 100);
        final ByteBuf direct = Unpooled.directBuffer(100, 100);
        final ByteBuffer directNio = ByteBuffer.allocateDirect(10);
        try {
            assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, 0, heap.asReadOnly(), 0, 10));
            assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, 0, direct.asReadOnly(), 0, 10));
            assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, 0, cache.view(address), 0, 10),
                "a view of the cache is no destination");
            final ByteBuffer heapBuffer = ByteBuffer.allocate(10).asReadOnlyBuffer();
            final ByteBuffer directBuffer = directNio.asReadOnlyBuffer();
            assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, 0, heapBuffer));
            assertThrows(ReadOnlyBufferException.class, () -> cache.copyTo(address, 0, directBuffer));
            assertEquals(0, heapBuffer.position());
            assertEquals(0, directBuffer.position());
            assertArrayEquals(new byte[100], heap.array());
            assertEntry(cache, address, data);
        } finally {
            heap.release();
            direct.release();
            BufferUtil.free(directNio);
        }
    }

    @Test
    void shouldRejectEveryOperationAfterClose() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 3 * BLOCK);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final ByteBuf multiBlockView = cache.view(address);
        final ByteBuf oneBlockView = cache.view(address, 10, 20);
        assertFalse(cache.isClosed());
        cache.close();
        assertTrue(cache.isClosed());
        cache.close();

        final ByteBuf source = Unpooled.wrappedBuffer(new byte[10]);
        final List<Executable> operations = List.of(
            () -> cache.insert(source), () -> cache.insert(ByteBuffer.allocate(1)), () -> cache.append(address, source),
            () -> cache.append(address, ByteBuffer.allocate(1)), () -> cache.replace(address, source), () -> cache.delete(address),
            () -> cache.length(address), () -> cache.view(address), () -> cache.view(address, 0, 1),
            () -> cache.copyTo(address, 0, Unpooled.buffer(1), 0, 1), () -> cache.copyTo(address, 0, ByteBuffer.allocate(1)),
            () -> cache.copyTo(address, Unpooled.buffer(3 * BLOCK), 0),
            cache::stats, () -> cache.insert(Unpooled.EMPTY_BUFFER), () -> cache.delete(0), () -> cache.length(-1));
        for (final Executable operation : operations) {
            final CacheClosedException e = assertThrows(CacheClosedException.class, operation);
            assertTrue(e.getMessage().contains(cache.name()), e.getMessage());
        }
        assertEquals(0, source.readerIndex());
        assertThrows(IllegalReferenceCountException.class, () -> multiBlockView.getByte(0), "a view must not read freed memory");
        assertThrows(IllegalReferenceCountException.class, () -> readable(multiBlockView));
        assertThrows(IllegalReferenceCountException.class, () -> oneBlockView.getByte(0));
    }

    // ------------------------------------------------------------------------------------------
    // Configuration
    // ------------------------------------------------------------------------------------------

    /** A factory that counts the regions it opens and closes. */
    private final class CountingRegionFactory implements MemoryRegionFactory {
        final MemoryRegionFactory delegate = region();
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public MemoryRegion open(final int bufferCount, final int bufferLength) {
            final MemoryRegion region = delegate.open(bufferCount, bufferLength);
            opened.incrementAndGet();
            return CountedRegion.wrap(region, closed::incrementAndGet);
        }
    }

    static Stream<Arguments> badConfigurations() {
        return Stream.of(
            Arguments.of("blockLength 0", (Consumer<BlockCache.Builder>)b -> b.blockLength(0), "blockLength=0"),
            Arguments.of("blockLength negative", (Consumer<BlockCache.Builder>)b -> b.blockLength(-4096), "blockLength=-4096"),
            Arguments.of("blockLength below 64", (Consumer<BlockCache.Builder>)b -> b.blockLength(32).bufferLength(64), "blockLength=32"),
            Arguments.of("blockLength not a power of two", (Consumer<BlockCache.Builder>)b -> b.blockLength(3000), "blockLength=3000"),
            Arguments.of("blockLength one over", (Consumer<BlockCache.Builder>)b -> b.blockLength(4097), "blockLength=4097"),
            Arguments.of("blockLength over 1 MiB", (Consumer<BlockCache.Builder>)b -> b.blockLength(2 << 20).bufferLength(4 << 20),
                "blockLength=2097152"),
            Arguments.of("bufferLength not a power of two", (Consumer<BlockCache.Builder>)b -> b.bufferLength(100_000), "bufferLength=100000"),
            Arguments.of("bufferLength of one block", (Consumer<BlockCache.Builder>)b -> b.bufferLength(BLOCK), "bufferLength=4096"),
            Arguments.of("bufferLength 0", (Consumer<BlockCache.Builder>)b -> b.bufferLength(0), "bufferLength=0"),
            Arguments.of("bufferLength negative", (Consumer<BlockCache.Builder>)b -> b.bufferLength(Integer.MIN_VALUE), "bufferLength="),
            Arguments.of("metadata of 16 blocks over a 64-byte block", (Consumer<BlockCache.Builder>)b -> b.blockLength(64).bufferLength(1024),
                "does not fit"),
            Arguments.of("metadata of 1024 blocks over a 4 KB block", (Consumer<BlockCache.Builder>)b -> b.bufferLength(4 << 20).capacity(4 << 20),
                "does not fit"),
            Arguments.of("capacity unset", (Consumer<BlockCache.Builder>)b -> b.capacity(-1), "capacity=-1"),
            Arguments.of("capacity 0", (Consumer<BlockCache.Builder>)b -> b.capacity(0), "capacity=0"),
            Arguments.of("capacity under one buffer", (Consumer<BlockCache.Builder>)b -> b.capacity(BUFFER - 1), "capacity=65535"),
            Arguments.of("more buffers than 32-bit addresses name",
                (Consumer<BlockCache.Builder>)b -> b.blockLength(4096).bufferLength(2 << 20).capacity(((1L << 23) + 1) * (2L << 20)),
                "32-bit addresses"),
            Arguments.of("more buffers than an array holds",
                (Consumer<BlockCache.Builder>)b -> b.blockLength(64).bufferLength(128).capacity((1L << 31) * 128), "32-bit addresses"),
            Arguments.of("maxEntryLength negative", (Consumer<BlockCache.Builder>)b -> b.maxEntryLength(-1), "maxEntryLength=-1"),
            Arguments.of("maxEntryLength over the layout", (Consumer<BlockCache.Builder>)b -> b.maxEntryLength(1 << 30), "maxEntryLength=1073741824"),
            Arguments.of("negative fullRetryTimeout", (Consumer<BlockCache.Builder>)b -> b.fullRetryTimeout(Duration.ofMillis(-1)),
                "fullRetryTimeout"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badConfigurations")
    void shouldRejectBadConfigurationsWithoutAllocating(final String name, final Consumer<BlockCache.Builder> change, final String message) {
        final CountingRegionFactory regions = new CountingRegionFactory();
        final BlockCache.Builder builder = builder(regions);
        change.accept(builder);
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class, builder::build);
        assertTrue(e.getMessage().contains(message), e.getMessage());
        assertEquals(0, regions.opened.get(), "no memory is taken for a bad configuration");
    }

    @Test
    void shouldAcceptConfigurationsAtTheEdges() {
        final BlockCache tiny = track(builder(64, 512, 512).build());
        assertEquals(7, tiny.stats().blockCount(), "64-byte blocks: 8 metadata words fill block 0 exactly");
        final byte[] data = pattern(1, 7 * 64);
        assertEntry(tiny, tiny.insert(Unpooled.wrappedBuffer(data)), data);

        final BlockCache rounded = track(builder(BLOCK, BUFFER, 3L * BUFFER + BUFFER / 2).maxEntryLength(0).fullRetryTimeout(Duration.ZERO).build());
        assertEquals(3L * BUFFER, rounded.capacity(), "capacity is rounded down to whole buffers");
        assertEquals(3, rounded.stats().bufferCount());
        assertEntry(rounded, rounded.insert(Unpooled.EMPTY_BUFFER), new byte[0]);
        assertThrows(EntryTooLongException.class, () -> rounded.insert(Unpooled.wrappedBuffer(new byte[1])));
    }

    @Test
    void shouldDeriveTheBufferLengthFromTheBlockLengthWhenItIsNotSet() {
        assertEquals(512 << 10, BlockCache.Builder.defaultBufferLength(2048), "block 0 of 2 KB holds 256 words");
        assertEquals(128 << 10, BlockCache.Builder.defaultBufferLength(1024));
        assertEquals(512, BlockCache.Builder.defaultBufferLength(64), "the smallest block: 8 words");
        assertEquals(2 << 20, BlockCache.Builder.defaultBufferLength(4096), "block 0 of 4 KB holds 512 words: 2 MB, as before");
        assertEquals(2 << 20, BlockCache.Builder.defaultBufferLength(1 << 20), "at most 2 MB");
        for (final int block : new int[] {64, 1024, 2048, 4096, 8192}) {
            final BlockCache cache = track(BlockCache.builder().region(region()).registerMBean(false).blockLength(block)
                .capacity(2L * BlockCache.Builder.defaultBufferLength(block)).build());
            assertEquals(BlockCache.Builder.defaultBufferLength(block), cache.bufferLength(), "blockLength=" + block);
            assertEquals(2, cache.stats().bufferCount());
            final byte[] data = pattern(block, 3 * block + 1);
            assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(data)), data);
        }
        final BlockCache set = track(BlockCache.builder().region(region()).registerMBean(false).blockLength(4096).bufferLength(64 << 10)
            .capacity(128 << 10).build());
        assertEquals(64 << 10, set.bufferLength(), "a buffer length that is set is kept");
    }

    @Test
    void shouldWorkWithTheDefaultGeometry() {
        final int buffer = BlockCache.Builder.BUFFER_LENGTH_DEFAULT;
        final BlockCache cache = track(BlockCache.builder().region(region()).registerMBean(false).capacity(3L * buffer).build());
        assertEquals(BlockCache.Builder.BLOCK_LENGTH_DEFAULT, cache.blockLength());
        assertEquals(buffer, cache.bufferLength());
        final CacheStats stats = cache.stats();
        assertEquals(3 * 511, stats.blockCount(), "512 metadata words of 8 bytes fill one 4 KB block");
        assertEquals(3 * 4096, stats.metadataBytes());

        final byte[] big = pattern(1, 1000 * 4096 + 1);
        final int address = cache.insert(Unpooled.wrappedBuffer(big));
        assertEntry(cache, address, big);
        final List<byte[]> entries = new ArrayList<>(List.of(big));
        for (int length = 0; cache.stats().freeBlockCount() > 0; length = (length + 1237) % 9000) {
            final byte[] data = pattern(length, (int)Math.min(length, cache.stats().freeBlockCount() * 4096));
            assertEntry(cache, cache.insert(Unpooled.wrappedBuffer(data)), data);
            entries.add(data);
        }
        assertAccounting(cache, entries, 4096);
        assertEquals(cache.capacity(), cache.stats().usedBytes());
    }

    // ------------------------------------------------------------------------------------------
    // Stats and JMX
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldReportStats() {
        final BlockCache cache = newCache();
        CacheStats stats = cache.stats();
        assertEquals((long)BUFFERS * BUFFER, stats.capacity());
        assertEquals(cache.capacity(), stats.capacity());
        assertEquals(BUFFERS, stats.bufferCount());
        assertEquals(BUFFER, stats.bufferLength());
        assertEquals(BLOCK, stats.blockLength());
        assertEquals(DATA_BLOCKS, stats.blockCount());
        assertEquals(0, stats.usedBlockCount());
        assertEquals(DATA_BLOCKS, stats.freeBlockCount());
        assertEquals((long)BUFFERS * BLOCK, stats.metadataBytes());
        assertEquals(stats.metadataBytes(), stats.usedBytes());
        assertEquals(0.0, stats.utilization());
        assertEquals(0, stats.storedBytes());
        assertEquals(0, stats.entryCount());
        assertEquals(0, stats.fullHandlerCalls());
        assertEquals(0, stats.fullFailures());

        final int[] lengths = {0, 1, 4096, 4097, 10_000};
        final List<byte[]> entries = new ArrayList<>();
        for (final int length : lengths) {
            final byte[] data = pattern(length, length);
            cache.insert(Unpooled.wrappedBuffer(data));
            entries.add(data);
        }
        stats = cache.stats();
        assertAccounting(cache, entries, BLOCK);
        assertEquals(8, stats.usedBlockCount());
        assertEquals(DATA_BLOCKS - 8, stats.freeBlockCount());
        assertEquals(0 + 1 + 4096 + 4097 + 10_000, stats.storedBytes());
        assertEquals(5, stats.entryCount());
        assertEquals(8L * BLOCK + BUFFERS * BLOCK, stats.usedBytes());
        assertEquals(8.0 / DATA_BLOCKS, stats.utilization(), 1e-12);
        assertEquals(stats, cache.stats(), "a snapshot of an idle cache is stable");
        assertTrue(cache.regionDescription().contains(String.valueOf(BUFFER)), cache.regionDescription());
    }

    @Test
    void shouldPublishStatsAsAnMBeanUntilClosed() throws Exception {
        final String name = "jmx-" + getClass().getSimpleName() + "-" + System.nanoTime();
        final BlockCache cache = track(builder().name(name).registerMBean(true).build());
        assertEquals(name, cache.name());
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final ObjectName objectName = new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(name));
        assertTrue(server.isRegistered(objectName));

        final int address = cache.insert(Unpooled.wrappedBuffer(pattern(1, 10_000)));
        cache.insert(Unpooled.EMPTY_BUFFER);
        fillWithOneBlockEntries(cache, DATA_BLOCKS - 4);
        assertThrows(CacheFullException.class, () -> cache.append(address, Unpooled.wrappedBuffer(new byte[BLOCK])));
        final CacheStats stats = cache.stats();

        assertEquals(name, server.getAttribute(objectName, "Name"));
        assertEquals(cache.regionDescription(), server.getAttribute(objectName, "Region"));
        assertEquals(stats.capacity(), server.getAttribute(objectName, "Capacity"));
        assertEquals(BUFFERS, server.getAttribute(objectName, "BufferCount"));
        assertEquals(BLOCK, server.getAttribute(objectName, "BlockLength"));
        assertEquals((long)DATA_BLOCKS, server.getAttribute(objectName, "BlockCount"));
        assertEquals((long)DATA_BLOCKS, server.getAttribute(objectName, "UsedBlockCount"));
        assertEquals(0L, server.getAttribute(objectName, "FreeBlockCount"));
        assertEquals(stats.usedBytes(), server.getAttribute(objectName, "UsedBytes"));
        assertEquals(cache.capacity(), server.getAttribute(objectName, "UsedBytes"));
        assertEquals(10_000L + (DATA_BLOCKS - 4) * BLOCK, server.getAttribute(objectName, "StoredBytes"));
        assertEquals((long)DATA_BLOCKS - 2, server.getAttribute(objectName, "EntryCount"));
        assertEquals(1.0, server.getAttribute(objectName, "Utilization"));
        assertEquals(1L, server.getAttribute(objectName, "FullHandlerCalls"));
        assertEquals(1L, server.getAttribute(objectName, "FullFailures"));

        final BlockCacheMXBean proxy = JMX.newMXBeanProxy(server, objectName, BlockCacheMXBean.class);
        cache.delete(address);
        assertEquals((long)DATA_BLOCKS - 3, proxy.getUsedBlockCount(), "attributes are read fresh");
        assertEquals(3L, proxy.getFreeBlockCount());
        assertEquals((long)DATA_BLOCKS - 3, proxy.getEntryCount());

        cache.close();
        assertFalse(server.isRegistered(objectName), "closing the cache unregisters its MBean");
    }

    @Test
    void shouldRefuseASecondMBeanOfTheSameNameAndReleaseItsMemory() throws Exception {
        final String name = "jmx-dup-" + getClass().getSimpleName() + "-" + System.nanoTime();
        final BlockCache first = track(builder().name(name).registerMBean(true).build());
        final CountingRegionFactory regions = new CountingRegionFactory();
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> builder(regions).name(name).registerMBean(true).build());
        assertTrue(e.getMessage().contains(name), e.getMessage());
        assertEquals(1, regions.opened.get());
        assertEquals(1, regions.closed.get(), "the second cache's memory is released");

        final ObjectName objectName = new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(name));
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        first.insert(Unpooled.wrappedBuffer(new byte[10]));
        assertEquals(1L, server.getAttribute(objectName, "EntryCount"), "the first cache keeps its MBean");
    }

    @Test
    void shouldNotRegisterAnMBeanWhenAskedNotTo() throws Exception {
        final String name = "jmx-none-" + getClass().getSimpleName() + "-" + System.nanoTime();
        track(builder().name(name).registerMBean(false).build());
        final ObjectName objectName = new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(name));
        assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(objectName));
    }

    // ------------------------------------------------------------------------------------------
    // Garbage
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldAllocateNothingOnTheDataPathInSteadyState() {
        final java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
            "needs per-thread allocation counting");

        final BlockCache cache = newCache();
        final ByteBuf heapIn = Unpooled.wrappedBuffer(pattern(1, 10_000));
        final ByteBuf directIn = Unpooled.directBuffer(3_000).writeBytes(pattern(2, 3_000));
        final ByteBuffer nioDirectIn = ByteBuffer.allocateDirect(5_000).put(pattern(3, 5_000)).flip();
        final ByteBuffer nioHeapIn = ByteBuffer.wrap(pattern(4, 700));
        final ByteBuf heapOut = Unpooled.buffer(20_000, 20_000);
        final ByteBuf directOut = Unpooled.directBuffer(20_000, 20_000);
        final ByteBuffer nioDirectOut = ByteBuffer.allocateDirect(20_000);
        final ByteBuffer nioHeapOut = ByteBuffer.allocate(20_000);
        final int entryLength = 10_000 + 3_000 + 5_000 + 700;
        try {
            final Runnable round = () -> {
                int address = cache.insert(heapIn);
                address = cache.append(address, directIn);
                address = cache.append(address, nioDirectIn);
                address = cache.append(address, nioHeapIn);
                final int length = cache.length(address);
                cache.copyTo(address, 0, heapOut, 0, length);
                cache.copyTo(address, 1, directOut, 0, length - 1);
                nioDirectOut.clear().limit(length - 5000);
                cache.copyTo(address, 5000, nioDirectOut);
                nioHeapOut.clear().limit(length);
                cache.copyTo(address, 0, nioHeapOut);
                cache.copyTo(address, directOut, 1);
                address = cache.replace(address, directIn);
                cache.delete(address);
            };
            for (int i = 0; i < 20_000; i++) {
                round.run();
            }
            final int rounds = 10_000;
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) {
                round.run();
            }
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < 32 * 1024, "allocated " + allocated + " bytes in " + rounds + " rounds: the data path must not allocate");
            final byte[] expected = concat(concat(concat(pattern(1, 10_000), pattern(2, 3_000)), pattern(3, 5_000)), pattern(4, 700));
            assertArrayEquals(expected, Arrays.copyOf(heapOut.array(), entryLength));
            assertEquals(0, cache.stats().usedBlockCount());
        } finally {
            directIn.release();
            directOut.release();
            BufferUtil.free(nioDirectIn);
            BufferUtil.free(nioDirectOut);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Randomized model test
    // ------------------------------------------------------------------------------------------

    static LongStream modelSeeds() {
        final String property = System.getProperty(SEED_PROPERTY);
        if (property != null) {
            return LongStream.of(Long.parseLong(property));
        }
        return LongStream.of(1, 0xC0FFEE, System.nanoTime());
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("modelSeeds")
    void shouldMatchAMapOfByteArraysOverRandomOperations(final long seed) {
        final BlockCache cache = newCache();
        final Model model = new Model(cache, seed, BLOCK, true);
        model.run(10_000);
        model.assertAll();
        assertEveryFreeBlockAllocatable(cache);
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("modelSeeds")
    void shouldMatchTheModelOnATinyCacheThatIsOftenFull(final long seed) {
        final BlockCache cache = track(builder(BLOCK, 32 * 1024, 2 * 32 * 1024).build());
        assertEquals(14, cache.stats().blockCount());
        final Model model = new Model(cache, seed, BLOCK, false);
        model.run(8000);
        model.assertAll();
        assertTrue(model.fullFailures > 0, "the tiny cache must have been full at least once (seed=" + seed + ")");
        assertEveryFreeBlockAllocatable(cache);
    }

    /**
     * A reference model (a map of byte arrays) driven side by side with a cache. Single-threaded.
     */
    static final class Model {
        private static final int STALE_KEPT = 64;

        final BlockCache cache;
        final long seed;
        final int block;
        final boolean avoidFull;
        final Random random;
        final Map<Integer, byte[]> contents = new HashMap<>();
        final Map<Integer, Integer> addresses = new HashMap<>();
        final List<Integer> ids = new ArrayList<>();
        final ArrayDeque<Integer> stale = new ArrayDeque<>();
        final int[] edges;
        int nextId;
        int fullFailures;

        Model(final BlockCache cache, final long seed, final int block, final boolean avoidFull) {
            this.cache = cache;
            this.seed = seed;
            this.block = block;
            this.avoidFull = avoidFull;
            this.random = new Random(seed);
            this.edges = new int[]{0, 1, block - 1, block, block + 1, 2 * block - 1, 2 * block, 2 * block + 1, 3 * block};
        }

        void run(final int steps) {
            int step = 0;
            try {
                for (; step < steps; step++) {
                    final int touched = step();
                    if (touched >= 0) {
                        assertEntryMatches(touched);
                    }
                    if (step % 50 == 0) {
                        assertAll();
                    }
                }
            } catch (final AssertionError | RuntimeException e) {
                throw new AssertionError("model test failed with seed=" + seed + " at step " + step + " (rerun with -D"
                    + SEED_PROPERTY + "=" + seed + "): " + e, e);
            }
        }

        private int length() {
            final int kind = random.nextInt(20);
            if (kind < 3) {
                return edges[random.nextInt(edges.length)];
            }
            if (kind < 6) {
                return random.nextInt(64);
            }
            if (kind < 19) {
                return random.nextInt(3 * block + 1);
            }
            return random.nextInt(10 * block);
        }

        private byte[] data(final int length) {
            final byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            return bytes;
        }

        private Source source() {
            final Source[] sources = Source.values();
            return sources[random.nextInt(sources.length)];
        }

        private int pick() {
            return ids.get(random.nextInt(ids.size()));
        }

        /**
         * @return the id of the entry the step changed or read, or -1.
         */
        private int step() {
            int choice = random.nextInt(100);
            if (ids.isEmpty()) {
                choice = 0;
            } else if (avoidFull && choice < 60 && cache.stats().utilization() > 0.8 && random.nextBoolean()) {
                choice = 60;
            }
            if (choice < 25) {
                return insert();
            }
            if (choice < 50) {
                return append();
            }
            if (choice < 60) {
                return replace();
            }
            if (choice < 75) {
                delete();
                return -1;
            }
            if (choice < 92) {
                return read();
            }
            useStale();
            return -1;
        }

        private int insert() {
            final byte[] data = data(length());
            final CacheStats before = cache.stats();
            try {
                final int address = source().insert(cache, data);
                final int id = nextId++;
                contents.put(id, data);
                addresses.put(id, address);
                ids.add(id);
                return id;
            } catch (final CacheFullException e) {
                fullFailures++;
                assertOccupancy(before, cache.stats());
                return -1;
            }
        }

        private int append() {
            final int id = pick();
            final byte[] old = contents.get(id);
            final int address = addresses.get(id);
            final byte[] data = data(random.nextInt(4) == 0 ? length() : random.nextInt(block));
            final CacheStats before = cache.stats();
            try {
                final int next = source().append(cache, address, data);
                final byte[] grown = concat(old, data);
                if (blockCount(grown.length, block) == blockCount(old.length, block)) {
                    assertEquals(address, next, "an append that links no block keeps the address");
                } else {
                    assertNotEquals(address, next, "an append that links blocks moves the address");
                    retire(address);
                }
                contents.put(id, grown);
                addresses.put(id, next);
            } catch (final CacheFullException e) {
                fullFailures++;
                assertOccupancy(before, cache.stats());
            }
            return id;
        }

        private int replace() {
            final int id = pick();
            final byte[] old = contents.get(id);
            final int address = addresses.get(id);
            final byte[] data = data(length());
            final CacheStats before = cache.stats();
            try {
                final int next = source().replace(cache, address, data);
                if (blockCount(data.length, block) > blockCount(old.length, block)) {
                    assertNotEquals(address, next);
                    retire(address);
                } else {
                    assertEquals(address, next);
                }
                contents.put(id, data);
                addresses.put(id, next);
            } catch (final CacheFullException e) {
                fullFailures++;
                assertOccupancy(before, cache.stats());
            }
            return id;
        }

        private void delete() {
            final int index = random.nextInt(ids.size());
            final int id = ids.get(index);
            ids.set(index, ids.get(ids.size() - 1));
            ids.remove(ids.size() - 1);
            final int address = addresses.remove(id);
            contents.remove(id);
            cache.delete(address);
            retire(address);
        }

        private int read() {
            final int id = pick();
            final byte[] expected = contents.get(id);
            final int address = addresses.get(id);
            final int offset = random.nextInt(expected.length + 1);
            final int length = random.nextInt(expected.length - offset + 1);
            final byte[] range = Arrays.copyOfRange(expected, offset, offset + length);
            if (random.nextBoolean()) {
                final ByteBuf view = cache.view(address, offset, length);
                assertEquals(length, view.readableBytes());
                assertArrayEquals(range, readable(view), "view offset=" + offset + " length=" + length);
            } else {
                final Destination[] destinations = Destination.values();
                final Destination destination = destinations[random.nextInt(destinations.length)];
                assertArrayEquals(range, destination.copy(cache, address, offset, length),
                    destination + " offset=" + offset + " length=" + length);
            }
            return id;
        }

        private void useStale() {
            if (stale.isEmpty()) {
                return;
            }
            final int address = stale.pollFirst();
            stale.addLast(address);
            if (addresses.containsValue(address)) {
                return;
            }
            final CacheStats before = cache.stats();
            final InvalidAddressException e = assertThrows(InvalidAddressException.class, () -> {
                if (random.nextBoolean()) {
                    cache.length(address);
                } else {
                    cache.append(address, Unpooled.wrappedBuffer(new byte[100]));
                }
            }, "a stale address that names no live entry must be rejected");
            assertTrue(e.reason() == Reason.FREED_BLOCK || e.reason() == Reason.NOT_LAST_BLOCK, e.getMessage());
            assertEquals(unread(before), unread(cache.stats()));
        }

        private void retire(final int address) {
            stale.addLast(address);
            if (stale.size() > STALE_KEPT) {
                stale.pollFirst();
            }
        }

        void assertEntryMatches(final int id) {
            final byte[] expected = contents.get(id);
            if (expected == null) {
                return;
            }
            final int address = addresses.get(id);
            assertEquals(expected.length, cache.length(address), "length of entry " + id);
            assertArrayEquals(expected, copyOf(cache, address), "contents of entry " + id);
            final ByteBuf whole = Unpooled.buffer(expected.length, expected.length);
            assertEquals(expected.length, cache.copyTo(address, whole, 0), "whole-entry copy's length of entry " + id);
            assertArrayEquals(expected, whole.array(), "whole-entry copy of entry " + id);
        }

        void assertAll() {
            for (final int id : ids) {
                final byte[] expected = contents.get(id);
                assertArrayEquals(expected, readable(cache.view(addresses.get(id))), "contents of entry " + id);
            }
            assertEquals(ids.size(), contents.size());
            assertAccounting(cache, contents.values(), block);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Concurrency
    // ------------------------------------------------------------------------------------------

    /** An entry handed from the thread that wrote it to another that will delete it. */
    record Handoff(int address, long seed, int length) {
        void assertIntact(final BlockCache cache) {
            assertEquals(length, cache.length(address), "length of entry " + seed);
            assertArrayEquals(pattern(seed, length), copyOf(cache, address), "contents of entry " + seed);
        }
    }

    private static void awaitAll(final List<Future<?>> futures, final long seed) throws Exception {
        for (final Future<?> future : futures) {
            try {
                future.get();
            } catch (final java.util.concurrent.ExecutionException e) {
                throw new AssertionError("concurrent test failed with seed=" + seed + ": " + e.getCause(), e.getCause());
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldKeepEntriesIntactUnderConcurrentWritersAndADeleter() throws Exception {
        final BlockCache cache = newCache();
        final int writers = 4;
        final int iterations = 4000;
        final long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        final BlockingQueue<Handoff> handoff = new ArrayBlockingQueue<>(8);
        final AtomicBoolean writing = new AtomicBoolean(true);
        final AtomicInteger deleted = new AtomicInteger();
        final CountDownLatch start = new CountDownLatch(1);
        final ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                final int writer = w;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(seed + writer);
                    final ByteBuffer scratch = ByteBuffer.allocateDirect(3 * BLOCK);
                    try {
                        start.await();
                        for (int i = 0; i < iterations; i++) {
                            final long entrySeed = (long)writer << 32 | i;
                            int length = random.nextInt(2 * BLOCK + 1);
                            int address = random.nextBoolean()
                                ? cache.insert(Unpooled.wrappedBuffer(pattern(entrySeed, length)))
                                : cache.insert(scratch.clear().put(pattern(entrySeed, length)).flip());
                            new Handoff(address, entrySeed, length).assertIntact(cache);
                            final int appends = random.nextInt(3);
                            for (int a = 0; a < appends; a++) {
                                final int piece = random.nextInt(2 * BLOCK);
                                final byte[] bytes = pattern(entrySeed, length, piece);
                                address = random.nextBoolean()
                                    ? cache.append(address, Unpooled.wrappedBuffer(bytes))
                                    : cache.append(address, scratch.clear().put(bytes).flip());
                                length += piece;
                                new Handoff(address, entrySeed, length).assertIntact(cache);
                            }
                            final Handoff entry = new Handoff(address, entrySeed, length);
                            if (random.nextBoolean()) {
                                entry.assertIntact(cache);
                                cache.delete(address);
                            } else if (!handoff.offer(entry, 30, TimeUnit.SECONDS)) {
                                throw new AssertionError("the deleter stopped taking entries");
                            }
                        }
                    } finally {
                        BufferUtil.free(scratch);
                    }
                    return null;
                }));
            }
            final Future<?> deleter = pool.submit(() -> {
                start.await();
                while (true) {
                    final Handoff entry = handoff.poll(10, TimeUnit.MILLISECONDS);
                    if (entry == null) {
                        if (!writing.get() && handoff.isEmpty()) {
                            return null;
                        }
                        continue;
                    }
                    entry.assertIntact(cache);
                    cache.delete(entry.address());
                    deleted.incrementAndGet();
                }
            });
            start.countDown();
            try {
                awaitAll(futures, seed);
            } finally {
                writing.set(false);
            }
            awaitAll(List.of(deleter), seed);
        } finally {
            pool.shutdownNow();
        }
        assertTrue(deleted.get() > 0, "the deleter must have deleted entries");
        final CacheStats stats = cache.stats();
        assertEquals(0, stats.usedBlockCount(), "every block is free again");
        assertEquals(DATA_BLOCKS, stats.freeBlockCount());
        assertEquals(0, stats.entryCount());
        assertEquals(0, stats.storedBytes());
        assertEquals(0, stats.fullFailures(), "the cache is never full in this test");
        assertEveryFreeBlockAllocatable(cache);
    }

    /**
     * Every thread allocates from and frees into the same single buffer, so its free list and
     * its queue membership are contended on every operation. The cache never fills: each thread
     * holds at most one entry of at most three blocks.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldKeepOneContendedBufferConsistent() throws Exception {
        final BlockCache cache = track(builder(BLOCK, BUFFER, BUFFER).fullRetryTimeout(Duration.ofSeconds(10)).build());
        final int threads = 4;
        final int iterations = 20_000;
        final long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        final CountDownLatch start = new CountDownLatch(1);
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int thread = t;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(seed + thread);
                    final ByteBuf data = Unpooled.directBuffer(3 * BLOCK);
                    try {
                        start.await();
                        for (int i = 0; i < iterations; i++) {
                            final int blocks = 1 + random.nextInt(3);
                            final int length = (blocks - 1) * BLOCK + 2 + random.nextInt(BLOCK - 1);
                            final byte marker = (byte)(thread * 64 + (i & 63));
                            data.clear();
                            for (int b = 0; b < blocks; b++) {
                                data.writerIndex(Math.min(length, (b + 1) * BLOCK));
                                data.setByte(b * BLOCK, marker);
                                data.setByte(Math.min(length, (b + 1) * BLOCK) - 1, marker + 1);
                            }
                            final int address = cache.insert(data);
                            for (int b = 0; b < blocks; b++) {
                                final int end = Math.min(length, (b + 1) * BLOCK);
                                final ByteBuf view = cache.view(address, b * BLOCK, end - b * BLOCK);
                                if (view.getByte(0) != marker || view.getByte(view.readableBytes() - 1) != (byte)(marker + 1)) {
                                    throw new AssertionError("block " + b + " of an entry of thread " + thread + " was overwritten");
                                }
                            }
                            cache.delete(address);
                        }
                    } finally {
                        data.release();
                    }
                    return null;
                }));
            }
            start.countDown();
            awaitAll(futures, seed);
        } finally {
            pool.shutdownNow();
        }
        final CacheStats stats = cache.stats();
        assertEquals(0, stats.usedBlockCount());
        assertEquals(0, stats.fullFailures());
        assertEveryFreeBlockAllocatable(cache);
    }

    /**
     * Threads fill a tiny cache and fail often; with a zero retry timeout an allocation gives up
     * while other threads hold buffers with free blocks, the path where a partly built chain must
     * be given back.
     */
    @ParameterizedTest(name = "fullRetryTimeout={0}ms")
    @ValueSource(ints = {0, 1})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldLeakNoBlockWhenConcurrentOperationsFailOnAFullCache(final int retryMillis) throws Exception {
        final BlockCache cache = track(builder(BLOCK, BUFFER, 2L * BUFFER).fullRetryTimeout(Duration.ofMillis(retryMillis)).build());
        final int threads = 4;
        final int iterations = 3000;
        final long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        final LongAdder failures = new LongAdder();
        final CountDownLatch start = new CountDownLatch(1);
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int thread = t;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(seed + thread);
                    final ArrayDeque<Handoff> mine = new ArrayDeque<>();
                    start.await();
                    for (int i = 0; i < iterations; i++) {
                        final long entrySeed = (long)thread << 32 | i;
                        final int length = random.nextInt(8 * BLOCK);
                        try {
                            final Handoff entry = new Handoff(cache.insert(Unpooled.wrappedBuffer(pattern(entrySeed, length))), entrySeed, length);
                            entry.assertIntact(cache);
                            mine.addLast(entry);
                        } catch (final CacheFullException e) {
                            failures.increment();
                        }
                        if (!mine.isEmpty() && random.nextBoolean()) {
                            final Handoff entry = mine.pollFirst();
                            final int piece = random.nextInt(4 * BLOCK);
                            try {
                                final int address = cache.append(entry.address(), Unpooled.wrappedBuffer(pattern(entry.seed(), entry.length(), piece)));
                                mine.addLast(new Handoff(address, entry.seed(), entry.length() + piece));
                            } catch (final CacheFullException e) {
                                failures.increment();
                                mine.addLast(entry);
                            }
                            mine.peekLast().assertIntact(cache);
                        }
                        while (mine.size() > 2 || (!mine.isEmpty() && random.nextInt(4) == 0)) {
                            final Handoff entry = mine.pollFirst();
                            entry.assertIntact(cache);
                            cache.delete(entry.address());
                        }
                    }
                    for (final Handoff entry : mine) {
                        entry.assertIntact(cache);
                        cache.delete(entry.address());
                    }
                    return null;
                }));
            }
            start.countDown();
            awaitAll(futures, seed);
        } finally {
            pool.shutdownNow();
        }
        final CacheStats stats = cache.stats();
        assertTrue(failures.sum() > 0, "the cache must have been full");
        assertEquals(failures.sum(), stats.fullFailures());
        assertEquals(0, stats.usedBlockCount(), "a failed operation leaked blocks (seed=" + seed + ")");
        assertEquals(0, stats.entryCount());
        assertEquals(0, stats.storedBytes());
        assertEveryFreeBlockAllocatable(cache);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldMakeProgressOnANearlyFullCacheWithAHandlerThatFreesEntries() throws Exception {
        final BlockCache cache = track(builder(BLOCK, BUFFER, 2L * BUFFER).fullRetryTimeout(Duration.ofSeconds(20)).build());
        final int blocks = 2 * DATA_BLOCKS_PER_BUFFER;
        final ConcurrentLinkedQueue<Handoff> victims = new ConcurrentLinkedQueue<>();
        final LongAdder evicted = new LongAdder();
        for (int i = 0; i < blocks - 2; i++) {
            final long entrySeed = -1 - i;
            victims.add(new Handoff(cache.insert(Unpooled.wrappedBuffer(pattern(entrySeed, BLOCK))), entrySeed, BLOCK));
        }
        cache.fullHandler(count -> {
            final Handoff victim = victims.poll();
            if (victim != null) {
                victim.assertIntact(cache);
                cache.delete(victim.address());
                evicted.increment();
            }
            return true;
        });
        final int threads = 4;
        final int iterations = 1500;
        final long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        final CountDownLatch start = new CountDownLatch(1);
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int thread = t;
                futures.add(pool.submit(() -> {
                    final Random random = new Random(seed + thread);
                    start.await();
                    for (int i = 0; i < iterations; i++) {
                        final long entrySeed = (long)thread << 32 | i;
                        int length = 1 + random.nextInt(2 * BLOCK);
                        int address = cache.insert(Unpooled.wrappedBuffer(pattern(entrySeed, length)));
                        new Handoff(address, entrySeed, length).assertIntact(cache);
                        final int piece = random.nextInt(BLOCK);
                        address = cache.append(address, Unpooled.wrappedBuffer(pattern(entrySeed, length, piece)));
                        length += piece;
                        final Handoff entry = new Handoff(address, entrySeed, length);
                        entry.assertIntact(cache);
                        victims.add(entry);
                    }
                    return null;
                }));
            }
            start.countDown();
            awaitAll(futures, seed);
        } finally {
            pool.shutdownNow();
        }
        final CacheStats stats = cache.stats();
        assertTrue(stats.fullHandlerCalls() > 0, "the cache must have been full");
        assertTrue(evicted.sum() > 0);
        assertEquals(0, stats.fullFailures(), "the handler always freed room in time");
        cache.fullHandler(CacheFullHandler.NONE);
        for (Handoff victim = victims.poll(); victim != null; victim = victims.poll()) {
            victim.assertIntact(cache);
            cache.delete(victim.address());
        }
        assertEquals(0, cache.stats().usedBlockCount());
        assertEquals(0, cache.stats().entryCount());
        assertEquals(0, cache.stats().storedBytes());
        assertEveryFreeBlockAllocatable(cache);
    }
}
