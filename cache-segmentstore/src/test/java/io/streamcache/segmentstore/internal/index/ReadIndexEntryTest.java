package io.streamcache.segmentstore.internal.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReadIndexEntryTest {
    @Test
    void shouldRoundTripEveryField() {
        final ReadIndexEntry entry = new ReadIndexEntry(1L << 40, 4096, 0x8000_0201, -7);
        assertEquals(1L << 40, entry.offset());
        assertEquals(4096, entry.length());
        assertEquals(0x8000_0201, entry.address(), "addresses are unsigned: the sign bit survives");
        assertEquals(-7, entry.generation());
        assertEquals((1L << 40) + 4096, entry.endOffset());

        entry.length(Integer.MAX_VALUE);
        entry.address(0xFFFF_FFFF);
        entry.generation(Integer.MIN_VALUE);
        assertEquals(Integer.MAX_VALUE, entry.length());
        assertEquals(0xFFFF_FFFF, entry.address());
        assertEquals(Integer.MIN_VALUE, entry.generation());
        assertEquals((1L << 40) + Integer.MAX_VALUE, entry.endOffset());
        assertEquals(1L << 40, entry.offset(), "the key never changes");
    }

    @Test
    void shouldCountTierReadsUpToASaturationAndReset() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 10, 1, 0);
        assertEquals(0, entry.tierReads());
        assertEquals(1, entry.countTierRead());
        assertEquals(2, entry.countTierRead());
        for (int i = 0; i < 300; i++) {
            entry.countTierRead();
        }
        assertEquals(Byte.MAX_VALUE, entry.tierReads(), "saturates instead of wrapping to negative");
        entry.resetTierReads();
        assertEquals(0, entry.tierReads());
        assertEquals(10, entry.length(), "the counters share no bits with the other fields");
        assertEquals(1, entry.address());
    }

    @Test
    void shouldKeepTheLowByteOfThePromotionTick() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 10, 1, 0);
        assertEquals(0, entry.promotionTick(), "never queued");
        entry.promotionTick(255);
        assertEquals(255, entry.promotionTick(), "read back unsigned");
        entry.promotionTick(0x1_02);
        assertEquals(2, entry.promotionTick());
        entry.countTierRead();
        assertEquals(2, entry.promotionTick());
        assertEquals(1, entry.tierReads());
    }

    @Test
    void shouldStartUnlinked() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 0, ReadIndexEntry.NULL_ADDRESS, 0);
        assertFalse(entry.isLinked());
        assertNull(entry.left);
        assertNull(entry.right);
        assertEquals(0, entry.height);
    }

    @Test
    void shouldReportCachedOnlyForANonNullAddress() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 10, 513, 0);
        assertTrue(entry.isCached());
        entry.address(ReadIndexEntry.NULL_ADDRESS);
        assertFalse(entry.isCached());
        entry.address(-1);
        assertTrue(entry.isCached());
    }

    @Test
    void shouldContainExactlyItsOwnBytes() {
        final ReadIndexEntry entry = new ReadIndexEntry(100, 10, 1, 0);
        assertFalse(entry.contains(Long.MIN_VALUE));
        assertFalse(entry.contains(99));
        assertTrue(entry.contains(100));
        assertTrue(entry.contains(109));
        assertFalse(entry.contains(110));
        assertFalse(entry.contains(Long.MAX_VALUE));

        final ReadIndexEntry empty = new ReadIndexEntry(100, 0, 1, 0);
        assertFalse(empty.contains(100));

        final ReadIndexEntry atTheEnd = new ReadIndexEntry(Long.MAX_VALUE - 1, 1, 1, 0);
        assertTrue(atTheEnd.contains(Long.MAX_VALUE - 1));
        assertFalse(atTheEnd.contains(Long.MAX_VALUE));
    }

    @Test
    void shouldRejectANegativeOffset() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ReadIndexEntry(-1, 0, 0, 0));
        assertEquals("offset=-1 must be >= 0", e.getMessage());
    }

    @Test
    void shouldRejectANegativeLength() {
        assertThrows(IllegalArgumentException.class, () -> new ReadIndexEntry(0, -1, 0, 0));
        final ReadIndexEntry entry = new ReadIndexEntry(0, 5, 0, 0);
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> entry.length(-1));
        assertTrue(e.getMessage().startsWith("length=-1 "), e.getMessage());
        assertEquals(5, entry.length(), "unchanged");
    }

    @Test
    void shouldRejectALengthThatOverflowsTheOffsetRange() {
        assertThrows(IllegalArgumentException.class, () -> new ReadIndexEntry(Long.MAX_VALUE, 1, 0, 0));
        final ReadIndexEntry entry = new ReadIndexEntry(Long.MAX_VALUE - 10, 10, 0, 0);
        assertThrows(IllegalArgumentException.class, () -> entry.length(11));
        assertEquals(10, entry.length());
        assertEquals(Long.MAX_VALUE, entry.endOffset());
    }

    @Test
    void shouldDescribeItselfWithNameValuePairs() {
        final String text = new ReadIndexEntry(4096, 100, 0x201, 3).toString();
        assertEquals("ReadIndexEntry{offset=4096, length=100, address=0x201, generation=3}", text);
    }

    // ---------------------------------------------------------------------------------------
    // Pin word

    @Test
    void shouldDeriveThePinWordLayoutFromItsBits() {
        assertEquals(31, ReadIndexEntry.PIN_COUNT_BITS);
        assertEquals(0x7FFF_FFFF, ReadIndexEntry.PIN_COUNT_MASK);
        assertEquals(31, ReadIndexEntry.RETIRED_SHIFT);
        assertEquals(0x8000_0000, ReadIndexEntry.RETIRED_BIT);
        assertEquals(0, ReadIndexEntry.PIN_COUNT_MASK & ReadIndexEntry.RETIRED_BIT, "fields do not overlap");
        assertEquals(-1, ReadIndexEntry.PIN_COUNT_MASK | ReadIndexEntry.RETIRED_BIT, "and cover the word");
    }

    @Test
    void shouldCountPinsAndLetTheLastUnpinOfARetiredEntryFree() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 10, 1, 0);
        assertFalse(entry.isPinned());
        entry.pin();
        entry.pin();
        assertEquals(2, entry.pinCount());
        assertFalse(entry.unpin(), "not retired: nothing to free");
        entry.pin();
        assertFalse(entry.retire(), "pinned: the last unpin frees");
        assertTrue(entry.isRetired());
        assertEquals(2, entry.pinCount());
        assertFalse(entry.unpin());
        assertTrue(entry.unpin(), "the last pin of a retired entry");
        assertEquals(0, entry.pinCount());
        assertTrue(entry.isRetired());
    }

    @Test
    void shouldFreeAtRetireWhenNotPinned() {
        final ReadIndexEntry entry = new ReadIndexEntry(0, 10, 1, 0);
        assertTrue(entry.retire());
        assertTrue(entry.isRetired());
        assertFalse(entry.isPinned());
    }

    @Test
    void shouldRejectPinWordMisuseAndLeaveTheWordUnchanged() {
        final ReadIndexEntry entry = new ReadIndexEntry(5, 10, 1, 0);
        assertEquals("not pinned: offset=5", assertThrows(IllegalStateException.class, entry::unpin).getMessage());
        assertEquals(0, entry.pinCount());
        entry.pin();
        entry.retire();
        assertEquals("already retired: offset=5", assertThrows(IllegalStateException.class, entry::retire).getMessage());
        assertThrows(IllegalStateException.class, entry::pin, "a retired entry cannot be pinned");
        assertEquals(1, entry.pinCount());
        assertTrue(entry.unpin());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldFreeExactlyOnceWhenUnpinsRaceWithRetire() throws Exception {
        final int pinners = 3;
        final int rounds = 3_000;
        final CyclicBarrier barrier = new CyclicBarrier(pinners + 2);
        final ReadIndexEntry[] entries = new ReadIndexEntry[rounds];
        for (int i = 0; i < rounds; i++) {
            entries[i] = new ReadIndexEntry(i, 1, 1, 0);
            for (int p = 0; p < pinners; p++) {
                entries[i].pin();
            }
        }
        final AtomicInteger[] frees = new AtomicInteger[rounds];
        for (int i = 0; i < rounds; i++) {
            frees[i] = new AtomicInteger();
        }
        final Thread[] threads = new Thread[pinners + 1];
        for (int t = 0; t < threads.length; t++) {
            final boolean retirer = t == pinners;
            threads[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        barrier.await();
                        if (retirer ? entries[i].retire() : entries[i].unpin()) {
                            frees[i].incrementAndGet();
                        }
                    }
                } catch (final Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads[t].start();
        }
        for (int i = 0; i < rounds; i++) {
            barrier.await();
        }
        for (final Thread thread : threads) {
            thread.join();
        }
        for (int i = 0; i < rounds; i++) {
            assertEquals(1, frees[i].get(), "round " + i + ": exactly one thread frees");
            assertEquals(0, entries[i].pinCount());
        }
    }
}
