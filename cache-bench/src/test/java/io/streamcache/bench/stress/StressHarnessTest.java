package io.streamcache.bench.stress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StressHarnessTest {
    private static final Pattern BYTES_VERIFIED = Pattern.compile("\"bytesVerified\": (\\d+),");

    @TempDir
    Path temp;

    private String[] smallRun(final String duration, final Path out) {
        return new String[] {
            "--producers", "2", "--parallelism", "8", "--segments", "4", "--write-size", "64-4096",
            "--duration", duration, "--tail-readers", "2", "--catchup-readers", "1",
            // A small cache, so that it fills, evicts, and catch-up readers go through the log.
            "--cache-size", "8m", "--durability", "never",
            "--dir", temp.resolve("log").toString(), "--out", out.toString()};
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldRunVerifyAndWriteResults() throws Exception {
        final Path out = temp.resolve("results");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final int code = new StressHarness().execute(smallRun("3s", out), new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("verification: PASSED"), text);
        assertTrue(text.contains("append p99") || text.contains("p99"), text);
        final Path json = out.resolve("summary.json");
        final Path html = out.resolve("report.html");
        assertTrue(Files.isRegularFile(json), "summary.json");
        assertTrue(Files.isRegularFile(html), "report.html");
        final String summary = Files.readString(json);
        assertTrue(summary.contains("\"passed\": true"), summary);
        final Matcher verified = BYTES_VERIFIED.matcher(summary);
        assertTrue(verified.find(), summary);
        assertTrue(Long.parseLong(verified.group(1)) > 0, summary);
        final String report = Files.readString(html);
        assertTrue(report.contains("<svg") && report.endsWith("</html>\n") && !report.contains("<script"), "self-contained report");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldFailWithNonZeroExitWhenVerificationFails() throws Exception {
        // Readers expect the word at offsets [24, 32) of every segment inverted: the bytes written never match.
        final SegmentContent corrupted = (seed, wordIndex) -> wordIndex == 3
            ? ~SegmentContent.splitMixWord(seed, wordIndex) : SegmentContent.splitMixWord(seed, wordIndex);
        final Path out = temp.resolve("corrupted");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final int code = new StressHarness(corrupted).execute(smallRun("10s", out), new PrintStream(console, true, StandardCharsets.UTF_8),
            false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(1, code, text);
        assertTrue(text.contains("verification: FAILED: mismatch at segment="), text);
        assertTrue(Pattern.compile("offset=(2[4-9]|3[01]) expected=").matcher(text).find(), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertTrue(summary.contains("\"passed\": false") && summary.contains("\"firstMismatch\""), summary);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldRestartWarmAndColdInTheMiddleOfARunAndStillVerify() throws Exception {
        for (final String kind : new String[] {"warm", "cold"}) {
            final Path out = temp.resolve("restart-" + kind);
            final Path log = temp.resolve("log-" + kind);
            final Path region = temp.resolve("region-" + kind);
            final String[] args = smallRun("4s", out);
            final String[] restart = java.util.Arrays.copyOf(args, args.length + 6);
            System.arraycopy(new String[] {"--restart-at", "2s", "--restart", kind, "--region", region.toString()}, 0, restart,
                args.length, 6);
            restart[java.util.Arrays.asList(restart).indexOf("--dir") + 1] = log.toString();
            final ByteArrayOutputStream console = new ByteArrayOutputStream();
            final int code = new StressHarness().execute(restart, new PrintStream(console, true, StandardCharsets.UTF_8), false);
            final String text = console.toString(StandardCharsets.UTF_8);

            assertEquals(0, code, text);
            assertTrue(text.contains("verification: PASSED"), text);
            assertTrue(text.contains("restart (" + kind + "): closed in"), text);
            assertTrue(text.contains("restart (" + kind + "): first "), text);
            // Warm: the cache came back from its region after the clean close; cold: it did not.
            assertTrue(text.contains("warm=" + kind.equals("warm") + ","), text);
            assertFalse(Files.exists(region), "the region file is removed at the end");
        }
    }

    private static long jsonLong(final String json, final String field) {
        final Matcher m = Pattern.compile("\"" + field + "\": (\\d+)").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return Long.parseLong(m.group(1));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldTruncateBehindTheReadersSoTheLogDeletesDeadFiles() throws Exception {
        final Path out = temp.resolve("retention");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        // 40 MB appended into 4 MB log files, 8 MB retained: most files die and must be deleted.
        final int code = new StressHarness().execute(new String[] {
            "--producers", "2", "--parallelism", "8", "--segments", "4", "--write-size", "4096", "--ops", "10000",
            "--tail-readers", "2", "--catchup-readers", "1", "--cache-size", "8m", "--retention", "8m", "--log-file-size", "4m",
            "--durability", "never", "--dir", temp.resolve("log").toString(), "--out", out.toString()},
            new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("verification: PASSED"), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertTrue(jsonLong(summary, "truncations") > 0, summary);
        assertTrue(jsonLong(summary, "truncatedBytes") > 0, summary);
        assertTrue(jsonLong(summary, "filesDeleted") > 0, summary);
        // Measured before the store closed (with its spare file): at least what the directory holds now, less than was appended.
        long onDisk = 0;
        try (var files = Files.list(temp.resolve("log"))) {
            for (final Path file : (Iterable<Path>) files::iterator) {
                onDisk += Files.size(file);
            }
        }
        assertTrue(onDisk > 0 && jsonLong(summary, "diskBytes") >= onDisk, onDisk + " on disk now: " + summary);
        assertTrue(jsonLong(summary, "diskBytes") < 10_000L * 4096, "less on disk than was appended: " + summary);
        assertTrue(jsonLong(summary, "heapUsedAfterGc") > 0, summary);
        assertTrue(jsonLong(summary, "cachedBytes") > 0, summary);
        assertTrue(summary.contains("\"readerLag\": {\"tailMeanBytes\": "), summary);
        assertTrue(text.contains("| lag tail ") || !text.contains("[    1s]"), text);
        assertTrue(text.contains("reader lag: tail "), text);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldPrefillTheCacheAndCountOnlyTheMeasuredAppends() throws Exception {
        final Path out = temp.resolve("prefill");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final int producers = 2;
        final int parallelism = 8;
        final long ops = 1000;
        // 1,000 appends of 100-4096 bytes fill at most half of the 8 MB cache: only a prefill fills it.
        final int code = new StressHarness().execute(new String[] {
            "--producers", String.valueOf(producers), "--parallelism", String.valueOf(parallelism), "--segments", "4",
            "--write-size", "100-4096", "--ops", String.valueOf(ops), "--tail-readers", "1", "--catchup-readers", "0",
            "--cache-size", "8m", "--prefill", "--durability", "never", "--dir", temp.resolve("log").toString(),
            "--out", out.toString()}, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("prefill: done"), text);
        final Matcher full = Pattern.compile("prefill: done in [0-9.]+ s, [0-9.]+ [kMG]?B appended, cache ([0-9.]+)% full").matcher(text);
        assertTrue(full.find(), text);
        // Full: at the manager's target, or evicting (a pass leaves it some way below the target).
        assertTrue(Double.parseDouble(full.group(1)) >= 50, text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertTrue(summary.contains("\"prefill\": true"), summary);
        // Only the appends started after the prefill are measured, exactly --ops of them.
        final Matcher appends = Pattern.compile("\"append\": \\{\"count\": (\\d+)").matcher(summary);
        assertTrue(appends.find(), summary);
        assertEquals(ops, Long.parseLong(appends.group(1)), summary);
    }

    @Test
    void shouldRejectBadFlagsWithExitCode2() {
        for (final String[] args : new String[][] {
            {"--producers", "0"}, {"--write-size", "10-5"}, {"--durability", "sometimes"}, {"--bogus", "1"},
            {"--duration", "1s", "--ops", "10"}, {"--cache-size", "lots"}, {"--segments"}}) {
            final ByteArrayOutputStream console = new ByteArrayOutputStream();
            final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
            final String text = console.toString(StandardCharsets.UTF_8);
            assertEquals(2, code, String.join(" ", args) + ": " + text);
            assertTrue(text.startsWith("stress: "), text);
        }
    }

    @Test
    void shouldPrintHelp() {
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        assertEquals(0, new StressHarness().execute(new String[] {"--help"}, new PrintStream(console, true, StandardCharsets.UTF_8), false));
        assertTrue(console.toString(StandardCharsets.UTF_8).contains("--catchup-readers"));
    }

    /** Runs {@link #smallRun} for 3 s with {@code --policy policy}; asserts it verified and returns summary.json. */
    private String runWithPolicy(final String policy) throws Exception {
        final Path out = temp.resolve("policy-" + policy);
        final String[] base = smallRun("3s", out);
        final String[] args = java.util.Arrays.copyOf(base, base.length + 2);
        args[base.length] = "--policy";
        args[base.length + 1] = policy;
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("verification: PASSED"), text);
        assertTrue(text.contains(" policy=" + policy + " "), "the progress header names the policy: " + text);
        assertTrue(text.contains("eviction policy: " + policy), text);
        assertTrue(text.contains("reads through the log: tail "), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertTrue(summary.contains("\"passed\": true"), summary);
        assertTrue(summary.contains("\"policy\": \"" + policy + "\""), "config.policy in " + summary);
        assertTrue(summary.contains("\"policy\": {\"name\": \"" + policy + "\""), summary);
        assertTrue(Files.readString(out.resolve("report.html")).contains("policy=" + policy), "report.html config");
        return summary;
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldRunAndVerifyWithTheGenerationPolicy() throws Exception {
        final String summary = runWithPolicy("generations");
        assertEquals(0, jsonLong(summary, "readerRegistrations"), summary);
        assertEquals(0, jsonLong(summary, "registeredReadersMax"), summary);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldRegisterEveryReaderWithTheReaderAwarePolicyAndCloseThemAll() throws Exception {
        final String summary = runWithPolicy("reader-aware");
        // 2 tail readers share the 4 segments: one registration per followed segment, plus one per catch-up pass.
        assertTrue(jsonLong(summary, "readerRegistrations") >= 4 + 1, summary);
        // Counted by the policy itself (readerCount over the segments) while the run went on.
        assertTrue(jsonLong(summary, "registeredReadersMax") >= 1, summary);
        // Every reader closed its registrations when it stopped.
        assertEquals(0, jsonLong(summary, "registeredReadersAtEnd"), summary);
        assertEquals(0, jsonLong(summary, "hitmapApplied"), summary);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldRunAndVerifyWithTheHitmapPolicy() throws Exception {
        final String summary = runWithPolicy("hitmap");
        // Every read records uses; the updater (or the passes) applied them to the counters.
        assertTrue(jsonLong(summary, "hitmapApplied") > 0, summary);
        assertEquals(0, jsonLong(summary, "readerRegistrations"), summary);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldHoldCatchUpReadsToTheirShareAndCountHitsByReaderClass() throws Exception {
        final Path out = temp.resolve("share");
        final String[] args = {"--producers", "1", "--parallelism", "4", "--segments", "4", "--write-size", "4096", "--ops", "4000",
            "--tail-readers", "1", "--catchup-readers", "2", "--catchup-share", "0.5", "--catchup-read-size", "64k",
            "--cache-size", "8m", "--durability", "never", "--dir", temp.resolve("share-log").toString(), "--out", out.toString()};
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, text);
        assertTrue(text.contains("hits by reader class: tail "), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        final Matcher m = Pattern.compile("\"tail\": \\{\"reads\": (\\d+), \"hits\": (\\d+), [^}]*\\}, "
            + "\"catchUp\": \\{\"reads\": (\\d+), \"hits\": (\\d+),").matcher(summary);
        assertTrue(m.find(), summary);
        final long tailReads = Long.parseLong(m.group(1));
        final long tailHits = Long.parseLong(m.group(2));
        final long catchupReads = Long.parseLong(m.group(3));
        final long catchupHits = Long.parseLong(m.group(4));
        assertTrue(tailHits <= tailReads && catchupHits <= catchupReads, summary);
        // Every hit the run counted is a tail or a catch-up hit.
        assertEquals(jsonLong(summary, "hits"), tailHits + catchupHits, summary);
        // A catch-up reader reads only while catch-up reads are below the tail reads (share 0.5):
        // at most one read more each than that bound when both passed the check at once.
        assertTrue(catchupReads <= tailReads + 1 + 2, "catch-up " + catchupReads + " tail " + tailReads);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void shouldCompareAStormAndASlowConsumerWithTheirBaselinePhaseByPhase() throws Exception {
        final Path out = temp.resolve("compare");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final String[] args = {"--scenario", "catchup-storm,slow-consumer", "--compare", "--duration", "4s", "--disturb-at", "1s",
            "--disturb-for", "2s", "--producers", "2", "--parallelism", "8", "--segments", "4", "--write-size", "64-4096",
            "--tail-readers", "2", "--catchup-readers", "0", "--storm-readers", "2", "--cache-size", "8m", "--slow-hold", "2m",
            "--durability", "never", "--out", out.toString()};
        final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("round 1 of 1: baseline") && text.contains("round 1 of 1: scenario"), text);
        assertTrue(text.contains("phase: during from") && text.contains("phase: after from"), text);
        assertTrue(text.contains("targets (baseline: " + Comparison.BASELINE), text);
        assertTrue(text.contains("verification: PASSED in every run"), text);
        for (final String name : new String[] {"produce MB/s during the storm", "ack p99 during the storm", "catch-up storm MB/s",
            "slowest producer", "slowest tail consumer", "async call time p99.9", "every byte verified"}) {
            assertTrue(text.contains(name), name + " in\n" + text);
        }

        final String comparison = Files.readString(out.resolve("summary.json"));
        assertWellFormed(comparison);
        assertTrue(comparison.contains("\"targets\": [") && comparison.contains("\"rounds\": ["), comparison);
        final String html = Files.readString(out.resolve("report.html"));
        assertTrue(html.contains("<h2>Targets</h2>") && html.endsWith("</html>\n") && !html.contains("<script"), html);

        final String baseline = Files.readString(out.resolve("baseline-1").resolve("summary.json"));
        assertWellFormed(baseline);
        assertEquals(0, during(baseline, "slowHeldMaxBytes"), "the baseline holds nothing");
        assertEquals(0, during(baseline, "stormMBps"), "the baseline runs no storm");
        final String scenario = Files.readString(out.resolve("scenario-1").resolve("summary.json"));
        assertWellFormed(scenario);
        assertTrue(scenario.contains("\"passed\": true"), scenario);
        assertTrue(during(scenario, "slowHeldMaxBytes") > 0, "the slow consumer held results during the disturbance");
        assertTrue(during(scenario, "count", "readAsyncCallMicros") > 0, "the storm and the slow consumer called readAsync");
        assertTrue(Files.readString(out.resolve("scenario-1").resolve("report.html")).contains("<h2>Phases</h2>"));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldJudgeASingleScenarioRunAgainstItsOwnBeforePhase() throws Exception {
        final Path out = temp.resolve("tail-holder");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final String[] args = {"--scenario", "slow-consumer", "--slow-from", "tail", "--slow-hold", "1m", "--duration", "4s",
            "--disturb-at", "1s", "--disturb-for", "2s", "--producers", "2", "--parallelism", "8", "--segments", "4",
            "--write-size", "64-4096", "--tail-readers", "2", "--catchup-readers", "0", "--cache-size", "8m", "--durability", "never",
            "--thread-dump", "--out", out.toString()};
        final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("targets (baseline: " + Report.OWN_BEFORE + ")"), text);
        assertTrue(text.contains("slowest producer") && !text.contains("produce MB/s during the storm"), text);
        assertTrue(text.contains("verification: PASSED"), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertWellFormed(summary);
        assertTrue(summary.contains("\"targets\": [") && summary.contains("\"slowFrom\": \"tail\""), summary);
        assertTrue(during(summary, "slowHeldMaxBytes") > 0, "the slow consumer held tail results during the disturbance");
        assertEquals(0, during(summary, "stormMBps"));
        final String html = Files.readString(out.resolve("report.html"));
        assertTrue(html.contains("<h2>Phases</h2>") && html.contains("<h3>Targets</h3>") && html.contains("fill=\"#fde9d9\""), html);
        final String threads = Files.readString(out.resolve("threads-during.txt"));
        assertTrue(threads.contains("\"stress-slow-consumer\"") && threads.contains("\"stress-producer-0\"")
            && threads.contains("java.lang.Thread.State:"), threads);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldRefuseTheSlowConsumerOverAFailFastBudgetOfItsOwnWhileTheOthersGoOn() throws Exception {
        final Path out = temp.resolve("fail-fast");
        final ByteArrayOutputStream console = new ByteArrayOutputStream();
        final String[] args = {"--scenario", "slow-consumer", "--slow-budget", "fail-fast", "--slow-hold", "256k", "--duration", "4s",
            "--disturb-at", "1s", "--disturb-for", "2s", "--producers", "2", "--parallelism", "8", "--segments", "4",
            "--write-size", "64-4096", "--tail-readers", "2", "--catchup-readers", "0", "--cache-size", "8m", "--durability", "never",
            "--out", out.toString()};
        final int code = new StressHarness().execute(args, new PrintStream(console, true, StandardCharsets.UTF_8), false);
        final String text = console.toString(StandardCharsets.UTF_8);

        assertEquals(0, code, text);
        assertTrue(text.contains("first: ReadBudgetExceededException"), text);
        final String summary = Files.readString(out.resolve("summary.json"));
        assertWellFormed(summary);
        final Matcher refusals = Pattern.compile("\"readBudgetRefusals\": (\\d+)").matcher(summary);
        assertTrue(refusals.find() && Long.parseLong(refusals.group(1)) > 0, summary);
        assertTrue(during(summary, "slowHeldMaxBytes") > 0 && during(summary, "slowHeldMaxBytes") <= 256 << 10,
            "the consumer held results, never more than its budget");
        assertTrue(during(summary, "verifiedBytes") > during(summary, "slowHeldMaxBytes"), "the tail readers read on meanwhile");
    }

    /** @return the number field {@code name} of the during phase in a run's summary (inside {@code object} if given). */
    private static long during(final String summary, final String name, final String... object) {
        final int phases = summary.indexOf("\"phases\": ");
        int from = summary.indexOf("\"during\": {", phases);
        if (object.length > 0) {
            from = summary.indexOf("\"" + object[0] + "\": {", from);
        }
        final Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\": ([0-9.]+)").matcher(summary);
        assertTrue(phases >= 0 && from >= 0 && m.find(from), name + " in " + summary);
        return (long) Double.parseDouble(m.group(1));
    }

    /** Checks the JSON's brackets balance outside strings and no separator dangles before a closing one. */
    private static void assertWellFormed(final String json) {
        int depth = 0;
        boolean inString = false;
        char lastSignificant = 0;
        for (int i = 0; i < json.length(); i++) {
            final char c = json.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
                continue;
            }
            if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                assertFalse(lastSignificant == ',', "a comma before " + c + " at " + i);
                depth--;
                assertTrue(depth >= 0, "unbalanced at " + i);
            }
            if (!Character.isWhitespace(c)) {
                lastSignificant = c;
            }
        }
        assertEquals(0, depth, "unbalanced JSON");
        assertFalse(inString, "unterminated string");
    }
}
