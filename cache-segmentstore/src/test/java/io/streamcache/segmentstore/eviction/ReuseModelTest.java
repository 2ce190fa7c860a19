package io.streamcache.segmentstore.eviction;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The reader-aware policy's learning model on its own: decay, rates by bucket and length with
 * their prior, coverage by distance, and the bucket functions. Expected values are worked out by
 * hand from the formulas in the class's javadoc.
 */
class ReuseModelTest {
    private static final double EPS = 1e-12;
    private static final long BLOCK = 4096;

    @Test
    void rejectsAHalfLifeThatIsNotPositive() {
        assertThrows(IllegalArgumentException.class, () -> new ReuseModel(0));
        assertThrows(IllegalArgumentException.class, () -> new ReuseModel(-1));
        assertThrows(IllegalArgumentException.class, () -> new ReuseModel(Double.NaN));
    }

    @Test
    void aPerSegmentCountHalvesEveryHalfLife() {
        final ReuseModel model = new ReuseModel(10);
        assertEquals(0.5, model.decay(10), EPS);
        assertEquals(0.25, model.decay(20), EPS);
        assertEquals(Math.pow(0.5, 0.3), model.decay(3), EPS);
        assertEquals(1.0, model.decay(0), "no time, no decay");
        assertEquals(1.0, model.decay(-5), "a negative span does not grow a count");
    }

    @Test
    void globalStatisticsDecayFourTimesSlower() {
        final ReuseModel model = new ReuseModel(10);
        for (int i = 0; i < 8; i++) {
            model.session(0, 0);
        }
        assertEquals(8, model.sessions(), EPS);
        model.age(10);
        assertEquals(8 * Math.pow(0.5, 0.25), model.sessions(), EPS, "one per-segment half-life is a quarter of a global one");
        model.age(30);
        assertEquals(4, model.sessions(), EPS, "four per-segment half-lives halve the global statistics");
        model.age(0);
        model.age(-40);
        assertEquals(4, model.sessions(), EPS, "ageing by nothing or a negative span changes nothing");
    }

    @Test
    void everyRateIsZeroBeforeAnythingWasLearned() {
        final ReuseModel model = new ReuseModel(10);
        model.refresh();
        for (int b = 0; b < ReuseModel.RATE_BUCKETS; b++) {
            assertEquals(0, model.rate(b));
            assertEquals(0, model.rate(b, 0));
            assertEquals(0, model.rate(b, ReuseModel.LENGTH_BUCKETS - 1));
        }
    }

    @Test
    void ratesAreArrivalsOverExposurePulledTowardTheGlobalRate() {
        final ReuseModel model = new ReuseModel(10);
        model.expose(1, 0, 12, 0);
        model.expose(3, 0, 8, 8);
        assertEquals(0, model.rate(3), "nothing is recomputed before refresh");
        model.refresh();
        // global = 8 arrivals / 20 generations = 0.4; prior = 8 generations at the global rate.
        assertEquals((0 + 8 * 0.4) / (12 + 8), model.rate(1), EPS);
        assertEquals((8 + 8 * 0.4) / (8 + 8), model.rate(3), EPS);
        assertEquals(0.4, model.rate(0), EPS, "a bucket with no history has the global rate");
        assertEquals(0.4, model.rate(ReuseModel.RATE_BUCKETS - 1), EPS);
        // By length: pulled toward the bucket's rate (0.7 for bucket 3).
        assertEquals((8 + 8 * 0.7) / (8 + 8), model.rate(3, 0), EPS);
        assertEquals(0.7, model.rate(3, 1), EPS, "a length with no history has its bucket's rate");
        assertEquals((0 + 8 * 0.16) / (12 + 8), model.rate(1, 0), EPS, "no arrivals at that length: pulled down from the bucket's rate");
    }

    @Test
    void ageingShrinksTheHistoryAndSoStrengthensThePrior() {
        final ReuseModel model = new ReuseModel(10);
        model.expose(1, 0, 12, 0);
        model.expose(3, 0, 8, 8);
        model.age(40);
        model.refresh();
        // Every count halved: global still 0.4, bucket 3 has 4 arrivals in 4 generations.
        assertEquals((4 + 8 * 0.4) / (4 + 8), model.rate(3), EPS);
        assertEquals((4 + 8 * 0.6) / (4 + 8), model.rate(3, 0), EPS);
    }

    @Test
    void negativeExposureCountsAsNoneButArrivalsStillCount() {
        final ReuseModel model = new ReuseModel(10);
        model.expose(2, 5, -5, 3);
        model.refresh();
        // No exposure at all: the global rate is 0, so the bucket has its arrivals over the prior only.
        assertEquals(3.0 / 8, model.rate(2), EPS);
        assertEquals((3 + 8 * 3.0 / 8) / 8, model.rate(2, 5), EPS);
        assertEquals(0, model.rate(1));
    }

    @Test
    void coverageIsTheFractionOfSessionsThatReadADistance() {
        final ReuseModel model = new ReuseModel(10);
        // Registered 10,000 bytes behind the tail and read up to it: distances [1, 10000].
        model.session(10_000, 10_000);
        // Registered 20 blocks behind the tail, read one block: distances (77824, 81920].
        model.session(20 * BLOCK, BLOCK);
        model.refresh();
        assertEquals(2, model.sessions(), EPS);
        assertEquals(0.5, model.coverage(0), EPS);
        assertEquals(0.5, model.coverage(BLOCK + 1), EPS);
        assertEquals(0.5, model.coverage(10_000), EPS);
        assertEquals(0, model.coverage(3 * BLOCK), EPS, "between the two sessions' ranges");
        assertEquals(0.5, model.coverage(20 * BLOCK), EPS);
        assertEquals(0.5, model.coverage(19 * BLOCK), EPS, "same quarter-octave bucket as 20 blocks");
        assertEquals(0, model.coverage(24 * BLOCK), EPS);
    }

    @Test
    void aSessionCoversTheDistancesAboveItsEndUpToItsStart() {
        final ReuseModel model = new ReuseModel(10);
        // Started one byte short of 2 blocks behind the tail, read one block: distances
        // [BLOCK, 2 * BLOCK - 1], all in the 1-block bucket; the tail's bucket is not read.
        model.session(2 * BLOCK - 1, BLOCK);
        model.refresh();
        assertEquals(0, model.coverage(BLOCK - 1), EPS);
        assertEquals(1, model.coverage(BLOCK), EPS);
        assertEquals(0, model.coverage(2 * BLOCK), EPS);
    }

    @Test
    void aReadLongerThanItsDistanceCoversDownToTheTail() {
        final ReuseModel model = new ReuseModel(10);
        model.session(5 * BLOCK, 100 * BLOCK);
        model.refresh();
        assertEquals(1, model.coverage(0), EPS);
        assertEquals(1, model.coverage(5 * BLOCK), EPS);
        assertEquals(0, model.coverage(8 * BLOCK), EPS, "nothing beyond its start");
    }

    @Test
    void aSessionThatReadNothingOrStartedAtTheTailCountsButCoversNothing() {
        final ReuseModel model = new ReuseModel(10);
        model.session(10 * BLOCK, 0);
        model.session(10 * BLOCK, -1);
        model.session(0, BLOCK);
        model.session(-BLOCK, BLOCK);
        model.refresh();
        assertEquals(4, model.sessions(), EPS);
        for (int d = 0; d < 64; d++) {
            assertEquals(0, model.coverage(d * BLOCK), "distance " + d + " blocks");
        }
        model.session(BLOCK, BLOCK);
        model.refresh();
        assertEquals(0.2, model.coverage(0), EPS, "one of five sessions read near the tail");
    }

    @Test
    void coverageIsZeroBeforeRefreshAndWithoutSessions() {
        final ReuseModel model = new ReuseModel(10);
        model.refresh();
        assertEquals(0, model.coverage(0));
        model.session(BLOCK, BLOCK);
        assertEquals(0, model.coverage(0), "nothing is recomputed before refresh");
        model.refresh();
        assertEquals(1, model.coverage(0), EPS);
    }

    @Test
    void recentSessionsWeighMoreThanAgedOnes() {
        final ReuseModel model = new ReuseModel(10);
        model.session(BLOCK, BLOCK); // near the tail
        model.age(40); // one global half-life: 0.5 of a session left
        model.session(20 * BLOCK, BLOCK); // far from it
        model.refresh();
        assertEquals(1.5, model.sessions(), EPS);
        assertEquals(0.5 / 1.5, model.coverage(0), EPS);
        assertEquals(1 / 1.5, model.coverage(20 * BLOCK), EPS);
    }

    @Test
    void distanceBucketsAreQuarterOctavesOfBlocks() {
        assertEquals(0, ReuseModel.distanceBucket(0));
        assertEquals(0, ReuseModel.distanceBucket(BLOCK - 1));
        assertEquals(0, ReuseModel.distanceBucket(-1), "a negative distance is the tail's bucket");
        assertEquals(0, ReuseModel.distanceBucket(Long.MIN_VALUE));
        // 1 block: x = 2, octave 1, quarter 0.
        assertEquals(4, ReuseModel.distanceBucket(BLOCK));
        assertEquals(4, ReuseModel.distanceBucket(2 * BLOCK - 1));
        // 2 blocks: x = 3 = 0b11, octave 1, quarter 2.
        assertEquals(6, ReuseModel.distanceBucket(2 * BLOCK));
        // 3..6 blocks: x = 4..7, octave 2, quarters 0..3.
        assertEquals(8, ReuseModel.distanceBucket(3 * BLOCK));
        assertEquals(9, ReuseModel.distanceBucket(4 * BLOCK));
        assertEquals(10, ReuseModel.distanceBucket(5 * BLOCK));
        assertEquals(11, ReuseModel.distanceBucket(6 * BLOCK));
        // 7 and 8 blocks: x = 8 and 9, octave 3, quarter 0; 9 blocks: x = 10, quarter 1.
        assertEquals(12, ReuseModel.distanceBucket(7 * BLOCK));
        assertEquals(12, ReuseModel.distanceBucket(8 * BLOCK));
        assertEquals(13, ReuseModel.distanceBucket(9 * BLOCK));
        // 1 MB = 256 blocks: x = 257, octave 8, quarter 0.
        assertEquals(32, ReuseModel.distanceBucket(256 * BLOCK - 1));
        assertEquals(32, ReuseModel.distanceBucket(256 * BLOCK));
        // The largest distance: x = 2^51, octave 51, quarter 0; inside the table.
        assertEquals(204, ReuseModel.distanceBucket(Long.MAX_VALUE));
        assertEquals(true, ReuseModel.distanceBucket(Long.MAX_VALUE) < ReuseModel.DISTANCE_BUCKETS);
    }

    @Test
    void distanceBucketsNeverDecreaseWithDistance() {
        int previous = 0;
        for (long d = 0; d < (1L << 40); d = d * 5 / 4 + 1) {
            final int b = ReuseModel.distanceBucket(d);
            assertEquals(true, b >= previous, "distance " + d);
            previous = b;
        }
    }

    @Test
    void lengthBucketsAreHalfOctaves() {
        assertEquals(0, ReuseModel.lengthBucket(0));
        assertEquals(0, ReuseModel.lengthBucket(-1));
        assertEquals(2, ReuseModel.lengthBucket(BLOCK));
        assertEquals(3, ReuseModel.lengthBucket(2 * BLOCK));
        assertEquals(4, ReuseModel.lengthBucket(3 * BLOCK));
        assertEquals(16, ReuseModel.lengthBucket(256 * BLOCK));
        assertEquals(102, ReuseModel.lengthBucket(Long.MAX_VALUE));
        assertEquals(true, ReuseModel.lengthBucket(Long.MAX_VALUE) < ReuseModel.LENGTH_BUCKETS);
    }

    @Test
    void rateBucketsAreHalfOctavesAboveASixteenth() {
        assertEquals(0, ReuseModel.rateBucket(0));
        assertEquals(0, ReuseModel.rateBucket(-1));
        assertEquals(0, ReuseModel.rateBucket(Double.NaN));
        assertEquals(ReuseModel.RATE_BUCKETS - 1, ReuseModel.rateBucket(Double.POSITIVE_INFINITY), "no overflow past the top");
        assertEquals(ReuseModel.RATE_BUCKETS - 1, ReuseModel.rateBucket(Double.MAX_VALUE));
        assertEquals(0, ReuseModel.rateBucket(Math.nextDown(ReuseModel.FIRST_BUCKET_COUNT)));
        assertEquals(1, ReuseModel.rateBucket(ReuseModel.FIRST_BUCKET_COUNT));
        assertEquals(1, ReuseModel.rateBucket(ReuseModel.FIRST_BUCKET_COUNT * 1.4), "below half an octave up");
        assertEquals(2, ReuseModel.rateBucket(ReuseModel.FIRST_BUCKET_COUNT * 1.5));
        assertEquals(3, ReuseModel.rateBucket(1.0 / 8));
        assertEquals(9, ReuseModel.rateBucket(1));
        assertEquals(11, ReuseModel.rateBucket(2));
        assertEquals(23, ReuseModel.rateBucket(1 << 11), "2^11 = 2^15 sixteenths: 1 + 30 buckets, capped");
        assertEquals(ReuseModel.RATE_BUCKETS - 1, ReuseModel.rateBucket(1e300));
    }
}
