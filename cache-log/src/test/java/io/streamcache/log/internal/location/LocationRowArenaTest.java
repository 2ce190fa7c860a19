package io.streamcache.log.internal.location;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LocationRowArena} against a reference of live numbers: numbers from 1, a freed number
 * handed out again before a new one, distinct 64-byte rows across blocks, each row an empty index
 * of its start when handed out, contents given back on free, and the release.
 */
class LocationRowArenaTest {
    @Test
    void shouldHandOutDistinctRowsAndReuseFreedNumbers() {
        try (LocationMemory memory = new LocationMemory(true)) {
            final LocationRowArena arena = new LocationRowArena(memory);
            final SplittableRandom random = new SplittableRandom(5);
            final Set<Integer> live = new HashSet<>();
            final Deque<Integer> freed = new ArrayDeque<>();
            int highest = 0;
            for (int step = 0; step < 20_000; step++) {
                if (live.isEmpty() || random.nextInt(3) != 0) {
                    final long start = random.nextLong(1 << 20);
                    final int number = arena.allocate(start);
                    assertTrue(number >= 1, "number " + number);
                    if (!freed.isEmpty()) {
                        assertEquals(freed.pop(), number, "the last freed number comes back first");
                    } else {
                        assertEquals(highest + 1, number, "new numbers in order");
                        highest = number;
                    }
                    assertTrue(live.add(number));
                    final long row = arena.address(number);
                    assertEquals(0, row & 7, "8-byte aligned");
                    assertEquals(start, LocationRows.startOffset(row));
                    assertEquals(start, LocationRows.endOffset(row));
                    assertEquals(0, LocationRows.count(row));
                    // Give the row a spine and chunks, which free must give back.
                    LocationRows.add(memory, row, start, 100, 1 + number, 8L * number);
                } else {
                    final int number = live.iterator().next();
                    live.remove(number);
                    arena.free(number);
                    freed.push(number);
                }
            }
            assertEquals(live.size(), arena.live());
            assertTrue(highest > LocationRowArena.BLOCK_ROWS, "several blocks: " + highest);
            final Set<Long> addresses = new HashSet<>();
            for (final int number : live) {
                assertTrue(addresses.add(arena.address(number)));
                assertEquals(1, LocationRows.count(arena.address(number)), "row " + number + " kept its record");
            }
            for (final int number : live) {
                arena.free(number);
            }
            assertEquals(0, arena.live());
            assertEquals(arena.blockBytes(), memory.usedBytes(), "only the blocks are left in use");
            arena.release();
            assertEquals(0, memory.usedBytes(), "the blocks went back");
            assertThrows(IllegalStateException.class, () -> arena.allocate(0));
            arena.free(1);
            assertEquals(0, memory.usedBytes());
        }
    }

    @Test
    void shouldKeepRowsOfAdjacentNumbersApart() {
        try (LocationMemory memory = new LocationMemory()) {
            final LocationRowArena arena = new LocationRowArena(memory);
            final int a = arena.allocate(10);
            final int b = arena.allocate(20);
            assertNotEquals(arena.address(a), arena.address(b));
            assertEquals(64, Math.abs(arena.address(b) - arena.address(a)));
            LocationRows.add(memory, arena.address(a), 10, 5, 1, 0);
            assertEquals(20, LocationRows.endOffset(arena.address(b)), "a write to one row leaves the next alone");
        }
    }
}
