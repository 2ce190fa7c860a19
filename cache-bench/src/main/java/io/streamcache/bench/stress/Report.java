package io.streamcache.bench.stress;

import io.streamcache.core.cache.CacheStats;
import io.streamcache.segmentstore.IsolationStats;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The results of one stress run, taken once it stopped: the console summary, {@code summary.json}
 * and the self-contained {@code report.html} (inline SVG charts, no scripts). Immutable once
 * built; used from the thread that ran the harness.
 */
final class Report {
    /** Percentiles of the latency tables, in the order of their columns. */
    static final double[] PERCENTILES = {50, 90, 99, 99.9};
    private static final double MB = 1e6;

    private final StressConfig config;
    private final Instant startedAt;
    private final double seconds;
    private final boolean interrupted;
    private final StressMetrics metrics;
    private final String mismatch;
    private final Throwable error;
    private final List<Sample> samples;
    private final CacheStats cacheStats;
    private final CacheManagerStats managerStats;
    private final boolean readersConfigured;
    /** Read results still pinning entries once every reader ended; -1 if a reader had not ended. */
    private final long unreleasedResults;
    private final Footprint footprint;
    private final PolicyStats policyStats;
    /** The phases of a {@code --scenario} run, or null. */
    private final PhaseSplit phases;
    private final String firstRefusal;
    /** How the store kept readers and writers apart, at the end of the run. */
    private final IsolationStats isolation;
    private final long slowRefusals;

    Report(final StressConfig config, final Instant startedAt, final double seconds, final boolean interrupted, final StressRun run,
           final List<Sample> samples, final CacheStats cacheStats, final CacheManagerStats managerStats, final Footprint footprint,
           final PolicyStats policyStats, final boolean readersEnded, final PhaseSplit phases, final String firstRefusal,
           final IsolationStats isolation) {
        this.config = config;
        this.startedAt = startedAt;
        this.seconds = Math.max(seconds, 1e-9);
        this.interrupted = interrupted;
        this.metrics = run.metrics;
        this.mismatch = run.firstMismatch.get();
        this.error = run.firstError.get();
        this.samples = List.copyOf(samples);
        this.cacheStats = cacheStats;
        this.managerStats = managerStats;
        this.readersConfigured = config.tailReaders + config.catchupReaders > 0;
        this.footprint = footprint;
        this.policyStats = policyStats;
        this.unreleasedResults = readersEnded ? managerStats.pinnedResults() : -1;
        this.phases = phases;
        this.firstRefusal = firstRefusal;
        this.isolation = isolation;
        this.slowRefusals = run.metrics.slowRefusals.sum();
    }

    /** Baseline of a single scenario run's targets. */
    static final String OWN_BEFORE = "the before phase of the same run";

    boolean interrupted() {
        return interrupted;
    }

    StressConfig config() {
        return config;
    }

    /** @return the run's phases, or null without {@code --scenario}. */
    PhaseSplit phases() {
        return phases;
    }

    /** @return the targets against this run's own before phase, or an empty list without a disturbance. */
    List<Targets.Target> ownTargets() {
        if (phases == null || !(config.storm || config.slowConsumer)) {
            return List.of();
        }
        return Targets.evaluate(config, phases.phase(Phase.BEFORE), phases, passed());
    }

    /** @return the store's isolation counters as one line of prose. */
    String isolationNote() {
        final IsolationStats i = isolation;
        return String.format(Locale.ROOT, "isolation: %,d appends waited for room (%s in all), %,d refused; fills %,d admitted (%s), "
                + "%,d refused for no room, %,d for the budget, %,d to spare live readers' unread bytes; read budget %s, %,d reads waited for it (%s in all), %,d refused; "
                + "%,d reads past the end, %,d handed off (segment lock held); range buffers %s, %,d ranges on the heap",
            i.appendRoomWaits(), formatMicros(i.appendRoomWaitNanos() / 1e3), i.appendRoomRefusals(),
            i.fillsAdmitted(), formatBytes(i.fillBytesAdmitted()), i.fillsRefusedNoRoom(), i.fillsRefusedBudget(),
            i.fillsRefusedUnread(), formatBytes(i.readBudgetBytes()), i.readBudgetWaits(), formatMicros(i.readBudgetWaitNanos() / 1e3), i.readBudgetRefusals(),
            i.readsPastEnd(), i.readsHandedOff(), formatBytes(i.rangeBufferBytes()), i.rangeHeapFallbacks());
    }

    private String refusalNote() {
        return config.slowConsumer ? String.format(Locale.ROOT, "slow consumer: %,d reads refused or timed out (%s)", slowRefusals,
            firstRefusal == null ? "none" : "first: " + firstRefusal) : "";
    }

    /** @return the mean of {@code value} over the samples, 0 without samples. */
    private double meanOf(final ToDoubleFunction<Sample> value) {
        double sum = 0;
        for (final Sample sample : samples) {
            sum += value.applyAsDouble(sample);
        }
        return samples.isEmpty() ? 0 : sum / samples.size();
    }

    /** @return the largest {@code value} over the samples, 0 without samples. */
    private double maxOf(final ToDoubleFunction<Sample> value) {
        double max = 0;
        for (final Sample sample : samples) {
            max = Math.max(max, value.applyAsDouble(sample));
        }
        return max;
    }

    /**
     * @return whether the run verified: no mismatch, no failure, bytes verified if there were
     *         readers, and no read result left unreleased once the readers ended.
     */
    boolean passed() {
        return mismatch == null && error == null && (!readersConfigured || metrics.bytesVerified.sum() > 0) && unreleasedResults <= 0;
    }

    String verdict() {
        if (mismatch != null) {
            return "FAILED: mismatch at " + mismatch;
        }
        if (error != null) {
            return "FAILED: " + error.getMessage();
        }
        if (readersConfigured && metrics.bytesVerified.sum() == 0) {
            return "FAILED: no byte was read, so none was verified";
        }
        if (unreleasedResults > 0) {
            return "FAILED: " + unreleasedResults + " read results never released (their entries stay pinned)";
        }
        return "PASSED: " + formatBytes(metrics.bytesVerified.sum()) + " read and verified, every append landed at its offset";
    }

    void print(final PrintStream out) {
        out.println();
        if (interrupted) {
            out.println("interrupted: the summary so far");
        }
        out.printf(Locale.ROOT, "%-14s %12s %10s %10s %10s %10s %10s %10s%n", "operation", "count", "avg", "p50", "p90", "p99", "p99.9",
            "max");
        for (final StressMetrics.Op op : metrics.ops()) {
            final Histogram h = op.total;
            out.printf(Locale.ROOT, "%-14s %,12d %10s %10s %10s %10s %10s %10s%n", op.name, h.getTotalCount(),
                formatMicros(h.getTotalCount() == 0 ? 0 : h.getMean() / 1e3), pct(h, 50), pct(h, 90), pct(h, 99), pct(h, 99.9),
                formatMicros(h.getTotalCount() == 0 ? 0 : h.getMaxValue() / 1e3));
        }
        out.printf(Locale.ROOT, "throughput: %,.0f appends/s, %.1f MB/s appended; %,.0f reads/s, %.1f MB/s read, over %.1f s%n",
            metrics.append.total.getTotalCount() / seconds, metrics.append.bytes.sum() / MB / seconds,
            readCount() / seconds, readBytes() / MB / seconds, seconds);
        out.printf(Locale.ROOT, "cache: utilization %.1f%%, hit ratio %.1f%% (%,d hits, %,d reads through the log, %s from the log), "
                + "%,d evictions (%s)%n", cacheStats.utilization() * 100, metrics.hitRatio() * 100, metrics.cacheHits.sum(),
            metrics.cacheMisses.sum(), formatBytes(metrics.logBytes.sum()), managerStats.evictions(), formatBytes(managerStats.evictedBytes()));
        out.printf(Locale.ROOT, "reads through the log: tail %,d of %,d, catch-up %,d of %,d (%.1f%%)%n", metrics.tailRead.throughLog.sum(),
            metrics.tailRead.total.getTotalCount(), metrics.catchupRead.throughLog.sum(), metrics.catchupRead.total.getTotalCount(),
            100.0 * metrics.catchupRead.throughLog.sum() / Math.max(1, metrics.catchupRead.total.getTotalCount()));
        out.printf(Locale.ROOT, "hits by reader class: tail %.2f%% of %,d reads, catch-up %.2f%% of %,d reads (catch-up share %.1f%%)%n",
            metrics.tailRead.hitRatio() * 100, metrics.tailRead.reads.sum(), metrics.catchupRead.hitRatio() * 100,
            metrics.catchupRead.reads.sum(), 100.0 * metrics.catchupRead.reads.sum()
                / Math.max(1, metrics.catchupRead.reads.sum() + metrics.tailRead.reads.sum()));
        out.println("eviction policy: " + policyStats.describe());
        out.printf(Locale.ROOT, "reader lag: tail %s (%s) mean, %s max; catch-up %s (%s) mean, %s max%n",
            formatBytes((long) meanOf(Sample::tailLagBytes)), formatSeconds(meanOf(Sample::tailLagSeconds)),
            formatBytes((long) maxOf(Sample::tailLagMaxBytes)), formatBytes((long) meanOf(Sample::catchupLagBytes)),
            formatSeconds(meanOf(Sample::catchupLagSeconds)), formatBytes((long) maxOf(Sample::catchupLagMaxBytes)));
        out.printf(Locale.ROOT, "log: %s on disk at the end, %s at most; %,d truncations (%s), %,d files deleted, %,d reads skipped "
                + "truncated bytes%n", formatBytes(footprint.diskBytes()), formatBytes(footprint.diskBytesMax()), metrics.truncations.sum(),
            formatBytes(metrics.truncatedBytes.sum()), footprint.logFilesDeleted(), metrics.truncatedSkips.sum());
        out.printf(Locale.ROOT, "memory: heap %s after GC for %s cached (%s of cache memory): %,.0f heap bytes per cached MB%n",
            formatBytes(footprint.heapUsedAfterGc()), formatBytes(footprint.cachedBytes()), formatBytes(footprint.cacheUsedBytes()),
            footprint.heapBytesPerCachedMB());
        out.println(isolationNote());
        out.printf(Locale.ROOT, "reads: %,d results pinned at the end%s, %,d leaks reported%n", managerStats.pinnedResults(),
            unreleasedResults < 0 ? " (a reader had not ended)" : "", managerStats.leakedResults());
        if (phases != null) {
            out.println("phases (scenario " + config.scenario() + ", disturbance from " + config.disturbAt.toSeconds() + " s for "
                + config.disturbFor.toSeconds() + " s):");
            PhaseTables.print(out, "", phases, true);
            if (config.slowConsumer) {
                out.println(refusalNote());
            }
            final List<Targets.Target> targets = ownTargets();
            if (!targets.isEmpty() && !config.compare) {
                PhaseTables.printTargets(out, OWN_BEFORE, targets);
            }
        }
        out.println("verification: " + verdict());
    }

    static String formatSeconds(final double seconds) {
        if (seconds >= 1) {
            return String.format(Locale.ROOT, "%.1f s", seconds);
        }
        return String.format(Locale.ROOT, "%.0f ms", seconds * 1e3);
    }

    private static String pct(final Histogram h, final double percentile) {
        return formatMicros(h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1e3);
    }

    private long readCount() {
        return metrics.tailRead.total.getTotalCount() + metrics.catchupRead.total.getTotalCount();
    }

    private long readBytes() {
        return metrics.tailRead.bytes.sum() + metrics.catchupRead.bytes.sum();
    }

    static String formatMicros(final double micros) {
        if (micros >= 1_000_000) {
            return String.format(Locale.ROOT, "%.2f s", micros / 1e6);
        }
        if (micros >= 1000) {
            return String.format(Locale.ROOT, "%.2f ms", micros / 1e3);
        }
        return String.format(Locale.ROOT, "%.1f us", micros);
    }

    static String formatBytes(final long bytes) {
        if (bytes >= 1_000_000_000L) {
            return String.format(Locale.ROOT, "%.2f GB", bytes / 1e9);
        }
        if (bytes >= 1_000_000L) {
            return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
        }
        if (bytes >= 1000L) {
            return String.format(Locale.ROOT, "%.1f kB", bytes / 1e3);
        }
        return bytes + " B";
    }

    // ---------------------------------------------------------------- summary.json

    Path writeJson(final Path file) throws IOException {
        final StringBuilder j = new StringBuilder(4096 + samples.size() * 256);
        j.append("{\n");
        field(j, "tool", "streamcache stress").append(",\n");
        field(j, "startedAt", startedAt.toString()).append(",\n");
        j.append("  \"config\": {");
        field(j, "producers", config.producers).append(", ");
        field(j, "parallelism", config.parallelism).append(", ");
        field(j, "segments", config.segments).append(", ");
        field(j, "minWriteSize", config.minWriteSize).append(", ");
        field(j, "maxWriteSize", config.maxWriteSize).append(", ");
        field(j, "durationMs", config.duration == null ? 0 : config.duration.toMillis()).append(", ");
        field(j, "ops", config.ops).append(", ");
        field(j, "tailReaders", config.tailReaders).append(", ");
        field(j, "catchupReaders", config.catchupReaders).append(", ");
        field(j, "catchupShare", config.catchupShare).append(", ");
        field(j, "catchupReadSize", config.catchupReadSize).append(", ");
        field(j, "cacheSize", config.cacheSize).append(", ");
        field(j, "durability", config.durability.flag()).append(", ");
        field(j, "policy", config.policy.flag()).append(", ");
        field(j, "seed", config.seed).append(", ");
        field(j, "retention", config.retention).append(", ");
        field(j, "prefill", config.prefill).append(", ");
        field(j, "logFileSize", config.logFileSize).append("},\n");
        field(j, "elapsedSeconds", seconds).append(",\n");
        field(j, "interrupted", interrupted).append(",\n");
        field(j, "passed", passed()).append(",\n");
        field(j, "verdict", verdict()).append(",\n");
        if (mismatch != null) {
            field(j, "firstMismatch", mismatch).append(",\n");
        }
        if (error != null) {
            field(j, "error", String.valueOf(error.getMessage())).append(",\n");
        }
        field(j, "bytesVerified", metrics.bytesVerified.sum()).append(",\n");
        j.append("  \"throughput\": {");
        field(j, "appendsPerSec", metrics.append.total.getTotalCount() / seconds).append(", ");
        field(j, "appendMBps", metrics.append.bytes.sum() / MB / seconds).append(", ");
        field(j, "readsPerSec", readCount() / seconds).append(", ");
        field(j, "readMBps", readBytes() / MB / seconds).append(", ");
        field(j, "appendedBytes", metrics.append.bytes.sum()).append(", ");
        field(j, "readBytes", readBytes()).append("},\n");
        j.append("  \"cache\": {");
        field(j, "capacity", cacheStats.capacity()).append(", ");
        field(j, "utilization", cacheStats.utilization()).append(", ");
        field(j, "hitRatio", metrics.hitRatio()).append(", ");
        field(j, "hits", metrics.cacheHits.sum()).append(", ");
        field(j, "readsThroughLog", metrics.cacheMisses.sum()).append(", ");
        field(j, "logBytes", metrics.logBytes.sum()).append(", ");
        field(j, "evictions", managerStats.evictions()).append(", ");
        field(j, "evictedBytes", managerStats.evictedBytes()).append(", ");
        field(j, "pinnedResultsAtEnd", managerStats.pinnedResults()).append(", ");
        field(j, "leakedResults", managerStats.leakedResults()).append(", ");
        field(j, "fullFailures", cacheStats.fullFailures()).append("},\n");
        j.append("  \"isolation\": {");
        field(j, "appendRoomWaits", isolation.appendRoomWaits()).append(", ");
        field(j, "appendRoomWaitNanos", isolation.appendRoomWaitNanos()).append(", ");
        field(j, "appendRoomRefusals", isolation.appendRoomRefusals()).append(", ");
        field(j, "fillsAdmitted", isolation.fillsAdmitted()).append(", ");
        field(j, "fillBytesAdmitted", isolation.fillBytesAdmitted()).append(", ");
        field(j, "fillsRefusedNoRoom", isolation.fillsRefusedNoRoom()).append(", ");
        field(j, "fillsRefusedBudget", isolation.fillsRefusedBudget()).append(", ");
        field(j, "fillsRefusedUnread", isolation.fillsRefusedUnread()).append(", ");
        field(j, "readBudgetBytes", isolation.readBudgetBytes()).append(", ");
        field(j, "readBudgetWaits", isolation.readBudgetWaits()).append(", ");
        field(j, "readBudgetWaitNanos", isolation.readBudgetWaitNanos()).append(", ");
        field(j, "readBudgetRefusals", isolation.readBudgetRefusals()).append(", ");
        field(j, "readsPastEnd", isolation.readsPastEnd()).append(", ");
        field(j, "readsHandedOff", isolation.readsHandedOff()).append(", ");
        field(j, "rangeBufferBytes", isolation.rangeBufferBytes()).append(", ");
        field(j, "rangeHeapFallbacks", isolation.rangeHeapFallbacks()).append("},\n");
        j.append("  \"readsByClass\": {");
        readClass(j, "tail", metrics.tailRead).append(", ");
        readClass(j, "catchUp", metrics.catchupRead).append(", ");
        field(j, "catchUpShare", (double) metrics.catchupRead.reads.sum()
            / Math.max(1, metrics.catchupRead.reads.sum() + metrics.tailRead.reads.sum())).append("},\n");
        j.append("  \"policy\": {");
        field(j, "name", policyStats.policy().flag()).append(", ");
        field(j, "readerRegistrations", policyStats.readerRegistrations()).append(", ");
        field(j, "registeredReadersMax", policyStats.registeredReadersMax()).append(", ");
        field(j, "registeredReadersAtEnd", policyStats.registeredReadersAtEnd()).append(", ");
        field(j, "hitmapApplied", policyStats.hitmapApplied()).append(", ");
        field(j, "hitmapDrops", policyStats.hitmapDrops()).append("},\n");
        j.append("  \"readerLag\": {");
        field(j, "tailMeanBytes", (long) meanOf(Sample::tailLagBytes)).append(", ");
        field(j, "tailMaxBytes", (long) maxOf(Sample::tailLagMaxBytes)).append(", ");
        field(j, "tailMeanSeconds", meanOf(Sample::tailLagSeconds)).append(", ");
        field(j, "tailMaxSeconds", maxOf(Sample::tailLagSeconds)).append(", ");
        field(j, "catchupMeanBytes", (long) meanOf(Sample::catchupLagBytes)).append(", ");
        field(j, "catchupMaxBytes", (long) maxOf(Sample::catchupLagMaxBytes)).append(", ");
        field(j, "catchupMeanSeconds", meanOf(Sample::catchupLagSeconds)).append(", ");
        field(j, "catchupMaxSeconds", maxOf(Sample::catchupLagSeconds)).append("},\n");
        j.append("  \"log\": {");
        field(j, "diskBytes", footprint.diskBytes()).append(", ");
        field(j, "diskBytesMax", footprint.diskBytesMax()).append(", ");
        field(j, "truncations", metrics.truncations.sum()).append(", ");
        field(j, "truncatedBytes", metrics.truncatedBytes.sum()).append(", ");
        field(j, "filesDeleted", footprint.logFilesDeleted()).append(", ");
        field(j, "truncatedSkips", metrics.truncatedSkips.sum()).append("},\n");
        j.append("  \"memory\": {");
        field(j, "heapUsedAfterGc", footprint.heapUsedAfterGc()).append(", ");
        field(j, "cachedBytes", footprint.cachedBytes()).append(", ");
        field(j, "cacheUsedBytes", footprint.cacheUsedBytes()).append(", ");
        field(j, "heapBytesPerCachedMB", footprint.heapBytesPerCachedMB()).append("},\n");
        if (phases != null) {
            field(j, "scenario", config.scenario()).append(",\n");
            field(j, "disturbAtMs", config.disturbAt.toMillis()).append(",\n");
            field(j, "disturbForMs", config.disturbFor.toMillis()).append(",\n");
            field(j, "stormReaders", config.storm ? config.stormReaders : 0).append(",\n");
            field(j, "stormReadSize", config.stormReadSize).append(",\n");
            field(j, "slowHold", config.slowConsumer ? config.slowHold : 0).append(",\n");
            field(j, "slowFrom", config.slowFromTail ? "tail" : "start").append(",\n");
            field(j, "slowRefusals", slowRefusals).append(",\n");
            j.append("  \"phases\": ");
            PhaseTables.json(j, phases);
            j.append(",\n");
            final List<Targets.Target> targets = ownTargets();
            if (!targets.isEmpty()) {
                field(j, "targetsBaseline", OWN_BEFORE).append(",\n");
                j.append("  \"targets\": ");
                PhaseTables.json(j, targets);
                j.append(",\n");
            }
        }
        j.append("  \"latencyMicros\": {\n");
        final StressMetrics.Op[] ops = metrics.ops();
        for (int i = 0; i < ops.length; i++) {
            final Histogram h = ops[i].total;
            final boolean any = h.getTotalCount() > 0;
            j.append("    \"").append(key(ops[i].name)).append("\": {");
            field(j, "count", h.getTotalCount()).append(", ");
            if (ops[i] == metrics.tailRead || ops[i] == metrics.catchupRead) {
                field(j, "readsThroughLog", ops[i].throughLog.sum()).append(", ");
            }
            field(j, "avg", any ? h.getMean() / 1e3 : 0).append(", ");
            for (final double p : PERCENTILES) {
                field(j, "p" + (p == Math.rint(p) ? String.valueOf((long) p) : String.valueOf(p)), any ? h.getValueAtPercentile(p) / 1e3 : 0)
                    .append(", ");
            }
            field(j, "max", any ? h.getMaxValue() / 1e3 : 0).append('}').append(i + 1 < ops.length ? ",\n" : "\n");
        }
        j.append("  },\n");
        j.append("  \"samples\": [\n");
        for (int i = 0; i < samples.size(); i++) {
            final Sample s = samples.get(i);
            j.append("    {");
            field(j, "t", s.elapsedSeconds()).append(", ");
            field(j, "appendOpsPerSec", s.appendOpsPerSec()).append(", ");
            field(j, "appendMBps", s.appendMBps()).append(", ");
            field(j, "readOpsPerSec", s.readOpsPerSec()).append(", ");
            field(j, "readMBps", s.readMBps()).append(", ");
            field(j, "appendP50Micros", s.appendP50Micros()).append(", ");
            field(j, "appendP99Micros", s.appendP99Micros()).append(", ");
            field(j, "appendMaxMicros", s.appendMaxMicros()).append(", ");
            field(j, "tailReadP99Micros", s.tailP99Micros()).append(", ");
            field(j, "catchupReadP99Micros", s.catchupP99Micros()).append(", ");
            field(j, "cacheUtilization", s.cacheUtilization()).append(", ");
            field(j, "hitRatio", s.hitRatio()).append(", ");
            field(j, "bytesVerified", s.bytesVerified()).append(", ");
            field(j, "tailLagBytes", s.tailLagBytes()).append(", ");
            field(j, "tailLagMaxBytes", s.tailLagMaxBytes()).append(", ");
            field(j, "tailLagSeconds", s.tailLagSeconds()).append(", ");
            field(j, "catchupLagBytes", s.catchupLagBytes()).append(", ");
            field(j, "catchupLagMaxBytes", s.catchupLagMaxBytes()).append(", ");
            field(j, "catchupLagSeconds", s.catchupLagSeconds()).append(", ");
            field(j, "diskBytes", s.diskBytes()).append('}').append(i + 1 < samples.size() ? ",\n" : "\n");
        }
        j.append("  ]\n}\n");
        return Files.writeString(file, j.toString(), StandardCharsets.UTF_8);
    }

    private static String key(final String name) {
        final StringBuilder b = new StringBuilder();
        boolean upper = false;
        for (final char c : name.toCharArray()) {
            if (Character.isLetterOrDigit(c)) {
                b.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            } else {
                upper = b.length() > 0;
            }
        }
        return b.toString();
    }

    private static StringBuilder field(final StringBuilder j, final String name, final String value) {
        if (j.charAt(j.length() - 1) == '\n') {
            j.append("  ");
        }
        return j.append('"').append(name).append("\": \"").append(jsonEscape(value)).append('"');
    }

    private static StringBuilder field(final StringBuilder j, final String name, final long value) {
        if (j.charAt(j.length() - 1) == '\n') {
            j.append("  ");
        }
        return j.append('"').append(name).append("\": ").append(value);
    }

    private static StringBuilder field(final StringBuilder j, final String name, final boolean value) {
        if (j.charAt(j.length() - 1) == '\n') {
            j.append("  ");
        }
        return j.append('"').append(name).append("\": ").append(value);
    }

    private static StringBuilder field(final StringBuilder j, final String name, final double value) {
        if (j.charAt(j.length() - 1) == '\n') {
            j.append("  ");
        }
        j.append('"').append(name).append("\": ");
        return Double.isFinite(value) ? j.append(String.format(Locale.ROOT, "%.4f", value)) : j.append("null");
    }

    /** One reader class's reads, hits and hit ratio, as a JSON object field. */
    private static StringBuilder readClass(final StringBuilder j, final String name, final StressMetrics.Op op) {
        j.append('"').append(name).append("\": {");
        field(j, "reads", op.reads.sum()).append(", ");
        field(j, "hits", op.hits.sum()).append(", ");
        return field(j, "hitRatio", op.hitRatio()).append('}');
    }

    static String jsonEscape(final String s) {
        final StringBuilder b = new StringBuilder(s.length() + 8);
        for (final char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.toString();
    }

    // ---------------------------------------------------------------- report.html

    Path writeHtml(final Path file) throws IOException {
        final StringBuilder h = new StringBuilder(16384 + samples.size() * 512);
        h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
            .append("<title>streamcache stress report</title>\n<style>\n")
            .append("body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222;max-width:1100px}\n")
            .append("table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}\n")
            .append("th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}\n")
            .append(".pass{color:#1a7f37;font-weight:bold}.fail{color:#c62828;font-weight:bold}\n")
            .append("svg{background:#fff;border:1px solid #ddd;margin:0.5em 0}code{background:#f4f4f4;padding:1px 4px}\n")
            .append("</style>\n</head>\n<body>\n");
        h.append("<h1>streamcache stress report</h1>\n");
        h.append("<p>Started ").append(html(startedAt.toString())).append(", ran ")
            .append(String.format(Locale.ROOT, "%.1f", seconds)).append(" s")
            .append(interrupted ? " (interrupted: the summary so far)" : "").append(".</p>\n");
        h.append("<p class=\"").append(passed() ? "pass" : "fail").append("\">").append(html(verdict())).append("</p>\n");
        h.append("<h2>Configuration</h2>\n<p><code>").append(html(config.toString())).append("</code></p>\n");

        h.append("<h2>Latency</h2>\n<table>\n<tr><th>operation</th><th>count</th><th>avg</th><th>p50</th><th>p90</th><th>p99</th>")
            .append("<th>p99.9</th><th>max</th></tr>\n");
        for (final StressMetrics.Op op : metrics.ops()) {
            final Histogram hist = op.total;
            h.append("<tr><td>").append(html(op.name)).append("</td><td>").append(String.format(Locale.ROOT, "%,d", hist.getTotalCount()))
                .append("</td><td>").append(html(formatMicros(hist.getTotalCount() == 0 ? 0 : hist.getMean() / 1e3))).append("</td>");
            for (final double p : PERCENTILES) {
                h.append("<td>").append(html(pct(hist, p))).append("</td>");
            }
            h.append("<td>").append(html(formatMicros(hist.getTotalCount() == 0 ? 0 : hist.getMaxValue() / 1e3))).append("</td></tr>\n");
        }
        h.append("</table>\n");

        if (phases != null) {
            h.append("<h2>Phases</h2>\n<p>Scenario ").append(html(config.scenario())).append(": the disturbance ran from ")
                .append(config.disturbAt.toSeconds()).append(" s for ").append(config.disturbFor.toSeconds())
                .append(" s. Call times are from the call of the asynchronous method until it returned its future; ")
                .append("ack is from the call of <code>appendAsync</code> until the append was durable.</p>\n");
            h.append(PhaseTables.html(List.of("this run"), List.of(phases)));
            if (config.slowConsumer) {
                h.append("<p>").append(html(refusalNote())).append(".</p>\n");
            }
            final List<Targets.Target> targets = ownTargets();
            if (!targets.isEmpty()) {
                h.append("<h3>Targets</h3>\n").append(PhaseTables.html(OWN_BEFORE, targets));
            }
        }
        h.append("<h2>Throughput</h2>\n<table>\n<tr><th></th><th>ops/s</th><th>MB/s</th><th>total</th></tr>\n");
        h.append(String.format(Locale.ROOT, "<tr><td>append</td><td>%,.0f</td><td>%.1f</td><td>%s</td></tr>%n",
            metrics.append.total.getTotalCount() / seconds, metrics.append.bytes.sum() / MB / seconds, html(formatBytes(metrics.append.bytes.sum()))));
        h.append(String.format(Locale.ROOT, "<tr><td>read</td><td>%,.0f</td><td>%.1f</td><td>%s</td></tr>%n",
            readCount() / seconds, readBytes() / MB / seconds, html(formatBytes(readBytes()))));
        h.append("</table>\n");
        h.append(String.format(Locale.ROOT, "<p>Cache: %s capacity, utilization %.1f%% at the end, hit ratio %.1f%% (%,d reads from the cache, "
                + "%,d through the log, %s read from the log), %,d evictions (%s).</p>%n", html(formatBytes(cacheStats.capacity())),
            cacheStats.utilization() * 100, metrics.hitRatio() * 100, metrics.cacheHits.sum(), metrics.cacheMisses.sum(),
            html(formatBytes(metrics.logBytes.sum())), managerStats.evictions(), html(formatBytes(managerStats.evictedBytes()))));
        h.append("<p>Eviction policy: ").append(html(policyStats.describe())).append(".</p>\n");
        h.append("<p>").append(html(isolationNote())).append(".</p>\n");
        h.append("<h2>Reader lag, log and memory</h2>\n<table>\n<tr><th>reader lag</th><th>mean</th><th>mean (time)</th><th>max</th>")
            .append("<th>max (time)</th></tr>\n");
        h.append(String.format(Locale.ROOT, "<tr><td>tail readers</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>%n",
            html(formatBytes((long) meanOf(Sample::tailLagBytes))), html(formatSeconds(meanOf(Sample::tailLagSeconds))),
            html(formatBytes((long) maxOf(Sample::tailLagMaxBytes))), html(formatSeconds(maxOf(Sample::tailLagSeconds)))));
        h.append(String.format(Locale.ROOT, "<tr><td>catch-up readers</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>%n",
            html(formatBytes((long) meanOf(Sample::catchupLagBytes))), html(formatSeconds(meanOf(Sample::catchupLagSeconds))),
            html(formatBytes((long) maxOf(Sample::catchupLagMaxBytes))), html(formatSeconds(maxOf(Sample::catchupLagSeconds)))));
        h.append("</table>\n<p>Lag: acknowledged bytes a reader has yet to read in the segment it reads (tail readers: every ")
            .append("followed segment; catch-up readers: the segment of their pass), sampled once a second; in time, divided by one ")
            .append("segment's append rate over that second.</p>\n");
        h.append(String.format(Locale.ROOT, "<p>Log: %s on disk at the end, %s at most; retention %s; %,d truncations (%s), %,d dead "
                + "files deleted, %,d reads skipped truncated bytes.</p>%n", html(formatBytes(footprint.diskBytes())),
            html(formatBytes(footprint.diskBytesMax())), config.retention == 0 ? "off" : html(formatBytes(config.retention)),
            metrics.truncations.sum(), html(formatBytes(metrics.truncatedBytes.sum())), footprint.logFilesDeleted(),
            metrics.truncatedSkips.sum()));
        h.append(String.format(Locale.ROOT, "<p>Memory: Java heap %s in use after a full GC at the end, for %s of cached data "
                + "(%s of cache memory in use): %,.0f heap bytes per cached MB (the whole process's heap).</p>%n",
            html(formatBytes(footprint.heapUsedAfterGc())), html(formatBytes(footprint.cachedBytes())),
            html(formatBytes(footprint.cacheUsedBytes())), footprint.heapBytesPerCachedMB()));

        h.append("<h2>Over time</h2>\n");
        if (samples.isEmpty()) {
            h.append("<p>No per-second sample: the run was shorter than a second.</p>\n");
        } else {
            h.append(chart("Throughput (MB/s)", "MB/s", new Series[] {
                new Series("append", "#1f77b4", Sample::appendMBps),
                new Series("read", "#ff7f0e", Sample::readMBps)}));
            h.append(chart("Operations per second", "ops/s", new Series[] {
                new Series("appends", "#1f77b4", Sample::appendOpsPerSec),
                new Series("reads", "#ff7f0e", Sample::readOpsPerSec)}));
            h.append(chart("Append latency (ms, per second)", "ms", new Series[] {
                new Series("p50", "#2ca02c", s -> s.appendP50Micros() / 1e3),
                new Series("p99", "#d62728", s -> s.appendP99Micros() / 1e3),
                new Series("max", "#9467bd", s -> s.appendMaxMicros() / 1e3)}));
            h.append(chart("Read latency p99 (ms, per second)", "ms", new Series[] {
                new Series("tail read", "#17becf", s -> s.tailP99Micros() / 1e3),
                new Series("catch-up read", "#8c564b", s -> s.catchupP99Micros() / 1e3)}));
            h.append(chart("Cache utilization and hit ratio (%)", "%", new Series[] {
                new Series("utilization", "#7f7f7f", s -> s.cacheUtilization() * 100),
                new Series("hit ratio", "#bcbd22", s -> s.hitRatio() * 100)}));
            h.append(chart("Reader lag (MB behind the acknowledged end)", "MB", new Series[] {
                new Series("tail, mean", "#17becf", s -> s.tailLagBytes() / MB),
                new Series("tail, max", "#1f77b4", s -> s.tailLagMaxBytes() / MB),
                new Series("catch-up, mean", "#8c564b", s -> s.catchupLagBytes() / MB)}));
            h.append(chart("Log on disk (MB)", "MB", new Series[] {
                new Series("log files", "#7f7f7f", s -> s.diskBytes() / MB)}));
        }
        h.append("<p>Machine-readable results: <code>summary.json</code> beside this file.</p>\n</body>\n</html>\n");
        return Files.writeString(file, h.toString(), StandardCharsets.UTF_8);
    }

    /** One line of a chart. */
    private static final class Series {
        final String name;
        final String color;
        final ToDoubleFunction<Sample> value;

        Series(final String name, final String color, final ToDoubleFunction<Sample> value) {
            this.name = name;
            this.color = color;
            this.value = value;
        }
    }

    /** An inline SVG line chart of the samples: x is elapsed seconds, one polyline per series. */
    private String chart(final String title, final String unit, final Series[] series) {
        final int width = 960;
        final int height = 300;
        final int left = 70;
        final int right = 20;
        final int top = 40;
        final int bottom = 40;
        final double plotW = width - left - right;
        final double plotH = height - top - bottom;
        final double maxX = Math.max(1, Math.ceil(samples.get(samples.size() - 1).elapsedSeconds()));
        double maxY = 0;
        for (final Series s : series) {
            for (final Sample sample : samples) {
                maxY = Math.max(maxY, s.value.applyAsDouble(sample));
            }
        }
        maxY = niceCeiling(maxY);
        final StringBuilder b = new StringBuilder(4096);
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            + "role=\"img\" aria-label=\"%s\">%n", width, height, width, height, html(title)));
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>%n", left, html(title)));
        if (phases != null) {
            // The disturbance's window, shaded, so that the phases show on every chart.
            final double from = left + plotW * Math.min(1, config.disturbAt.toMillis() / 1e3 / maxX);
            final double to = left + plotW * Math.min(1, (config.disturbAt.toMillis() + config.disturbFor.toMillis()) / 1e3 / maxX);
            b.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"#fde9d9\">"
                + "<title>%s</title></rect>%n", from, top, Math.max(0, to - from), plotH, html(config.storm || config.slowConsumer
                ? "during: " + config.scenario() : "the during phase (baseline: the disturbance off)")));
        }
        for (int i = 0; i <= 5; i++) {
            final double y = top + plotH - plotH * i / 5;
            b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", left, y, width - right, y));
            b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>%n", left - 6,
                y + 4, axisLabel(maxY * i / 5)));
        }
        for (int i = 0; i <= 10; i++) {
            final double x = left + plotW * i / 10;
            b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s s</text>%n", x,
                height - bottom + 16, String.format(Locale.ROOT, maxX >= 10 ? "%.0f" : "%.1f", maxX * i / 10)));
        }
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\"/>", left, top, left, top + plotH));
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\"/>%n", left, top + plotH,
            width - right, top + plotH));
        b.append(String.format(Locale.ROOT, "<text x=\"14\" y=\"%.1f\" font-size=\"11\" transform=\"rotate(-90 14 %.1f)\" "
            + "text-anchor=\"middle\">%s</text>%n", top + plotH / 2, top + plotH / 2, html(unit)));
        int legendX = width - right - 140 * series.length;
        for (final Series s : series) {
            final StringBuilder points = new StringBuilder();
            for (final Sample sample : samples) {
                final double x = left + plotW * sample.elapsedSeconds() / maxX;
                final double y = top + plotH - plotH * Math.min(1, s.value.applyAsDouble(sample) / maxY);
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            b.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(s.color).append("\" points=\"")
                .append(points.toString().trim()).append("\"/>\n");
            if (samples.size() == 1) {
                b.append(String.format(Locale.ROOT, "<circle r=\"3\" fill=\"%s\" cx=\"%s\" cy=\"%s\"/>%n", s.color,
                    points.toString().trim().split(",")[0], points.toString().trim().split(",")[1]));
            }
            b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"12\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                + "<text x=\"%d\" y=\"18\" font-size=\"12\">%s</text>%n", legendX, s.color, legendX + 18, html(s.name)));
            legendX += 140;
        }
        b.append("</svg>\n");
        return b.toString();
    }

    private static double niceCeiling(final double value) {
        if (!(value > 0) || !Double.isFinite(value)) {
            return 1;
        }
        final double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
        for (final double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (value <= step * magnitude) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String axisLabel(final double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return String.format(Locale.ROOT, "%,d", (long) value);
        }
        return String.format(Locale.ROOT, Math.abs(value) >= 10 ? "%,.0f" : "%.2f", value);
    }

    static String html(final String s) {
        final StringBuilder b = new StringBuilder(s.length() + 16);
        for (final char c : s.toCharArray()) {
            switch (c) {
                case '<': b.append("&lt;"); break;
                case '>': b.append("&gt;"); break;
                case '&': b.append("&amp;"); break;
                case '"': b.append("&quot;"); break;
                case '\'': b.append("&#39;"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }
}
