package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Readers inferred from reads and protection by time: readers appear, move, go idle, expire and
 * close, on a clock the test moves (no real time anywhere).
 */
class ReaderTrackingTest {
    private static final int B = 4096;
    private static final long IDLE = 1_000;

    private final AtomicLong clock = new AtomicLong();
    private final ReaderAwarePolicy policy = new ReaderAwarePolicy(0, ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT, IDLE, clock::get);

    private static Map<String, ReadIndexEntry> entries(final int generation, final String segment, final int... blocks) {
        final Map<String, ReadIndexEntry> map = new LinkedHashMap<>();
        for (final int block : blocks) {
            map.put(segment + ":" + block, new ReadIndexEntry((long) block * B, B, 1, generation));
        }
        return map;
    }

    private static List<String> evictionOrder(final EvictionPolicy policy, final int current, final Map<String, ReadIndexEntry> all) {
        policy.beginPass(current);
        all.forEach((key, entry) -> policy.survey(key.substring(0, key.indexOf(':')), entry));
        final Map<String, ReadIndexEntry> left = new LinkedHashMap<>(all);
        final List<String> order = new ArrayList<>();
        while (policy.advance()) {
            final List<String> step = new ArrayList<>();
            left.forEach((key, entry) -> {
                if (policy.select(key.substring(0, key.indexOf(':')), entry)) {
                    step.add(key);
                }
            });
            step.forEach(left::remove);
            order.addAll(step);
        }
        return order;
    }

    /** Reads blocks [from, to) of a segment one block per clock tick. */
    private void readBlocks(final String segment, final int from, final int to, final long ticksPerBlock) {
        for (int b = from; b < to; b++) {
            clock.addAndGet(ticksPerBlock);
            policy.observeRead(segment, (long) b * B, (long) (b + 1) * B);
        }
    }

    @Test
    void sequentialReadsAreOneReaderAndAJumpIsAnother() {
        readBlocks("s", 0, 4, 1);
        assertEquals(1, policy.trackedReaderCount("s"));
        readBlocks("s", 100, 102, 1);
        assertEquals(2, policy.trackedReaderCount("s"));
        // Reading again from inside the last read (a retry, a probe then the full read) continues it.
        policy.observeRead("s", 101L * B, 103L * B);
        policy.observeRead("s", 3L * B + 10, 5L * B);
        assertEquals(2, policy.trackedReaderCount("s"));
        // An empty read at a reader's position (a tail reader polling) keeps it, and moves nothing.
        policy.observeRead("s", 5L * B, 5L * B);
        assertEquals(2, policy.trackedReaderCount("s"));
        assertEquals(0, policy.trackedReaderCount("other"));
    }

    @Test
    void anInferredReaderProtectsTheDataAheadOfItLikeARegisteredOne() {
        readBlocks("s", 0, 3, 1);
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "s", 0, 1, 2, 3, 4, 6));
        all.putAll(entries(1, "u", 7));
        all.putAll(entries(2, "u", 8));
        assertEquals(List.of("s:0", "s:1", "s:2", "u:7", "u:8", "s:6", "s:4", "s:3"), evictionOrder(policy, 10, all));
    }

    @Test
    void beyondEightReadersPerSegmentTheLeastRecentlyReadIsReplaced() {
        for (int r = 0; r < 9; r++) {
            readBlocks("s", r * 1000, r * 1000 + 2, 1);
        }
        assertEquals(8, policy.trackedReaderCount("s"));
        // The first reader (now at block 2) was replaced: reading on starts a new reader, which
        // replaces the least recently read one and protects once it has read twice.
        readBlocks("s", 2, 3, 1);
        assertEquals(7, policy.trackedReaderCount("s"));
        readBlocks("s", 3, 4, 1);
        assertEquals(8, policy.trackedReaderCount("s"));
    }

    @Test
    void aFastReaderProtectsDataAtTheSameDistanceLongerThanASlowOne() {
        // Over 310 ticks (more than two speed windows of IDLE / 8), "fast" reads a block a tick,
        // "slow" a block every 10 ticks.
        for (int i = 0; i < 310; i++) {
            clock.addAndGet(1);
            policy.observeRead("fast", (long) i * B, (i + 1L) * B);
            if (i % 10 == 0) {
                policy.observeRead("slow", (long) (i / 10) * B, (i / 10 + 1L) * B);
            }
        }
        // fast is at block 310, slow at block 31: the entries 8 blocks ahead of each, and one
        // 80 blocks ahead of fast (as far in time as slow's).
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "fast", 318, 500));
        all.putAll(entries(5, "slow", 39));
        assertEquals(List.of("fast:500", "slow:39", "fast:318"), evictionOrder(policy, 10, all));
    }

    @Test
    void anInferredReaderThatStopsStallsAfterSixteenOfItsIntervalsAndResumesWhenItReadsOn() {
        readBlocks("s", 0, 10, 10); // a read every 10 ticks
        clock.addAndGet(160);
        assertEquals(1, policy.trackedReaderCount("s"), "16 intervals late: not stalled yet");
        clock.addAndGet(1);
        assertEquals(0, policy.trackedReaderCount("s"), "more than 16 intervals late: stalled");
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "s", 10, 11));
        all.putAll(entries(8, "u", 7));
        assertEquals(List.of("s:10", "s:11", "u:7"), evictionOrder(policy, 10, all), "a stalled reader protects nothing");
        readBlocks("s", 10, 11, 10);
        assertEquals(1, policy.trackedReaderCount("s"), "reading on from where it stopped continues it");
        final Map<String, ReadIndexEntry> again = new LinkedHashMap<>();
        again.putAll(entries(5, "s", 11, 12));
        again.putAll(entries(8, "u", 7));
        assertEquals(List.of("u:7", "s:12", "s:11"), evictionOrder(policy, 10, again));
    }

    @Test
    void oneReadIsNoReaderAndIdleReadersAreGone() {
        // One read (a key/value access, a probe) protects nothing: a reader is one that reads on.
        readBlocks("s", 2, 3, 1);
        assertEquals(0, policy.trackedReaderCount("s"));
        final Map<String, ReadIndexEntry> single = new LinkedHashMap<>();
        single.putAll(entries(5, "s", 3, 4));
        single.putAll(entries(8, "u", 7));
        assertEquals(List.of("s:3", "s:4", "u:7"), evictionOrder(policy, 10, single));
        readBlocks("s", 3, 4, 1);
        assertEquals(1, policy.trackedReaderCount("s"), "the second sequential read makes it a reader");
        // A steady reader idle past the timeout is gone too, and protects nothing.
        readBlocks("t", 0, 3, 100);
        clock.addAndGet(IDLE + 1);
        assertEquals(0, policy.trackedReaderCount("t"));
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "t", 3, 4));
        all.putAll(entries(8, "u", 7));
        assertEquals(List.of("t:3", "t:4", "u:7"), evictionOrder(policy, 10, all));
    }

    @Test
    void aRegisteredReaderThatStopsMovingStallsButIsDroppedOnlyAtTheTimeout() {
        final ReaderAwarePolicy.Reader reader = policy.register("s", 0);
        for (int b = 1; b <= 4; b++) {
            clock.addAndGet(10);
            reader.position((long) b * B);
        }
        clock.addAndGet(200); // 20 intervals: stalled
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "s", 4, 5));
        all.putAll(entries(8, "u", 7));
        assertEquals(List.of("s:4", "s:5", "u:7"), evictionOrder(policy, 10, all));
        assertFalse(reader.isClosed(), "stalled, not idle past the timeout");
        clock.addAndGet(IDLE);
        policy.beginPass(11);
        assertTrue(reader.isClosed());
    }

    @Test
    void aRegisteredReaderThatMovesStaysAndOneThatGoesIdleIsDropped() {
        final ReaderAwarePolicy.Reader moving = policy.register("s", 0);
        final ReaderAwarePolicy.Reader idle = policy.register("t", 0);
        for (int b = 1; b <= 10; b++) {
            clock.addAndGet(IDLE / 4);
            moving.position((long) b * B);
        }
        policy.beginPass(1);
        assertFalse(moving.isClosed());
        assertTrue(idle.isClosed(), "a reader that never moved for the idle timeout is closed by the pass");
        assertEquals(1, policy.readerCount("s"));
        assertEquals(0, policy.readerCount("t"));
        assertEquals(1, policy.idleReadersDropped());
        // The dropped reader's data is no longer protected: t's block ages like unread data.
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "s", 11));
        all.putAll(entries(2, "t", 1));
        assertEquals(List.of("t:1", "s:11"), evictionOrder(policy, 10, all));
    }

    @Test
    void aReaderThatClosesReleasesEverythingAtOnce() {
        final ReaderAwarePolicy.Reader reader = policy.register("s", 0);
        final Map<String, ReadIndexEntry> all = new LinkedHashMap<>();
        all.putAll(entries(5, "s", 1, 2));
        all.putAll(entries(1, "u", 7));
        assertEquals(List.of("u:7", "s:2", "s:1"), evictionOrder(policy, 10, all));
        reader.close();
        final Map<String, ReadIndexEntry> again = new LinkedHashMap<>();
        again.putAll(entries(5, "s", 1, 2));
        again.putAll(entries(6, "u", 7));
        assertEquals(List.of("s:1", "s:2", "u:7"), evictionOrder(policy, 10, again));
    }

    @Test
    void aDeletedSegmentForgetsItsInferredReaders() {
        readBlocks("s", 0, 3, 1);
        policy.forget("s");
        assertEquals(0, policy.trackedReaderCount("s"));
    }
}
