package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;

/**
 * Splits a run's per-second samples into its {@link Phase}s: each second's interval histograms
 * and counter increments are added to the totals of the phase the second belonged to. The
 * disturbance starts and stops right after a sample, so a second never straddles two phases.
 * Sampler thread only.
 */
final class PhaseSplit {
    /**
     * What one sample saw: the interval's seconds, its histograms (recorded over the interval)
     * and the counters so far (cumulative; the split takes their increments).
     */
    record Tick(double seconds, Histogram ack, Histogram appendCall, Histogram readCall, Histogram waitCall, Histogram storm,
                long appendedBytes, long stormBytes, long verifiedBytes, long[] producerBytes, long[] tailReaderBytes,
                long slowHeldBytes) {
    }

    private final PhaseStats[] phases;
    private long appendedBytes;
    private long stormBytes;
    private long verifiedBytes;
    private final long[] producerBytes;
    private final long[] tailReaderBytes;

    PhaseSplit(final int producers, final int tailReaders) {
        phases = new PhaseStats[Phase.values().length];
        for (final Phase p : Phase.values()) {
            phases[p.ordinal()] = new PhaseStats(p, producers, tailReaders);
        }
        producerBytes = new long[producers];
        tailReaderBytes = new long[tailReaders];
    }

    /** Adds {@code tick} to {@code phase}'s totals. */
    void record(final Phase phase, final Tick tick) {
        final PhaseStats s = phases[phase.ordinal()];
        s.seconds += tick.seconds();
        s.ack.add(tick.ack());
        s.appendCall.add(tick.appendCall());
        s.readCall.add(tick.readCall());
        s.waitCall.add(tick.waitCall());
        s.storm.add(tick.storm());
        s.appendedBytes += tick.appendedBytes() - appendedBytes;
        appendedBytes = tick.appendedBytes();
        s.stormBytes += tick.stormBytes() - stormBytes;
        stormBytes = tick.stormBytes();
        s.verifiedBytes += tick.verifiedBytes() - verifiedBytes;
        verifiedBytes = tick.verifiedBytes();
        for (int i = 0; i < producerBytes.length; i++) {
            s.producerBytes[i] += tick.producerBytes()[i] - producerBytes[i];
            producerBytes[i] = tick.producerBytes()[i];
        }
        for (int i = 0; i < tailReaderBytes.length; i++) {
            s.tailReaderBytes[i] += tick.tailReaderBytes()[i] - tailReaderBytes[i];
            tailReaderBytes[i] = tick.tailReaderBytes()[i];
        }
        s.slowHeldMax = Math.max(s.slowHeldMax, tick.slowHeldBytes());
    }

    PhaseStats phase(final Phase phase) {
        return phases[phase.ordinal()];
    }

    /** @return the call-time histogram of method {@code call} (an index of {@link PhaseStats#CALL_NAMES}) over every phase. */
    Histogram allPhases(final int call) {
        final Histogram h = new Histogram(StressMetrics.MAX_LATENCY_NANOS, 3);
        for (final PhaseStats s : phases) {
            h.add(s.calls()[call]);
        }
        return h;
    }
}
