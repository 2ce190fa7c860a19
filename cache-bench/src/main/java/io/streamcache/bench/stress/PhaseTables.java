package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The phase tables and target tables of a {@code --scenario} run, as console text, JSON and
 * HTML, shared by a run's {@link Report} and a {@code --compare}'s {@link Comparison}.
 * Stateless.
 */
final class PhaseTables {
    private PhaseTables() {
    }

    /** Prints one row per phase of {@code phases}, each labelled {@code label} and the phase. */
    static void print(final PrintStream out, final String label, final PhaseSplit phases, final boolean header) {
        if (header) {
            out.printf(Locale.ROOT, "%-18s %6s %9s %9s %9s %9s %9s | %-29s | %9s %9s | %8s %8s %8s%n", "phase", "secs", "prod MB/s",
                "appends/s", "ack p50", "ack p99", "ack p99.9", "appendAsync call p50/p99/p99.9", "read call", "wait call",
                "storm", "tail", "held");
            out.printf(Locale.ROOT, "%-18s %6s %9s %9s %9s %9s %9s | %-29s | %9s %9s | %8s %8s %8s%n", "", "", "", "", "", "", "", "",
                "p99.9", "p99.9", "MB/s", "MB/s", "max");
        }
        for (final Phase p : Phase.values()) {
            final PhaseStats s = phases.phase(p);
            out.printf(Locale.ROOT, "%-18s %6.0f %9.1f %,9.0f %9s %9s %9s | %-29s | %9s %9s | %8.1f %8.1f %8s%n",
                label + " " + p.label(), s.seconds, s.produceMBps(), s.appendsPerSec(), us(s.ack, 50), us(s.ack, 99), us(s.ack, 99.9),
                us(s.appendCall, 50) + "/" + us(s.appendCall, 99) + "/" + us(s.appendCall, 99.9), us(s.readCall, 99.9),
                us(s.waitCall, 99.9), s.stormMBps(), s.tailMBps(), Report.formatBytes(s.slowHeldMax));
        }
    }

    /** Prints the targets, met or missed, with what each compared against. */
    static void printTargets(final PrintStream out, final String baseline, final List<Targets.Target> targets) {
        out.println("targets (baseline: " + baseline + "):");
        for (final Targets.Target t : targets) {
            out.printf(Locale.ROOT, "  %-50s %12s  limit %-10s %-6s %s%n", t.name(), t.valueText(), t.limitText(),
                t.met() ? "met" : "MISSED", t.detail());
        }
    }

    private static String us(final Histogram h, final double percentile) {
        return Report.formatMicros(PhaseStats.micros(h, percentile));
    }

    /** Appends {@code phases} as a JSON object (no trailing separator). */
    static void json(final StringBuilder j, final PhaseSplit phases) {
        j.append('{');
        final Phase[] all = Phase.values();
        for (int i = 0; i < all.length; i++) {
            final PhaseStats s = phases.phase(all[i]);
            j.append('"').append(all[i].label()).append("\": {")
                .append(num("seconds", s.seconds)).append(", ")
                .append(num("produceMBps", s.produceMBps())).append(", ")
                .append(num("appendsPerSec", s.appendsPerSec())).append(", ")
                .append(num("stormMBps", s.stormMBps())).append(", ")
                .append(num("tailMBps", s.tailMBps())).append(", ")
                .append("\"verifiedBytes\": ").append(s.verifiedBytes).append(", ")
                .append("\"slowHeldMaxBytes\": ").append(s.slowHeldMax).append(", ")
                .append("\"producerMBps\": ").append(rates(s, true)).append(", ")
                .append("\"tailReaderMBps\": ").append(rates(s, false)).append(", ")
                .append("\"ackMicros\": ").append(percentiles(s.ack)).append(", ")
                .append("\"appendAsyncCallMicros\": ").append(percentiles(s.appendCall)).append(", ")
                .append("\"readAsyncCallMicros\": ").append(percentiles(s.readCall)).append(", ")
                .append("\"readOrWaitCallMicros\": ").append(percentiles(s.waitCall)).append(", ")
                .append("\"stormReadMicros\": ").append(percentiles(s.storm)).append('}')
                .append(i + 1 < all.length ? ", " : "");
        }
        j.append('}');
    }

    /** Appends {@code targets} as a JSON array. */
    static void json(final StringBuilder j, final List<Targets.Target> targets) {
        j.append('[');
        for (int i = 0; i < targets.size(); i++) {
            final Targets.Target t = targets.get(i);
            j.append("{\"name\": \"").append(Report.jsonEscape(t.name())).append("\", ").append(num("value", t.value())).append(", ")
                .append(num("limit", t.limit())).append(", \"atLeast\": ").append(t.atLeast()).append(", \"met\": ").append(t.met())
                .append(", \"detail\": \"").append(Report.jsonEscape(t.detail())).append("\"}").append(i + 1 < targets.size() ? ", " : "");
        }
        j.append(']');
    }

    private static String rates(final PhaseStats s, final boolean producers) {
        final int n = producers ? s.producerBytes.length : s.tailReaderBytes.length;
        final StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            b.append(String.format(Locale.ROOT, "%.4f", producers ? s.producerMBps(i) : s.tailReaderMBps(i))).append(i + 1 < n ? ", " : "");
        }
        return b.append(']').toString();
    }

    private static String percentiles(final Histogram h) {
        return "{\"count\": " + h.getTotalCount() + ", " + num("p50", PhaseStats.micros(h, 50)) + ", " + num("p99", PhaseStats.micros(h, 99))
            + ", " + num("p99.9", PhaseStats.micros(h, 99.9)) + ", " + num("max", PhaseStats.maxMicros(h)) + "}";
    }

    private static String num(final String name, final double v) {
        return "\"" + name + "\": " + (Double.isFinite(v) ? String.format(Locale.ROOT, "%.4f", v) : "null");
    }

    /** @return an HTML table of the phases of each run, one row group per label. */
    static String html(final List<String> labels, final List<PhaseSplit> runs) {
        final StringBuilder h = new StringBuilder(4096);
        h.append("<table>\n<tr><th>phase</th><th>seconds</th><th>produce MB/s</th><th>appends/s</th><th>ack p50</th><th>ack p99</th>")
            .append("<th>ack p99.9</th><th>appendAsync call p50</th><th>p99</th><th>p99.9</th><th>readAsync / readThrough call p99.9</th>")
            .append("<th>readOrWait call p99.9</th><th>storm MB/s</th><th>tail MB/s</th><th>slow consumer held (max)</th></tr>\n");
        for (int r = 0; r < runs.size(); r++) {
            for (final Phase p : Phase.values()) {
                final PhaseStats s = runs.get(r).phase(p);
                h.append(String.format(Locale.ROOT, "<tr><td>%s %s</td><td>%.0f</td><td>%.1f</td><td>%,.0f</td><td>%s</td><td>%s</td>"
                        + "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%s</td></tr>%n",
                    Report.html(labels.get(r)), p.label(), s.seconds, s.produceMBps(), s.appendsPerSec(), us(s.ack, 50), us(s.ack, 99),
                    us(s.ack, 99.9), us(s.appendCall, 50), us(s.appendCall, 99), us(s.appendCall, 99.9), us(s.readCall, 99.9),
                    us(s.waitCall, 99.9), s.stormMBps(), s.tailMBps(), Report.formatBytes(s.slowHeldMax)));
            }
        }
        return h.append("</table>\n").toString();
    }

    /** @return an HTML table of the targets. */
    static String html(final String baseline, final List<Targets.Target> targets) {
        final StringBuilder h = new StringBuilder(2048);
        h.append("<p>Baseline: ").append(Report.html(baseline)).append(".</p>\n<table>\n<tr><th>target</th><th>measured</th>")
            .append("<th>limit</th><th>verdict</th><th>detail</th></tr>\n");
        for (final Targets.Target t : targets) {
            h.append("<tr><td>").append(Report.html(t.name())).append("</td><td>").append(Report.html(t.valueText())).append("</td><td>")
                .append(Report.html(t.limitText())).append("</td><td class=\"").append(t.met() ? "pass\">met" : "fail\">missed")
                .append("</td><td>").append(Report.html(t.detail())).append("</td></tr>\n");
        }
        return h.append("</table>\n").toString();
    }
}
