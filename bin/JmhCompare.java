import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs the same JMH benchmarks from two benchmark jars (before and after a change) in one run,
 * interleaved round by round so that the machine's noise falls on both alike, and prints per
 * benchmark the median score of each jar over the rounds, its range, and after/before.
 *
 * <pre>
 *   java bin/JmhCompare.java BEFORE.jar AFTER.jar ROUNDS 'REGEX' [JMH ARGS...]
 *   java bin/JmhCompare.java before.jar cache-bench/target/streamcache-bench.jar 3 \
 *        'SegmentStoreBenchmark.(append|copyRead)$' -f 1 -wi 3 -i 5 -prof gc
 * </pre>
 * Each round runs the jars in alternating order (A B, then B A, ...). Scores are JMH's primary
 * results in each benchmark's own unit (lower is better for time per operation, higher for
 * throughput: the "better" column says which way the ratio points). With -prof gc, the
 * normalized allocation (B/op) of each is printed too. Needs only a JDK (single-file source).
 */
public final class JmhCompare {
    public static void main(final String[] args) throws IOException, InterruptedException {
        if (args.length < 4) {
            System.err.println("usage: java bin/JmhCompare.java BEFORE.jar AFTER.jar ROUNDS REGEX [JMH ARGS...]");
            System.exit(2);
        }
        final String[] jars = {args[0], args[1]};
        final int rounds = Integer.parseInt(args[2]);
        final String regex = args[3];
        final List<String> jmhArgs = Arrays.asList(args).subList(4, args.length);
        final Path out = Files.createTempDirectory("jmh-compare");
        // benchmark key -> [jar] -> scores over rounds
        final Map<String, List<List<Double>>> scores = new LinkedHashMap<>();
        final Map<String, List<List<Double>>> alloc = new LinkedHashMap<>();
        final Map<String, String> units = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < 2; k++) {
                final int jar = round % 2 == 0 ? k : 1 - k;
                final Path csv = out.resolve("r" + round + "-j" + jar + ".csv");
                final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-jar", jars[jar], "jmh", regex, "-rf", "csv", "-rff", csv.toString()));
                command.addAll(jmhArgs);
                System.err.printf(Locale.ROOT, "round %d/%d: %s%n", round + 1, rounds, jars[jar]);
                final Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(out.resolve("r" + round + "-j" + jar + ".log").toFile()).start();
                if (p.waitFor() != 0) {
                    System.err.println("JMH failed; see " + out.resolve("r" + round + "-j" + jar + ".log"));
                    System.exit(1);
                }
                for (final String line : Files.readAllLines(csv, StandardCharsets.UTF_8).subList(1, Files.readAllLines(csv).size())) {
                    final List<String> f = csv(line);
                    final String name = f.get(0);
                    final String key = name.replace("io.streamcache.bench.jmh.", "") + params(f);
                    final double score = Double.parseDouble(f.get(4));
                    if (name.endsWith(":gc.alloc.rate.norm") || name.endsWith(":·gc.alloc.rate.norm")) {
                        alloc.computeIfAbsent(key.replace(":gc.alloc.rate.norm", "").replace(":·gc.alloc.rate.norm", ""),
                            x -> lists()).get(jar).add(score);
                    } else if (!name.contains(":")) {
                        scores.computeIfAbsent(key, x -> lists()).get(jar).add(score);
                        units.put(key, f.get(6));
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "%-70s %-8s %24s %24s %7s %s%n", "benchmark", "unit", "before median [min, max]",
            "after median [min, max]", "after/before", "B/op before -> after");
        for (final Map.Entry<String, List<List<Double>>> e : scores.entrySet()) {
            final List<Double> a = e.getValue().get(0);
            final List<Double> b = e.getValue().get(1);
            final List<List<Double>> al = alloc.get(e.getKey());
            System.out.printf(Locale.ROOT, "%-70s %-8s %24s %24s %7.3f %s%n", e.getKey(), units.get(e.getKey()), summary(a),
                summary(b), median(b) / median(a), al == null ? "" : String.format(Locale.ROOT, "%.1f -> %.1f", median(al.get(0)),
                    median(al.get(1))));
        }
        System.out.println("(raw CSV and logs in " + out + ")");
    }

    private static List<List<Double>> lists() {
        return List.of(new ArrayList<>(), new ArrayList<>());
    }

    private static String params(final List<String> f) {
        final StringBuilder b = new StringBuilder();
        for (int i = 7; i < f.size(); i++) {
            if (!f.get(i).isEmpty()) {
                b.append(b.length() == 0 ? " (" : ", ").append(f.get(i));
            }
        }
        return b.length() == 0 ? "" : b.append(')').toString();
    }

    private static String summary(final List<Double> v) {
        if (v.isEmpty()) {
            return "-";
        }
        final double[] s = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return String.format(Locale.ROOT, "%.3g [%.3g, %.3g]", median(v), s[0], s[s.length - 1]);
    }

    private static double median(final List<Double> v) {
        if (v.isEmpty()) {
            return Double.NaN;
        }
        final double[] s = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Splits one CSV line as JMH writes it (fields quoted, no embedded quotes). */
    private static List<String> csv(final String line) {
        final List<String> out = new ArrayList<>();
        final StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            final char c = line.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }
}
