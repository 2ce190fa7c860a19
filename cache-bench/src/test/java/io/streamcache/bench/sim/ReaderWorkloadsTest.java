package io.streamcache.bench.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The simulator's reader pieces: CSV traces, reader classes, the new workloads, inferred readers. */
class ReaderWorkloadsTest {
    @TempDir
    Path directory;

    @Test
    void aCsvTraceBecomesOneReadPerBlockWithItsReaders() throws IOException {
        final Path file = directory.resolve("reads.csv");
        Files.writeString(file, String.join("\n",
            "segment,offset,length,reader",
            "# a comment",
            "orders,0,8192,c1",
            "orders,8192,100,c1",
            "clicks,4000,200,",
            "",
            "orders,0,4096,c2"), StandardCharsets.UTF_8);
        final Trace trace = CsvTrace.read(file);
        assertEquals(2, trace.segmentCount());
        assertEquals(2, trace.readerCount(), "c1 and c2 of orders; the clicks read has none");
        // orders: blocks 0, 1 (c1), 2 (c1); clicks: blocks 0 and 1 (4000..4199 spans two); orders block 0 (c2).
        assertEquals(6, trace.readCount());
        final Simulator.Result lru = new Simulator().run(trace, "lru", 100, null);
        assertEquals(1, lru.hits(), "c2 re-reads block 0 of orders");
        assertEquals(6, lru.classReads()[Trace.RANDOM]);
    }

    @Test
    void aMalformedCsvLineIsRefusedWithItsNumber() throws IOException {
        final Path file = directory.resolve("bad.csv");
        Files.writeString(file, "orders,0,4096,c1\norders,x,4096,c1\n", StandardCharsets.UTF_8);
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CsvTrace.read(file));
        assertTrue(e.getMessage().contains(":2:"), e.getMessage());
    }

    @Test
    void readsAreCountedByReaderClass() {
        final Trace trace = Workloads.build("catchup", 7, 0.02);
        final Simulator.Result r = new Simulator().run(trace, "lru", 256, null);
        long reads = 0;
        long hits = 0;
        for (int c = 0; c < Trace.CLASS_NAMES.size(); c++) {
            reads += r.classReads()[c];
            hits += r.classHits()[c];
        }
        assertEquals(r.reads(), reads);
        assertEquals(r.hits(), hits);
        assertTrue(r.classReads()[Trace.TAIL] > 0 && r.classReads()[Trace.CATCHUP] > 0);
    }

    @Test
    void theNewWorkloadsAreDeterministicAndRunUnderEveryPolicy() {
        final Simulator simulator = new Simulator();
        for (final String name : new String[] {"followers-500-idle", "followers-500-late", "catchup-crash", "mixed"}) {
            final Trace a = Workloads.build(name, 3, 0.02);
            final Trace b = Workloads.build(name, 3, 0.02);
            assertEquals(a.size(), b.size(), name);
            final long size = a.cacheSizes()[0];
            final Simulator.Result opt = simulator.run(a, "belady", size, null);
            for (final String policy : Simulator.POLICIES) {
                final Simulator.Result r = simulator.run(a, policy, size, null);
                assertTrue(r.hits() <= opt.hits(), name + " " + policy + " beats Belady");
            }
        }
    }

    @Test
    void inferredReadersProtectAFollowerLikeRegisteredOnes() {
        // A leader reads a range block by block (all misses), a follower replays it 40 blocks behind;
        // the cache holds 48 blocks and other data streams through it.
        final Trace.Builder b = new Trace.Builder("pair", "hand-made", true);
        final int range = b.createSegment();
        final int noise = b.createSegment();
        final int leader = b.openReader(range, 0, Trace.CATCHUP);
        final int follower = b.openReader(range, 0, Trace.FOLLOWER);
        for (int i = 0; i < 400; i++) {
            b.read(range, i, leader);
            b.append(noise);
            b.append(noise);
            if (i >= 40) {
                b.read(range, i - 40, follower);
            }
        }
        final Trace trace = b.build(new long[] {64}, "blocks");
        final Simulator simulator = new Simulator();
        final Simulator.Result lru = simulator.run(trace, "lru", 64, null);
        final Simulator.Result auto = simulator.run(trace, "reader-aware-auto", 64, null);
        final Simulator.Result registered = simulator.run(trace, "reader-aware", 64, null);
        assertEquals(0, lru.classHits()[Trace.FOLLOWER], "LRU: the noise pushes the range out before the follower comes");
        // Inferred, the follower exists only from its first read: the 40 blocks the leader read
        // before are unprotected and lost; everything after is kept.
        assertTrue(auto.classHits()[Trace.FOLLOWER] >= 360 - 45, "inferred: " + auto.classHits()[Trace.FOLLOWER]);
        assertTrue(registered.classHits()[Trace.FOLLOWER] >= 350, "registered: " + registered.classHits()[Trace.FOLLOWER]);
    }
}
