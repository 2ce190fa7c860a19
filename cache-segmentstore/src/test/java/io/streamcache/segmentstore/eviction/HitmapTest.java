package io.streamcache.segmentstore.eviction;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class HitmapTest {
    private static final String SEGMENT = "s";

    /** Keys as the policy hashes them: a segment and an entry start offset. */
    private static long key(final int index) {
        return HitmapPolicy.hash(SEGMENT, index * 4096L);
    }

    private static void mark(final Hitmap hitmap, final long key, final int times) {
        for (int i = 0; i < times; i++) {
            hitmap.mark(key);
        }
    }

    @Test
    void shouldCountMarksUpToTheNumberOfLevels() {
        // 4 levels of 4,096 to 32,768 bits: few false positives for the handful of keys used here.
        final Hitmap hitmap = new Hitmap(4, 4096, 2);
        for (int uses = 0; uses <= 6; uses++) {
            mark(hitmap, key(100 + uses), uses);
        }
        for (int uses = 0; uses <= 6; uses++) {
            assertEquals(Math.min(uses, 4), hitmap.zone(key(100 + uses)), "uses=" + uses);
        }
        assertEquals(4, hitmap.levels());
    }

    @Test
    void shouldDropEveryZoneByOnePerCompactionAndKeepCountingAfterTheFolds() {
        final Hitmap hitmap = new Hitmap(3, 1 << 12, 3);
        for (int uses = 0; uses <= 3; uses++) {
            mark(hitmap, key(uses), uses);
        }
        for (int round = 1; round <= 3; round++) {
            hitmap.compact();
            for (int uses = 0; uses <= 3; uses++) {
                assertEquals(Math.max(0, uses - round), hitmap.zone(key(uses)), "round=" + round + " uses=" + uses);
            }
        }
        // Every level is empty now, and every array still has its level's size: counts restart.
        mark(hitmap, key(7), 2);
        assertEquals(2, hitmap.zone(key(7)));
        assertEquals(0, hitmap.zone(key(8)));
    }

    @Test
    void shouldKeepTheMarksOfManyKeysThroughAFold() {
        // The fold ORs a level's two halves into the level below: a key marked in level m is
        // still marked in level m-1 afterwards, whatever its bit indexes were.
        final Hitmap hitmap = new Hitmap(2, 1 << 16, 2);
        for (int k = 0; k < 500; k++) {
            mark(hitmap, key(k), 2);
        }
        hitmap.compact();
        for (int k = 0; k < 500; k++) {
            assertEquals(1, hitmap.zone(key(k)), "key=" + k);
        }
    }
}
