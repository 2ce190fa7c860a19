package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.InvalidAddressException.Reason;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.management.JMX;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.streamcache.core.cache.TestBytes.concat;
import static io.streamcache.core.cache.TestBytes.copyOf;
import static io.streamcache.core.cache.TestBytes.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The block cache suite over two tiers in one address space: a DRAM (direct memory) tier of 3
 * buffers in front of a memory-mapped-file tier of 5 buffers (the suite's 8 buffers in all),
 * plus the tests of the tiers themselves: placement, relocation and per-tier stats.
 *
 * <p>The suite's tests of a different geometry get the same split (3/8 of the buffers in DRAM,
 * at least one); the two suite tests of a one-buffer cache get one mapped tier (two tiers need
 * two buffers), and the tests of the builder's own checks run on the one-tier builder.
 */
class TieredBlockCacheTest extends AbstractBlockCacheTest {
    static final int DRAM_BUFFERS = 3;
    static final int MAPPED_BUFFERS = BUFFERS - DRAM_BUFFERS;
    static final int DRAM_BLOCKS = DRAM_BUFFERS * DATA_BLOCKS_PER_BUFFER;
    static final int MAPPED_BLOCKS = MAPPED_BUFFERS * DATA_BLOCKS_PER_BUFFER;

    private final AtomicInteger files = new AtomicInteger();

    @TempDir
    Path directory;

    @Override
    protected MemoryRegionFactory region() {
        return MappedFileRegion.factory(directory.resolve("tier-" + files.incrementAndGet() + ".map"));
    }

    @Override
    protected BlockCache.Builder builder() {
        return BlockCache.builder()
            .registerMBean(false)
            .blockLength(BLOCK)
            .bufferLength(BUFFER)
            .tier("dram", (long)DRAM_BUFFERS * BUFFER, DirectMemoryRegion.factory())
            .tier("mapped", (long)MAPPED_BUFFERS * BUFFER, region());
    }

    @Override
    protected BlockCache.Builder builder(final int blockLength, final int bufferLength, final long capacity) {
        final BlockCache.Builder builder = BlockCache.builder().registerMBean(false).blockLength(blockLength).bufferLength(bufferLength);
        final long buffers = capacity / bufferLength;
        if (buffers < 2) {
            return builder.tier("mapped", capacity, region());
        }
        final long dram = Math.max(1, buffers * DRAM_BUFFERS / BUFFERS) * bufferLength;
        return builder.tier("dram", dram, DirectMemoryRegion.factory()).tier("mapped", capacity - dram, region());
    }

    @Override
    protected BlockCache.Builder builder(final MemoryRegionFactory regions) {
        return BlockCache.builder().registerMBean(false).blockLength(BLOCK).bufferLength(BUFFER).capacity((long)BUFFERS * BUFFER)
            .region(regions);
    }

    // ------------------------------------------------------------------------------------------
    // Helpers
    // ------------------------------------------------------------------------------------------

    /** Everything {@link TierStats} holds but hits: what a failed operation must leave alone. */
    private static List<String> occupancy(final BlockCache cache) {
        final List<String> all = new ArrayList<>();
        final CacheStats stats = cache.stats();
        all.add("used=" + stats.usedBlockCount() + " stored=" + stats.storedBytes() + " entries=" + stats.entryCount());
        for (final TierStats tier : stats.tiers()) {
            all.add(tier.name() + " used=" + tier.usedBlockCount() + " stored=" + tier.storedBytes() + " entries=" + tier.entryCount()
                + " demotions=" + tier.demotions() + " promotions=" + tier.promotions());
        }
        return all;
    }

    /** Fills the DRAM tier with one-block entries and returns their addresses. */
    private static int[] fillDram(final BlockCache cache) {
        final int[] addresses = new int[DRAM_BLOCKS];
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = cache.insert(Unpooled.wrappedBuffer(pattern(1000 + i, BLOCK)));
            assertEquals(0, cache.tierOf(addresses[i]), "new entries go to DRAM while it has room");
        }
        assertEquals(0, cache.stats().tier(0).freeBlockCount());
        return addresses;
    }

    // ------------------------------------------------------------------------------------------
    // Geometry and placement
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldLayTheTiersOutInOneAddressSpaceFastestFirst() {
        final BlockCache cache = newCache();
        assertEquals(2, cache.tierCount());
        assertEquals("dram", cache.tierName(0));
        assertEquals("mapped", cache.tierName(1));
        assertThrows(IndexOutOfBoundsException.class, () -> cache.tierName(2));
        final CacheStats stats = cache.stats();
        assertEquals((long)BUFFERS * BUFFER, stats.capacity());
        assertEquals(2, stats.tiers().size());
        final TierStats dram = stats.tier(0);
        final TierStats mapped = stats.tier(1);
        assertEquals((long)DRAM_BUFFERS * BUFFER, dram.capacity());
        assertEquals(DRAM_BUFFERS, dram.bufferCount());
        assertEquals(DRAM_BLOCKS, dram.blockCount());
        assertEquals(MAPPED_BLOCKS, mapped.blockCount());
        assertTrue(dram.region().contains("direct"), dram.region());
        assertTrue(mapped.region().contains(directory.toString()), mapped.region());
        assertTrue(cache.regionDescription().contains("dram: ") && cache.regionDescription().contains("mapped: "),
            cache.regionDescription());
        // Buffer i of the cache is in tier 0 for i < 3: the address's buffer part says the tier.
        for (int buffer = 0; buffer < BUFFERS; buffer++) {
            final int address = (buffer << BLOCK_INDEX_BITS) | 1;
            assertEquals(buffer < DRAM_BUFFERS ? 0 : 1, cache.tierOf(address), "buffer " + buffer);
        }
        assertInvalid(Reason.OUT_OF_RANGE, BUFFERS << BLOCK_INDEX_BITS | 1, () -> cache.tierOf(BUFFERS << BLOCK_INDEX_BITS | 1));
        assertInvalid(Reason.NULL_ADDRESS, 0, () -> cache.tierOf(0));
    }

    @Test
    void shouldPutNewEntriesInDramAndFallThroughToTheNextTierWhenItIsFull() {
        final BlockCache cache = newCache();
        final int[] dram = fillDram(cache);
        final byte[] data = pattern(7, 3 * BLOCK + 5);
        final int spilled = cache.insert(Unpooled.wrappedBuffer(data));
        assertEquals(1, cache.tierOf(spilled));
        assertEntry(cache, spilled, data);
        cache.delete(dram[5]);
        final int back = cache.insert(Unpooled.wrappedBuffer(data, 0, 10));
        assertEquals(0, cache.tierOf(back), "a block freed in DRAM is used again first");
        final CacheStats stats = cache.stats();
        assertEquals(DRAM_BLOCKS, stats.tier(0).usedBlockCount());
        assertEquals(4, stats.tier(1).usedBlockCount());
        assertEquals(DRAM_BLOCKS, stats.tier(0).entryCount());
        assertEquals(1, stats.tier(1).entryCount());
        assertEquals((DRAM_BLOCKS - 1L) * BLOCK + 10, stats.tier(0).storedBytes());
        assertEquals(data.length, stats.tier(1).storedBytes());
    }

    @Test
    void shouldInsertIntoTheTierAskedForFirst() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(4, 2 * BLOCK + 9);
        final int address = cache.insert(Unpooled.wrappedBuffer(data), 1);
        assertEquals(1, cache.tierOf(address));
        assertEntry(cache, address, data);
        assertEquals(3, cache.stats().tier(1).usedBlockCount());
        assertEquals(1, cache.stats().tier(1).entryCount());
        assertEquals(0, cache.tierOf(cache.insert(Unpooled.wrappedBuffer(data), 0)));
        final List<String> before = occupancy(cache);
        assertThrows(IndexOutOfBoundsException.class, () -> cache.insert(Unpooled.wrappedBuffer(data), 2));
        assertThrows(IndexOutOfBoundsException.class, () -> cache.insert(Unpooled.wrappedBuffer(data), -1));
        assertEquals(before, occupancy(cache), "a bad tier stores nothing");
        // A full tier falls through, as for inserts into tier 0.
        final int[] filler = new int[MAPPED_BLOCKS - 3];
        for (int i = 0; i < filler.length; i++) {
            filler[i] = cache.insert(Unpooled.wrappedBuffer(new byte[]{(byte)i}), 1);
            assertEquals(1, cache.tierOf(filler[i]));
        }
        assertEquals(0, cache.tierOf(cache.insert(Unpooled.wrappedBuffer(data), 1)), "the mapped tier is full");
    }

    @Test
    void shouldExtendAnEntryInTheTierOfItsLastBlock() {
        final BlockCache cache = newCache();
        final byte[] first = pattern(1, BLOCK + 100);
        int address = cache.relocate(cache.insert(Unpooled.wrappedBuffer(first)), 1);
        assertEquals(1, cache.tierOf(address));
        final byte[] more = pattern(2, 2 * BLOCK);
        address = cache.append(address, Unpooled.wrappedBuffer(more));
        assertEquals(1, cache.tierOf(address), "appended blocks come from the tier of the last block while it has room");
        assertEntry(cache, address, concat(first, more));
        assertEquals(0, cache.stats().tier(0).usedBlockCount());
        assertEquals(4, cache.stats().tier(1).usedBlockCount());
        assertEquals(first.length + more.length, cache.stats().tier(1).storedBytes());
    }

    @Test
    void shouldMoveAnEntrysAccountsWhenAnAppendSpillsIntoAnotherTier() {
        final BlockCache cache = newCache();
        final int[] dram = fillDram(cache);
        final byte[] more = pattern(3, BLOCK + 1);
        final int address = cache.append(dram[0], Unpooled.wrappedBuffer(more));
        assertEquals(1, cache.tierOf(address), "DRAM is full: the new blocks come from the next tier");
        assertEntry(cache, address, concat(pattern(1000, BLOCK), more));
        final CacheStats stats = cache.stats();
        assertEquals(DRAM_BLOCKS - 1, stats.tier(0).entryCount());
        assertEquals((DRAM_BLOCKS - 1L) * BLOCK, stats.tier(0).storedBytes());
        assertEquals(1, stats.tier(1).entryCount());
        assertEquals(BLOCK + more.length, stats.tier(1).storedBytes());
        assertEquals(DRAM_BLOCKS, stats.tier(0).usedBlockCount(), "the first block stays in DRAM");
        assertEquals(2, stats.tier(1).usedBlockCount());
        // The entry straddles the tiers: moving it into the tier of its last block still moves its first block.
        final int moved = cache.relocate(address, 1);
        assertEntry(cache, moved, concat(pattern(1000, BLOCK), more));
        assertEquals(DRAM_BLOCKS - 1, cache.stats().tier(0).usedBlockCount());
        assertEquals(3, cache.stats().tier(1).usedBlockCount());
        assertThrows(SameTierException.class, () -> cache.relocate(moved, 1));
    }

    @Test
    void shouldFallThroughThreeTiersInOrderAndRelocateAcrossAnyTwo() {
        final BlockCache cache = track(BlockCache.builder().registerMBean(false).blockLength(BLOCK).bufferLength(BUFFER)
            .tier("a", BUFFER, DirectMemoryRegion.factory())
            .tier("b", BUFFER, DirectMemoryRegion.factory())
            .tier("c", 2L * BUFFER, region())
            .build());
        assertEquals(3, cache.tierCount());
        final int[] placed = new int[4 * DATA_BLOCKS_PER_BUFFER];
        for (int i = 0; i < placed.length; i++) {
            placed[i] = cache.insert(Unpooled.wrappedBuffer(pattern(i, BLOCK)));
            final int expected = i < DATA_BLOCKS_PER_BUFFER ? 0 : i < 2 * DATA_BLOCKS_PER_BUFFER ? 1 : 2;
            assertEquals(expected, cache.tierOf(placed[i]), "entry " + i + " goes to the fastest tier with room");
        }
        assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(pattern(1, 1))));
        cache.delete(placed[0]);
        cache.delete(placed[3 * DATA_BLOCKS_PER_BUFFER]);
        // Tier 2 -> tier 0 and back, skipping tier 1.
        final int moved = cache.relocate(placed[3 * DATA_BLOCKS_PER_BUFFER + 1], 0);
        assertEquals(0, cache.tierOf(moved));
        assertEntry(cache, moved, pattern(3 * DATA_BLOCKS_PER_BUFFER + 1, BLOCK));
        final int back = cache.relocate(moved, 2);
        assertEquals(2, cache.tierOf(back));
        assertEntry(cache, back, pattern(3 * DATA_BLOCKS_PER_BUFFER + 1, BLOCK));
        final CacheStats stats = cache.stats();
        assertEquals(1, stats.tier(2).demotions() + stats.tier(0).demotions(), "one demotion, counted on its source tier");
        assertEquals(1, stats.tier(0).promotions(), "one promotion, counted on its target tier");
        assertEquals(0, stats.tier(1).demotions() + stats.tier(1).promotions(), "tier 1 was skipped");
        assertThrows(CacheFullException.class, () -> cache.relocate(placed[5], 1), "tier 1 is full");
        assertEntry(cache, placed[5], pattern(5, BLOCK));
    }

    // ------------------------------------------------------------------------------------------
    // Relocation
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "length={0}")
    @ValueSource(ints = {0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK - 1, 2 * BLOCK, 3 * BLOCK + 17, DATA_BLOCKS_PER_BUFFER * BLOCK,
        DATA_BLOCKS_PER_BUFFER * BLOCK + 1, 2 * DATA_BLOCKS_PER_BUFFER * BLOCK + 5})
    void shouldRelocateBetweenTiersAtBlockEdges(final int length) {
        final BlockCache cache = newCache();
        final byte[] data = pattern(length, length);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final int blocks = blockCount(length);
        assertEquals(0, cache.tierOf(address));
        final CacheStats before = cache.stats();

        final int demoted = cache.relocate(address, 1);
        assertEquals(1, cache.tierOf(demoted));
        assertEntry(cache, demoted, data);
        assertInvalid(Reason.FREED_BLOCK, address, () -> cache.length(address));
        CacheStats stats = cache.stats();
        assertOccupancy(before, stats);
        assertEquals(0, stats.tier(0).usedBlockCount(), "every old block is freed");
        assertEquals(blocks, stats.tier(1).usedBlockCount(), "every new block is in the target tier");
        assertEquals(0, stats.tier(0).entryCount());
        assertEquals(1, stats.tier(1).entryCount());
        assertEquals(length, stats.tier(1).storedBytes());
        assertEquals(1, stats.tier(0).demotions());
        assertEquals(0, stats.tier(0).promotions());

        final int promoted = cache.relocate(demoted, 0);
        assertEquals(0, cache.tierOf(promoted));
        assertEntry(cache, promoted, data);
        stats = cache.stats();
        assertEquals(blocks, stats.tier(0).usedBlockCount());
        assertEquals(0, stats.tier(1).usedBlockCount());
        assertEquals(1, stats.tier(0).promotions());
        assertEquals(0, stats.tier(1).demotions());

        // The entry stays an ordinary entry: it grows and is deleted as any other.
        final byte[] more = pattern(99, BLOCK + 3);
        final int grown = cache.append(promoted, Unpooled.wrappedBuffer(more));
        assertEntry(cache, grown, concat(data, more));
        cache.delete(grown);
        assertEquals(0, cache.stats().usedBlockCount());
        assertEveryFreeBlockAllocatable(cache);
    }

    @Test
    void shouldRelocateFragmentedEntriesIntoFragmentedFreeSpace() {
        final BlockCache cache = newCache();
        final Random random = new Random(42);
        // Interleave entries so that each one's blocks are scattered, then free every other one in the mapped tier.
        final int[] mapped = new int[MAPPED_BLOCKS];
        for (int i = 0; i < MAPPED_BLOCKS; i++) {
            mapped[i] = cache.relocate(cache.insert(ByteBuffer.wrap(new byte[]{(byte)i})), 1);
        }
        for (int i = 0; i < MAPPED_BLOCKS; i += 2) {
            cache.delete(mapped[i]);
        }
        final int[] entries = new int[3];
        final byte[][] contents = new byte[3][];
        for (int i = 0; i < entries.length; i++) {
            contents[i] = new byte[0];
            entries[i] = cache.insert(ByteBuffer.allocate(0));
        }
        for (int round = 0; round < 12; round++) {
            for (int i = 0; i < entries.length; i++) {
                final byte[] piece = pattern(random.nextLong(), 1 + random.nextInt(BLOCK));
                entries[i] = cache.append(entries[i], Unpooled.wrappedBuffer(piece));
                contents[i] = concat(contents[i], piece);
            }
        }
        for (int i = 0; i < entries.length; i++) {
            final CacheStats before = cache.stats();
            entries[i] = cache.relocate(entries[i], 1);
            assertEquals(1, cache.tierOf(entries[i]));
            assertEntry(cache, entries[i], contents[i]);
            assertOccupancy(before, cache.stats());
        }
        for (int i = 0; i < entries.length; i++) {
            assertEntry(cache, entries[i], contents[i]);
            entries[i] = cache.relocate(entries[i], 0);
            assertEntry(cache, entries[i], contents[i]);
        }
        for (int i = 1; i < MAPPED_BLOCKS; i += 2) {
            assertArrayEquals(new byte[]{(byte)i}, copyOf(cache, mapped[i]), "a neighbour was overwritten");
        }
    }

    @Test
    void shouldRejectARelocationIntoTheSameTierAndChangeNothing() {
        final BlockCache cache = newCache();
        final byte[] data = pattern(1, 2 * BLOCK + 1);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final List<String> before = occupancy(cache);
        final SameTierException e = assertThrows(SameTierException.class, () -> cache.relocate(address, 0));
        assertEquals(address, e.address());
        assertEquals(0, e.tier());
        assertEquals(before, occupancy(cache));
        assertEntry(cache, address, data);
    }

    @ParameterizedTest(name = "tier={0}")
    @ValueSource(ints = {-1, 2, Integer.MAX_VALUE, Integer.MIN_VALUE})
    void shouldRejectARelocationIntoAMissingTierAndChangeNothing(final int tier) {
        final BlockCache cache = newCache();
        final byte[] data = pattern(2, BLOCK);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final List<String> before = occupancy(cache);
        assertThrows(IndexOutOfBoundsException.class, () -> cache.relocate(address, tier));
        assertEquals(before, occupancy(cache));
        assertEntry(cache, address, data);
    }

    @Test
    void shouldRejectARelocationOfAStaleAddressAndChangeNothing() {
        final BlockCache cache = newCache();
        final int deleted = cache.insert(Unpooled.wrappedBuffer(pattern(3, 10)));
        final int before = cache.insert(Unpooled.wrappedBuffer(pattern(4, BLOCK)));
        final int after = cache.append(before, Unpooled.wrappedBuffer(pattern(5, 10)));
        assertNotEquals(before, after);
        final int moved = cache.insert(Unpooled.wrappedBuffer(pattern(6, 10)));
        final int movedTo = cache.relocate(moved, 1);
        cache.delete(deleted);
        final List<String> snapshot = occupancy(cache);
        assertInvalid(Reason.FREED_BLOCK, deleted, () -> cache.relocate(deleted, 1));
        assertInvalid(Reason.NOT_LAST_BLOCK, before, () -> cache.relocate(before, 1));
        assertInvalid(Reason.FREED_BLOCK, moved, () -> cache.relocate(moved, 1));
        assertInvalid(Reason.NULL_ADDRESS, 0, () -> cache.relocate(0, 1));
        assertInvalid(Reason.OUT_OF_RANGE, BUFFERS << BLOCK_INDEX_BITS | 1, () -> cache.relocate(BUFFERS << BLOCK_INDEX_BITS | 1, 1));
        assertInvalid(Reason.METADATA_BLOCK, 1 << BLOCK_INDEX_BITS, () -> cache.relocate(1 << BLOCK_INDEX_BITS, 1));
        assertEquals(snapshot, occupancy(cache));
        assertEntry(cache, after, concat(pattern(4, BLOCK), pattern(5, 10)));
        assertEntry(cache, movedTo, pattern(6, 10));
    }

    @Test
    void shouldFailARelocationIntoAFullTierWithoutCallingTheFullHandlerAndChangeNothing() {
        final AtomicInteger calls = new AtomicInteger();
        final BlockCache cache = track(builder().fullHandler(count -> calls.incrementAndGet() < 0).build());
        // Leave 2 free blocks in the mapped tier, then try to move a 3-block entry there.
        final int[] filler = new int[MAPPED_BLOCKS - 2];
        for (int i = 0; i < filler.length; i++) {
            filler[i] = cache.relocate(cache.insert(ByteBuffer.wrap(new byte[]{(byte)i})), 1);
        }
        final byte[] data = pattern(8, 2 * BLOCK + 1);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        final List<String> before = occupancy(cache);
        final CacheFullException e = assertThrows(CacheFullException.class, () -> cache.relocate(address, 1));
        assertEquals(3, e.blocksNeeded());
        assertEquals(before, occupancy(cache), "no block is kept from the partial allocation");
        assertEquals(0, calls.get(), "relocation never calls the full handler");
        assertEntry(cache, address, data);
        assertEquals(2, cache.stats().tier(1).freeBlockCount());
        // With one more block free it fits exactly.
        cache.delete(filler[0]);
        final int moved = cache.relocate(address, 1);
        assertEntry(cache, moved, data);
        assertEquals(0, cache.stats().tier(1).freeBlockCount());
    }

    // ------------------------------------------------------------------------------------------
    // Stats, JMX and configuration
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldCountHitsInTheTierOfTheEntryRead() {
        final BlockCache cache = newCache();
        final int hot = cache.insert(Unpooled.wrappedBuffer(pattern(1, 100)));
        final int cold = cache.relocate(cache.insert(Unpooled.wrappedBuffer(pattern(2, 100))), 1);
        cache.view(hot).release();
        cache.view(hot, 1, 5).release();
        cache.copyTo(cold, 0, ByteBuffer.allocate(100));
        cache.copyTo(cold, 0, Unpooled.buffer(100), 0, 100);
        cache.copyTo(cold, 50, ByteBuffer.allocate(10));
        cache.length(hot);
        final CacheStats stats = cache.stats();
        assertEquals(2, stats.tier(0).hits());
        assertEquals(3, stats.tier(1).hits());
    }

    @Test
    void shouldPublishPerTierStatsInTheMBean() throws Exception {
        final String name = "jmx-tiers-" + System.nanoTime();
        final BlockCache cache = track(builder().name(name).registerMBean(true).build());
        final int address = cache.relocate(cache.insert(Unpooled.wrappedBuffer(pattern(1, BLOCK + 1))), 1);
        cache.view(address).release();
        final BlockCacheMXBean proxy = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
            new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(name)), BlockCacheMXBean.class);
        assertArrayEquals(new String[]{"dram", "mapped"}, proxy.getTierNames());
        assertArrayEquals(new long[]{(long)DRAM_BUFFERS * BUFFER, (long)MAPPED_BUFFERS * BUFFER}, proxy.getTierCapacities());
        assertArrayEquals(new long[]{0, 2}, proxy.getTierUsedBlockCounts());
        assertArrayEquals(new long[]{0, BLOCK + 1}, proxy.getTierStoredBytes());
        assertArrayEquals(new long[]{0, 1}, proxy.getTierEntryCounts());
        assertArrayEquals(new long[]{0, 1}, proxy.getTierHits());
        assertArrayEquals(new long[]{1, 0}, proxy.getTierDemotions());
        assertArrayEquals(new long[]{0, 0}, proxy.getTierPromotions());
    }

    @Test
    void shouldReportOneDefaultTierForACacheBuiltWithoutTiers() {
        final BlockCache cache = track(BlockCache.builder().registerMBean(false).blockLength(BLOCK).bufferLength(BUFFER)
            .capacity(2L * BUFFER).build());
        assertEquals(1, cache.tierCount());
        assertEquals("default", cache.tierName(0));
        final int address = cache.insert(Unpooled.wrappedBuffer(pattern(1, 10)));
        assertEquals(0, cache.tierOf(address));
        assertThrows(SameTierException.class, () -> cache.relocate(address, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> cache.relocate(address, 1));
        assertEquals(1, cache.stats().tier(0).entryCount());
    }

    /** A region factory that counts what it opens and closes. */
    private static final class Counting implements MemoryRegionFactory {
        final MemoryRegionFactory delegate;
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();

        Counting(final MemoryRegionFactory delegate) {
            this.delegate = delegate;
        }

        @Override
        public MemoryRegion open(final int bufferCount, final int bufferLength) {
            final MemoryRegion region = delegate.open(bufferCount, bufferLength);
            opened.incrementAndGet();
            return CountedRegion.wrap(region, closed::incrementAndGet);
        }
    }

    @Test
    void shouldRejectBadTierConfigurationsWithoutAllocating() {
        final Counting regions = new Counting(DirectMemoryRegion.factory());
        final BlockCache.Builder base = BlockCache.builder().registerMBean(false).blockLength(BLOCK).bufferLength(BUFFER);
        CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> base.tier("a", BUFFER, regions).capacity(4L * BUFFER).build());
        assertTrue(e.getMessage().contains("tier(...)"), e.getMessage());
        e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder().registerMBean(false).bufferLength(BUFFER)
            .blockLength(BLOCK).region(regions).tier("a", BUFFER, regions).build());
        assertTrue(e.getMessage().contains("region"), e.getMessage());
        e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder().registerMBean(false).bufferLength(BUFFER)
            .blockLength(BLOCK).tier("a", BUFFER, regions).tier("b", BUFFER - 1, regions).build());
        assertTrue(e.getMessage().contains("tier b: capacity=65535"), e.getMessage());
        e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder().registerMBean(false).bufferLength(BUFFER)
            .blockLength(BLOCK).tier("a", BUFFER, regions).tier("a", BUFFER, regions).build());
        assertTrue(e.getMessage().contains("used twice"), e.getMessage());
        e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder().registerMBean(false).bufferLength(BUFFER)
            .blockLength(BLOCK).tier("", BUFFER, regions).build());
        assertTrue(e.getMessage().contains("empty name"), e.getMessage());
        assertEquals(0, regions.opened.get(), "no memory is taken for a bad configuration");
    }

    @Test
    void shouldCloseTheRegionsOpenedWhenALaterTierCannotBeOpened() {
        final Counting first = new Counting(DirectMemoryRegion.factory());
        final MemoryRegionFactory failing = (count, length) -> {
            throw new CacheConfigurationException("no memory for the test");
        };
        assertThrows(CacheConfigurationException.class, () -> BlockCache.builder().registerMBean(false).bufferLength(BUFFER)
            .blockLength(BLOCK).tier("a", BUFFER, first).tier("b", BUFFER, failing).build());
        assertEquals(1, first.opened.get());
        assertEquals(1, first.closed.get(), "the first tier's memory is released");
    }

    // ------------------------------------------------------------------------------------------
    // Garbage and contention
    // ------------------------------------------------------------------------------------------

    @Test
    void shouldRelocateWithoutAllocating() {
        final java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
            "needs per-thread allocation counting");
        final BlockCache cache = newCache();
        final byte[] data = pattern(5, 5 * BLOCK + 77);
        int address = cache.insert(Unpooled.wrappedBuffer(data));
        for (int i = 0; i < 20_000; i++) {
            address = cache.relocate(address, 1 - cache.tierOf(address));
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            address = cache.relocate(address, 1 - cache.tierOf(address));
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 16 * 1024, "allocated " + allocated + " bytes in 10,000 relocations");
        assertEntry(cache, address, data);
    }

    @Test
    @Timeout(60)
    void shouldKeepEntriesIntactWhileRelocatorsAndWritersContend() throws Exception {
        final BlockCache cache = track(builder().fullRetryTimeout(java.time.Duration.ofSeconds(5)).build());
        final int threads = 4;
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            final List<Future<Long>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                futures.add(pool.submit(() -> {
                    // Each thread owns its entries (operations on one entry are serialized by their owner);
                    // all threads share the buffers, the tiers' queues and the free lists.
                    final Random random = new Random(id);
                    final int[] addresses = new int[6];
                    final byte[][] contents = new byte[addresses.length][];
                    long relocations = 0;
                    for (int step = 0; step < 4_000; step++) {
                        final int i = random.nextInt(addresses.length);
                        try {
                            if (contents[i] == null) {
                                final byte[] data = pattern(random.nextLong(), random.nextInt(3 * BLOCK));
                                addresses[i] = cache.insert(Unpooled.wrappedBuffer(data));
                                contents[i] = data;
                            } else if (random.nextInt(4) == 0) {
                                cache.delete(addresses[i]);
                                contents[i] = null;
                            } else if (random.nextInt(3) == 0) {
                                final byte[] piece = pattern(random.nextLong(), random.nextInt(BLOCK));
                                addresses[i] = cache.append(addresses[i], Unpooled.wrappedBuffer(piece));
                                contents[i] = concat(contents[i], piece);
                            } else {
                                final int target = random.nextInt(2);
                                try {
                                    addresses[i] = cache.relocate(addresses[i], target);
                                    relocations++;
                                } catch (final SameTierException e) {
                                    assertEquals(target, cache.tierOf(addresses[i]));
                                }
                                assertArrayEquals(contents[i], copyOf(cache, addresses[i]));
                            }
                        } catch (final CacheFullException e) {
                            // The 8-buffer cache shared by 4 threads may be full: the entry is unchanged.
                            if (contents[i] != null) {
                                assertArrayEquals(contents[i], copyOf(cache, addresses[i]));
                            }
                        }
                    }
                    for (int i = 0; i < addresses.length; i++) {
                        if (contents[i] != null) {
                            assertArrayEquals(contents[i], copyOf(cache, addresses[i]));
                            cache.delete(addresses[i]);
                        }
                    }
                    return relocations;
                }));
            }
            long relocations = 0;
            for (final Future<Long> future : futures) {
                relocations += future.get(60, TimeUnit.SECONDS);
            }
            assertTrue(relocations > 0);
        } finally {
            pool.shutdownNow();
        }
        final CacheStats stats = cache.stats();
        assertEquals(0, stats.usedBlockCount());
        assertEquals(0, stats.entryCount());
        for (final TierStats tier : stats.tiers()) {
            assertEquals(0, tier.usedBlockCount(), tier.name());
            assertEquals(0, tier.entryCount(), tier.name());
            assertEquals(0, tier.storedBytes(), tier.name());
        }
        assertEveryFreeBlockAllocatable(cache);
    }
}
