package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PhaseSplitTest {
    private static Histogram histogram(final long... nanos) {
        final Histogram h = new Histogram(StressMetrics.MAX_LATENCY_NANOS, 3);
        for (final long v : nanos) {
            h.recordValue(v);
        }
        return h;
    }

    /** A tick whose counters so far are {@code appended} (split as given over two producers), {@code storm} and {@code tail}. */
    private static PhaseSplit.Tick tick(final Histogram ack, final long p0, final long p1, final long storm, final long tail,
                                        final long held) {
        return new PhaseSplit.Tick(1.0, ack, histogram(1_000), histogram(), histogram(2_000), histogram(), p0 + p1, storm, p0 + p1 + tail,
            new long[] {p0, p1}, new long[] {tail}, held);
    }

    @Test
    void shouldAddEachSecondToItsPhaseAndTakeTheCountersIncrements() {
        final PhaseSplit split = new PhaseSplit(2, 1);
        split.record(Phase.BEFORE, tick(histogram(1_000_000), 1_000_000, 1_000_000, 0, 2_000_000, 0));
        split.record(Phase.BEFORE, tick(histogram(1_000_000, 3_000_000), 2_000_000, 2_000_000, 0, 4_000_000, 0));
        split.record(Phase.DURING, tick(histogram(50_000_000), 2_500_000, 2_000_000, 300_000_000, 4_500_000, 7_000));
        split.record(Phase.AFTER, tick(histogram(2_000_000), 3_500_000, 3_000_000, 300_000_000, 6_500_000, 0));

        final PhaseStats before = split.phase(Phase.BEFORE);
        assertEquals(2.0, before.seconds);
        assertEquals(4_000_000, before.appendedBytes);
        assertEquals(2.0, before.produceMBps(), 1e-9);
        assertEquals(1.0, before.producerMBps(0), 1e-9);
        assertEquals(2.0, before.tailReaderMBps(0), 1e-9);
        assertEquals(3, before.ack.getTotalCount());
        assertEquals(1.5, before.appendsPerSec(), 1e-9);
        assertEquals(0, before.stormMBps());

        final PhaseStats during = split.phase(Phase.DURING);
        assertEquals(1.0, during.seconds);
        assertEquals(500_000, during.appendedBytes);
        assertEquals(0.5, during.producerMBps(0), 1e-9);
        assertEquals(0.0, during.producerMBps(1), 1e-9, "producer 1 stalled for the whole phase");
        assertEquals(300.0, during.stormMBps(), 1e-9);
        assertEquals(7_000, during.slowHeldMax);
        assertEquals(50_000.0, PhaseStats.micros(during.ack, 99), 50_000 * 0.001, "only this phase's acks");

        final PhaseStats after = split.phase(Phase.AFTER);
        assertEquals(2_000_000, after.appendedBytes);
        assertEquals(0, after.stormBytes);
        assertEquals(0, after.slowHeldMax);
        assertEquals(2_000_000 + 2_000_000, after.verifiedBytes);

        assertEquals(4, split.allPhases(0).getTotalCount(), "appendAsync calls of every phase");
        assertEquals(0, split.allPhases(1).getTotalCount());
        assertEquals(4, split.allPhases(2).getTotalCount());
    }

    @Test
    void shouldLeaveAPhaseWithNoSecondAtZeroRates() {
        final PhaseSplit split = new PhaseSplit(1, 1);
        split.record(Phase.BEFORE, new PhaseSplit.Tick(1.0, histogram(1_000), histogram(), histogram(), histogram(), histogram(), 10, 0, 0,
            new long[] {10}, new long[] {0}, 0));
        final PhaseStats during = split.phase(Phase.DURING);
        assertEquals(0, during.seconds);
        assertEquals(0, during.produceMBps());
        assertEquals(0, during.appendsPerSec());
        assertEquals(0, PhaseStats.micros(during.ack, 99));
    }
}
