package io.streamcache.segmentstore.eviction;

import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GenerationPolicyTest {
    private static ReadIndexEntry entry(final int generation) {
        return new ReadIndexEntry(0, 1, 1, generation);
    }

    /** Runs a pass over entries of these generations and returns, per step, the generations selected. */
    private static List<List<Integer>> steps(final GenerationPolicy policy, final int current, final int... generations) {
        policy.beginPass(current);
        for (final int generation : generations) {
            policy.survey("s", entry(generation));
        }
        final List<List<Integer>> steps = new ArrayList<>();
        while (policy.advance()) {
            final List<Integer> selected = new ArrayList<>();
            for (final int generation : generations) {
                if (policy.select("s", entry(generation))) {
                    selected.add(generation);
                }
            }
            steps.add(selected);
        }
        return steps;
    }

    @Test
    void shouldMoveTheCutoffOneSurveyedGenerationAtATimeOldestFirst() {
        final GenerationPolicy policy = new GenerationPolicy();
        assertEquals(List.of(List.of(2, 2), List.of(5, 2, 2), List.of(5, 2, 7, 2)),
            steps(policy, 10, 5, 2, 7, 2));
    }

    /**
     * Given the bytes the pass wants, the first cut-off is the newest generation at which the
     * bytes at least as old add up to them; later steps go one generation at a time.
     */
    @Test
    void shouldPutTheFirstCutoffWhereTheWantedBytesLieBehindIt() {
        final GenerationPolicy policy = new GenerationPolicy();
        // generations 2 (100 B + 100 B), 5 (300 B), 7 (50 B), 8 (1000 B); current 10
        final int[] generations = {5, 2, 7, 2, 8};
        final int[] lengths = {300, 100, 50, 100, 1000};
        final List<Integer> cutoffs = new ArrayList<>();
        for (final long wanted : new long[] {150, 200, 201, 500, 550, 551, 100_000}) {
            policy.beginPass(10, wanted);
            for (int i = 0; i < generations.length; i++) {
                policy.survey("s", new ReadIndexEntry(0, lengths[i], 1, generations[i]));
            }
            assertTrue(policy.advance());
            cutoffs.add(policy.cutoffGeneration());
        }
        assertEquals(List.of(2, 2, 5, 5, 7, 8, 8), cutoffs);
        // Later steps one generation at a time, from the first cut-off.
        policy.beginPass(10, 201);
        for (int i = 0; i < generations.length; i++) {
            policy.survey("s", new ReadIndexEntry(0, lengths[i], 1, generations[i]));
        }
        final List<Integer> steps = new ArrayList<>();
        while (policy.advance()) {
            steps.add(policy.cutoffGeneration());
        }
        assertEquals(List.of(5, 7, 8), steps);
        // Without an amount (the one-argument beginPass), the first step is the oldest generation.
        assertEquals(List.of(List.of(2, 2), List.of(5, 2, 2), List.of(5, 2, 7, 2)), steps(policy, 10, 5, 2, 7, 2));
    }

    @Test
    void shouldNeverSelectEntriesOfTheCurrentGeneration() {
        final GenerationPolicy policy = new GenerationPolicy();
        assertEquals(List.of(List.of(9)), steps(policy, 10, 10, 9, 10));
        policy.beginPass(10);
        policy.survey("s", entry(10));
        assertFalse(policy.advance(), "nothing older than the current generation: no step");
    }

    @Test
    void shouldForgetThePreviousPass() {
        final GenerationPolicy policy = new GenerationPolicy();
        steps(policy, 10, 1, 2, 3);
        assertEquals(List.of(List.of(8)), steps(policy, 10, 8));
    }

    @Test
    @SuppressWarnings("ConstantOverflow") // the wrap is what the test is about
    void shouldOrderGenerationsAcrossTheWrap() {
        final GenerationPolicy policy = new GenerationPolicy();
        final int current = Integer.MIN_VALUE + 2;
        final int older = Integer.MAX_VALUE - 1;
        final int newer = Integer.MIN_VALUE;
        assertEquals(List.of(List.of(older), List.of(newer, older)), steps(policy, current, newer, older));
        assertEquals(older, current + (older - current));
    }

    @Test
    void shouldSurveyManyEntries() {
        final GenerationPolicy policy = new GenerationPolicy();
        policy.beginPass(1_000);
        for (int i = 0; i < 10_000; i++) {
            policy.survey("s", entry(i % 1_000));
        }
        int count = 0;
        while (policy.advance()) {
            assertEquals(count, policy.cutoffGeneration());
            count++;
        }
        assertEquals(1_000, count, "one step per distinct generation");
        assertTrue(policy.select("s", entry(0)));
    }

    @Test
    void shouldSortLikeTheJdkOnRandomAndRunShapedInput() {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(11);
        for (int round = 0; round < 500; round++) {
            final int n = random.nextInt(0, 300);
            final long[] a = new long[n + random.nextInt(0, 5)];
            for (int i = 0; i < a.length; i++) {
                // Runs of rising values, and many equal ones, as surveys in scan order give.
                a[i] = round % 2 == 0 ? random.nextLong() : (long) (i % 37) - random.nextInt(0, 3);
            }
            final long[] expected = a.clone();
            java.util.Arrays.sort(expected, 0, n);
            GenerationPolicy.heapSort(a, n);
            org.junit.jupiter.api.Assertions.assertArrayEquals(expected, a, "round " + round + ", n=" + n);
        }
    }

    /** Each pass's steps against a reference built with a TreeMap; the policy reused across passes of any size. */
    @Test
    void shouldStepThroughSurveyedGenerationsLikeAReferenceAcrossReusedPasses() {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(5);
        final GenerationPolicy policy = new GenerationPolicy();
        for (int pass = 0; pass < 200; pass++) {
            final int current = random.nextInt(-1000, 1000);
            final int[] generations = new int[random.nextInt(0, 400)];
            for (int i = 0; i < generations.length; i++) {
                generations[i] = current - random.nextInt(-3, 60);
            }
            final java.util.TreeSet<Integer> ages = new java.util.TreeSet<>();
            for (final int g : generations) {
                if (g - current < 0) {
                    ages.add(g - current);
                }
            }
            final List<List<Integer>> expected = new ArrayList<>();
            for (final int cutoff : ages) {
                final List<Integer> selected = new ArrayList<>();
                for (final int g : generations) {
                    if (g - current < 0 && g - current <= cutoff) {
                        selected.add(g);
                    }
                }
                expected.add(selected);
            }
            assertEquals(expected, steps(policy, current, generations), "pass " + pass);
        }
    }

    @Test
    void shouldAllocateNothingInAPassOnceItsScratchHasGrown() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        final GenerationPolicy policy = new GenerationPolicy();
        final ReadIndexEntry[] entries = new ReadIndexEntry[5_000];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = entry(-(i * 7919 % 4_000) - 1);
        }
        long allocated = 0;
        for (int pass = 0; pass < 50; pass++) {
            final long before = threads.getCurrentThreadAllocatedBytes();
            policy.beginPass(0, 1L << 20);
            for (final ReadIndexEntry e : entries) {
                policy.survey("s", e);
            }
            while (policy.advance()) {
                policy.select("s", entries[pass]);
            }
            if (pass >= 2) {
                allocated += threads.getCurrentThreadAllocatedBytes() - before;
            }
        }
        // 48 passes of 5,000 entries: the old sort allocated ~100 KB per pass.
        assertTrue(allocated < 4_096, "passes allocated " + allocated + " bytes");
    }
}
