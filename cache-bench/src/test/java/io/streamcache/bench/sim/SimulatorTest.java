package io.streamcache.bench.sim;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulatorTest {
    /** A key/value trace: each letter a key, every access a read without a reader. */
    private static Trace keys(final String accesses) {
        final Trace.Builder b = new Trace.Builder("tiny", "hand-made", false);
        final int segment = b.createSegment();
        for (final char c : accesses.toCharArray()) {
            b.read(segment, c - 'A', -1);
        }
        return b.build(new long[] {2}, "blocks");
    }

    @Test
    void lruShouldMatchAHandComputedTrace() {
        // Capacity 2: A miss, B miss, A hit, C miss (evicts B), B miss (evicts A), A miss (evicts C), B hit.
        final Simulator.Result r = new Simulator().run(keys("ABACBAB"), "lru", 2, null);
        assertEquals(7, r.reads());
        assertEquals(2, r.hits());
    }

    @Test
    void beladyShouldMatchAHandComputedTrace() {
        // Capacity 2: A, B miss; C miss evicts B (next use at 4, A's at 3); A hit; B miss evicts C
        // (never used again); A hit; B hit.
        final Simulator.Result r = new Simulator().run(keys("ABCABAB"), "belady", 2, null);
        assertEquals(3, r.hits());
    }

    @Test
    void segmentDeletionShouldFreeTheCacheForEveryPolicy() {
        final Trace.Builder b = new Trace.Builder("delete", "hand-made", true);
        final int first = b.createSegment();
        b.append(first);
        b.append(first);
        b.deleteSegment(first);
        final int second = b.createSegment();
        b.append(second);
        b.append(second);
        b.read(second, 0, -1);
        b.read(second, 1, -1);
        final Trace trace = b.build(new long[] {2}, "blocks");
        for (final String policy : Simulator.POLICIES) {
            final Simulator.Result r = new Simulator(1.0, 16).run(trace, policy, 2, null);
            assertEquals(2, r.hits(), policy);
            assertEquals(0, r.failedInserts(), policy);
        }
    }

    @Test
    void beladyShouldBoundEveryPolicyOnEveryWorkload() {
        final Simulator simulator = new Simulator();
        for (final String name : Workloads.NAMES) {
            final boolean keyValue = name.startsWith("web");
            final Trace trace = Workloads.build(name, 7, 0.04);
            final int[] nextUses = trace.nextUses();
            final long[] sizes = trace.cacheSizes();
            // The key/value traces are fixed and longer: one of their sizes suffices here.
            final long[] checked = keyValue ? new long[] {sizes[1]} : new long[] {sizes[0], sizes[sizes.length / 2]};
            for (final long size : checked) {
                final Simulator.Result opt = simulator.run(trace, "belady", size, nextUses);
                for (final String policy : Simulator.POLICIES) {
                    final Simulator.Result r = simulator.run(trace, policy, size, nextUses);
                    assertEquals(opt.reads(), r.reads());
                    assertTrue(r.hits() <= opt.hits(), name + " at " + size + ": " + policy + " " + r.hits() + " > belady " + opt.hits());
                    assertEquals(0, r.failedInserts(), name + " " + policy);
                }
            }
        }
    }

    @Test
    void workloadsShouldBeDeterministicForASeed() {
        for (final String name : new String[] {"tail", "catchup", "followers-200", "zipf", "churn"}) {
            final Trace a = Workloads.build(name, 11, 0.02);
            final Trace b = Workloads.build(name, 11, 0.02);
            final Trace c = Workloads.build(name, 12, 0.02);
            assertEquals(a.size(), b.size(), name);
            assertArrayEquals(events(a), events(b), name);
            assertArrayEquals(a.cacheSizes(), b.cacheSizes(), name);
            assertNotEquals(java.util.Arrays.hashCode(events(a)), java.util.Arrays.hashCode(events(c)), name + ": another seed, another trace");
        }
    }

    @Test
    void keyValueTracesShouldHoldTheDocumentedAccesses() {
        final Trace web07 = Workloads.build("web07", 0, 1.0);
        assertEquals(76_118, web07.readCount());
        assertFalse(web07.streaming());
        assertEquals(95_607, Workloads.build("web12", 0, 1.0).readCount());
    }

    @Test
    void commandShouldPrintATableAndWriteJsonAndSvg(@org.junit.jupiter.api.io.TempDir final Path dir) throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final Path json = dir.resolve("sim.json");
        final Path svg = dir.resolve("sim.svg");
        final int code = SimulateCommand.run(new String[] {"--workloads", "tail", "--scale", "0.02", "--json", json.toString(),
            "--svg", svg.toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals(0, code);
        final String out = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("reader-aware") && out.contains("belady"), out);
        final String text = Files.readString(json);
        assertTrue(text.contains("\"policy\": \"hitmap\"") && text.contains("\"workload\": \"tail\""), text);
        assertTrue(Files.readString(svg).startsWith("<svg"));
        assertEquals(2, SimulateCommand.run(new String[] {"--policies", "fifo"}, new PrintStream(new ByteArrayOutputStream(), true,
            StandardCharsets.UTF_8)));
        assertThrows(IllegalArgumentException.class, () -> Workloads.build("nope", 1, 1.0));
    }

    private static long[] events(final Trace t) {
        final long[] e = new long[t.size()];
        for (int i = 0; i < t.size(); i++) {
            e[i] = ((long) t.type(i) << 56) ^ ((long) t.segment(i) << 36) ^ ((long) t.block(i) << 8) ^ t.reader(i);
        }
        return e;
    }

    @Test
    void zipfOracleShouldBeBoundedByBeladyHoldItsCapacityAndKnowZipfOnly() {
        final Simulator simulator = new Simulator();
        final Trace trace = Workloads.build("zipf", 7, 0.04);
        final int[] nextUses = trace.nextUses();
        for (final long size : trace.cacheSizes()) {
            // run() also checks that the oracle never holds more than its capacity.
            final Simulator.Result oracle = simulator.run(trace, "zipf-oracle", size, nextUses);
            final Simulator.Result opt = simulator.run(trace, "belady", size, nextUses);
            assertEquals(opt.reads(), oracle.reads());
            assertTrue(oracle.hits() <= opt.hits(), size + ": zipf-oracle " + oracle.hits() + " > belady " + opt.hits());
            assertTrue(oracle.hits() > 0);
        }
        final Trace tail = Workloads.build("tail", 7, 0.01);
        assertThrows(IllegalArgumentException.class, () -> simulator.run(tail, "zipf-oracle", 64, null));
    }
}
