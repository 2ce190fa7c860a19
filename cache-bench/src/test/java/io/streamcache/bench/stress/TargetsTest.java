package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TargetsTest {
    private static final long MS = 1_000_000;

    private static Histogram histogram(final long nanos, final int count) {
        final Histogram h = new Histogram(StressMetrics.MAX_LATENCY_NANOS, 3);
        h.recordValueWithCount(nanos, count);
        return h;
    }

    /**
     * A run of one second per phase: {@code produced} MB/s per producer and per tail reader in
     * each phase (before, during, after), acks of {@code ackMs} each, appendAsync calls of
     * {@code callMicros}, and {@code stormMB} storm MB read during.
     */
    private static PhaseSplit run(final double[][] produced, final long[] ackMs, final long callMicros, final long stormMB) {
        final int producers = produced[0].length;
        final PhaseSplit split = new PhaseSplit(producers, producers);
        final long[] perProducer = new long[producers];
        long appended = 0;
        long storm = 0;
        for (final Phase p : Phase.values()) {
            for (int i = 0; i < producers; i++) {
                final long bytes = (long) (produced[p.ordinal()][i] * 1e6);
                perProducer[i] += bytes;
                appended += bytes;
            }
            if (p == Phase.DURING) {
                storm += stormMB * 1_000_000;
            }
            split.record(p, new PhaseSplit.Tick(1.0, histogram(ackMs[p.ordinal()] * MS, 1000), histogram(callMicros * 1000, 1000),
                histogram(1000, 10), histogram(1000, 10), histogram(MS, 10), appended, storm, appended, perProducer.clone(),
                perProducer.clone(), 0));
        }
        return split;
    }

    private static Targets.Target named(final List<Targets.Target> targets, final String prefix) {
        return targets.stream().filter(t -> t.name().startsWith(prefix)).findFirst().orElseThrow(() -> new AssertionError(prefix));
    }

    @Test
    void shouldMeetTheStormTargetsWhenTheStormLeavesTheProducersAlone() {
        final StressConfig config = StressConfig.parse(new String[] {"--scenario", "catchup-storm", "--duration", "30s"});
        final PhaseSplit split = run(new double[][] {{10, 10}, {9.5, 9.5}, {10, 10}}, new long[] {10, 14, 10}, 5, 200);
        final List<Targets.Target> targets = Targets.evaluate(config, split.phase(Phase.BEFORE), split, true);
        assertEquals(0.95, named(targets, "produce MB/s").value(), 1e-9);
        assertTrue(named(targets, "produce MB/s").met());
        assertEquals(1.4, named(targets, "ack p99").value(), 0.01);
        assertTrue(named(targets, "ack p99").met());
        assertEquals(200, named(targets, "catch-up storm").value(), 1e-9);
        assertTrue(named(targets, "catch-up storm").met());
        assertTrue(named(targets, "async call").met());
        assertTrue(named(targets, "every byte").met());
        assertTrue(targets.stream().noneMatch(t -> t.name().startsWith("slowest")), "per-client targets belong to the slow consumer");
    }

    @Test
    void shouldMissTheStormTargetsWhenProducersStall() {
        final StressConfig config = StressConfig.parse(new String[] {"--scenario", "catchup-storm", "--duration", "30s"});
        final PhaseSplit split = run(new double[][] {{10, 10}, {2, 3}, {10, 10}}, new long[] {10, 200, 10}, 2000, 40);
        final List<Targets.Target> targets = Targets.evaluate(config, split.phase(Phase.BEFORE), split, false);
        assertEquals(0.25, named(targets, "produce MB/s").value(), 1e-9);
        assertFalse(named(targets, "produce MB/s").met());
        assertFalse(named(targets, "ack p99").met());
        assertFalse(named(targets, "catch-up storm").met());
        final Targets.Target call = named(targets, "async call");
        assertFalse(call.met());
        assertTrue(call.detail().startsWith("appendAsync after; baseline phase's worst: 2.00 ms"), call.detail());
        assertFalse(named(targets, "every byte").met());
    }

    @Test
    void shouldJudgeEveryProducerAndConsumerAgainstItsOwnBaselineWithASlowConsumer() {
        final StressConfig config = StressConfig.parse(new String[] {"--scenario", "slow-consumer", "--duration", "30s"});
        // Producer 1 is the slowest one against its own before phase (4 of 5), though faster than producer 0 overall.
        final PhaseSplit split = run(new double[][] {{2, 5}, {2, 4}, {2, 5}}, new long[] {10, 10, 10}, 5, 0);
        final List<Targets.Target> targets = Targets.evaluate(config, split.phase(Phase.BEFORE), split, true);
        final Targets.Target producer = named(targets, "slowest producer");
        assertEquals(0.8, producer.value(), 1e-9);
        assertFalse(producer.met());
        assertTrue(producer.detail().startsWith("producer 1"), producer.detail());
        assertEquals(0.8, named(targets, "slowest tail consumer").value(), 1e-9);
        assertTrue(targets.stream().noneMatch(t -> t.name().startsWith("produce MB/s")), "storm targets need a storm");
    }

    @Test
    void shouldCompareAgainstAnotherRunsPhase() {
        final StressConfig config = StressConfig.parse(new String[] {"--scenario", "catchup-storm", "--duration", "30s"});
        final PhaseSplit baseline = run(new double[][] {{5, 5}, {20, 20}, {5, 5}}, new long[] {10, 10, 10}, 5, 0);
        final PhaseSplit scenario = run(new double[][] {{20, 20}, {19, 19}, {20, 20}}, new long[] {10, 10, 10}, 5, 200);
        final List<Targets.Target> targets = Targets.evaluate(config, baseline.phase(Phase.DURING), scenario, true);
        assertEquals(0.95, named(targets, "produce MB/s").value(), 1e-9);
    }

    @Test
    void shouldJudgeTheCallTimeInTheWorstPhaseNotOverTheWholeRun() {
        final StressConfig config = StressConfig.parse(new String[] {"--scenario", "catchup-storm", "--duration", "30s"});
        final PhaseSplit split = new PhaseSplit(1, 1);
        final Histogram none = new Histogram(StressMetrics.MAX_LATENCY_NANOS, 3);
        for (final Phase p : Phase.values()) {
            // 0.05% of all the calls take 50 ms, all of them during: under the run's p99.9, over the phase's.
            final Histogram calls = histogram(5_000, 10_000);
            if (p == Phase.DURING) {
                calls.recordValueWithCount(50 * MS, 15);
            }
            split.record(p, new PhaseSplit.Tick(1.0, histogram(MS, 10), calls, none, none, none, 1, 0, 1, new long[] {1}, new long[] {1}, 0));
        }
        final Targets.Target call = named(Targets.evaluate(config, split.phase(Phase.BEFORE), split, true), "async call");
        assertFalse(call.met(), call.valueText());
        assertTrue(call.detail().startsWith("appendAsync during"), call.detail());
        assertTrue(PhaseStats.micros(split.allPhases(0), 99.9) < 1000, "over the whole run it would have passed");
    }

    @Test
    void shouldCallARatioWithoutABaselineNotMet() {
        final Targets.Target t = new Targets.Target("x", Targets.ratio(1, 0), 0.9, true, "x", "");
        assertTrue(Double.isNaN(t.value()));
        assertFalse(t.met());
        assertEquals("n/a", t.valueText());
    }

    @Test
    void shouldTakeTheMedianOverRoundsAndTheWorstVerification() {
        final List<List<Targets.Target>> rounds = List.of(
            List.of(new Targets.Target("ratio", 0.5, 0.9, true, "x", ""), new Targets.Target("every byte verified", 1, 1, true, "", "")),
            List.of(new Targets.Target("ratio", 0.95, 0.9, true, "x", ""), new Targets.Target("every byte verified", 0, 1, true, "", "")),
            List.of(new Targets.Target("ratio", 0.92, 0.9, true, "x", ""), new Targets.Target("every byte verified", 1, 1, true, "", "")));
        final List<Targets.Target> median = Targets.median(rounds);
        assertEquals(0.92, median.get(0).value(), 1e-12);
        assertTrue(median.get(0).met());
        assertTrue(median.get(0).detail().contains("range 0.50x - 0.95x"), median.get(0).detail());
        assertEquals(0, median.get(1).value());
        assertFalse(median.get(1).met());
    }
}
