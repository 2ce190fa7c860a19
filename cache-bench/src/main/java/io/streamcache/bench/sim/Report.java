package io.streamcache.bench.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes simulator results as JSON and as an SVG chart (one panel per workload, hit ratio against
 * cache size, one line per policy), with the standard library only. Stateless, thread-safe.
 */
final class Report {
    private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#333333", "#9467bd", "#8c564b"};

    private Report() {
    }

    static String json(final long seed, final double scale, final double target, final int generations, final List<Trace> traces,
                       final List<Simulator.Result> results) {
        final StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"seed\": ").append(seed)
            .append(",\n  \"scale\": ").append(num(scale))
            .append(",\n  \"targetUtilization\": ").append(num(target))
            .append(",\n  \"generationsPerCapacity\": ").append(generations)
            .append(",\n  \"workloads\": [");
        for (int t = 0; t < traces.size(); t++) {
            final Trace trace = traces.get(t);
            sb.append(t == 0 ? "\n" : ",\n").append("    {\"name\": ").append(str(trace.name()))
                .append(", \"description\": ").append(str(trace.description()))
                .append(", \"streaming\": ").append(trace.streaming())
                .append(", \"events\": ").append(trace.size())
                .append(", \"blocks\": ").append(trace.keyCount())
                .append(", \"sizeNote\": ").append(str(trace.sizeNote())).append('}');
        }
        sb.append("\n  ],\n  \"results\": [");
        for (int i = 0; i < results.size(); i++) {
            final Simulator.Result r = results.get(i);
            sb.append(i == 0 ? "\n" : ",\n").append("    {\"workload\": ").append(str(r.workload()))
                .append(", \"policy\": ").append(str(r.policy()))
                .append(", \"cacheBlocks\": ").append(r.cacheBlocks())
                .append(", \"reads\": ").append(r.reads())
                .append(", \"hits\": ").append(r.hits())
                .append(", \"hitRatio\": ").append(num(r.hitRatio()))
                .append(", \"failedInserts\": ").append(r.failedInserts());
            sb.append(", \"byClass\": {");
            boolean first = true;
            for (int c = 0; c < Trace.CLASS_NAMES.size(); c++) {
                if (r.classReads()[c] == 0) {
                    continue;
                }
                sb.append(first ? "" : ", ").append(str(Trace.CLASS_NAMES.get(c))).append(": {\"reads\": ").append(r.classReads()[c])
                    .append(", \"hits\": ").append(r.classHits()[c]).append('}');
                first = false;
            }
            sb.append("}}");
        }
        sb.append("\n  ]\n}\n");
        return sb.toString();
    }

    static String svg(final List<Trace> traces, final List<String> policies, final List<Simulator.Result> results) {
        final int columns = 3;
        final int panelW = 300;
        final int panelH = 220;
        final int rows = (traces.size() + columns - 1) / columns;
        final int legendH = 40;
        final int width = columns * panelW + 20;
        final int height = rows * panelH + legendH + 10;
        final StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n",
            width, height, width, height));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        for (int p = 0; p < policies.size(); p++) {
            final int x = 20 + p * 150;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"20\" x2=\"%d\" y2=\"20\" stroke=\"%s\" stroke-width=\"3\"/>"
                + "<text x=\"%d\" y=\"24\">%s</text>%n", x, x + 24, COLORS[p % COLORS.length], x + 30, esc(policies.get(p))));
        }
        for (int t = 0; t < traces.size(); t++) {
            final Trace trace = traces.get(t);
            final int ox = 10 + (t % columns) * panelW;
            final int oy = legendH + (t / columns) * panelH;
            final int left = ox + 40;
            final int top = oy + 20;
            final int plotW = panelW - 60;
            final int plotH = panelH - 60;
            final long[] sizes = trace.cacheSizes();
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", left, oy + 12, esc(trace.name())));
            sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>%n",
                left, top, plotW, plotH));
            for (int g = 0; g <= 4; g++) {
                final double y = top + plotH - g * plotH / 4.0;
                sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>%n", left, y, left + plotW, y, left - 4, y + 4, g * 25));
            }
            for (int s = 0; s < sizes.length; s++) {
                sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
                    xOf(left, plotW, s, sizes.length), top + plotH + 14, sizes[s]));
            }
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">cache blocks</text>%n",
                left + plotW / 2, top + plotH + 30));
            for (int p = 0; p < policies.size(); p++) {
                final List<String> points = new ArrayList<>();
                for (int s = 0; s < sizes.length; s++) {
                    for (final Simulator.Result r : results) {
                        if (r.workload().equals(trace.name()) && r.policy().equals(policies.get(p)) && r.cacheBlocks() == sizes[s]) {
                            points.add(String.format(Locale.ROOT, "%.1f,%.1f", xOf(left, plotW, s, sizes.length),
                                top + plotH - r.hitRatio() * plotH));
                        }
                    }
                }
                sb.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n",
                    COLORS[p % COLORS.length], String.join(" ", points)));
            }
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static double xOf(final int left, final int plotW, final int index, final int count) {
        return count == 1 ? left + plotW / 2.0 : left + 10 + index * (plotW - 20.0) / (count - 1);
    }

    private static String num(final double v) {
        return String.format(Locale.ROOT, "%.6f", v);
    }

    private static String str(final String s) {
        final StringBuilder sb = new StringBuilder("\"");
        for (final char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    private static String esc(final String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
