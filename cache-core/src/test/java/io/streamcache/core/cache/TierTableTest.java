package io.streamcache.core.cache;

import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.memory.DirectMemoryRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tier table on its own, over two tiers in direct memory: the buffers of each tier in one
 * address space, fastest first, the checks of tier indices, and the per-tier accounts as entries
 * are added, grow into another tier, are relocated and removed.
 */
class TierTableTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 8;
    private static final int BUFFER = BLOCKS * BLOCK;
    private static final int BITS = 3;

    private final TierTable tiers = new TierTable(new CacheConfig("tiers", -1, BLOCK, BUFFER, 1 << 20,
        DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY), false,
        List.of(new CacheConfig.TierSpec("fast", 2L * BUFFER, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY)),
            new CacheConfig.TierSpec("slow", BUFFER, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY))),
        CacheFullHandler.NONE, Duration.ZERO, false), BITS);

    @AfterEach
    void close() {
        for (final CacheBuffer buffer : tiers.buffers()) {
            buffer.memory.release();
        }
        tiers.closeRegions();
    }

    private static int address(final int buffer, final int block) {
        return BlockAddressDescriptor.pack(buffer, block, BITS);
    }

    @Test
    void shouldLayTheTiersBuffersOutInOneAddressSpaceFastestFirst() {
        assertEquals(2, tiers.count());
        assertEquals(3, tiers.buffers().length);
        assertEquals(0, tiers.get(0).firstBuffer);
        assertEquals(2, tiers.get(0).bufferCount);
        assertEquals(2, tiers.get(1).firstBuffer);
        assertEquals(1, tiers.get(1).bufferCount);
        assertEquals(1, tiers.buffers()[2].tier);
        assertSame(tiers.get(1), tiers.of(address(2, 4)));
        assertSame(tiers.get(0), tiers.of(address(1, 7)));
        assertEquals(14, tiers.freeBlocks(tiers.get(0)));
        assertEquals(7, tiers.freeBlocks(tiers.get(1)));
        final String description = tiers.regionDescription();
        assertTrue(description.startsWith("fast: ") && description.contains(", slow: "), description);
    }

    @Test
    void shouldRejectATierIndexOutsideTheTable() {
        assertEquals(1, tiers.check(1));
        final IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> tiers.get(2));
        assertEquals("tier=2 tierCount=2", e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> tiers.check(-1));
    }

    @Test
    void shouldMoveAnEntrysAccountsWithItsLastBlock() {
        final int inFast = address(0, 3);
        final int grownInFast = address(1, 1);
        final int spilled = address(2, 1);
        tiers.added(inFast, 100);
        tiers.moved(inFast, 100, grownInFast, 5000);
        assertAccounts(0, 1, 5000);
        tiers.moved(grownInFast, 5000, spilled, 9000);
        assertAccounts(0, 0, 0);
        assertAccounts(1, 1, 9000);
        // A delete takes the entry off the counts of its last block's buffer (under its monitor).
        tiers.buffers()[2].count(-1, -9000);
        assertAccounts(1, 0, 0);
    }

    @Test
    void shouldSumAnInsertCountedInItsBufferWithTheMovesCountedInTheTiers() {
        // An insert counts in its last block's buffer; an append that spills into the slow tier
        // moves the entry's share through the adders; its delete uncounts the slow buffer.
        tiers.buffers()[1].count(1, 100);
        assertAccounts(0, 1, 100);
        tiers.moved(address(1, 1), 100, address(2, 1), 9000);
        assertAccounts(0, 0, 0);
        assertAccounts(1, 1, 9000);
        tiers.buffers()[2].count(-1, -9000);
        assertAccounts(1, 0, 0);
        assertAccounts(0, 0, 0);
    }

    @Test
    void shouldCountADemotionOnTheSourceAndAPromotionOnTheTarget() {
        tiers.added(address(0, 1), 10);
        tiers.relocated(tiers.get(0), tiers.get(1), 10);
        assertAccounts(0, 0, 0);
        assertAccounts(1, 1, 10);
        tiers.relocated(tiers.get(1), tiers.get(0), 10);
        final TierStats[] stats = tiers.stats();
        assertEquals(1, stats[0].demotions());
        assertEquals(1, stats[0].promotions());
        assertEquals(0, stats[1].demotions());
        assertEquals(0, stats[1].promotions());
        assertAccounts(0, 1, 10);
    }

    @Test
    void shouldSnapshotEachTiersGeometry() {
        final TierStats[] stats = tiers.stats();
        assertEquals(new TierStats(0, "fast", tiers.get(0).region.description(), 2L * BUFFER, 2, 14, 0, 0, 0, 0, 0, 0), stats[0]);
        assertEquals(new TierStats(1, "slow", tiers.get(1).region.description(), BUFFER, 1, 7, 0, 0, 0, 0, 0, 0), stats[1]);
    }

    private void assertAccounts(final int tier, final long entries, final long storedBytes) {
        final TierStats stats = tiers.stats()[tier];
        assertEquals(entries, stats.entryCount(), "entries of tier " + tier);
        assertEquals(storedBytes, stats.storedBytes(), "stored bytes of tier " + tier);
    }
}
