package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RangeBufferPoolTest {
    private static final int RANGE = 64 * 1024;

    @Test
    void shouldReuseAReleasedBufferOfTheSameSize() {
        final RangeBufferPool pool = new RangeBufferPool(RANGE, 4L * RANGE);
        final ByteBuf first = pool.allocate(RANGE - 10);
        assertNotNull(first);
        assertEquals(0, first.writerIndex());
        assertEquals(RANGE, first.capacity());
        assertTrue(first.isDirect());
        first.writeLong(42);
        final long address = first.hasMemoryAddress() ? first.memoryAddress() : -1;
        assertTrue(first.release());
        final ByteBuf second = pool.allocate(RANGE);
        assertEquals(0, second.writerIndex(), "a reused buffer starts empty");
        if (address != -1) {
            assertEquals(address, second.memoryAddress(), "the same memory");
        }
        assertEquals(RANGE, pool.heldBytes(), "one buffer held");
        second.release();
        pool.close();
        assertEquals(0, pool.heldBytes(), "close frees the free buffers");
    }

    @Test
    void shouldHoldAtMostItsLimitAndFallBackWhenItIsReached() {
        final RangeBufferPool pool = new RangeBufferPool(RANGE, 2L * RANGE);
        final ByteBuf a = pool.allocate(RANGE);
        final ByteBuf b = pool.allocate(RANGE);
        assertNotNull(a);
        assertNotNull(b);
        assertNull(pool.allocate(RANGE), "at the limit: none, the reader reads into the heap");
        assertEquals(1, pool.heapFallbacks());
        assertEquals(2L * RANGE, pool.heldBytes());
        // A larger size drops free buffers of other sizes to make room.
        a.release();
        b.release();
        final ByteBuf large = pool.allocate(2 * RANGE - 1);
        assertNotNull(large);
        assertEquals(2 * RANGE, large.capacity());
        assertEquals(2L * RANGE, pool.heldBytes());
        large.release();
        pool.close();
        assertEquals(0, pool.heldBytes());
    }

    @Test
    void shouldFreeABufferReleasedAfterClose() {
        final RangeBufferPool pool = new RangeBufferPool(RANGE, 2L * RANGE);
        final ByteBuf a = pool.allocate(RANGE);
        pool.close();
        assertEquals(RANGE, pool.heldBytes(), "in use: freed at its release");
        a.release();
        assertEquals(0, pool.heldBytes());
        assertNull(pool.allocate(RANGE), "closed");
    }

    @Test
    void shouldRefuseBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> new RangeBufferPool(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new RangeBufferPool(1, -1));
        final RangeBufferPool pool = new RangeBufferPool(RANGE, RANGE);
        assertThrows(IllegalArgumentException.class, () -> pool.allocate(0));
        assertSame(null, pool.allocate(2 * RANGE), "larger than the limit: none");
        pool.close();
    }
}
