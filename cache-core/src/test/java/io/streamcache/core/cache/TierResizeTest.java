package io.streamcache.core.cache;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.InvalidAddressException;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.core.memory.MemoryRegionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMX;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.streamcache.core.cache.TestBytes.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Growing and shrinking tiers of a {@link BlockCache} ({@link TierResizer}, {@link TierShrink}):
 * capacities and stats, data kept across a shrink, what a plain cache user can release, bad
 * input, the regions' memory, JMX.
 */
class TierResizeTest {
    private static final int BUFFER = 64 << 10;
    private static final int BLOCK = 1024;
    private static final int DATA_BLOCKS = BUFFER / BLOCK - 1;

    @TempDir
    Path directory;

    private static BlockCache direct(final int buffers, final int maxBuffers) {
        return BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).capacity((long)buffers * BUFFER)
            .maxCapacity((long)maxBuffers * BUFFER).registerMBean(false).fullRetryTimeout(java.time.Duration.ZERO).build();
    }

    private static byte[] read(final BlockCache cache, final int address) {
        final byte[] bytes = new byte[cache.length(address)];
        cache.copyTo(address, 0, java.nio.ByteBuffer.wrap(bytes));
        return bytes;
    }

    @Test
    void growBringsBuffersOnlineAndTheirBlocksIntoService() {
        try (BlockCache cache = direct(2, 6)) {
            assertEquals(2L * BUFFER, cache.capacity());
            assertEquals(6L * BUFFER, cache.maxCapacity());
            assertEquals(6L * BUFFER, cache.tierMaxCapacity(0));
            assertTrue(cache.isResizable(0));
            final List<Integer> addresses = new ArrayList<>();
            assertThrows(CacheFullException.class, () -> {
                while (true) {
                    addresses.add(cache.insert(Unpooled.wrappedBuffer(pattern(addresses.size(), BLOCK))));
                }
            });
            assertEquals(2 * DATA_BLOCKS, addresses.size());
            assertEquals(5L * BUFFER, cache.resize(0, 5L * BUFFER + 100));
            assertEquals(5L * BUFFER, cache.stats().capacity());
            assertEquals(5 * DATA_BLOCKS, cache.stats().blockCount());
            assertEquals(5L * BUFFER, cache.stats().tiers().get(0).capacity());
            assertEquals(6L * BUFFER, cache.stats().tiers().get(0).maxCapacity());
            for (int i = 0; i < 3 * DATA_BLOCKS; i++) {
                addresses.add(cache.insert(Unpooled.wrappedBuffer(pattern(addresses.size(), BLOCK))));
            }
            assertThrows(CacheFullException.class, () -> cache.insert(Unpooled.wrappedBuffer(new byte[1])));
            for (int i = 0; i < addresses.size(); i++) {
                assertArrayEquals(pattern(i, BLOCK), read(cache, addresses.get(i)));
            }
        }
    }

    @Test
    void shrinkOfAPlainCacheReleasesOnlyFreeBuffersAndKeepsEveryEntry() {
        try (BlockCache cache = direct(4, 4)) {
            // Fill two buffers' worth; the other two stay free.
            final Map<Integer, byte[]> entries = new HashMap<>();
            for (int i = 0; i < 2 * DATA_BLOCKS; i++) {
                final byte[] bytes = pattern(i, BLOCK);
                entries.put(cache.insert(Unpooled.wrappedBuffer(bytes)), bytes);
            }
            assertEquals(2L * BUFFER, cache.resize(0, BUFFER), "the two free buffers go, the two in use stay");
            assertEquals(2L * BUFFER, cache.capacity());
            entries.forEach((address, bytes) -> assertArrayEquals(bytes, read(cache, address)));
            // The buffers that could not go are back in service: deleting one entry makes room for one.
            final int first = entries.keySet().iterator().next();
            cache.delete(first);
            entries.remove(first);
            entries.put(cache.insert(Unpooled.wrappedBuffer(pattern(-1, 10))), pattern(-1, 10));
            entries.forEach((address, bytes) -> assertArrayEquals(bytes, read(cache, address)));
        }
    }

    @Test
    void shrinkMovesEntriesOutOfDrainingBuffersThroughTheOwner() {
        try (BlockCache cache = direct(4, 4)) {
            final Map<Integer, byte[]> entries = new HashMap<>();
            int seed = 0;
            // Entries spread over all four buffers: insert many, delete every other one.
            final List<Integer> all = new ArrayList<>();
            for (int i = 0; i < 4 * DATA_BLOCKS / 3; i++) {
                final byte[] bytes = pattern(seed++, 3 * BLOCK - 7);
                final int address = cache.insert(Unpooled.wrappedBuffer(bytes));
                all.add(address);
                entries.put(address, bytes);
            }
            for (int i = 0; i < all.size(); i += 2) {
                cache.delete(all.get(i));
                entries.remove(all.get(i));
            }
            final long used = cache.stats().usedBlockCount();
            try (TierShrink shrink = cache.startShrink(0, 2L * BUFFER)) {
                assertEquals(2, shrink.pendingBuffers());
                assertEquals(4L * BUFFER, cache.capacity(), "draining buffers count until released");
                int rounds = 0;
                while (!shrink.isComplete()) {
                    final List<Integer> listed = new ArrayList<>();
                    shrink.forEachEntry(listed::add);
                    for (final int address : listed) {
                        assertTrue(shrink.touches(address));
                        final byte[] bytes = entries.remove(address);
                        entries.put(cache.relocate(address, 0), bytes);
                    }
                    shrink.release();
                    assertTrue(++rounds < 5, "a shrink with no concurrent inserts completes in one round");
                }
                entries.keySet().forEach(address -> assertFalse(shrink.touches(address)));
            }
            assertEquals(2L * BUFFER, cache.capacity());
            assertEquals(2 * DATA_BLOCKS, cache.stats().blockCount());
            assertEquals(used, cache.stats().usedBlockCount());
            entries.forEach((address, bytes) -> assertArrayEquals(bytes, read(cache, address)));
            // Grow back, and the new buffers take entries.
            assertEquals(4L * BUFFER, cache.resize(0, 4L * BUFFER));
            for (int i = 0; i < DATA_BLOCKS; i++) {
                final byte[] bytes = pattern(seed++, BLOCK);
                entries.put(cache.insert(Unpooled.wrappedBuffer(bytes)), bytes);
            }
            entries.forEach((address, bytes) -> assertArrayEquals(bytes, read(cache, address)));
        }
    }

    @Test
    void shrinkOfTheFastTierDemotesIntoTheSlowOne() {
        try (BlockCache cache = BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).registerMBean(false)
            .tier("dram", 3L * BUFFER, 3L * BUFFER, DirectMemoryRegion.factory())
            .tier("file", 3L * BUFFER, MappedFileRegion.factory(directory.resolve("slow")))
            .build()) {
            final Map<Integer, byte[]> entries = new HashMap<>();
            for (int i = 0; i < 2 * DATA_BLOCKS; i++) {
                final byte[] bytes = pattern(i, BLOCK);
                entries.put(cache.insert(Unpooled.wrappedBuffer(bytes)), bytes);
            }
            assertThrows(UnsupportedOperationException.class, () -> cache.resize(1, BUFFER));
            try (TierShrink shrink = cache.startShrink(0, BUFFER)) {
                final List<Integer> listed = new ArrayList<>();
                shrink.forEachEntry(listed::add);
                for (final int address : listed) {
                    final byte[] bytes = entries.remove(address);
                    int moved;
                    try {
                        moved = cache.relocate(address, 0);
                    } catch (final CacheFullException e) {
                        moved = cache.relocate(address, 1);
                    }
                    entries.put(moved, bytes);
                }
                assertEquals(2, shrink.release());
                assertTrue(shrink.isComplete());
            }
            assertEquals(BUFFER, cache.tierCapacity(0));
            assertEquals(DATA_BLOCKS, cache.tierUsedBlocks(0));
            assertEquals(DATA_BLOCKS, cache.tierUsedBlocks(1));
            entries.forEach((address, bytes) -> assertArrayEquals(bytes, read(cache, address)));
        }
    }

    @Test
    void aStaleAddressIntoAnOfflineBufferIsRejected() {
        try (BlockCache cache = direct(1, 2)) {
            cache.resize(0, 2L * BUFFER);
            // Fill buffer 0 so that the next entry lands in buffer 1.
            for (int i = 0; i < DATA_BLOCKS; i++) {
                cache.insert(Unpooled.wrappedBuffer(new byte[BLOCK]));
            }
            final int address = cache.insert(Unpooled.wrappedBuffer(new byte[10]));
            final int moved;
            try (TierShrink shrink = cache.startShrink(0, BUFFER)) {
                assertThrows(CacheFullException.class, () -> cache.relocate(address, 0));
                cache.delete(address);
                assertEquals(1, shrink.release());
            }
            final InvalidAddressException e = assertThrows(InvalidAddressException.class, () -> cache.length(address));
            assertEquals(InvalidAddressException.Reason.OUT_OF_RANGE, e.reason());
            assertThrows(InvalidAddressException.class, () -> cache.tierOf(address));
        }
    }

    @Test
    void badInputChangesNothing() {
        try (BlockCache cache = direct(2, 4)) {
            assertThrows(IllegalArgumentException.class, () -> cache.resize(0, 5L * BUFFER));
            assertThrows(IllegalArgumentException.class, () -> cache.resize(0, BUFFER - 1));
            assertThrows(IndexOutOfBoundsException.class, () -> cache.resize(1, BUFFER));
            assertThrows(IllegalArgumentException.class, () -> cache.startShrink(0, 3L * BUFFER));
            assertEquals(2L * BUFFER, cache.capacity());
        }
        try (BlockCache fixed = BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).capacity(2L * BUFFER)
            .registerMBean(false).build()) {
            final UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> fixed.resize(0, BUFFER));
            assertTrue(e.getMessage().contains("maxCapacity"), e.getMessage());
            assertFalse(fixed.isResizable(0));
        }
        final CacheConfigurationException below = assertThrows(CacheConfigurationException.class, () -> direct(3, 2));
        assertTrue(below.getMessage().contains("maxCapacity"), below.getMessage());
        final MemoryRegionFactory fixedOnly = (count, length) -> DirectMemoryRegion.factory().open(count, length);
        final CacheConfigurationException notResizable = assertThrows(CacheConfigurationException.class,
            () -> BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).capacity(BUFFER).maxCapacity(2L * BUFFER)
                .region(fixedOnly).registerMBean(false).build());
        assertTrue(notResizable.getMessage().contains("cannot change size"), notResizable.getMessage());
    }

    @Test
    void aShrunkMappedFileIsTruncatedAndAGrownOneExtended() throws Exception {
        final Path file = directory.resolve("resizable");
        try (BlockCache cache = BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).registerMBean(false)
            .capacity(2L * BUFFER).maxCapacity(4L * BUFFER).region(MappedFileRegion.factory(file)).build()) {
            assertEquals(2L * BUFFER, Files.size(file));
            final int address = cache.insert(Unpooled.wrappedBuffer(pattern(7, 100)));
            cache.resize(0, 4L * BUFFER);
            assertEquals(4L * BUFFER, Files.size(file));
            assertEquals(BUFFER, cache.resize(0, BUFFER));
            assertEquals(BUFFER, Files.size(file));
            assertArrayEquals(pattern(7, 100), read(cache, address));
        }
        assertFalse(Files.exists(file));
    }

    @Test
    void directMemoryInUseFollowsTheCapacity() {
        try (BlockCache cache = direct(2, 8)) {
            final long before = DirectMemoryRegion.usedDirectMemory();
            cache.resize(0, 8L * BUFFER);
            final long grown = DirectMemoryRegion.usedDirectMemory();
            assertTrue(grown - before >= 6L * BUFFER, "before=" + before + " grown=" + grown);
            cache.resize(0, 2L * BUFFER);
            assertTrue(DirectMemoryRegion.usedDirectMemory() <= before, "after the shrink: " + DirectMemoryRegion.usedDirectMemory());
        }
    }

    @Test
    void theMBeanReadsAndSetsTierCapacities() throws Exception {
        try (BlockCache cache = BlockCache.builder().bufferLength(BUFFER).blockLength(BLOCK).capacity(2L * BUFFER)
            .maxCapacity(4L * BUFFER).name("resize-jmx").build()) {
            assertEquals("resize-jmx", cache.name());
            final BlockCacheMXBean bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
                new ObjectName("io.streamcache:type=BlockCache,name=\"resize-jmx\""), BlockCacheMXBean.class);
            assertArrayEquals(new long[] {4L * BUFFER}, bean.getTierMaxCapacities());
            assertEquals(3L * BUFFER, bean.resizeTier(0, 3L * BUFFER));
            assertArrayEquals(new long[] {3L * BUFFER}, bean.getTierCapacities());
            assertEquals(3L * BUFFER, bean.getCapacity());
        }
    }
}
