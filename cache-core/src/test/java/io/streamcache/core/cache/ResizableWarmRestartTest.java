package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Warm restart of a cache whose tiers change size: a resizable persistent mapped-file tier that
 * was grown or shrunk before its checkpoint, reopened at the same or another online size, with a
 * catalog as fresh as the region or older than a shrink (as after a crash); and a resizable
 * direct-memory tier in front of a persistent one. In every case each adopted entry holds the
 * bytes its record was taken of, the discarded ones are counted by reason, and the used blocks are
 * exactly the adopted entries' (no block leaks, none is handed out twice).
 */
class ResizableWarmRestartTest {
    private static final int BLOCK = 4096;
    private static final int BUFFER = 64 * BLOCK;
    private static final int MAX_BUFFERS = 8;

    @TempDir
    Path dir;

    /** Entries written, by address, with their bytes. */
    private final Map<Integer, byte[]> written = new HashMap<>();
    private final Random random = new Random(7);

    private Path regionFile() {
        return dir.resolve("region");
    }

    private Path catalogFile() {
        return dir.resolve("catalog");
    }

    private BlockCache open(final int buffers, final int maxBuffers) {
        return BlockCache.builder().capacity((long) buffers * BUFFER).maxCapacity((long) maxBuffers * BUFFER).blockLength(BLOCK)
            .bufferLength(BUFFER).registerMBean(false).region(MappedFileRegion.persistent(regionFile()))
            .warmRestart(catalogFile()).build();
    }

    private int insert(final BlockCache cache, final int length) {
        final byte[] data = new byte[length];
        random.nextBytes(data);
        final int address = cache.insert(Unpooled.wrappedBuffer(data));
        written.put(address, data);
        return address;
    }

    /** Fills the cache to about {@code fraction} of its online blocks with entries of 1 to 5 blocks. */
    private void fill(final BlockCache cache, final double fraction) {
        while (cache.stats().usedBlockCount() < fraction * cache.tierBlocks(0)) {
            insert(cache, 1 + random.nextInt(5 * BLOCK));
        }
    }

    private void checkpoint(final BlockCache cache, final boolean clean) throws IOException {
        try (WarmCatalog.Writer writer = new WarmCatalog.Writer(cache, 5, 1)) {
            for (final int address : written.keySet()) {
                writer.add(address, 0, address, cache.length(address), cache.digest(address), 0);
            }
            writer.commit(clean);
        }
    }

    private static byte[] read(final BlockCache cache, final int address) {
        final byte[] out = new byte[cache.length(address)];
        cache.copyTo(address, 0, ByteBuffer.wrap(out));
        return out;
    }

    private int bufferOf(final int address) {
        return address >>> Integer.numberOfTrailingZeros(BUFFER / BLOCK);
    }

    /** Moves every entry out of the buffers a shrink to {@code buffers} drains, within the tier. */
    private void shrink(final BlockCache cache, final int buffers) {
        try (TierShrink shrink = cache.startShrink(0, (long) buffers * BUFFER)) {
            while (!shrink.isComplete()) {
                final List<Integer> listed = new ArrayList<>();
                shrink.forEachEntry(listed::add);
                for (final int address : listed) {
                    final byte[] bytes = written.remove(address);
                    written.put(cache.relocate(address, 0), bytes);
                }
                shrink.release();
            }
        }
        assertEquals((long) buffers * BUFFER, cache.tierCapacity(0));
    }

    /**
     * Every adopted entry holds the bytes written at its address, the used blocks are exactly
     * theirs, and adopted plus discarded make the catalog.
     *
     * @return the adopted entries' addresses.
     */
    private List<Integer> assertAdoptedIntact(final BlockCache cache, final Map<Integer, byte[]> recorded) {
        final WarmStart start = cache.warmStart();
        assertTrue(start.warm(), start::toString);
        assertEquals(recorded.size(), start.adopted().size() + start.discardedTotal(), start::toString);
        final List<Integer> adopted = new ArrayList<>();
        long blocks = 0;
        for (final WarmCatalog.Entry entry : start.adopted()) {
            assertArrayEquals(recorded.get(entry.address()), read(cache, entry.address()), "entry at " + entry.address());
            adopted.add(entry.address());
            blocks += Math.max(1, (entry.length() + BLOCK - 1) / BLOCK);
        }
        assertEquals(blocks, cache.stats().usedBlockCount(), start::toString);
        assertEquals(start.adopted().size(), cache.stats().entryCount());
        return adopted;
    }

    @Test
    void shouldBringEveryEntryBackAfterAGrow() throws IOException {
        try (BlockCache cache = open(4, MAX_BUFFERS)) {
            fill(cache, 0.5);
            assertEquals((long) MAX_BUFFERS * BUFFER, cache.resize(0, (long) MAX_BUFFERS * BUFFER));
            fill(cache, 0.8);
            assertTrue(written.keySet().stream().anyMatch(a -> bufferOf(a) >= 4), "entries in the grown buffers");
            checkpoint(cache, true);
        }
        assertEquals((long) MAX_BUFFERS * BUFFER, Files.size(regionFile()));
        try (BlockCache cache = open(MAX_BUFFERS, MAX_BUFFERS)) {
            assertEquals(written.size(), assertAdoptedIntact(cache, written).size());
            assertTrue(cache.warmStart().cleanShutdown());
        }
    }

    @Test
    void shouldBringEveryEntryBackAfterAShrinkAndTruncateTheFile() throws IOException {
        try (BlockCache cache = open(MAX_BUFFERS, MAX_BUFFERS)) {
            fill(cache, 0.4);
            shrink(cache, 4);
            checkpoint(cache, true);
        }
        assertEquals(4L * BUFFER, Files.size(regionFile()));
        try (BlockCache cache = open(4, MAX_BUFFERS)) {
            assertEquals(written.size(), assertAdoptedIntact(cache, written).size());
            // The cache can grow again over the kept region: new buffers come online empty.
            assertEquals((long) MAX_BUFFERS * BUFFER, cache.resize(0, (long) MAX_BUFFERS * BUFFER));
            insert(cache, 3 * BLOCK);
        }
    }

    @Test
    void shouldAdoptTheEntriesOfStillOnlineBuffersWhenReopenedSmaller() throws IOException {
        try (BlockCache cache = open(MAX_BUFFERS, MAX_BUFFERS)) {
            fill(cache, 0.9);
            checkpoint(cache, false);
        }
        try (BlockCache cache = open(3, MAX_BUFFERS)) {
            final WarmStart start = cache.warmStart();
            final List<Integer> adopted = assertAdoptedIntact(cache, written);
            assertTrue(start.discarded(WarmStart.Discard.BUFFER_OFFLINE) > 0, start::toString);
            assertFalse(adopted.isEmpty(), start::toString);
            for (final int address : written.keySet()) {
                if (bufferOf(address) >= 3) {
                    assertFalse(adopted.contains(address), "entry in an offline buffer adopted: " + address);
                }
            }
            assertEquals(3L * BUFFER, Files.size(regionFile()));
            assertEquals(3L * BUFFER, cache.tierCapacity(0));
        }
    }

    @Test
    void shouldAdoptEverythingWhenReopenedLargerWithTheNewBuffersFree() throws IOException {
        try (BlockCache cache = open(3, MAX_BUFFERS)) {
            fill(cache, 0.9);
            checkpoint(cache, false);
        }
        try (BlockCache cache = open(6, MAX_BUFFERS)) {
            assertEquals(written.size(), assertAdoptedIntact(cache, written).size());
            assertEquals(6L * BUFFER, Files.size(regionFile()));
            final long free = cache.tierBlocks(0) - cache.stats().usedBlockCount();
            assertTrue(free >= 3L * (BUFFER / BLOCK - 1), "the three new buffers are free: " + free);
            for (int i = 0; i < 3 * (BUFFER / BLOCK - 1) / 2; i++) {
                insert(cache, 2 * BLOCK);
            }
        }
    }

    /** As after a crash during a shrink: the catalog is older than the moves and the truncation. */
    @Test
    void shouldServeNoStaleByteFromACatalogOlderThanAShrink() throws IOException {
        final Map<Integer, byte[]> recorded;
        try (BlockCache cache = open(MAX_BUFFERS, MAX_BUFFERS)) {
            fill(cache, 0.9);
            // Two in three deleted: the rest is spread over every buffer, so the shrink moves some.
            for (final int address : new ArrayList<>(written.keySet())) {
                if (random.nextInt(3) != 0) {
                    cache.delete(address);
                    written.remove(address);
                }
            }
            checkpoint(cache, false);
            recorded = new HashMap<>(written);
            shrink(cache, 3);
            // Some recorded entries deleted, their blocks reused by new ones the catalog does not name.
            for (final int address : new ArrayList<>(written.keySet())) {
                if (random.nextBoolean()) {
                    cache.delete(address);
                    written.remove(address);
                }
            }
            fill(cache, 0.9);
        }
        try (BlockCache cache = open(3, MAX_BUFFERS)) {
            final WarmStart start = cache.warmStart();
            assertAdoptedIntact(cache, recorded);
            assertTrue(start.discarded(WarmStart.Discard.BUFFER_OFFLINE) > 0, start::toString);
            assertTrue(start.discardedTotal() > start.discarded(WarmStart.Discard.BUFFER_OFFLINE), "reused blocks: " + start);
        }
    }

    @Test
    void shouldStartColdWhenTheMaximumChanged() throws IOException {
        try (BlockCache cache = open(4, MAX_BUFFERS)) {
            fill(cache, 0.5);
            checkpoint(cache, true);
        }
        try (BlockCache cache = open(4, MAX_BUFFERS + 1)) {
            final WarmStart start = cache.warmStart();
            assertFalse(start.warm());
            assertEquals(WarmStart.Cold.OTHER_GEOMETRY, start.cold());
            assertNotNull(start.coldReason());
            assertEquals(0, cache.stats().usedBlockCount());
        }
    }

    @Test
    void shouldAdoptThePersistentTiersEntriesBehindAResizableDirectTier() throws IOException {
        final int dramBuffers = 2;
        try (BlockCache cache = tiered(dramBuffers)) {
            assertEquals(4L * BUFFER, cache.resize(0, 4L * BUFFER));
            while (cache.tierUsedBlocks(1) < cache.tierBlocks(1) / 2) {
                insert(cache, 1 + random.nextInt(3 * BLOCK));
            }
            checkpoint(cache, true);
        }
        try (BlockCache cache = tiered(3)) {
            final WarmStart start = cache.warmStart();
            final List<Integer> adopted = assertAdoptedIntact(cache, written);
            // Buffers 0..3 are the direct tier's (its maximum), 4..7 the file's.
            for (final int address : written.keySet()) {
                assertEquals(bufferOf(address) >= 4, adopted.contains(address), "address " + address + " " + start);
            }
            assertTrue(start.discarded(WarmStart.Discard.REGION_NOT_KEPT) > 0, start::toString);
        }
    }

    private BlockCache tiered(final int dramBuffers) {
        return BlockCache.builder().blockLength(BLOCK).bufferLength(BUFFER).registerMBean(false)
            .tier("dram", (long) dramBuffers * BUFFER, 4L * BUFFER, DirectMemoryRegion.factory())
            .tier("file", 4L * BUFFER, MappedFileRegion.persistent(regionFile()))
            .warmRestart(catalogFile()).build();
    }
}
