package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.GenerationPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link OneTierPass} over a toy source (segments of entries in memory): frees what is wanted,
 * counts blocks by the block length, and under the generation policy takes its first step from
 * the oldest segments only, falling back to full scans when that is not enough.
 */
class OneTierPassTest {
    private static final int BLOCK = 1024;

    /** Segments of entries; counts the full scans and the oldest-first walks it was asked for. */
    private static final class ToySource implements EvictionSource {
        final Map<String, List<ReadIndexEntry>> segments = new LinkedHashMap<>();
        final boolean oldestFirst;
        int scans;
        int oldestWalks;

        ToySource(final boolean oldestFirst) {
            this.oldestFirst = oldestFirst;
        }

        void add(final String segment, final int generation, final int length) {
            final List<ReadIndexEntry> list = segments.computeIfAbsent(segment, s -> new ArrayList<>());
            list.add(new ReadIndexEntry((long) list.size() * length, length, 1, generation));
        }

        int entries() {
            return segments.values().stream().mapToInt(List::size).sum();
        }

        @Override
        public int scan(final EvictionScan scan) {
            scans++;
            for (final Map.Entry<String, List<ReadIndexEntry>> e : segments.entrySet()) {
                e.getValue().removeIf(entry -> !scan.isDone() && scan.select(e.getKey(), entry));
            }
            return 0;
        }

        @Override
        public boolean walksOldestFirst() {
            return oldestFirst;
        }

        @Override
        public int scanOldestFirst(final EvictionScan scan, final int current) {
            oldestWalks++;
            final List<String> order = new ArrayList<>(segments.keySet());
            order.removeIf(s -> segments.get(s).isEmpty());
            final Comparator<String> byOldest = Comparator.comparingInt(
                s -> segments.get(s).stream().mapToInt(ReadIndexEntry::generation).min().orElse(Integer.MAX_VALUE));
            order.sort(byOldest);
            Integer asked = null;
            for (final String s : order) {
                final int oldest = segments.get(s).stream().mapToInt(ReadIndexEntry::generation).min().orElseThrow();
                if (scan.isDone()) {
                    break;
                }
                if ((asked == null || asked != oldest) && !scan.beforeGeneration(oldest)) {
                    break;
                }
                asked = oldest;
                segments.get(s).removeIf(entry -> !scan.isDone() && scan.select(s, entry));
            }
            return 0;
        }
    }

    @Test
    void theGenerationPolicysFirstStepWalksOnlyTheOldestSegments() {
        final ToySource source = new ToySource(true);
        for (int s = 0; s < 10; s++) {
            for (int i = 0; i < 4; i++) {
                source.add("s" + s, s, BLOCK); // segment s holds entries of generation s
            }
        }
        final OneTierPass pass = new OneTierPass(new GenerationPolicy(), BLOCK);
        final long freed = pass.run(List.of(source), 20, 8);
        assertEquals(8, freed);
        assertEquals(8, pass.evictedEntries());
        assertEquals(8L * BLOCK, pass.evictedBytes());
        assertTrue(source.segments.get("s0").isEmpty() && source.segments.get("s1").isEmpty(), "the two oldest segments went");
        assertEquals(4, source.segments.get("s2").size());
        assertEquals(0, source.scans, "no full scan: the oldest-first step was enough");
        assertEquals(2, source.oldestWalks, "one walk to survey, one to evict");
    }

    @Test
    void anyPolicySurveysEverySourceAndEvictsStepByStepUntilEnoughIsFreed() {
        final ToySource a = new ToySource(false);
        final ToySource b = new ToySource(false);
        for (int i = 0; i < 6; i++) {
            a.add("a", i, 3 * BLOCK / 2); // 2 blocks each
            b.add("b", i + 6, BLOCK);
        }
        final OneTierPass pass = new OneTierPass(new ReaderAwarePolicy(), BLOCK);
        final long freed = pass.run(List.of(a, b), 20, 5);
        assertTrue(freed >= 5, "freed " + freed);
        assertEquals(12 - (a.entries() + b.entries()), pass.evictedEntries());
        assertTrue(a.scans >= 2 && b.scans >= 1, "a survey of both sources, then at least one evicting scan");
        // Without readers, the oldest (segment a's) entries go first.
        assertEquals(6, b.entries());
    }

    @Test
    void rejectsABadBlockLength() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new OneTierPass(new GenerationPolicy(), 0));
    }
}
