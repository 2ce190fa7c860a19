package io.streamcache.log.internal.location;

import org.agrona.UnsafeAccess;
import org.junit.jupiter.api.Test;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LocationMemoryTest {
    @Test
    void shouldShareOneSlabBetweenManySmallChunks() {
        try (LocationMemory memory = new LocationMemory()) {
            final Set<Long> addresses = new HashSet<>();
            for (int i = 0; i < 1000; i++) {
                final long address = memory.allocate(LocationMemory.MIN_LOG);
                assertEquals(0, address & 7, "8-byte aligned");
                assertTrue(addresses.add(address), "distinct");
            }
            assertEquals(1, memory.slabs(), "1000 chunks of 8 bytes in the first slab");
            assertEquals(8000, memory.usedBytes());
            assertTrue(memory.reservedBytes() < 128 << 10, "reserved " + memory.reservedBytes());
        }
    }

    @Test
    void shouldHandAFreedChunkOutAgainBeforeCarvingANewOne() {
        try (LocationMemory memory = new LocationMemory()) {
            final long a = memory.allocate(6);
            memory.allocate(6);
            memory.free(a, 6);
            assertEquals(64, memory.usedBytes());
            final long carved = memory.carved();
            assertEquals(a, memory.allocate(6));
            assertEquals(carved, memory.carved());
            assertEquals(1, memory.reused());
        }
    }

    @Test
    void shouldCutTheRestOfASlabIntoFreeChunks() {
        try (LocationMemory memory = new LocationMemory()) {
            // 1 KiB taken from the first slab (64 KiB): a 64 KiB chunk needs a new slab; the other
            // 63 KiB become free chunks of 32, 16, 8, 4, 2 and 1 KiB that the next requests take.
            memory.allocate(10);
            memory.allocate(16);
            assertEquals(2, memory.slabs());
            final long carved = memory.carved();
            for (int log = 10; log <= 15; log++) {
                memory.allocate(log);
            }
            assertEquals(carved, memory.carved(), "taken from the rest of the first slab");
            assertEquals(2, memory.slabs());
        }
    }

    @Test
    void shouldMatchAReferenceOfLiveChunksWithoutOverlap() {
        final SplittableRandom random = new SplittableRandom(5);
        try (LocationMemory memory = new LocationMemory(true)) {
            final long[] address = new long[2000];
            final int[] log = new int[address.length];
            long expectedUsed = 0;
            for (int step = 0; step < 100_000; step++) {
                final int i = random.nextInt(address.length);
                if (address[i] == 0) {
                    log[i] = LocationMemory.MIN_LOG + random.nextInt(10);
                    address[i] = memory.allocate(log[i]);
                    expectedUsed += 1L << log[i];
                    // Each live chunk holds its index in every long: an overlap would overwrite one.
                    for (long at = 0; at < 1L << log[i]; at += 8) {
                        UnsafeAccess.UNSAFE.putLong(address[i] + at, i);
                    }
                } else {
                    for (long at = 0; at < 1L << log[i]; at += 8) {
                        assertEquals(i, UnsafeAccess.UNSAFE.getLong(address[i] + at), "chunk " + i + " at " + at);
                    }
                    memory.free(address[i], log[i]);
                    expectedUsed -= 1L << log[i];
                    address[i] = 0;
                }
                assertEquals(expectedUsed, memory.usedBytes());
            }
            assertTrue(memory.reused() > 0);
        }
    }

    @Test
    void shouldGiveTheDirectMemoryBackAtClose() {
        final BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(pool -> pool.getName().equals("direct")).findFirst().orElseThrow();
        final LocationMemory memory = new LocationMemory();
        final long before = direct.getMemoryUsed();
        for (int i = 0; i < 100; i++) {
            memory.allocate(16);
        }
        final long reserved = memory.reservedBytes();
        assertTrue(reserved >= 100L << 16);
        // Other tests of this JVM may allocate direct memory meanwhile; none runs in this class at once.
        assertTrue(direct.getMemoryUsed() - before >= reserved, "slabs are direct buffers");
        final long whileOpen = direct.getMemoryUsed();
        memory.close();
        assertTrue(whileOpen - direct.getMemoryUsed() >= reserved, "freed: " + (whileOpen - direct.getMemoryUsed()));
        assertEquals(0, memory.reservedBytes());
        assertEquals(0, memory.slabs());
        assertTrue(memory.isClosed());
        assertThrows(IllegalStateException.class, () -> memory.allocate(3));
        memory.close();
    }

    @Test
    void shouldRejectSizesOutOfRange() {
        try (LocationMemory memory = new LocationMemory()) {
            assertThrows(IllegalArgumentException.class, () -> memory.allocate(2));
            assertThrows(IllegalArgumentException.class, () -> memory.allocate(LocationMemory.MAX_LOG + 1));
            assertEquals(3, LocationMemory.logFor(1));
            assertEquals(3, LocationMemory.logFor(8));
            assertEquals(5, LocationMemory.logFor(24));
            assertEquals(6, LocationMemory.logFor(64));
            assertFalse(memory.isClosed());
        }
    }

    @Test
    void shouldPoisonAFreedChunkPastItsLink() {
        try (LocationMemory memory = new LocationMemory(true)) {
            final long address = memory.allocate(5);
            UnsafeAccess.UNSAFE.setMemory(address, 32, (byte) 0);
            memory.free(address, 5);
            for (int at = 8; at < 32; at += 8) {
                assertEquals(-1L, UnsafeAccess.UNSAFE.getLong(address + at));
            }
        }
    }
}
