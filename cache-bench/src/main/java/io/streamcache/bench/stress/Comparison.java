package io.streamcache.bench.stress;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The result of a {@code --compare}: each round's baseline run (the disturbance off) and
 * scenario run, their phases side by side, and the targets of each round (the scenario's
 * {@link Phase#DURING} against the baseline's) with the median over the rounds. Immutable once
 * built; used from the thread that ran the harness.
 */
final class Comparison {
    static final String BASELINE = "the during phase of the baseline run (the same flags, the disturbance off) in the same round";

    private final StressConfig config;
    private final List<Report> baselines;
    private final List<Report> scenarios;
    private final List<List<Targets.Target>> rounds = new ArrayList<>();
    private final List<Targets.Target> targets;

    Comparison(final StressConfig config, final List<Report> baselines, final List<Report> scenarios) {
        this.config = config;
        this.baselines = List.copyOf(baselines);
        this.scenarios = List.copyOf(scenarios);
        for (int r = 0; r < scenarios.size(); r++) {
            final Report base = baselines.get(r);
            final Report scenario = scenarios.get(r);
            rounds.add(Targets.evaluate(scenario.config(), base.phases().phase(Phase.DURING), scenario.phases(),
                base.passed() && scenario.passed()));
        }
        this.targets = Targets.median(rounds);
    }

    List<Targets.Target> targets() {
        return targets;
    }

    boolean passed() {
        return baselines.stream().allMatch(Report::passed) && scenarios.stream().allMatch(Report::passed);
    }

    void print(final PrintStream out) {
        out.println();
        out.printf(Locale.ROOT, "=== compare: scenario %s against its baseline, %d round%s ===%n", config.scenario(), rounds.size(),
            rounds.size() == 1 ? "" : "s");
        for (int r = 0; r < rounds.size(); r++) {
            PhaseTables.print(out, "base " + (r + 1), baselines.get(r).phases(), r == 0);
            PhaseTables.print(out, "scen " + (r + 1), scenarios.get(r).phases(), false);
        }
        PhaseTables.printTargets(out, BASELINE + (rounds.size() > 1 ? "; median over the rounds" : ""), targets);
        out.println("verification: " + (passed() ? "PASSED in every run" : "FAILED in a run (see its summary above)"));
    }

    Path writeJson(final Path file) throws IOException {
        final StringBuilder j = new StringBuilder(8192);
        j.append("{\n  \"tool\": \"streamcache stress --compare\",\n  \"scenario\": \"").append(config.scenario()).append("\",\n")
            .append("  \"config\": \"").append(Report.jsonEscape(config.toString())).append("\",\n")
            .append("  \"passed\": ").append(passed()).append(",\n")
            .append("  \"targetsBaseline\": \"").append(Report.jsonEscape(BASELINE)).append("\",\n  \"targets\": ");
        PhaseTables.json(j, targets);
        j.append(",\n  \"rounds\": [\n");
        for (int r = 0; r < rounds.size(); r++) {
            j.append("    {\"baseline\": ");
            PhaseTables.json(j, baselines.get(r).phases());
            j.append(",\n     \"scenario\": ");
            PhaseTables.json(j, scenarios.get(r).phases());
            j.append(",\n     \"targets\": ");
            PhaseTables.json(j, rounds.get(r));
            j.append(", \"passed\": ").append(baselines.get(r).passed() && scenarios.get(r).passed()).append('}')
                .append(r + 1 < rounds.size() ? ",\n" : "\n");
        }
        j.append("  ]\n}\n");
        return Files.writeString(file, j.toString(), StandardCharsets.UTF_8);
    }

    Path writeHtml(final Path file) throws IOException {
        final StringBuilder h = new StringBuilder(16384);
        h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
            .append("<title>streamcache stress comparison</title>\n<style>\n")
            .append("body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222;max-width:1400px}\n")
            .append("table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}\n")
            .append("th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}\n")
            .append(".pass{color:#1a7f37;font-weight:bold}.fail{color:#c62828;font-weight:bold}code{background:#f4f4f4;padding:1px 4px}\n")
            .append("</style>\n</head>\n<body>\n<h1>streamcache stress: ").append(Report.html(config.scenario()))
            .append(" against its baseline</h1>\n");
        h.append("<p class=\"").append(passed() ? "pass\">Every byte verified in every run." : "fail\">A run failed verification.")
            .append("</p>\n<p><code>").append(Report.html(config.toString())).append("</code></p>\n");
        h.append("<h2>Targets</h2>\n").append(PhaseTables.html(BASELINE + (rounds.size() > 1 ? "; median over the rounds" : ""), targets));
        h.append("<h2>Phases</h2>\n");
        final List<String> labels = new ArrayList<>();
        final List<PhaseSplit> runs = new ArrayList<>();
        for (int r = 0; r < rounds.size(); r++) {
            labels.add("baseline " + (r + 1));
            runs.add(baselines.get(r).phases());
            labels.add("scenario " + (r + 1));
            runs.add(scenarios.get(r).phases());
        }
        h.append(PhaseTables.html(labels, runs));
        h.append("<p>Each run's own report (charts over time): <code>baseline-N/report.html</code> and ")
            .append("<code>scenario-N/report.html</code> beside this file.</p>\n</body>\n</html>\n");
        return Files.writeString(file, h.toString(), StandardCharsets.UTF_8);
    }
}
