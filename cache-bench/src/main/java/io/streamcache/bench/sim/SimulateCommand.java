package io.streamcache.bench.sim;

import java.io.IOException;
import java.io.PrintStream;
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
 * {@code simulate}: replays every workload against every policy at several cache sizes and
 * prints the read hit ratios side by side, with the targets checked; optionally writes
 * the results as JSON and an SVG chart. Runs on the calling thread.
 */
public final class SimulateCommand {
    static final String USAGE = String.join(System.lineSeparator(),
        "usage: java -jar streamcache-bench.jar simulate [flags]",
        "",
        "Replays synthetic streaming workloads and the cache2k key/value traces against the eviction",
        "policies (the real GenerationPolicy, HitmapPolicy and ReaderAwarePolicy, driven as the cache",
        "manager drives them) and two references, exact LRU and Belady's optimal, at several cache",
        "sizes; prints read hit ratios. Deterministic for a seed.",
        "",
        "  --workloads A,B,...           default: all of " + String.join(",", Workloads.NAMES),
        "  --policies A,B,...            default: all of " + String.join(",", Simulator.POLICIES)
            + "; also " + String.join(",", Simulator.EXTRA_POLICIES) + " (zipf only: knows the true popularities)",
        "  --seed N                      seed of the synthetic workloads (default 42)",
        "  --scale X                     length multiplier of the synthetic workloads (default 1.0)",
        "  --target-utilization U        the managed policies' pass target (default "
            + Simulator.TARGET_UTILIZATION_DEFAULT + ", the cache manager's)",
        "  --generations-per-capacity G  a generation every capacity/G accesses (default "
            + Simulator.GENERATIONS_PER_CAPACITY_DEFAULT + ")",
        "  --idle-timeout N              reader-aware's idle timeout in accesses (default " + Simulator.IDLE_TIMEOUT_DEFAULT + ")",
        "  --trace FILE[,FILE...]        also replay CSV traces (lines: segment,offset,length,reader; see CsvTrace)",
        "  --by-class                    also print each policy's hit ratio by reader class (tail, catch-up, follower, random)",
        "  --fill-admission              reader-aware: refuse read misses behind every live reader that rank at or below the last cut-off (ReaderAwarePolicy.admitFills; off by default)",
        "  --json FILE                   also write the results as JSON",
        "  --svg FILE                    also write a chart of hit ratio against cache size",
        "  --help");

    private SimulateCommand() {
    }

    /** @return the process exit code. */
    public static int run(final String[] args, final PrintStream out) throws IOException {
        List<String> workloads = Workloads.NAMES;
        List<String> policies = Simulator.POLICIES;
        long seed = 42;
        double scale = 1.0;
        double target = Simulator.TARGET_UTILIZATION_DEFAULT;
        int generations = Simulator.GENERATIONS_PER_CAPACITY_DEFAULT;
        Path json = null;
        Path svg = null;
        long idleTimeout = Simulator.IDLE_TIMEOUT_DEFAULT;
        final List<Path> csvTraces = new ArrayList<>();
        boolean byClass = false;
        boolean fillAdmission = false;
        try {
            for (int i = 0; i < args.length; i++) {
                final String flag = args[i];
                if (flag.equals("--help") || flag.equals("-h")) {
                    out.println(USAGE);
                    return 0;
                }
                if (flag.equals("--by-class")) {
                    byClass = true;
                    continue;
                }
                if (flag.equals("--fill-admission")) {
                    fillAdmission = true;
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("flag " + flag + " needs a value");
                }
                final String value = args[++i];
                switch (flag) {
                    case "--workloads" -> workloads = Arrays.asList(value.split(","));
                    case "--policies" -> policies = Arrays.asList(value.split(","));
                    case "--seed" -> seed = Long.parseLong(value);
                    case "--scale" -> scale = Double.parseDouble(value);
                    case "--target-utilization" -> target = Double.parseDouble(value);
                    case "--generations-per-capacity" -> generations = Integer.parseInt(value);
                    case "--json" -> json = Path.of(value);
                    case "--idle-timeout" -> idleTimeout = Long.parseLong(value);
                    case "--trace" -> {
                        for (final String file : value.split(",")) {
                            csvTraces.add(Path.of(file));
                        }
                    }
                    case "--svg" -> svg = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown flag " + flag);
                }
            }
            for (final String p : policies) {
                if (!Simulator.POLICIES.contains(p) && !Simulator.EXTRA_POLICIES.contains(p)) {
                    throw new IllegalArgumentException("unknown policy=" + p + " (expected one of " + Simulator.POLICIES + ")");
                }
            }
            for (final String w : workloads) {
                if (!Workloads.NAMES.contains(w)) {
                    throw new IllegalArgumentException("unknown workload=" + w + " (expected one of " + Workloads.NAMES + ")");
                }
            }
        } catch (final IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            return 2;
        }
        final Simulator simulator = new Simulator(target, generations, idleTimeout).fillAdmission(fillAdmission);
        final List<Object> sources = new ArrayList<>(workloads);
        sources.addAll(csvTraces);
        final List<Trace> traces = new ArrayList<>();
        final List<Simulator.Result> results = new ArrayList<>();
        out.printf(Locale.ROOT, "simulate: seed=%d scale=%s target-utilization=%s generations-per-capacity=%d idle-timeout=%d%n",
            seed, scale, target, generations, idleTimeout);
        out.println("read hit ratio, %; LRU and Belady use the whole capacity, the managed policies evict down to the target");
        for (final Object source : sources) {
            final Trace trace = source instanceof Path file ? CsvTrace.read(file) : Workloads.build((String) source, seed, scale);
            traces.add(trace);
            final int[] nextUses = policies.contains("belady") ? trace.nextUses() : null;
            out.println();
            out.printf(Locale.ROOT, "%s: %s%n  %,d events, %,d reads, %,d blocks; cache sizes in blocks, %s%n",
                trace.name(), trace.description(), trace.size(), trace.readCount(), trace.keyCount(), trace.sizeNote());
            final StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "  %10s", "blocks"));
            for (final String p : policies) {
                header.append(String.format(Locale.ROOT, " %13s", p));
            }
            out.println(header);
            for (final long size : trace.cacheSizes()) {
                final StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "  %10d", size));
                final Map<String, Simulator.Result> bySize = new LinkedHashMap<>();
                for (final String p : policies) {
                    final Simulator.Result r = simulator.run(trace, p, size, nextUses);
                    results.add(r);
                    bySize.put(p, r);
                    row.append(String.format(Locale.ROOT, " %13.2f", 100 * r.hitRatio()));
                }
                row.append("   ").append(targetNote(trace, bySize));
                out.println(row);
                if (byClass) {
                    printByClass(out, bySize);
                }
                out.flush();
            }
        }
        if (json != null) {
            Files.writeString(json, Report.json(seed, scale, target, generations, traces, results), StandardCharsets.UTF_8);
            out.println();
            out.println("wrote " + json);
        }
        if (svg != null) {
            Files.writeString(svg, Report.svg(traces, policies, results), StandardCharsets.UTF_8);
            out.println("wrote " + svg);
        }
        return 0;
    }

    /** One line per reader class that read anything: each policy's hit ratio on that class's reads. */
    private static void printByClass(final PrintStream out, final Map<String, Simulator.Result> bySize) {
        final Simulator.Result any = bySize.values().iterator().next();
        for (int c = 0; c < Trace.CLASS_NAMES.size(); c++) {
            if (any.classReads()[c] == 0) {
                continue;
            }
            final StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "  %10s", Trace.CLASS_NAMES.get(c)));
            for (final Simulator.Result r : bySize.values()) {
                row.append(String.format(Locale.ROOT, " %13.2f", 100 * r.hitRatio(c)));
            }
            row.append(String.format(Locale.ROOT, "   (%,d reads)", any.classReads()[c]));
            out.println(row);
        }
    }

    /**
     * The targets for one workload and size: on streaming workloads each reader-aware
     * variant (registered readers {@code ra}, inferred readers {@code auto}) at least at the best
     * of LRU, generations and Hitmap ({@code >=best}, with the margin in points) and within 5
     * points of Belady ({@code opt-5}); on key/value traces Hitmap at least at LRU.
     */
    static String targetNote(final Trace trace, final Map<String, Simulator.Result> r) {
        if (trace.streaming()) {
            double best = -1;
            for (final String p : List.of("lru", "generations", "hitmap")) {
                if (r.containsKey(p)) {
                    best = Math.max(best, 100 * r.get(p).hitRatio());
                }
            }
            final StringBuilder note = new StringBuilder();
            for (final String p : List.of("reader-aware", "reader-aware-auto")) {
                if (!r.containsKey(p)) {
                    continue;
                }
                final double ra = 100 * r.get(p).hitRatio();
                note.append(p.equals("reader-aware") ? "ra:" : " auto:");
                if (best >= 0) {
                    note.append(String.format(Locale.ROOT, ">=best:%s(%+.1f)", ra >= best ? "met" : "MISSED", ra - best));
                }
                if (r.containsKey("belady")) {
                    final double opt = 100 * r.get("belady").hitRatio();
                    note.append(opt - ra <= 5.0 ? ",opt-5:met" : ",opt-5:MISSED");
                }
            }
            return note.toString();
        }
        if (r.containsKey("hitmap") && r.containsKey("lru")) {
            return r.get("hitmap").hitRatio() >= r.get("lru").hitRatio() ? "hitmap>=lru:met" : "hitmap>=lru:MISSED";
        }
        return "";
    }
}
