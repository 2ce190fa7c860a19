package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.EvictionScan;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An eviction scan that relocates entries while another thread queues for the segment's lock
 * does bounded work: it stops after that relocation, leaves the segment to the waiting thread
 * and reports it busy, in both walks (every segment, and oldest generation first), rather than
 * yielding and taking the lock back to go on relocating (which, run on the log's completion
 * thread through {@code makeRoom}, spun that thread against readers and appenders).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EvictionScanYieldsNotTest {
    private static final int ENTRY = 200;
    private static final int ENTRIES = 20;
    private static final int ROUNDS = 40;

    private BlockCache cache;
    private SegmentStore store;
    private EvictionSource source;

    @BeforeEach
    void setUp() {
        cache = TestSegments.tieredCache(4, 16);
        store = TestSegments.store(cache, ENTRY);
        source = store.evictionSourceForTests();
        store.create("s");
        for (int i = 0; i < ENTRIES; i++) {
            store.append("s", buffer(1, (long) i * ENTRY, ENTRY));
        }
    }

    @AfterEach
    void tearDown() {
        store.close();
        cache.close();
    }

    /**
     * Moves every entry it is offered to the other tier; at its first relocation a thread queues
     * for the segment's lock (and holds it, once it has it, until the round ends).
     */
    private final class Relocating implements EvictionScan {
        final Segment segment = store.segmentOrNull("s");
        final CountDownLatch roundOver = new CountDownLatch(1);
        int relocations;
        Thread waiter;

        @Override
        public boolean select(final String name, final ReadIndexEntry entry) {
            return false;
        }

        @Override
        public boolean isDone() {
            return false;
        }

        @Override
        public int action(final String name, final ReadIndexEntry entry) {
            return 1 - cache.tierOf(entry.address());
        }

        @Override
        public void relocated(final String name, final ReadIndexEntry entry, final int fromTier) {
            relocations++;
            if (waiter == null) {
                waiter = new Thread(() -> {
                    segment.lock();
                    try {
                        roundOver.await();
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        segment.unlock();
                    }
                });
                waiter.start();
                while (!segment.hasQueuedThreads()) {
                    Thread.onSpinWait();
                }
            }
        }
    }

    @Test
    void shouldLeaveASegmentAnotherThreadWaitsForAfterOneRelocation() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            final Relocating scan = new Relocating();
            final int busy;
            try {
                busy = round % 2 == 0 ? source.scan(scan) : source.scanOldestFirst(scan, store.cacheManager().generation());
            } finally {
                scan.roundOver.countDown();
            }
            scan.waiter.join();
            assertEquals(1, scan.relocations, "round " + round + ": one relocation, then the waiting thread goes first");
            assertEquals(1, busy, "round " + round + ": the segment is reported busy");
        }
        // The scans moved entries, never lost them.
        try (ReadResult result = store.read("s", 0, ENTRIES * ENTRY)) {
            assertTrue(result.length() > 0);
            final byte[] bytes = TestSegments.bytes(result);
            for (int i = 0; i < bytes.length; i++) {
                assertEquals(TestSegments.at(1, i), bytes[i], "byte " + i);
            }
        }
    }
}
