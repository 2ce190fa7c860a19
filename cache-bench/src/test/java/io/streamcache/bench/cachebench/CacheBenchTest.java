package io.streamcache.bench.cachebench;

import io.streamcache.core.cache.CacheStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheBenchTest {
    /** What one call of {@link CacheBench#run} printed and returned. */
    private record Outcome(int code, String out, String err, CacheBenchResult result) {
    }

    private static Outcome run(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<CacheBenchResult> results = new ArrayList<>();
        final int code = CacheBench.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8), results::add);
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
            results.isEmpty() ? null : results.get(0));
    }

    private static CacheBenchResult assertSane(final Outcome o) {
        assertEquals(CacheBench.EXIT_OK, o.code(), () -> "stderr: " + o.err());
        final CacheBenchResult r = o.result();
        assertNotNull(r);
        assertTrue(r.ops() > 0, () -> "ops=" + r.ops());
        assertEquals(r.lookups(), r.hits() + r.misses(), "hits + misses = lookups");
        final CacheStats s = r.stats();
        assertEquals(r.full(), s.fullFailures(), "full failures counted by the bench and by the cache");
        assertTrue(s.usedBlockCount() <= s.blockCount(), () -> "used=" + s.usedBlockCount() + " blocks=" + s.blockCount());
        assertTrue(o.out().contains("p99.9 us"), o.out());
        assertTrue(o.out().contains("cache stats at end:"), o.out());
        return r;
    }

    private static void assertCacheHoldsWhatThreadsHold(final CacheBenchResult r) {
        assertEquals(r.liveEntries(), r.stats().entryCount(), "entries held by threads = entries in the cache");
        assertEquals(r.liveBytes(), r.stats().storedBytes(), "bytes held by threads = bytes stored in the cache");
        assertEquals(r.liveEntries() == 0, r.stats().usedBlockCount() == 0, "blocks used iff entries live");
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldRunDefaultMixWithConsistentCounters() {
        final CacheBenchResult r = assertSane(run("--threads", "2", "--duration", "1s", "--cache-size", "32m", "--key-range", "1024"));
        assertCacheHoldsWhatThreadsHold(r);
        assertTrue(r.lookups() > 0 && r.inserts() > 0 && r.appends() > 0 && r.deletes() > 0, r::toString);
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldCountFullCacheFailuresWithoutEvicting() {
        final CacheBenchResult r = assertSane(run("--threads", "2", "--duration", "1s", "--cache-size", "4m",
            "--key-range", "4096", "--entry-size", "8k-16k"));
        assertCacheHoldsWhatThreadsHold(r);
        assertTrue(r.full() > 0, r::toString);
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldRunExactOpsCount() {
        final CacheBenchResult r = assertSane(run("--threads", "3", "--ops", "10000", "--cache-size", "16m", "--key-range", "300"));
        assertEquals(10_000, r.ops());
        assertCacheHoldsWhatThreadsHold(r);
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldAllocateLessThanAByteAnOperationWhileTheCacheHasRoom() {
        final CacheBenchResult r = assertSane(run("--threads", "1", "--ops", "200000", "--cache-size", "64m",
            "--key-range", "256", "--entry-size", "1k-4k"));
        assertEquals(0, r.full(), r::toString);
        if (r.allocatedBytes() >= 0) {
            assertTrue(r.allocatedBytes() < r.ops(), () -> "allocatedBytes=" + r.allocatedBytes() + " ops=" + r.ops());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"pravega-random", "pravega-random-100k", "rocksdb-insert", "rocksdb-lookup80"})
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldRunMixedPresetForADuration(final String preset) {
        final CacheBenchResult r = assertSane(run("--preset", preset, "--duration", "1s", "--cache-size", "16m"));
        assertCacheHoldsWhatThreadsHold(r);
        if (preset.startsWith("pravega-random")) {
            assertEquals(0, r.appends());
            assertTrue(r.lookups() >= r.inserts() + r.deletes(), "every op also reads: " + r);
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void shouldRunSequentialPresetPhases() {
        final Outcome o = run("--preset", "pravega-sequential", "--cache-size", "16m");
        final CacheBenchResult r = assertSane(o);
        assertTrue(r.inserts() > 0);
        assertEquals(r.inserts(), r.lookups());
        assertEquals(r.inserts(), r.hits() + r.full(), "every insert that fit is found");
        assertEquals(0, r.stats().entryCount(), "the delete phase empties the cache");
        assertEquals(0, r.stats().usedBlockCount());
        assertTrue(o.out().contains("total ms"), o.out());
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void shouldPrintUsageOnHelp() {
        final Outcome o = run("--help");
        assertEquals(CacheBench.EXIT_OK, o.code());
        assertTrue(o.out().contains("--lookup-percent"), o.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "--lookup-percent 50 --insert-percent 50 --append-percent 10 --delete-percent 0",
        "--threads 0",
        "--threads x",
        "--unknown 1",
        "--threads",
        "stray",
        "--duration 1s --ops 10",
        "--duration 5",
        "--key-range 2 --threads 4",
        "--preset nope",
        "--entry-size 16k-1k",
        "--entry-size 0",
        "--cache-size 1m",
        "--preset pravega-sequential --lookup-percent 100 --insert-percent 0",
        "--preset pravega-sequential --threads 2",
    })
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void shouldExitWithTwoOnBadFlags(final String flags) {
        final Outcome o = run(flags.split(" "));
        assertEquals(CacheBench.EXIT_BAD_FLAGS, o.code(), () -> Arrays.toString(flags.split(" ")) + " stdout: " + o.out());
        assertTrue(o.err().startsWith("cachebench: "), o.err());
        assertEquals(null, o.result());
    }

    @Test
    void shouldLetFlagsOverridePresetWhateverTheirOrder() {
        final CacheBenchConfig c = CacheBenchConfig.parse(new String[] {"--threads", "3", "--preset", "rocksdb-insert", "--key-range", "99"});
        assertEquals(3, c.threads());
        assertEquals(99, c.keyRange());
        assertEquals(0, c.ops());
        assertNotNull(c.duration());
    }

    @Test
    void shouldReplacePresetOpsWithGivenDuration() {
        final CacheBenchConfig c = CacheBenchConfig.parse(new String[] {"--preset", "pravega-random", "--duration", "2s"});
        assertEquals(0, c.ops());
        assertEquals(2, c.duration().toSeconds());
        final CacheBenchConfig d = CacheBenchConfig.parse(new String[] {"--preset", "pravega-random"});
        assertEquals(1_000_000, d.ops());
    }
}
