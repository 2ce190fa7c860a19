import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs the stress harness with several eviction policies, interleaved round by round so that the
 * machine's noise falls on every policy alike, and prints per policy the median hit ratio of each
 * reader class (tail, catch-up) and overall over the rounds, with the range (min..max) as the
 * error bar, then the order of the policies by median.
 *
 * <pre>
 *   java bin/StressCompare.java JAR ROUNDS POLICIES OUTDIR [STRESS FLAGS...]
 *   java bin/StressCompare.java cache-bench/target/streamcache-bench.jar 5 generations,hitmap,reader-aware \
 *        /tmp/stress-compare --ops 40000 --write-size 4096 --cache-size 16m --catchup-readers 2 --catchup-share 0.5
 * </pre>
 * Round r runs the policies in the list's order rotated by r. Every run writes its folder
 * {@code OUTDIR/<policy>-<round>} (summary.json, report.html, the console output in run.log);
 * a failed run (exit code not 0) stops the comparison. Needs only a JDK (single-file source).
 */
public final class StressCompare {
    private static final Pattern CLASS = Pattern.compile("\"(tail|catchUp)\": \\{\"reads\": (\\d+), \"hits\": (\\d+), \"hitRatio\": ([0-9.eE-]+)\\}");
    private static final Pattern OVERALL = Pattern.compile("\"cache\": \\{[^}]*\"hitRatio\": ([0-9.eE-]+)");
    private static final Pattern SHARE = Pattern.compile("\"catchUpShare\": ([0-9.eE-]+)");
    private static final String[] COLUMNS = {"overall", "tail", "catchUp", "share"};

    public static void main(final String[] args) throws IOException, InterruptedException {
        if (args.length < 4) {
            System.err.println("usage: java bin/StressCompare.java JAR ROUNDS POLICIES OUTDIR [STRESS FLAGS...]");
            System.exit(2);
        }
        final String jar = args[0];
        final int rounds = Integer.parseInt(args[1]);
        final List<String> policies = Arrays.asList(args[2].split(","));
        final Path out = Path.of(args[3]);
        final List<String> flags = Arrays.asList(args).subList(4, args.length);
        Files.createDirectories(out);
        // policy -> column -> values over rounds
        final Map<String, Map<String, List<Double>>> results = new LinkedHashMap<>();
        for (final String policy : policies) {
            final Map<String, List<Double>> columns = new LinkedHashMap<>();
            for (final String c : COLUMNS) {
                columns.put(c, new ArrayList<>());
            }
            results.put(policy, columns);
        }
        for (int round = 0; round < rounds; round++) {
            final List<String> order = new ArrayList<>(policies);
            Collections.rotate(order, -round);
            for (final String policy : order) {
                final Path dir = out.resolve(policy + "-" + round);
                Files.createDirectories(dir);
                final List<String> command = new ArrayList<>(List.of(javaBinary(), "-jar", jar, "stress", "--policy", policy,
                    "--out", dir.toString()));
                command.addAll(flags);
                final Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("run.log").toFile()).start();
                final int code = process.waitFor();
                if (code != 0) {
                    System.err.println("run " + dir + " failed with exit code " + code + "; see " + dir.resolve("run.log"));
                    System.exit(1);
                }
                final String json = Files.readString(dir.resolve("summary.json"), StandardCharsets.UTF_8);
                final Map<String, List<Double>> columns = results.get(policy);
                final Matcher overall = OVERALL.matcher(json);
                columns.get("overall").add(overall.find() ? 100 * Double.parseDouble(overall.group(1)) : Double.NaN);
                final Matcher byClass = CLASS.matcher(json);
                while (byClass.find()) {
                    columns.get(byClass.group(1)).add(100 * Double.parseDouble(byClass.group(4)));
                }
                final Matcher share = SHARE.matcher(json);
                columns.get("share").add(share.find() ? 100 * Double.parseDouble(share.group(1)) : Double.NaN);
                System.out.printf(Locale.ROOT, "round %d %-14s overall %6.2f  tail %6.2f  catch-up %6.2f  (catch-up share %.1f%%)%n",
                    round, policy, last(columns.get("overall")), last(columns.get("tail")), last(columns.get("catchUp")),
                    last(columns.get("share")));
            }
        }
        System.out.printf(Locale.ROOT, "%nhit ratio, %%, median [min..max] over %d rounds%n", rounds);
        System.out.printf(Locale.ROOT, "%-14s %-24s %-24s %-24s %s%n", "policy", "overall", "tail", "catch-up", "catch-up share");
        for (final Map.Entry<String, Map<String, List<Double>>> e : results.entrySet()) {
            System.out.printf(Locale.ROOT, "%-14s %-24s %-24s %-24s %s%n", e.getKey(), summary(e.getValue().get("overall")),
                summary(e.getValue().get("tail")), summary(e.getValue().get("catchUp")), summary(e.getValue().get("share")));
        }
        for (final String column : new String[] {"overall", "catchUp", "tail"}) {
            final List<String> order = new ArrayList<>(policies);
            order.sort((a, b) -> Double.compare(median(results.get(b).get(column)), median(results.get(a).get(column))));
            System.out.println("order by " + column + " (best first): " + String.join(" > ", order));
        }
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java" + (File.separatorChar == '\\' ? ".exe" : "")).toString();
    }

    private static double last(final List<Double> values) {
        return values.isEmpty() ? Double.NaN : values.get(values.size() - 1);
    }

    private static double median(final List<Double> values) {
        final List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        final int n = sorted.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String summary(final List<Double> values) {
        return String.format(Locale.ROOT, "%.2f [%.2f..%.2f]", median(values), Collections.min(values), Collections.max(values));
    }
}
