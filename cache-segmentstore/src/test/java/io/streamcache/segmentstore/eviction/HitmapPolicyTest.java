package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HitmapPolicyTest {
    private static final int B = 4096;

    private static HitmapPolicy small() {
        // 4 levels of 4,096 to 32,768 bits: few false positives for the handful of keys used here.
        return new HitmapPolicy(4, 4096, 2, 1024, Long.MAX_VALUE);
    }

    private static ReadIndexEntry entry(final int block, final int generation) {
        return new ReadIndexEntry((long) block * B, B, 1, generation);
    }

    private static void use(final HitmapPolicy policy, final ReadIndexEntry entry, final int times) {
        for (int i = 0; i < times; i++) {
            policy.recordUse("s", entry, entry.generation());
        }
    }

    @Test
    void shouldCountUsesUpToTheNumberOfLevels() {
        final HitmapPolicy policy = small();
        for (int uses = 0; uses <= 6; uses++) {
            final ReadIndexEntry e = entry(100 + uses, 1);
            use(policy, e, uses);
        }
        assertEquals(21, policy.drain());
        for (int uses = 0; uses <= 6; uses++) {
            assertEquals(Math.min(uses, 4), policy.zone("s", (long) (100 + uses) * B), "uses=" + uses);
        }
        assertEquals(0, policy.zone("other", 100L * B), "another segment's key is another key");
    }

    @Test
    void rollingCompactionShouldDropEveryCountByOne() {
        final HitmapPolicy policy = small();
        for (int uses = 0; uses <= 4; uses++) {
            use(policy, entry(uses, 1), uses);
        }
        policy.drain();
        policy.compact();
        for (int uses = 0; uses <= 4; uses++) {
            assertEquals(Math.max(0, uses - 1), policy.zone("s", (long) uses * B), "uses=" + uses);
        }
        policy.compact();
        policy.compact();
        policy.compact();
        for (int uses = 0; uses <= 4; uses++) {
            assertEquals(0, policy.zone("s", (long) uses * B), "uses=" + uses);
        }
        assertEquals(4, policy.compactions());
        // The levels still count after the folds.
        use(policy, entry(9, 1), 3);
        policy.drain();
        assertEquals(3, policy.zone("s", 9L * B));
    }

    @Test
    void shouldCompactEveryPeriodOfAppliedUses() {
        final HitmapPolicy policy = new HitmapPolicy(2, 1024, 2, 1024, 10);
        final ReadIndexEntry e = entry(1, 1);
        use(policy, e, 2);
        policy.drain();
        assertEquals(2, policy.zone("s", B));
        use(policy, entry(2, 1), 8);
        policy.drain();
        assertEquals(1, policy.compactions());
        assertEquals(1, policy.zone("s", B), "one compaction after 10 applied uses");
        assertEquals(10, policy.applied());
    }

    @Test
    void shouldEvictTheColdestZoneFirstAndTheOldestWithinAZone() {
        final HitmapPolicy policy = small();
        final ReadIndexEntry hot = entry(0, 5);
        final ReadIndexEntry warmOld = entry(1, 2);
        final ReadIndexEntry warmNew = entry(2, 4);
        final ReadIndexEntry cold = entry(3, 8);
        use(policy, hot, 3);
        use(policy, warmOld, 2);
        use(policy, warmNew, 2);
        final List<ReadIndexEntry> all = List.of(hot, warmOld, warmNew, cold);
        policy.beginPass(10);
        all.forEach(e -> policy.survey("s", e));
        final List<ReadIndexEntry> order = new ArrayList<>();
        while (policy.advance()) {
            for (final ReadIndexEntry e : all) {
                if (!order.contains(e) && policy.select("s", e)) {
                    order.add(e);
                }
            }
        }
        assertEquals(List.of(cold, warmOld, warmNew, hot), order);
    }

    @Test
    void shouldNeverSelectEntriesUsedInTheCurrentGeneration() {
        final HitmapPolicy policy = small();
        final ReadIndexEntry now = entry(0, 10);
        policy.beginPass(10);
        policy.survey("s", now);
        assertFalse(policy.advance());
        assertFalse(policy.select("s", now));
    }

    @Test
    void shouldDropAndCountUsesWhenTheQueueIsFull() {
        final HitmapPolicy policy = new HitmapPolicy(2, 1024, 2, 8, Long.MAX_VALUE);
        final ReadIndexEntry e = entry(0, 1);
        use(policy, e, 20);
        assertEquals(12, policy.drops(), "a queue of 8 slots keeps 8 of 20 uses");
        assertEquals(8, policy.drain());
        use(policy, e, 3);
        assertEquals(3, policy.drain(), "drained slots are reused");
        assertEquals(12, policy.drops());
    }

    @Test
    void recordUseShouldNotAllocate() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final HitmapPolicy policy = new HitmapPolicy(4, 1 << 16, 2, 1 << 12, 50_000);
        final ReadIndexEntry[] entries = new ReadIndexEntry[256];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = entry(i, 0);
        }
        final int calls = 1_000_000;
        for (int i = 0; i < calls; i++) {
            policy.recordUse("segment", entries[i & 255], i);
            if ((i & 1023) == 0) {
                policy.drain();
            }
        }
        policy.drain();
        final long tid = Thread.currentThread().getId();
        final long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < calls; i++) {
            policy.recordUse("segment", entries[i & 255], i);
            if ((i & 1023) == 0) {
                policy.drain();
            }
        }
        final long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertTrue(allocated < 4096, "allocated " + allocated + " bytes over " + calls + " uses and their drains");
        assertEquals(0, policy.drops());
    }

    @Test
    void usesFromManyThreadsShouldAllBeAppliedOrCountedWhileTheUpdaterAndPassesRun() throws Exception {
        final HitmapPolicy policy = new HitmapPolicy(4, 1 << 14, 2, 256, 5_000);
        policy.startUpdater("hitmap-test-updater", TimeUnit.MICROSECONDS.toNanos(50));
        final int threads = 4;
        final int usesPerThread = 200_000;
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        final CountDownLatch start = new CountDownLatch(1);
        final List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final String segment = "s" + t;
            futures.add(pool.submit(() -> {
                final ReadIndexEntry[] own = new ReadIndexEntry[64];
                for (int i = 0; i < own.length; i++) {
                    own[i] = entry(i, 0);
                }
                start.await();
                for (int i = 0; i < usesPerThread; i++) {
                    // Each thread's entries stand for one segment, used under that segment's lock:
                    // one thread per segment here.
                    policy.recordUse(segment, own[i & 63], 1);
                }
                return null;
            }));
        }
        final List<ReadIndexEntry> surveyed = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            surveyed.add(entry(i, 1));
        }
        start.countDown();
        int passes = 0;
        boolean running = true;
        while (running) {
            policy.beginPass(2 + passes);
            surveyed.forEach(e -> policy.survey("passes", e));
            int selected = 0;
            while (policy.advance()) {
                for (final ReadIndexEntry e : surveyed) {
                    if (policy.select("passes", e)) {
                        selected++;
                    }
                }
            }
            assertTrue(selected >= surveyed.size(), "the last step selects every surveyed entry");
            passes++;
            running = false;
            for (final Future<?> f : futures) {
                running |= !f.isDone();
            }
        }
        for (final Future<?> f : futures) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        policy.close();
        assertEquals((long) threads * usesPerThread, policy.applied() + policy.drops());
        // The first 256 uses find the free pool full, so they are never dropped; how many more
        // are applied depends on scheduling.
        assertTrue(policy.applied() >= 256, "applied=" + policy.applied());
        assertEquals(policy.applied() / 5_000, policy.compactions(), "a compaction every 5,000 applied uses");
        assertTrue(passes > 0);
    }

    @Test
    void shouldRejectBadSettings() {
        assertThrows(IllegalArgumentException.class, () -> new HitmapPolicy(0, 1024, 2, 16, 10));
        assertThrows(IllegalArgumentException.class, () -> new HitmapPolicy(4, 1000, 2, 16, 10));
        assertThrows(IllegalArgumentException.class, () -> new HitmapPolicy(4, 1024, 0, 16, 10));
        assertThrows(IllegalArgumentException.class, () -> new HitmapPolicy(4, 1024, 2, 0, 10));
        assertThrows(IllegalArgumentException.class, () -> new HitmapPolicy(4, 1024, 2, 16, 0));
        assertThrows(IllegalArgumentException.class, () -> HitmapPolicy.forEntries(0));
        assertEquals(HitmapPolicy.LEVELS_DEFAULT, HitmapPolicy.forEntries(1000).levels());
    }
}
