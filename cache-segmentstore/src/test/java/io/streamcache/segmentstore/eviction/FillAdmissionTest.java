package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admission of data read back from the log ({@link ReaderAwarePolicy#admit}): kept when a
 * live reader is expected to read it or its learned re-read value beats what the last pass
 * evicted, refused when it was read behind every live reader of a segment nobody re-reads.
 * On a clock the test moves (no real time).
 */
class FillAdmissionTest {
    /** 64 KiB entries: 16 of them are the 1 MiB run after which an inferred reader counts as passing data. */
    private static final int B = 64 * 1024;
    private static final long IDLE = 1_000;

    private final AtomicLong clock = new AtomicLong();
    private final ReaderAwarePolicy policy = new ReaderAwarePolicy(0, ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT, IDLE, clock::get).admitFills(true);

    private static Map<String, ReadIndexEntry> entries(final int generation, final String segment, final int from, final int to) {
        final Map<String, ReadIndexEntry> map = new LinkedHashMap<>();
        for (int block = from; block < to; block++) {
            map.put(segment + ":" + block, new ReadIndexEntry((long) block * B, B, 1, generation));
        }
        return map;
    }

    /** A pass that moves its cut-off one step only: past the cheapest entries surveyed. */
    private static void oneStep(final EvictionPolicy policy, final int current, final Map<String, ReadIndexEntry> all) {
        policy.beginPass(current);
        all.forEach((key, entry) -> policy.survey(key.substring(0, key.indexOf(':')), entry));
        assertTrue(policy.advance());
    }

    private void read(final String segment, final int from, final int to) {
        for (int b = from; b < to; b++) {
            clock.incrementAndGet();
            policy.observeRead(segment, (long) b * B, (long) (b + 1) * B);
        }
    }

    private boolean admit(final String segment, final int block) {
        return policy.admit(segment, (long) block * B, (long) (block + 1) * B);
    }

    @Test
    void everythingIsKeptUntilAPassHasCutOffSomething() {
        read("s", 0, 8);
        assertTrue(admit("s", 2));
        assertTrue(admit("unknown", 0));
        assertEquals(2, policy.fillsKept());
        assertEquals(0, policy.fillsRefused());
    }

    @Test
    void aBlockBehindEveryLiveReaderIsRefusedAndOneAheadOfAReaderKept() {
        read("s", 0, 16);
        // The pass's first step cuts off passed data (blocks 0-15 of s, behind its reader).
        oneStep(policy, 2, entries(1, "s", 0, 32));
        assertFalse(admit("s", 3), "read behind the only reader, no re-reads known");
        assertTrue(admit("s", 20), "ahead of the reader: it will read it");
        assertTrue(admit("s", 16), "the block the reader reads next");
        assertEquals(1, policy.fillsRefused());
        assertEquals(2, policy.fillsKept());
    }

    @Test
    void aReaderBehindTheBlockKeepsItEvenIfAnotherPassedIt() {
        read("s", 0, 16);
        read("s", 100, 104); // a second reader, far ahead
        oneStep(policy, 2, entries(1, "s", 0, 32));
        assertTrue(admit("s", 40), "between the readers: the first one heads for it");
        assertFalse(admit("s", 10), "behind both");
    }

    @Test
    void aRegisteredReaderBehindTheBlockKeepsIt() {
        read("s", 0, 16);
        final ReaderAwarePolicy.Reader registered = policy.register("s", 4L * B);
        oneStep(policy, 2, entries(1, "s", 0, 32));
        assertTrue(admit("s", 8), "the registered reader at block 4 will read block 8");
        registered.close();
        assertFalse(admit("s", 8), "closed: nobody is expected");
    }

    @Test
    void aStalledReaderExpectsNothingAndWithoutALiveReaderThatPassedItARangeIsKept() {
        read("s", 20, 24); // reader A, at block 24
        read("s", 0, 4); // reader B, at block 4, one read a tick
        oneStep(policy, 2, entries(1, "s", 0, 32)); // cuts off blocks 0-3, passed by both
        assertTrue(admit("s", 10), "B heads for block 10");
        read("s", 24, 44); // A reads on for 20 ticks: B, late by more than 16 of its intervals, stalls
        assertFalse(admit("s", 10), "B stalled: A has passed block 10 and nobody is expected");
        clock.addAndGet(100); // A stalls too
        assertTrue(admit("s", 10), "no live reader passed it: not a catch-up behind readers, kept");
        clock.incrementAndGet();
        policy.observeRead("t", 0, B); // one read is no reader: a key/value read is kept
        assertTrue(admit("t", 5));
        assertTrue(admit("t", 0));
    }

    @Test
    void anOftenReReadSegmentKeepsWhatARarelyReReadOneRefuses() {
        // Re-read sessions open behind the tail of "hot" often, of "never" not at all: the
        // re-read frequency of each segment decides whether a fill behind every reader is kept.
        final ReaderAwarePolicy learning = new ReaderAwarePolicy(0, 64, IDLE, clock::get).admitFills(true);
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(1, "hot", 0, 16));
        all.putAll(entries(1, "never", 0, 16));
        for (int round = 0; round < 100; round++) {
            learning.beginPass(10 + round);
            all.forEach((key, entry) -> learning.survey(key.substring(0, key.indexOf(':')), entry));
            clock.incrementAndGet();
            try (ReaderAwarePolicy.Reader reader = learning.register("hot", 0)) {
                for (int block = 1; block <= 16; block++) {
                    clock.incrementAndGet();
                    reader.position((long) block * B);
                }
            }
        }
        // A reader reads "never" from its tail on (not a re-read): it has passed never's data.
        for (int b = 16; b < 40; b++) {
            clock.incrementAndGet();
            learning.observeRead("never", (long) b * B, (long) (b + 1) * B);
        }
        // The last pass cuts off at hot's data (all it surveyed): what "never" holds is worth less.
        learning.beginPass(200);
        entries(1, "hot", 0, 16).forEach((key, entry) -> learning.survey("hot", entry));
        assertTrue(learning.advance());
        assertTrue(learning.admit("hot", 3L * B, 4L * B), "hot is re-read: its data ties with the cut-off (the newest of a step survives)");
        assertFalse(learning.admit("never", 0, B), "never is not re-read: worth less than the cut-off, refused");
    }
}
