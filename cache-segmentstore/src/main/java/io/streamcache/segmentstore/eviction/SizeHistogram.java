package io.streamcache.segmentstore.eviction;

import java.util.Arrays;

/**
 * The histogram behind {@link TierAdmission#auto()}: blocks held by entries, by entry length, in
 * 128 buckets (lengths 0 to 3 exactly, then four buckets per power of two). Not thread-safe:
 * confined to the manager's pass; allocates nothing after construction.
 */
final class SizeHistogram {
    static final int BUCKETS = 128;

    private final long[] blocks = new long[BUCKETS];

    void clear() {
        Arrays.fill(blocks, 0L);
    }

    void add(final int length, final long blockCount) {
        blocks[bucket(length)] += blockCount;
    }

    /**
     * @return the largest length such that the blocks of every entry no longer than it add up to
     *         at most {@code capacityBlocks}; {@link Integer#MAX_VALUE} if everything fits, -1 if
     *         not even the smallest bucket does.
     */
    int threshold(final long capacityBlocks) {
        long sum = 0;
        int threshold = -1;
        for (int b = 0; b < BUCKETS; b++) {
            sum += blocks[b];
            if (sum > capacityBlocks) {
                return threshold;
            }
            if (blocks[b] != 0) {
                threshold = upperBound(b);
            }
        }
        return Integer.MAX_VALUE;
    }

    static int bucket(final int length) {
        if (length < 4) {
            return Math.max(length, 0);
        }
        final int exponent = 31 - Integer.numberOfLeadingZeros(length);
        final int sub = (length >>> (exponent - 2)) & 3;
        return 4 * (exponent - 1) + sub;
    }

    /**
     * @return the longest length in bucket {@code b}.
     */
    static int upperBound(final int b) {
        if (b < 4) {
            return b;
        }
        final int exponent = b / 4 + 1;
        final int sub = b % 4;
        final long upper = ((long) (4 + sub + 1) << (exponent - 2)) - 1;
        return (int) Math.min(upper, Integer.MAX_VALUE);
    }
}
