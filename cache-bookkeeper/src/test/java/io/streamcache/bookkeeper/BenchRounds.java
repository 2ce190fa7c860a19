package io.streamcache.bookkeeper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Collects a benchmark's figures per cell over several rounds and prints each as its median and
 * [min, max] (the project's rule for benchmark figures): not thread-safe, one test thread fills it.
 * {@code -Dstreamcache.bk.bench.rounds=N} sets the rounds (default 3); the storages run in
 * alternating order round by round, so that drifts of the shared machine fall on each of them.
 */
final class BenchRounds {
    private final String[] columns;
    private final Map<String, List<double[]>> cells = new LinkedHashMap<>();

    /** @param columns the names of the figures of one cell, in the order {@link #add} takes them. */
    BenchRounds(final String... columns) {
        this.columns = columns.clone();
    }

    static int rounds() {
        final int rounds = Integer.getInteger("streamcache.bk.bench.rounds", 3);
        if (rounds < 1) {
            throw new IllegalArgumentException("streamcache.bk.bench.rounds=" + rounds + " must be >= 1");
        }
        return rounds;
    }

    /** @return the items in round {@code round}'s order: as given in even rounds, reversed in odd ones. */
    static <T> List<T> order(final List<T> items, final int round) {
        final List<T> ordered = new ArrayList<>(items);
        if (round % 2 == 1) {
            java.util.Collections.reverse(ordered);
        }
        return ordered;
    }

    /** Records one round's figures of cell {@code cell} (a Markdown row's leading columns, joined by " | "). */
    void add(final String cell, final double... figures) {
        if (figures.length != columns.length) {
            throw new IllegalArgumentException("figures=" + figures.length + " for columns=" + Arrays.toString(columns));
        }
        cells.computeIfAbsent(cell, c -> new ArrayList<>()).add(figures.clone());
    }

    /** @return a Markdown table: the cell's columns ({@code cellHeader}), then per figure "median [min, max]" over the rounds. */
    String table(final String cellHeader) {
        final StringBuilder out = new StringBuilder("| " + cellHeader + " | rounds |");
        for (final String column : columns) {
            out.append(' ').append(column).append(" |");
        }
        out.append('\n').append("|---".repeat(cellHeader.split("\\|").length + 1 + columns.length)).append("|\n");
        for (final Map.Entry<String, List<double[]>> cell : cells.entrySet()) {
            out.append("| ").append(cell.getKey()).append(" | ").append(cell.getValue().size()).append(" |");
            for (int c = 0; c < columns.length; c++) {
                final double[] values = new double[cell.getValue().size()];
                for (int r = 0; r < values.length; r++) {
                    values[r] = cell.getValue().get(r)[c];
                }
                Arrays.sort(values);
                final double median = values.length % 2 == 1 ? values[values.length / 2]
                    : (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
                out.append(' ').append(format(median)).append(" [").append(format(values[0])).append(", ")
                    .append(format(values[values.length - 1])).append("] |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    private static String format(final double value) {
        return Math.abs(value) >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }
}
