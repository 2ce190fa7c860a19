package io.streamcache.segmentstore.internal.compaction;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationMemory;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class CompactionPlannerTest {
    private static final long FILE = 1000;

    @Test
    void shouldDoNothingWithinLivePlusSlack() {
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        usage.add(1, 600);
        usage.add(2, 100);
        // 3 files = 3000 <= 700 + 2300
        assertNull(CompactionPlanner.choose(new long[] {1, 2, 3}, 3, FILE, 2300, usage));
    }

    @Test
    void shouldPickTheFileWithTheLeastLiveBytesBeforeTheCurrentOne() {
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        usage.add(1, 600);
        usage.add(2, 100);
        usage.add(4, 10);
        usage.add(5, 0);
        final CompactionPlanner.Plan plan = CompactionPlanner.choose(new long[] {1, 2, 4, 5}, 5, FILE, 1000, usage);
        assertEquals(new CompactionPlanner.Plan(4, 10, 4000, 710), plan);
    }

    @Test
    void shouldPreferTheOldestOnATieAndAnEmptyFileFirst() {
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        usage.add(3, 50);
        usage.add(2, 50);
        assertEquals(2, CompactionPlanner.choose(new long[] {2, 3, 4}, 4, FILE, 0, usage).fileNumber());
        assertEquals(1, CompactionPlanner.choose(new long[] {1, 2, 3, 4}, 4, FILE, 0, usage).fileNumber());
    }

    @Test
    void shouldNotCompactMostlyLiveFilesNorTheCurrentOne() {
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        usage.add(1, 800);
        usage.add(2, 760);
        assertNull(CompactionPlanner.choose(new long[] {1, 2, 3}, 3, FILE, 0, usage), "3/4 live or more: not worth a copy");
        assertNull(CompactionPlanner.choose(new long[] {3}, 3, FILE, 0, new CompactionPlanner.Usage()), "only the current file");
    }

    @Test
    void shouldCountOnlyBytesAtOrAfterTheStartOffset() {
        final LocationIndex index = LocationIndex.create(0, new LocationMemory());
        index.add(0, 100, 1, 4096);
        index.add(100, 100, 2, 4096);
        index.truncate(150);
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        usage.add(index);
        assertEquals(0, usage.live(1));
        assertEquals(50, usage.live(2));
        assertEquals(50, usage.liveTotal());
    }
}
