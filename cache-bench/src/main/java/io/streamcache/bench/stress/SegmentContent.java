package io.streamcache.bench.stress;

/**
 * The bytes of every segment as a pure function of (segment seed, offset), so that a reader can
 * check any range it is given without a second copy of the data; implementations are stateless
 * and thread-safe.
 *
 * <p>The default, {@link #SPLITMIX}, cuts a segment into 8-byte words and makes word
 * {@code offset >>> 3} the SplitMix64 finalizer of {@code seed + wordIndex * GOLDEN}; byte
 * {@code offset & 7} of the word (little-endian) is the byte at {@code offset}. Any offset is
 * reachable in O(1), so appends of any size and reads of any range line up with no bookkeeping.
 */
@FunctionalInterface
interface SegmentContent {
    /** Weyl increment of SplitMix64. */
    long GOLDEN = 0x9E37_79B9_7F4A_7C15L;

    /** The production content function. */
    SegmentContent SPLITMIX = SegmentContent::splitMixWord;

    /**
     * @return the 8-byte word at {@code wordIndex} (covering offsets {@code [8 * wordIndex, 8 * wordIndex + 8)}).
     */
    long word(long seed, long wordIndex);

    /**
     * @return the byte at {@code offset} of the segment with {@code seed}.
     */
    default byte byteAt(final long seed, final long offset) {
        return (byte) (word(seed, offset >>> 3) >>> ((offset & 7) << 3));
    }

    static long splitMixWord(final long seed, final long wordIndex) {
        long z = seed + wordIndex * GOLDEN;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    /**
     * @return a per-segment seed derived from the run's seed and the segment's index.
     */
    static long segmentSeed(final long runSeed, final int segment) {
        return splitMixWord(runSeed, 0x5EED_0000L + segment);
    }
}
