package io.streamcache.segmentstore.eviction;


import java.util.Arrays;

/**
 * Pravega's eviction by generation: confined to the manager's pass (one thread at a time);
 * {@link #recordUse} (inherited) runs on data-path threads under the segment's lock.
 *
 * <p>Every entry carries the generation of its last use, stamped on append and read. The
 * manager advances the current generation on a timer and on demand, so an entry's age is
 * {@code current - generation}. A pass surveys the generations of the evictable entries, sorts
 * them oldest first, and moves its cut-off one surveyed generation at a time: each step
 * evicts the entries at least as old as the cut-off. Entries used in the current generation
 * (after the pass advanced it) are never selected, so a pass cannot evict what was used while
 * it ran.
 *
 * <p>Generations are compared by their difference from the current one, so the counter may wrap.
 */
public final class GenerationPolicy implements EvictionPolicy {
    /** A policy with no state: the generation stamp in each entry is all it keeps. */
    public GenerationPolicy() {
    }

    private static final int INITIAL_CAPACITY = 64;

    /** Ages surveyed ({@code generation - current}, all negative), sorted and deduplicated by the first {@link #advance()}. */
    private int[] ages = new int[INITIAL_CAPACITY];
    private int ageCount;
    private int nextAge;
    private boolean sorted;
    private int current;
    private int cutoffAge;

    @Override
    public void beginPass(final int currentGeneration) {
        current = currentGeneration;
        ageCount = 0;
        nextAge = 0;
        sorted = false;
        cutoffAge = Integer.MIN_VALUE;
    }

    @Override
    public void survey(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        if (age >= 0 || (ageCount > 0 && ages[ageCount - 1] == age)) {
            return;
        }
        if (ageCount == ages.length) {
            ages = Arrays.copyOf(ages, ageCount * 2);
        }
        ages[ageCount++] = age;
    }

    @Override
    public boolean advance() {
        if (!sorted) {
            Arrays.sort(ages, 0, ageCount);
            int distinct = 0;
            for (int i = 0; i < ageCount; i++) {
                if (distinct == 0 || ages[distinct - 1] != ages[i]) {
                    ages[distinct++] = ages[i];
                }
            }
            ageCount = distinct;
            sorted = true;
        }
        if (nextAge == ageCount) {
            return false;
        }
        cutoffAge = ages[nextAge++];
        return true;
    }

    @Override
    public boolean select(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        return age < 0 && age <= cutoffAge;
    }

    /**
     * @return the cut-off generation of the current step (meaningful after {@link #advance()}
     *         returned {@code true}).
     */
    public int cutoffGeneration() {
        return current + cutoffAge;
    }

    @Override
    public String toString() {
        return "GenerationPolicy{current=" + current + ", surveyed=" + ageCount + ", cutoffAge=" + cutoffAge + '}';
    }
}
