package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;

/**
 * The totals of one {@link Phase} of a run: its seconds, the bytes appended (overall and per
 * producer), read by each tail reader and by the catch-up storm, and the histograms of
 * acknowledgement latency and of the asynchronous methods' call times. Owned and written by the
 * sampler thread (through {@link PhaseSplit}), read once the run stopped.
 */
final class PhaseStats {
    private static final double MB = 1e6;

    final Phase phase;
    /** Seconds of the run that fell in this phase. */
    double seconds;
    long appendedBytes;
    long stormBytes;
    long verifiedBytes;
    final long[] producerBytes;
    final long[] tailReaderBytes;
    /** The most bytes the slow consumer held unreleased at a sample of this phase. */
    long slowHeldMax;
    /** Durable-append latency: from {@code appendAsync}'s call to the acknowledgement. */
    final Histogram ack = histogram();
    final Histogram appendCall = histogram();
    final Histogram readCall = histogram();
    final Histogram waitCall = histogram();
    /** Latency of the storm's reads, call to result. */
    final Histogram storm = histogram();

    PhaseStats(final Phase phase, final int producers, final int tailReaders) {
        this.phase = phase;
        this.producerBytes = new long[producers];
        this.tailReaderBytes = new long[tailReaders];
    }

    private static Histogram histogram() {
        return new Histogram(StressMetrics.MAX_LATENCY_NANOS, 3);
    }

    /** @return MB (10^6 bytes) acknowledged per second of the phase, 0 for an empty phase. */
    double produceMBps() {
        return rate(appendedBytes);
    }

    /** @return MB the catch-up storm read and verified per second of the phase. */
    double stormMBps() {
        return rate(stormBytes);
    }

    /** @return producer {@code i}'s acknowledged MB per second of the phase. */
    double producerMBps(final int i) {
        return rate(producerBytes[i]);
    }

    /** @return tail reader {@code i}'s MB read per second of the phase. */
    double tailReaderMBps(final int i) {
        return rate(tailReaderBytes[i]);
    }

    double tailMBps() {
        long sum = 0;
        for (final long b : tailReaderBytes) {
            sum += b;
        }
        return rate(sum);
    }

    /** @return appends acknowledged per second. */
    double appendsPerSec() {
        return seconds > 0 ? ack.getTotalCount() / seconds : 0;
    }

    private double rate(final long bytes) {
        return seconds > 0 ? bytes / MB / seconds : 0;
    }

    /** @return the histograms of the asynchronous methods' call times, in the order of {@link #CALL_NAMES}. */
    Histogram[] calls() {
        return new Histogram[] {appendCall, readCall, waitCall};
    }

    static final String[] CALL_NAMES = {"appendAsync", "readAsync/readThrough", "readOrWait"};

    /** @return {@code h}'s value at {@code percentile} in microseconds, 0 if it is empty. */
    static double micros(final Histogram h, final double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1e3;
    }

    /** @return {@code h}'s largest value in microseconds, 0 if it is empty. */
    static double maxMicros(final Histogram h) {
        return h.getTotalCount() == 0 ? 0 : h.getMaxValue() / 1e3;
    }
}
