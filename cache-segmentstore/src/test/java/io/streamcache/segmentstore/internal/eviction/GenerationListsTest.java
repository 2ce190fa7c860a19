package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link GenerationLists} over toy segments (a list of entries each): walks oldest list first,
 * stops where the scan says, re-files walked segments at their oldest entry and drops emptied
 * ones; checked against a simple reference (the minimum generation of each segment) on random
 * segments.
 */
class GenerationListsTest {
    /** A toy segment: its entries (offset order), its link and its listing generation. */
    private static final class Seg {
        final String name;
        final List<ReadIndexEntry> entries = new ArrayList<>();
        Seg next;
        int listedGeneration;

        Seg(final String name) {
            this.name = name;
        }

        /** The oldest entry's generation, compared by difference (generations wrap); the segment has entries. */
        int oldest() {
            int oldest = entries.get(0).generation();
            for (final ReadIndexEntry e : entries) {
                if (e.generation() - oldest < 0) {
                    oldest = e.generation();
                }
            }
            return oldest;
        }
    }

    private static final GenerationLists.Members<Seg> MEMBERS = new GenerationLists.Members<>() {
        @Override
        public Seg next(final Seg segment) {
            return segment.next;
        }

        @Override
        public void next(final Seg segment, final Seg next) {
            segment.next = next;
        }

        @Override
        public int listedGeneration(final Seg segment) {
            return segment.listedGeneration;
        }

        @Override
        public long walk(final Seg segment, final EvictionScan scan, final int current) {
            segment.entries.removeIf(e -> !scan.isDone() && scan.select(segment.name, e));
            if (segment.entries.isEmpty()) {
                return GenerationLists.NONE;
            }
            segment.listedGeneration = GenerationLists.bounded(segment.oldest(), current);
            return segment.listedGeneration;
        }
    };

    /** Evicts entries older than {@code cutoff}; records the segments it saw and the generations it was asked about. */
    private static final class CutScan implements EvictionScan {
        final int cutoff;
        final List<String> seen = new ArrayList<>();
        final List<Integer> asked = new ArrayList<>();
        final int stopBefore;

        CutScan(final int cutoff, final int stopBefore) {
            this.cutoff = cutoff;
            this.stopBefore = stopBefore;
        }

        @Override
        public boolean select(final String segment, final ReadIndexEntry entry) {
            if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(segment)) {
                seen.add(segment);
            }
            return entry.generation() - cutoff < 0;
        }

        @Override
        public boolean beforeGeneration(final int generation) {
            asked.add(generation);
            return generation - stopBefore < 0;
        }

        @Override
        public boolean isDone() {
            return false;
        }
    }

    private static Seg seg(final String name, final int... generations) {
        final Seg s = new Seg(name);
        for (int i = 0; i < generations.length; i++) {
            s.entries.add(new ReadIndexEntry((long) i * 4096, 4096, 1, generations[i]));
        }
        s.listedGeneration = s.oldest();
        return s;
    }

    @Test
    void walksOldestListFirstStopsWhereTheScanSaysAndRefilesWalkedSegments() {
        final GenerationLists<Seg> lists = new GenerationLists<>(MEMBERS);
        final Seg a = seg("a", 5, 9);
        final Seg b = seg("b", 2, 3);
        final Seg c = seg("c", 7);
        final Seg d = seg("d", 12);
        for (final Seg s : List.of(a, b, c, d)) {
            lists.push(s);
        }
        // Evict what is older than 6; stop before the lists of generation 10 and later.
        final CutScan scan = new CutScan(6, 10);
        lists.scan(scan, 20);
        assertEquals(List.of("b", "a", "c"), scan.seen, "oldest list first, d (12) not walked");
        assertEquals(List.of(2, 5, 7, 12), scan.asked);
        assertTrue(b.entries.isEmpty(), "b emptied: unlisted");
        assertEquals(List.of(9), a.entries.stream().map(ReadIndexEntry::generation).toList());
        assertEquals(3, lists.size(), "a, c, d stay listed");
        // a is now filed at 9: a walk evicting everything below 10 sees c (7) before a (9).
        final CutScan again = new CutScan(10, 100);
        lists.scan(again, 20);
        assertEquals(List.of("c", "a", "d"), again.seen);
        assertEquals(List.of(7, 9, 12), again.asked);
        assertEquals(1, lists.size(), "only d (12) keeps an entry");
    }

    @Test
    void randomSegmentsAreWalkedInTheOrderOfTheirOldestEntry() {
        final SplittableRandom random = new SplittableRandom(42);
        for (int trial = 0; trial < 50; trial++) {
            final GenerationLists<Seg> lists = new GenerationLists<>(MEMBERS);
            final List<Seg> all = new ArrayList<>();
            for (int i = 0; i < 1 + random.nextInt(30); i++) {
                final int[] generations = new int[1 + random.nextInt(5)];
                for (int g = 0; g < generations.length; g++) {
                    generations[g] = random.nextInt(40);
                }
                final Seg s = seg("s" + i, generations);
                all.add(s);
                lists.push(s);
            }
            final int cutoff = random.nextInt(45);
            final CutScan scan = new CutScan(cutoff, Integer.MAX_VALUE);
            final List<Integer> oldestBefore = new ArrayList<>();
            for (final Seg s : all) {
                oldestBefore.add(s.oldest());
            }
            lists.scan(scan, 50);
            // Reference: every segment walked, in non-decreasing order of its oldest entry.
            assertEquals(all.size(), scan.seen.size());
            int previous = Integer.MIN_VALUE;
            for (final String name : scan.seen) {
                final int oldest = oldestBefore.get(Integer.parseInt(name.substring(1)));
                assertTrue(oldest >= previous, "walk order by oldest entry: " + scan.seen);
                previous = oldest;
            }
            int left = 0;
            for (final Seg s : all) {
                assertTrue(s.entries.stream().allMatch(e -> e.generation() >= cutoff), "everything older than the cut-off evicted");
                left += s.entries.isEmpty() ? 0 : 1;
            }
            assertEquals(left, lists.size(), "segments with entries stay listed, emptied ones are dropped");
        }
    }

    /**
     * Many passes over segments that gain entries between them (listed and pushed on their first,
     * as the data path does) with generations that wrap past {@code Integer.MAX_VALUE}, each pass
     * cutting at a random age and stopping before a random generation: every pass walks the
     * listed segments in non-decreasing order of their listing generation, each at most once and
     * every one listed before the stop, and afterwards the lists hold exactly the segments with
     * entries, in as many lists as they have distinct listing generations, none listed after its
     * oldest entry. The lists' arrays grow (hundreds of generations) and lists empty and merge.
     */
    @Test
    void manyPassesKeepTheListsExactAcrossTheWrapOfGenerations() {
        final SplittableRandom random = new SplittableRandom(7);
        final GenerationLists<Seg> lists = new GenerationLists<>(MEMBERS);
        final List<Seg> all = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            all.add(new Seg("s" + i));
        }
        int current = Integer.MAX_VALUE - 150;
        for (int pass = 0; pass < 400; pass++) {
            current++;
            for (int k = random.nextInt(40); k > 0; k--) {
                final Seg s = all.get(random.nextInt(all.size()));
                final int generation = current - random.nextInt(3);
                final boolean first = s.entries.isEmpty();
                s.entries.add(new ReadIndexEntry((long) s.entries.size() * 4096 + (long) pass * (1 << 20), 4096, 1,
                    first ? generation : current));
                if (first) {
                    s.listedGeneration = generation;
                    lists.push(s);
                }
            }
            final java.util.Map<String, Integer> listedBefore = new java.util.HashMap<>();
            for (final Seg s : all) {
                listedBefore.put(s.name, s.listedGeneration);
            }
            final int cutoff = current - random.nextInt(300);
            final int stopBefore = random.nextInt(4) == 0 ? current + 1 : current - random.nextInt(300);
            final List<Seg> listedNow = all.stream().filter(s -> !s.entries.isEmpty()).toList();
            final CutScan scan = new CutScan(cutoff, stopBefore);
            lists.scan(scan, current);
            assertEquals(scan.seen.size(), new java.util.HashSet<>(scan.seen).size(), "each walked once: " + scan.seen);
            for (int i = 1; i < scan.seen.size(); i++) {
                assertTrue(listedBefore.get(scan.seen.get(i)) - listedBefore.get(scan.seen.get(i - 1)) >= 0,
                    "pass " + pass + ": oldest list first");
            }
            for (final Seg s : listedNow) {
                if (listedBefore.get(s.name) - stopBefore < 0) {
                    assertTrue(scan.seen.contains(s.name), "pass " + pass + ": " + s.name + " listed before the stop, walked");
                }
            }
            final List<Seg> withEntries = all.stream().filter(s -> !s.entries.isEmpty()).toList();
            assertEquals(withEntries.size(), lists.size(), "pass " + pass + ": the segments with entries are listed");
            assertEquals(withEntries.stream().map(s -> s.listedGeneration).distinct().count(), lists.listCount(),
                "pass " + pass + ": one list per listing generation, none empty");
            for (final Seg s : withEntries) {
                assertTrue(s.oldest() - s.listedGeneration >= 0, s.name + " listed no later than its oldest entry");
            }
        }
    }
}
