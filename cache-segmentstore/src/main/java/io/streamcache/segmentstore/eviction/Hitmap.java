package io.streamcache.segmentstore.eviction;

import java.util.Arrays;

/**
 * Catalyst's Hitmap (VLDB 2023): multi-level hash counters that approximate how often each key
 * was used, aged by rolling compaction. The counting structure of {@link HitmapPolicy}, which
 * feeds it uses off the data path and ranks entries by it.
 *
 * <h2>Layout</h2>
 * {@code M} levels of bit arrays, level {@code m} holding {@code level0Bits << m} bits (an
 * inverted pyramid: each level twice the size of the one below). A key (segment and entry start
 * offset, hashed to 64 bits) is <em>marked</em> in a level if all {@code N} of its bits there are
 * set; the {@code N} bit indexes are {@code (h1 + i * h2) mod size}, i = 0..N-1. A use marks the
 * key in the lowest level where it is not yet marked, so the number of consecutive marked levels
 * from level 0, the key's <em>zone</em>, approximates its use count, up to {@code M}.
 * <pre>
 *   level M-1  |................................................................|  level0Bits &lt;&lt; (M-1)
 *   ...
 *   level 1    |................................|                                  level0Bits &lt;&lt; 1
 *   level 0    |................|                                                  level0Bits
 *   h1 = hash, h2 = (hash &gt;&gt;&gt; 32) | 1;  bit i of a key in level m = (h1 + i * h2) &amp; (size(m) - 1)
 * </pre>
 *
 * <h2>Rolling compaction</h2>
 * {@link #compact()} drops level 0, folds every level {@code m} into the size of level
 * {@code m-1} by OR-ing its two halves (the indexes are taken modulo a power of two, so the fold
 * keeps every mark) and makes it level {@code m-1}; the top level starts empty: every count
 * drops by one. Folding reuses the arrays: no allocation.
 *
 * <h2>Threading</h2>
 * Not thread-safe: the owner ({@link HitmapPolicy}) calls it only under its private lock.
 */
final class Hitmap {
    private final int levels;
    private final int hashFunctions;
    private final long[][] bits;
    private final long[] masks;

    /**
     * @param levels        number of levels M, in [1, 16] (checked by the policy).
     * @param level0Bits    bits of level 0, a power of two &gt;= 64.
     * @param hashFunctions bits per key and level N, in [1, 8].
     */
    Hitmap(final int levels, final int level0Bits, final int hashFunctions) {
        this.levels = levels;
        this.hashFunctions = hashFunctions;
        this.bits = new long[levels][];
        this.masks = new long[levels];
        for (int m = 0; m < levels; m++) {
            final long size = (long) level0Bits << m;
            bits[m] = new long[(int) (size >>> 6)];
            masks[m] = size - 1;
        }
    }

    /** @return the number of levels M. */
    int levels() {
        return levels;
    }

    /** Records one use of the key: marks it in the lowest level where it is not yet marked. */
    void mark(final long hash) {
        final long h1 = hash;
        final long h2 = (hash >>> 32) | 1L;
        for (int m = 0; m < levels; m++) {
            if (!markedIn(m, h1, h2)) {
                final long[] level = bits[m];
                final long mask = masks[m];
                for (int i = 0; i < hashFunctions; i++) {
                    final long bit = (h1 + i * h2) & mask;
                    level[(int) (bit >>> 6)] |= 1L << bit;
                }
                return;
            }
        }
    }

    /**
     * @return the key's zone: how many consecutive levels from level 0 mark it, in [0, levels].
     */
    int zone(final long hash) {
        final long h2 = (hash >>> 32) | 1L;
        int m = 0;
        while (m < levels && markedIn(m, hash, h2)) {
            m++;
        }
        return m;
    }

    /** A rolling compaction: every count drops by one. */
    void compact() {
        // Ascending, in place: old level 0 is dropped first, so its array takes folded level 1;
        // old level 1 was just folded, so its array takes folded level 2; and so on. Each level
        // keeps an array of its own size.
        for (int m = 1; m < levels; m++) {
            final long[] upper = bits[m];
            final long[] lower = bits[m - 1];
            final int half = upper.length >>> 1;
            for (int w = 0; w < half; w++) {
                lower[w] = upper[w] | upper[w + half];
            }
        }
        Arrays.fill(bits[levels - 1], 0L);
    }

    private boolean markedIn(final int m, final long h1, final long h2) {
        final long[] level = bits[m];
        final long mask = masks[m];
        for (int i = 0; i < hashFunctions; i++) {
            final long bit = (h1 + i * h2) & mask;
            if ((level[(int) (bit >>> 6)] & (1L << bit)) == 0) {
                return false;
            }
        }
        return true;
    }
}
