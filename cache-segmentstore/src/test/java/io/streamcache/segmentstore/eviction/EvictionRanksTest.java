package io.streamcache.segmentstore.eviction;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link EvictionRanks}: the order of the classes, and within each class. */
class EvictionRanksTest {
    @Test
    void shouldOrderTheClassesPassedThenNoReuseThenReusedThenAhead() {
        final long age = EvictionRanks.byAge(-5);
        final long passed = EvictionRanks.reuseKey(true, 0) | age;
        final long notPassed = EvictionRanks.reuseKey(false, 0) | age;
        final long reused = EvictionRanks.reuseKey(false, 1e-9) | age;
        final long ahead = EvictionRanks.ahead(EvictionRanks.MAX_TIME);
        assertTrue(passed < notPassed);
        assertEquals(notPassed, EvictionRanks.unknown(age), "a segment the pass does not know is not passed, no reuse");
        assertTrue(notPassed < reused);
        assertTrue(reused < ahead, "even the latest reached entry a reader heads for goes after every reused one");
        assertTrue(EvictionRanks.noReuse(EvictionRanks.withoutAge(passed)));
        assertTrue(EvictionRanks.noReuse(EvictionRanks.withoutAge(notPassed)));
        assertFalse(EvictionRanks.noReuse(EvictionRanks.withoutAge(reused)));
    }

    @Test
    void shouldOrderWithinEachClass() {
        final Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            final int older = -1 - random.nextInt(Integer.MAX_VALUE);
            final int newer = older + 1 + random.nextInt(-older);
            // Same class and step: older use first.
            assertTrue(EvictionRanks.byAge(older) < EvictionRanks.byAge(newer));
            final double v = Math.exp(random.nextDouble() * 40 - 20);
            final double more = v * (1.2 + random.nextDouble() * 10);
            // More expected re-reads: evicted later (or tied, within a quarter octave), whatever the age.
            assertTrue((EvictionRanks.reuseKey(false, v) | EvictionRanks.byAge(newer))
                < (EvictionRanks.reuseKey(false, more) | EvictionRanks.byAge(older)), v + " against " + more);
            final long t = random.nextLong() & EvictionRanks.MAX_TIME;
            // Reached sooner: evicted later.
            assertTrue(EvictionRanks.ahead(t) >= EvictionRanks.ahead(Math.min(EvictionRanks.MAX_TIME, t + 1)));
            assertEquals(EvictionRanks.reuseKey(false, v), EvictionRanks.withoutAge(EvictionRanks.reuseKey(false, v)
                | EvictionRanks.byAge(older)));
        }
        assertEquals(EvictionRanks.ahead(EvictionRanks.MAX_TIME), EvictionRanks.ahead(Long.MAX_VALUE), "longer times tie");
        assertEquals(0, EvictionRanks.valueStep(1e-300), "clamped below");
        assertEquals((1L << 24) - 1, EvictionRanks.valueStep(Double.POSITIVE_INFINITY), "clamped above");
    }
}
