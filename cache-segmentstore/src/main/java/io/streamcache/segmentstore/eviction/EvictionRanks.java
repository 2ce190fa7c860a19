package io.streamcache.segmentstore.eviction;

/**
 * The 64-bit rank {@link ReaderAwarePolicy} gives each surveyed entry, lower evicted first, and
 * the key without the age that {@link FillAdmission} compares a fill with: the encoding both
 * share, in one place.
 *
 * <pre>
 *  bit 63      56 55                40 39        32 31                                 0
 *     +---------+--------------------------------------+------------------------------------+
 *   0 | class 0 |  0 ...    | not passed (bit 40) | 0   |  age (use generation - current,     |
 *     |         |                                      |  offset by 2^31: older first)       |
 *   1 | class 1 |  value step (24 bits, log scale,     |  age                                |
 *     |         |  VALUE_STEPS_PER_OCTAVE an octave)   |                                     |
 *   2 | class 2 |  VALUE_MASK - time to reach the entry (56 bits): sooner reached, higher    |
 *     +---------+---------------------------------------------------------------------------+
 *  class 0: no expected reuse (passed by every reader first, then the rest)
 *  class 1: expected re-reads, by their expected number per generation
 *  class 2: ahead of a live reader, by how soon it gets there
 * </pre>
 *
 * <p><b>Threading:</b> static and stateless.
 */
final class EvictionRanks {
    /** Steps per octave of expected re-reads in the rank: values closer than that tie (then age decides). */
    static final int VALUE_STEPS_PER_OCTAVE = 4;
    /** The low bits of a rank that order by age (within a class and value step). */
    static final int AGE_BITS = 32;
    /** The longest time to reach an entry a class-2 rank tells apart (clock units); longer ones tie. */
    static final long MAX_TIME = (1L << 56) - 1;

    private static final long RANK_NO_REUSE = 0L;
    private static final long RANK_REUSE = 1L;
    private static final long RANK_AHEAD = 2L;
    private static final int RANK_SHIFT = 56;
    private static final long VALUE_MASK = (1L << RANK_SHIFT) - 1;
    /** Within class 0: passed data before other data (bit above the age). */
    private static final int NOT_PASSED_SHIFT = 40;
    /** Within class 1: the quantized value above the age. */
    private static final int VALUE_SHIFT = 32;
    private static final long MAX_VALUE_STEP = (1L << (RANK_SHIFT - VALUE_SHIFT)) - 1;

    private EvictionRanks() {
    }

    /** @return the age bits of an entry used {@code age} generations before the current one (negative). */
    static long byAge(final int age) {
        return (long) age + Integer.MAX_VALUE + 1L;
    }

    /** @return the rank of an entry of a segment the pass knows nothing of: class 0, not passed, by age. */
    static long unknown(final long byAge) {
        return (RANK_NO_REUSE << RANK_SHIFT) | (1L << NOT_PASSED_SHIFT) | byAge;
    }

    /** @return the rank of an entry a live reader reaches in {@code time} clock units (at most {@link #MAX_TIME}). */
    static long ahead(final long time) {
        return (RANK_AHEAD << RANK_SHIFT) | (VALUE_MASK - Math.min(time, MAX_TIME));
    }

    /**
     * @return the rank of an entry no reader is heading for, without its age (the low
     *         {@value #AGE_BITS} bits, zero): class 0 (passed first) if {@code value} is not
     *         positive, else class 1 by the value's step.
     */
    static long reuseKey(final boolean passedByAll, final double value) {
        if (!(value > 0)) {
            return (RANK_NO_REUSE << RANK_SHIFT) | ((passedByAll ? 0L : 1L) << NOT_PASSED_SHIFT);
        }
        return (RANK_REUSE << RANK_SHIFT) | (valueStep(value) << VALUE_SHIFT);
    }

    /** @return a rank without its age bits: the class and the value step (or the bit of class 0). */
    static long withoutAge(final long rank) {
        return rank & ~((1L << AGE_BITS) - 1);
    }

    /** @return whether a rank without its age is of class 0 (no expected reuse). */
    static boolean noReuse(final long key) {
        return key >>> RANK_SHIFT == RANK_NO_REUSE;
    }

    /** @return a value's position on a log scale, {@value #VALUE_STEPS_PER_OCTAVE} steps an octave, in [0, 2^24). */
    static long valueStep(final double value) {
        final double octaves = Math.log(value) / Math.log(2);
        final long step = (long) Math.floor((octaves + 64) * VALUE_STEPS_PER_OCTAVE);
        return Math.max(0, Math.min(MAX_VALUE_STEP, step));
    }
}
