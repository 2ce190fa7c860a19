package io.streamcache.segmentstore.eviction;

import java.util.Arrays;

/**
 * What the reader-aware policy learns online about re-reads (readers that register behind a
 * segment's tail: consumer sessions, catch-up readers, restarting consumer groups), to value data
 * no registered reader is heading for. Confined to the eviction pass: no locking, no allocation
 * after construction.
 *
 * <p>Two estimates, both decayed with a half-life counted in generations:
 * <ul>
 *   <li><b>how often a segment is re-read, by its history</b>: every segment carries a decayed
 *       count of the re-read registrations it received (its popularity). Segments are grouped in
 *       {@value #RATE_BUCKETS} buckets by that count (half-octave buckets), and for each bucket
 *       the model counts the re-read registrations that arrived at segments in the bucket and the
 *       generations segments spent in it (exposure), also split by the segment's length
 *       (half octaves). The rate of a bucket and length, arrivals over exposure,
 *       is the expected number of re-read registrations per generation for a segment with that
 *       history. It is learned, not assumed: where popular segments stay popular (Zipf) the rate
 *       grows with the count; where a segment is re-read once in its life (a catch-up reader
 *       after which it is never read again) the rate of the re-read buckets drops to zero and the
 *       never-re-read bucket keeps the probability that a re-read is still to come;</li>
 *   <li><b>where re-reads read</b>: for every finished re-read session, the distances from the
 *       segment's tail (at registration) of the data it read, in quarter-octave buckets of 4 KB
 *       blocks. Coverage of a distance is the fraction of re-read sessions that read data at
 *       that distance: sessions that open near the tail make data near the tail dearer.</li>
 * </ul>
 * The value of an entry nobody is heading for is {@code rate(segment's bucket) x
 * coverage(entry's distance from the tail)}: the expected number of re-read sessions that will
 * read it per generation.
 */
final class ReuseModel {
    /** Buckets of the per-segment decayed re-read count. */
    static final int RATE_BUCKETS = 24;
    /** Buckets of distance from the tail (quarter octaves of 4 KB blocks). */
    static final int DISTANCE_BUCKETS = 4 * 52;
    /** Buckets of segment length (half octaves of 4 KB blocks). */
    static final int LENGTH_BUCKETS = DISTANCE_BUCKETS / 2;
    /** A decayed count below this is bucket 0 (never or long ago re-read). */
    static final double FIRST_BUCKET_COUNT = 1.0 / 16;
    /** Pseudo-exposure (generations) pulling a bucket with little history toward the global rate. */
    static final double PRIOR_EXPOSURE = 8;

    private final double halfLife;
    private final double[] arrivals = new double[RATE_BUCKETS];
    private final double[] exposure = new double[RATE_BUCKETS];
    private final double[] rates = new double[RATE_BUCKETS];
    private final double[][] arrivalsByLength = new double[RATE_BUCKETS][LENGTH_BUCKETS];
    private final double[][] exposureByLength = new double[RATE_BUCKETS][LENGTH_BUCKETS];
    private final double[][] ratesByLength = new double[RATE_BUCKETS][LENGTH_BUCKETS];
    private final double[] covered = new double[DISTANCE_BUCKETS];
    private final double[] coverage = new double[DISTANCE_BUCKETS];
    private double sessions;

    /**
     * @param halfLife half-life of every count, in generations, &gt; 0 (the global statistics
     *                 decay four times slower than the per-segment counts).
     */
    ReuseModel(final double halfLife) {
        if (!(halfLife > 0)) {
            throw new IllegalArgumentException("halfLife=" + halfLife + " must be > 0");
        }
        this.halfLife = halfLife;
    }

    /** @return the factor a per-segment count decays by over {@code generations}. */
    double decay(final int generations) {
        return generations <= 0 ? 1.0 : Math.pow(0.5, generations / halfLife);
    }

    /** Ages the global statistics by {@code generations}. */
    void age(final int generations) {
        if (generations <= 0) {
            return;
        }
        final double f = Math.pow(0.5, generations / (4 * halfLife));
        for (int b = 0; b < RATE_BUCKETS; b++) {
            arrivals[b] *= f;
            exposure[b] *= f;
            for (int l = 0; l < LENGTH_BUCKETS; l++) {
                arrivalsByLength[b][l] *= f;
                exposureByLength[b][l] *= f;
            }
        }
        for (int d = 0; d < DISTANCE_BUCKETS; d++) {
            covered[d] *= f;
        }
        sessions *= f;
    }

    /**
     * A segment spent {@code generations} in {@code bucket} with a length in {@code lengthBucket}
     * and received {@code rereads} re-read registrations.
     */
    void expose(final int bucket, final int lengthBucket, final int generations, final int rereads) {
        exposure[bucket] += Math.max(0, generations);
        arrivals[bucket] += rereads;
        exposureByLength[bucket][lengthBucket] += Math.max(0, generations);
        arrivalsByLength[bucket][lengthBucket] += rereads;
    }

    /**
     * A re-read session ended.
     *
     * @param startDistance bytes between the segment's tail and the reader's start when it registered.
     * @param read          bytes it read from its start (its last position minus its start).
     */
    void session(final long startDistance, final long read) {
        sessions++;
        if (read <= 0 || startDistance <= 0) {
            return;
        }
        final int hi = distanceBucket(startDistance);
        final int lo = distanceBucket(Math.max(0, startDistance - read + 1));
        for (int d = lo; d <= hi; d++) {
            covered[d]++;
        }
    }

    /** Recomputes the rates and coverages from the counts; call once per pass, before ranking. */
    void refresh() {
        double totalArrivals = 0;
        double totalExposure = 0;
        for (int b = 0; b < RATE_BUCKETS; b++) {
            totalArrivals += arrivals[b];
            totalExposure += exposure[b];
        }
        final double global = totalExposure > 0 ? totalArrivals / totalExposure : 0;
        for (int b = 0; b < RATE_BUCKETS; b++) {
            rates[b] = (arrivals[b] + PRIOR_EXPOSURE * global) / (exposure[b] + PRIOR_EXPOSURE);
            for (int l = 0; l < LENGTH_BUCKETS; l++) {
                ratesByLength[b][l] = (arrivalsByLength[b][l] + PRIOR_EXPOSURE * rates[b]) / (exposureByLength[b][l] + PRIOR_EXPOSURE);
            }
        }
        if (sessions > 0) {
            for (int d = 0; d < DISTANCE_BUCKETS; d++) {
                coverage[d] = covered[d] / sessions;
            }
        } else {
            Arrays.fill(coverage, 0);
        }
    }

    /** @return the (decayed) number of ended re-read sessions learned from. */
    double sessions() {
        return sessions;
    }

    /** @return expected re-read registrations per generation for a segment in {@code bucket}. */
    double rate(final int bucket) {
        return rates[bucket];
    }

    /**
     * @return expected re-read registrations per generation for a segment in {@code bucket} whose
     * length is in {@code lengthBucket} (pulled toward the bucket's rate where that length has
     * little history).
     */
    double rate(final int bucket, final int lengthBucket) {
        return ratesByLength[bucket][lengthBucket];
    }

    /** @return the half-octave bucket of a segment's length in bytes. */
    static int lengthBucket(final long length) {
        return distanceBucket(length) / 2;
    }

    /** @return the fraction of re-read sessions that read data {@code distance} bytes from the tail. */
    double coverage(final long distance) {
        return coverage[distanceBucket(distance)];
    }

    /** @return a copy of the coverage by distance bucket (for readers outside the pass). */
    double[] coverageCopy() {
        return coverage.clone();
    }

    /** @return the bucket of a per-segment decayed re-read count. */
    static int rateBucket(final double count) {
        if (!(count >= FIRST_BUCKET_COUNT)) {
            return 0;
        }
        // Clamped in floating point: (int) of a huge count is Integer.MAX_VALUE, and 1 + that overflows.
        final double b = 1 + 2 * (Math.log(count / FIRST_BUCKET_COUNT) / Math.log(2));
        return (int) Math.min(RATE_BUCKETS - 1, b);
    }

    /** @return the quarter-octave bucket of a distance in bytes, counted in 4 KB blocks. */
    static int distanceBucket(final long distance) {
        final long x = (Math.max(0, distance) >>> 12) + 1;
        final int octave = 63 - Long.numberOfLeadingZeros(x);
        final int quarter = octave >= 2 ? (int) ((x >>> (octave - 2)) & 3) : (int) ((x << (2 - octave)) & 3);
        return Math.min(DISTANCE_BUCKETS - 1, octave * 4 + quarter);
    }

    @Override
    public String toString() {
        return "ReuseModel{sessions=" + sessions + ", rates=" + Arrays.toString(rates) + '}';
    }
}
