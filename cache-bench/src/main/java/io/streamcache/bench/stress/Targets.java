package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The isolation targets of a {@code --scenario} run, measured against a baseline phase with the
 * disturbance off: the baseline run's {@link Phase#DURING} with {@code --compare}, else the run's
 * own {@link Phase#BEFORE}. Ratios within one invocation keep a shared machine's load out of
 * the verdict as far as it is steady. Stateless; the values it returns are immutable.
 *
 * <ul>
 *   <li>catch-up storm: produce MB/s at least {@value #PRODUCE_RATIO_MIN}x, acknowledgement p99 at
 *       most {@value #ACK_P99_RATIO_MAX}x the baseline's, the storm itself at least
 *       {@value #STORM_MBPS_MIN} MB/s from the log;</li>
 *   <li>slow consumer: every producer and every tail consumer at least {@value #CLIENT_RATIO_MIN}x
 *       its own baseline throughput;</li>
 *   <li>always: the asynchronous methods return to their caller within
 *       {@value #CALL_P999_MAX_MICROS} us at p99.9 in each phase of the disturbed run (the worst
 *       method in the worst phase: over the whole run, a stall confined to the disturbance would
 *       hide below the 99.9th percentile), and every byte read verified.</li>
 * </ul>
 */
final class Targets {
    static final double PRODUCE_RATIO_MIN = 0.9;
    static final double ACK_P99_RATIO_MAX = 1.5;
    static final double STORM_MBPS_MIN = 150;
    static final double CLIENT_RATIO_MIN = 0.9;
    static final double CALL_P999_MAX_MICROS = 1000;

    private Targets() {
    }

    /**
     * One target and what a run measured; {@code atLeast}: the value must reach the limit (else stay at or under it).
     *
     * @param detail what the value is made of (e.g. which method was the worst), for the table.
     */
    record Target(String name, double value, double limit, boolean atLeast, String unit, String detail) {
        boolean met() {
            return Double.isFinite(value) && (atLeast ? value >= limit : value <= limit);
        }

        String limitText() {
            return (atLeast ? ">= " : "<= ") + format(limit, unit);
        }

        String valueText() {
            return format(value, unit);
        }

        static String format(final double v, final String unit) {
            if (!Double.isFinite(v)) {
                return "n/a";
            }
            switch (unit) {
                case "x": return String.format(Locale.ROOT, "%.2fx", v);
                case "us": return Report.formatMicros(v);
                case "MB/s": return String.format(Locale.ROOT, "%.1f MB/s", v);
                default: return v >= 1 ? "yes" : "no";
            }
        }
    }

    /**
     * @param baseline the phase the disturbed run's {@link Phase#DURING} is compared with.
     * @param run      the disturbed run's phases.
     * @param verified whether every run involved verified every byte it read.
     * @return the targets of {@code config}'s scenario, in a fixed order.
     */
    static List<Target> evaluate(final StressConfig config, final PhaseStats baseline, final PhaseSplit run, final boolean verified) {
        final PhaseStats during = run.phase(Phase.DURING);
        final List<Target> targets = new ArrayList<>();
        if (config.storm) {
            targets.add(new Target("produce MB/s during the storm / baseline", ratio(during.produceMBps(), baseline.produceMBps()),
                PRODUCE_RATIO_MIN, true, "x", String.format(Locale.ROOT, "%.1f / %.1f MB/s", during.produceMBps(), baseline.produceMBps())));
            final double p99 = PhaseStats.micros(during.ack, 99);
            final double baseP99 = PhaseStats.micros(baseline.ack, 99);
            targets.add(new Target("ack p99 during the storm / baseline", ratio(p99, baseP99), ACK_P99_RATIO_MAX, false, "x",
                Report.formatMicros(p99) + " / " + Report.formatMicros(baseP99)));
            targets.add(new Target("catch-up storm MB/s from the log", during.stormMBps(), STORM_MBPS_MIN, true, "MB/s",
                config.stormReaders + " readers"));
        }
        if (config.slowConsumer) {
            int worst = -1;
            double min = Double.POSITIVE_INFINITY;
            for (int i = 0; i < during.producerBytes.length; i++) {
                final double r = ratio(during.producerMBps(i), baseline.producerMBps(i));
                if (!(r >= min)) {
                    min = r;
                    worst = i;
                }
            }
            if (worst >= 0) {
                targets.add(new Target("slowest producer MB/s during / its baseline", min, CLIENT_RATIO_MIN, true, "x",
                    String.format(Locale.ROOT, "producer %d: %.2f / %.2f MB/s", worst, during.producerMBps(worst),
                        baseline.producerMBps(worst))));
            }
        }
        if (config.slowConsumer) {
            int worst = -1;
            double min = Double.POSITIVE_INFINITY;
            for (int i = 0; i < during.tailReaderBytes.length; i++) {
                final double r = ratio(during.tailReaderMBps(i), baseline.tailReaderMBps(i));
                if (!(r >= min)) {
                    min = r;
                    worst = i;
                }
            }
            if (worst >= 0) {
                targets.add(new Target("slowest tail consumer MB/s during / its baseline", min, CLIENT_RATIO_MIN, true, "x",
                    String.format(Locale.ROOT, "tail reader %d: %.2f / %.2f MB/s", worst, during.tailReaderMBps(worst),
                        baseline.tailReaderMBps(worst))));
            }
        }
        double worstCall = 0;
        String worstName = "none";
        for (final Phase p : Phase.values()) {
            final Histogram[] calls = run.phase(p).calls();
            for (int c = 0; c < calls.length; c++) {
                final double p999 = PhaseStats.micros(calls[c], 99.9);
                if (calls[c].getTotalCount() > 0 && p999 >= worstCall) {
                    worstCall = p999;
                    worstName = PhaseStats.CALL_NAMES[c] + " " + p.label();
                }
            }
        }
        double baseCall = 0;
        for (final Histogram h : baseline.calls()) {
            baseCall = Math.max(baseCall, PhaseStats.micros(h, 99.9));
        }
        targets.add(new Target("async call time p99.9, worst method and phase", worstCall, CALL_P999_MAX_MICROS, false, "us",
            worstName + "; baseline phase's worst: " + Report.formatMicros(baseCall)));
        targets.add(new Target("every byte verified", verified ? 1 : 0, 1, true, "", ""));
        return List.copyOf(targets);
    }

    /** @return {@code value / base}, NaN if the base is 0 (nothing to compare with). */
    static double ratio(final double value, final double base) {
        return base > 0 ? value / base : Double.NaN;
    }

    /**
     * @param rounds the targets of each round, each in {@link #evaluate}'s order.
     * @return one target per name: the median value over the rounds ("every byte verified": the
     *     worst), its detail saying the range.
     */
    static List<Target> median(final List<List<Target>> rounds) {
        if (rounds.size() == 1) {
            return rounds.get(0);
        }
        final List<Target> first = rounds.get(0);
        final List<Target> out = new ArrayList<>();
        for (int t = 0; t < first.size(); t++) {
            final double[] values = new double[rounds.size()];
            for (int r = 0; r < rounds.size(); r++) {
                values[r] = rounds.get(r).get(t).value();
            }
            final Target f = first.get(t);
            final double[] sorted = values.clone();
            Arrays.sort(sorted);
            final double value = f.unit().isEmpty() ? sorted[0] : median(sorted);
            out.add(new Target(f.name(), value, f.limit(), f.atLeast(), f.unit(), f.unit().isEmpty() ? ""
                : "median of " + values.length + ", range " + Target.format(sorted[0], f.unit()) + " - "
                    + Target.format(sorted[sorted.length - 1], f.unit())));
        }
        return List.copyOf(out);
    }

    /** @return the median of sorted {@code values} (NaN sorts last, so a NaN median means most rounds had none). */
    static double median(final double[] sorted) {
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
