package io.streamcache.segmentstore.internal.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReadIndexEntryPoolTest {
    /** An entry as a segment leaves it when it removes and retires it with no pin. */
    private static ReadIndexEntry dead(final long offset, final int length, final int address) {
        final ReadIndexEntry entry = new ReadIndexEntry(offset, length, address, 3);
        assertTrue(entry.retire(), "no pin: the retirer frees it");
        return entry;
    }

    @Test
    void shouldMakeANewEntryWhenEmptyAndReuseARecycledOne() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(4);
        final ReadIndexEntry fresh = pool.take(10, 20, 30, 40);
        assertEquals(10, fresh.offset());
        assertEquals(20, fresh.length());
        assertEquals(30, fresh.address());
        assertEquals(40, fresh.generation());

        final ReadIndexEntry old = dead(1000, 500, 7);
        old.countTierRead();
        old.promotionTick(9);
        assertTrue(pool.recycle(old));
        assertEquals(1, pool.size());
        final ReadIndexEntry reused = pool.take(1L << 40, 64, 0x8000_0001, -5);
        assertSame(old, reused, "the pooled entry comes back");
        assertEquals(0, pool.size());
        assertEquals(1L << 40, reused.offset(), "the key is the new one");
        assertEquals(64, reused.length());
        assertEquals(0x8000_0001, reused.address());
        assertEquals(-5, reused.generation());
        assertEquals(0, reused.tierReads());
        assertEquals(0, reused.promotionTick());
        assertFalse(reused.isRetired(), "new again: may be pinned and retired once more");
        assertEquals(0, reused.pinCount());
        assertFalse(reused.isLinked());
        reused.pin();
        assertFalse(reused.retire());
        assertTrue(reused.unpin(), "the pin word works as in a new entry");
    }

    @Test
    void shouldPoisonARecycledEntryUntilItIsTaken() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(2);
        final ReadIndexEntry entry = dead(100, 50, 12345);
        pool.recycle(entry);
        assertFalse(entry.isCached(), "a stale holder sees no cache address");
        assertEquals(0, entry.length(), "and no bytes");
        assertTrue(entry.isRetired(), "and a retired entry");
        assertThrows(IllegalStateException.class, entry::pin, "which cannot be pinned");
    }

    @Test
    void shouldRefuseAnEntryStillInATreeNotRetiredOrPinned() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(4);
        final ReadIndexEntry live = new ReadIndexEntry(0, 10, 1, 0);
        assertThrows(IllegalStateException.class, () -> pool.recycle(live), "not retired");

        final ReadIndexEntry pinned = new ReadIndexEntry(0, 10, 1, 0);
        pinned.pin();
        assertFalse(pinned.retire());
        assertThrows(IllegalStateException.class, () -> pool.recycle(pinned), "retired but pinned: the reader's last unpin frees it");
        assertEquals(1, pinned.address(), "a refused entry is left as it was");

        final AvlReadIndex tree = new AvlReadIndex();
        final ReadIndexEntry linked = new ReadIndexEntry(0, 10, 1, 0);
        tree.insert(linked);
        linked.retire();
        assertThrows(IllegalStateException.class, () -> pool.recycle(linked), "still a node of a tree");
        assertEquals(0, pool.size());
    }

    @Test
    void shouldDropEntriesPastItsCapacity() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(2);
        assertEquals(2, pool.capacity());
        assertTrue(pool.recycle(dead(0, 1, 1)));
        assertTrue(pool.recycle(dead(1, 1, 1)));
        assertFalse(pool.recycle(dead(2, 1, 1)), "full: left to the garbage collector");
        assertEquals(2, pool.size());
    }

    /**
     * The four counters after a known sequence: takes from an empty pool make entries, recycles
     * past the capacity drop them, takes from a full pool reuse, and a take refused for bad input
     * counts as a take and a recycle (its entry went back).
     */
    @Test
    void shouldCountTakesMadeRecycledAndDropped() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(2);
        assertCounts(pool, 0, 0, 0, 0);
        for (int i = 0; i < 3; i++) {
            pool.take(i, 1, 1, 0);
        }
        assertCounts(pool, 0, 3, 0, 0);
        for (int i = 0; i < 3; i++) {
            pool.recycle(dead(i, 1, 1));
        }
        assertCounts(pool, 0, 3, 2, 1);
        assertEquals(2, pool.size());
        pool.take(10, 1, 1, 0);
        assertCounts(pool, 1, 3, 2, 1);
        assertThrows(IllegalArgumentException.class, () -> pool.take(-1, 1, 1, 0));
        assertCounts(pool, 2, 3, 3, 1);
        pool.take(11, 1, 1, 0);
        pool.take(12, 1, 1, 0);
        assertCounts(pool, 3, 4, 3, 1);
        assertEquals(0, pool.size());
        assertThrows(IllegalArgumentException.class, () -> pool.take(-1, 1, 1, 0), "empty: the constructor refuses it");
        assertCounts(pool, 3, 4, 3, 1);
    }

    private static void assertCounts(final ReadIndexEntryPool pool, final long taken, final long made, final long recycled,
                                     final long dropped) {
        assertEquals(List.of(taken, made, recycled, dropped), List.of(pool.taken(), pool.made(), pool.recycled(), pool.dropped()),
            "taken, made, recycled, dropped");
        assertEquals(pool.recycled() - pool.taken(), pool.size(), "pooled = recycled - taken");
    }

    @Test
    void shouldRejectBadArgumentsAndKeepThePooledEntry() {
        assertThrows(IllegalArgumentException.class, () -> new ReadIndexEntryPool(1));
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(2);
        final ReadIndexEntry entry = dead(0, 1, 1);
        pool.recycle(entry);
        assertThrows(IllegalArgumentException.class, () -> pool.take(-1, 1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> pool.take(Long.MAX_VALUE - 1, 2, 1, 0));
        assertEquals(1, pool.size(), "a failed take gives the entry back");
        assertTrue(entry.isRetired(), "still dead");
        assertSame(entry, pool.take(5, 6, 7, 8));
        assertThrows(IllegalArgumentException.class, () -> pool.take(-1, 1, 1, 0), "empty pool: the constructor's check");
    }

    @Test
    void shouldWorkAsAnIndexNodeAfterReuse() {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(64);
        final AvlReadIndex tree = new AvlReadIndex();
        for (int i = 0; i < 32; i++) {
            tree.insert(pool.take(i * 10L, 10, i + 1, 0));
        }
        // Remove the first half as a truncation does, recycling each.
        tree.removeBefore(160, entry -> {
            assertTrue(entry.retire());
            pool.recycle(entry);
        });
        assertEquals(16, pool.size());
        for (int i = 32; i < 48; i++) {
            tree.insert(pool.take(i * 10L, 10, i + 1, 0));
        }
        tree.checkInvariants();
        assertEquals(32, tree.size());
        assertEquals(0, pool.size());
        for (int i = 16; i < 48; i++) {
            final ReadIndexEntry entry = tree.get(i * 10L);
            assertEquals(i + 1, entry.address(), "offset " + i * 10);
        }
        assertNull(tree.get(150));
    }

    /**
     * Threads take entries, own them a while (stamping them with their id and checking the stamp
     * is still theirs), retire and recycle them: an entry handed to two owners at once, or one
     * reset while owned, shows up as a changed stamp or a second owner in the registry. At the
     * end the counters add up to the calls each thread made: every take either reused or made an
     * entry, every recycle either kept or dropped one, and the pool holds recycled - taken.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldHandEachEntryToOneOwnerAtATimeUnderContention() throws Exception {
        final ReadIndexEntryPool pool = new ReadIndexEntryPool(16);
        final int threads = 4;
        final int rounds = 50_000;
        final Map<ReadIndexEntry, Integer> owners = new ConcurrentHashMap<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final LongAdder takes = new LongAdder();
        final LongAdder recycles = new LongAdder();
        final CyclicBarrier start = new CyclicBarrier(threads);
        final List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            final Thread worker = new Thread(() -> {
                try {
                    final SplittableRandom random = new SplittableRandom(id);
                    final Map<ReadIndexEntry, Long> mine = new IdentityHashMap<>();
                    start.await();
                    for (int i = 0; i < rounds && failure.get() == null; i++) {
                        if (mine.size() < 8 && (mine.isEmpty() || random.nextBoolean())) {
                            final long offset = ((long) id << 40) | i;
                            final ReadIndexEntry entry = pool.take(offset, id + 1, i, id);
                            takes.increment();
                            final Integer previous = owners.putIfAbsent(entry, id);
                            if (previous != null) {
                                throw new AssertionError("entry handed to thread " + id + " while thread " + previous + " owns it");
                            }
                            mine.put(entry, offset);
                        } else {
                            final ReadIndexEntry entry = mine.keySet().iterator().next();
                            final long offset = mine.remove(entry);
                            if (entry.offset() != offset || entry.length() != id + 1 || entry.generation() != id || entry.isRetired()) {
                                throw new AssertionError("entry changed while owned by thread " + id + ": " + entry);
                            }
                            owners.remove(entry, id);
                            entry.retire();
                            pool.recycle(entry);
                            recycles.increment();
                        }
                    }
                } catch (final Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (final Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertTrue(pool.size() <= pool.capacity());
        assertEquals(takes.sum(), pool.taken() + pool.made(), "every take reused or made an entry");
        assertEquals(recycles.sum(), pool.recycled() + pool.dropped(), "every recycle kept or dropped one");
        assertEquals(pool.recycled() - pool.taken(), pool.size(), "pooled = recycled - taken");
        assertTrue(pool.taken() > 0 && pool.recycled() > 0, "the pool was used: " + pool.taken());
    }
}
