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
 * <p>Given the bytes a pass wants ({@link #beginPass(int, long)}, as the cache manager does),
 * the first step goes straight to the newest surveyed generation at which the bytes at least
 * as old add up to that amount, and later steps, if the manager still needs them, go one
 * generation at a time. The manager then scans its sources once per pass instead of once per
 * surveyed generation: with 250,000 segments and a generation a second, that was most of the
 * manager's CPU. Within that first cut-off the manager evicts in its scan order, so an entry
 * a few generations younger may go before an older one; nothing younger than the cut-off does.
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
    /** Bytes of the entries surveyed at each age, parallel to {@link #ages}. */
    private long[] bytes = new long[INITIAL_CAPACITY];
    private int ageCount;
    /**
     * The sort's scratch, kept between passes (grown, never shrunk) so that a pass allocates
     * nothing once the survey's size has been seen: a pass runs on every full cache, on the
     * appending path's completer thread too, and allocated three arrays per pass (half the bytes
     * the facade's steady append still allocated).
     */
    private long[] keys = new long[INITIAL_CAPACITY];
    private int[] sortedAges = new int[INITIAL_CAPACITY];
    private long[] sortedBytes = new long[INITIAL_CAPACITY];
    /** Bytes the pass wants freed; 0: one surveyed generation per step. */
    private long wantedBytes;
    private int nextAge;
    private boolean sorted;
    private int current;
    private int cutoffAge;

    @Override
    public void beginPass(final int currentGeneration) {
        wantedBytes = 0;
        current = currentGeneration;
        ageCount = 0;
        nextAge = 0;
        sorted = false;
        cutoffAge = Integer.MIN_VALUE;
    }

    @Override
    public void beginPass(final int currentGeneration, final long wantedBytes) {
        beginPass(currentGeneration);
        this.wantedBytes = Math.max(0, wantedBytes);
    }

    @Override
    public void survey(final String segment, final CachedEntry entry) {
        final int age = entry.generation() - current;
        if (age >= 0) {
            return;
        }
        if (ageCount > 0 && ages[ageCount - 1] == age) {
            bytes[ageCount - 1] += entry.length();
            return;
        }
        if (ageCount == ages.length) {
            ages = Arrays.copyOf(ages, ageCount * 2);
            bytes = Arrays.copyOf(bytes, ageCount * 2);
        }
        bytes[ageCount] = entry.length();
        ages[ageCount++] = age;
    }

    @Override
    public boolean advance() {
        if (!sorted) {
            sortAndMerge();
            sorted = true;
            if (wantedBytes > 0 && ageCount > 0) {
                long behind = 0;
                int i = 0;
                while (i < ageCount - 1 && (behind += bytes[i]) < wantedBytes) {
                    i++;
                }
                nextAge = i;
            }
        }
        if (nextAge == ageCount) {
            return false;
        }
        cutoffAge = ages[nextAge++];
        return true;
    }

    /** Sorts the surveyed ages oldest first and merges equal ones, adding their bytes; allocates only to grow its scratch. */
    private void sortAndMerge() {
        if (keys.length < ageCount) {
            final int capacity = Math.max(ageCount, keys.length * 2);
            keys = new long[capacity];
            sortedAges = new int[capacity];
            sortedBytes = new long[capacity];
        }
        // Sort (age, index) pairs: ages are negative ints, indexes fit 31 bits.
        for (int i = 0; i < ageCount; i++) {
            keys[i] = ((long) ages[i] << 32) | i;
        }
        heapSort(keys, ageCount);
        int distinct = 0;
        for (int k = 0; k < ageCount; k++) {
            final long key = keys[k];
            final int age = (int) (key >> 32);
            final long length = bytes[(int) key];
            if (distinct > 0 && sortedAges[distinct - 1] == age) {
                sortedBytes[distinct - 1] += length;
            } else {
                sortedAges[distinct] = age;
                sortedBytes[distinct++] = length;
            }
        }
        System.arraycopy(sortedAges, 0, ages, 0, distinct);
        System.arraycopy(sortedBytes, 0, bytes, 0, distinct);
        ageCount = distinct;
    }

    /**
     * Sorts {@code a[0, n)} ascending in place. Not {@code Arrays.sort}: on input made of long
     * sorted runs (a survey in scan order often is) the JDK's sort merges the runs through a new
     * array as long as the input.
     */
    static void heapSort(final long[] a, final int n) {
        for (int i = n / 2 - 1; i >= 0; i--) {
            siftDown(a, i, n);
        }
        for (int end = n - 1; end > 0; end--) {
            final long top = a[0];
            a[0] = a[end];
            a[end] = top;
            siftDown(a, 0, end);
        }
    }

    private static void siftDown(final long[] a, final int from, final int n) {
        final long value = a[from];
        int i = from;
        int child;
        while ((child = 2 * i + 1) < n) {
            if (child + 1 < n && a[child + 1] > a[child]) {
                child++;
            }
            if (a[child] <= value) {
                break;
            }
            a[i] = a[child];
            i = child;
        }
        a[i] = value;
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
