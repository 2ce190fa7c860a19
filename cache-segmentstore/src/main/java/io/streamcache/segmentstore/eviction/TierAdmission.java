package io.streamcache.segmentstore.eviction;

/**
 * Which entries a {@link CacheManager} demotes into a slower tier of a tiered cache rather than
 * evicting them: immutable, shareable between threads and managers.
 *
 * <ul>
 *   <li>{@link #all()}: every entry the policy selects in a faster tier is demoted.</li>
 *   <li>{@link #sizeThreshold(int)}: entries of at most that many bytes are demoted; longer
 *       ones are evicted (the RocketMQ-on-PMEM contest design: a hit saves one read whatever the entry's size, so small
 *       entries buy more hits per byte of the slower tier).</li>
 *   <li>{@link #auto()}: the automatic threshold of the RocketMQ-on-PMEM contest design. Before each demotion step the manager
 *       histograms the sizes of the entries in the tier it demotes from and the tier below
 *       (sizes in 128 buckets, four per power of two) and sets the threshold to the largest
 *       bucket bound for which the blocks of every entry no longer than it fit the two tiers at
 *       their target utilizations. When everything fits, everything is admitted; when not, the
 *       largest entries are refused first, so the slower tier fills with the sizes that fit
 *       exactly. The current threshold is in the manager's stats.</li>
 * </ul>
 */
public final class TierAdmission {
    /** The kinds of admission. */
    public enum Kind {
        /** Admit everything. */
        ALL,
        /** Admit entries up to a fixed length. */
        SIZE_THRESHOLD,
        /** Admit entries up to a length computed so that the slower tier fills exactly. */
        AUTO
    }

    private static final TierAdmission ALL = new TierAdmission(Kind.ALL, Integer.MAX_VALUE);
    private static final TierAdmission AUTO = new TierAdmission(Kind.AUTO, Integer.MAX_VALUE);

    private final Kind kind;
    private final int maxLength;

    private TierAdmission(final Kind kind, final int maxLength) {
        this.kind = kind;
        this.maxLength = maxLength;
    }

    /**
     * @return the policy that demotes every entry the eviction policy selects.
     */
    public static TierAdmission all() {
        return ALL;
    }

    /**
     * @param maxLength longest entry, in bytes, demoted into a slower tier; &gt;= 0.
     * @return the policy that demotes entries of at most {@code maxLength} bytes and evicts longer ones.
     * @throws IllegalArgumentException if {@code maxLength} is negative.
     */
    public static TierAdmission sizeThreshold(final int maxLength) {
        if (maxLength < 0) {
            throw new IllegalArgumentException("maxLength=" + maxLength + " must be >= 0");
        }
        return new TierAdmission(Kind.SIZE_THRESHOLD, maxLength);
    }

    /**
     * @return the policy whose threshold the manager computes from the sizes it sees.
     */
    public static TierAdmission auto() {
        return AUTO;
    }

    public Kind kind() {
        return kind;
    }

    /**
     * @return the fixed threshold of {@link Kind#SIZE_THRESHOLD}; {@link Integer#MAX_VALUE} otherwise.
     */
    public int maxLength() {
        return maxLength;
    }

    @Override
    public String toString() {
        return kind == Kind.SIZE_THRESHOLD ? "TierAdmission{SIZE_THRESHOLD, maxLength=" + maxLength + '}' : "TierAdmission{" + kind + '}';
    }
}
