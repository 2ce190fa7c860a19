package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.WarmRestoreStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Warm restart under SIGKILL: a child JVM ({@link WarmCrashWorkload}) appends to many segments
 * of a store whose cache is a persistent mapped-file region with a warm catalog (checkpointed
 * every 100 ms, evicting all the while), and is killed at a random moment; this JVM then opens
 * the same region, catalog and log, as the next broker would, and checks what it serves.
 * <pre>
 *  round r = 1..rounds (streamcache.warmCrash.rounds, 3)
 *    start the child; wait for its first ack; let it run 200..1000 ms; SIGKILL (exit 137)
 *    open the cache (adopts from the region what the catalog names and is intact) and the store
 *      (recovers the log; indexes the adopted entries that lie in durable bytes)
 *    per segment: length &gt;= the end of every acknowledged append; every byte of [0, length),
 *      first from the cache alone (the warm bytes: copying reads that stop at NOT_CACHED), the
 *      rest through the log, is the workload's byte at that offset
 *    the check closes cleanly (a clean catalog): the next child starts warm from it
 *  over all rounds: bytes were served warm (from the region, without the log)
 * </pre>
 * The second test does the same over a resizable tier shrunk and grown while the child runs, and
 * reopens it at another online size; the third kills the child seconds after it opened, with the
 * default checkpoint interval. About 40 s of CI time with the defaults; {@code -Dstreamcache.warmCrash.rounds=30} for a long run.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class WarmCrashIT {
    private static final int SIGKILL_EXIT = 137;
    private static final int SEGMENTS = 24;

    @TempDir
    Path root;

    @Test
    void shouldServeEveryAcknowledgedByteAndNoWrongOneAfterSigkill() throws Exception {
        final long seed = seed();
        final SplittableRandom random = new SplittableRandom(seed);
        final int rounds = Integer.getInteger("streamcache.warmCrash.rounds", 3);
        final Map<String, Long> floors = new HashMap<>();
        long warmBytes = 0;
        System.out.println("WarmCrashIT seed=" + seed + " directory=" + root);
        for (int round = 1; round <= rounds; round++) {
            final String context = "seed=" + seed + " round=" + round + ":";
            runChild(random, round, 200 + random.nextInt(801), floors, context);
            warmBytes += verify(floors, context, WarmCrashWorkload.CACHE_CAPACITY, 0).warmBytes();
        }
        assertTrue(warmBytes > 0, "no byte was served warm in " + rounds + " rounds, seed=" + seed);
    }

    /**
     * A resizable persistent tier: the child's cache manager shrinks and grows the tier all the
     * while (between half its capacity and its maximum), so the SIGKILL lands during shrinks
     * (entries being moved out of draining buffers, buffers going offline, the file being
     * truncated) and grows; each check reopens the tier at another online size, so entries in
     * buffers that are no longer online are discarded and the others adopted, every byte checked.
     * Whether a round brings anything back is chance: a kill soon after a shrink, or after the
     * appends outran the 100 ms checkpoints, leaves every catalogued entry offline or reused (on
     * an idle machine an unbounded child churned the 16 MiB cache many times a second). So the
     * child appends a bounded 8 times the cache's capacity, the resizer going on after that, and
     * rounds go on past the configured number, up to 3 times as many, until one has served bytes
     * warm; those extra rounds kill the child only once its appends are all acknowledged ("idle"),
     * among resizes alone, so that the checkpoints have caught up with the appends and a crash
     * during a shrink or grow is what decides what comes back. Every round checks every byte.
     */
    @Test
    void shouldServeNoWrongByteAfterSigkillDuringResizesAndReopenAtAnotherSize() throws Exception {
        final long seed = seed();
        final SplittableRandom random = new SplittableRandom(seed);
        final int rounds = Integer.getInteger("streamcache.warmCrash.rounds", 3);
        final long max = 2 * WarmCrashWorkload.CACHE_CAPACITY;
        final Map<String, Long> floors = new HashMap<>();
        long warmBytes = 0;
        long shrinks = 0;
        System.out.println("WarmCrashIT (resizing) seed=" + seed + " directory=" + root);
        for (int round = 1; round <= rounds || warmBytes == 0 && round <= 3 * rounds; round++) {
            final String context = "seed=" + seed + " round=" + round + " (resizing):";
            final boolean afterAppends = round > rounds;
            shrinks += runChild(random, round, 300 + random.nextInt(1200), afterAppends, floors, context,
                "capacity=" + WarmCrashWorkload.CACHE_CAPACITY, "maxCapacity=" + max, "resize",
                "limit=" + 8 * WarmCrashWorkload.CACHE_CAPACITY);
            final long reopenAt = random.nextLong(WarmCrashWorkload.CACHE_CAPACITY / 4, max + 1)
                / WarmCrashWorkload.BUFFER_LENGTH * WarmCrashWorkload.BUFFER_LENGTH;
            warmBytes += verify(floors, context + " reopened at " + reopenAt, reopenAt, max).warmBytes();
        }
        final long done = shrinks;
        assertTrue(done > 0, () -> "the child completed no shrink in " + rounds + " rounds, seed=" + seed);
        System.out.println("WarmCrashIT (resizing): " + done + " shrinks completed by the children");
        assertTrue(warmBytes > 0, "no byte was served warm in " + 3 * rounds + " rounds, seed=" + seed);
    }

    /**
     * With the default checkpoint interval (30 s), a SIGKILL a few seconds after a store opened
     * under heavy appends still brings entries back warm: the checkpointer's early checkpoints
     * (1 s after the first, then at doubling intervals up to the configured one). The child
     * appends half the cache's capacity and stops, so no block a checkpoint saw is evicted and
     * reused before the kill however fast the machine is (on an idle machine an unbounded child
     * appended 700 MB into the 256 MiB cache in 2.5 s and every checkpointed entry was reused);
     * the only checkpoint before the early ones, at build, sees an empty cache.
     */
    @Test
    void shouldBringEntriesBackWarmAfterASigkillSecondsAfterOpen() throws Exception {
        final long seed = seed();
        final SplittableRandom random = new SplittableRandom(seed);
        final long capacity = 256L << 20;
        final Map<String, Long> floors = new HashMap<>();
        final String context = "seed=" + seed + " (default interval):";
        final long killAfter = Long.getLong("streamcache.warmCrash.killAfterMillis", 2500);
        runChild(random, 1, killAfter, floors, context, "interval=30000", "capacity=" + capacity, "limit=" + capacity / 2);
        final long acknowledged = floors.values().stream().mapToLong(Long::longValue).sum();
        final Verified verified = verify(floors, context, capacity, 0);
        System.out.println(context + " killed " + killAfter + " ms after the first ack, " + acknowledged
            + " bytes acknowledged: restored " + verified.stats().restoredEntries() + " entries, "
            + verified.stats().restoredBytes() + " bytes");
        assertTrue(verified.stats().restoredEntries() > 0, () -> context + " nothing came back warm: " + verified.stats());
    }

    private static long seed() {
        final long configured = Long.getLong("streamcache.crash.seed", 0);
        return configured != 0 ? configured : System.nanoTime();
    }

    private long runChild(final SplittableRandom random, final int round, final long killAfter, final Map<String, Long> floors,
                          final String context, final String... options) throws Exception {
        return runChild(random, round, killAfter, false, floors, context, options);
    }

    /**
     * Runs the child with {@code options} until {@code killAfter} ms after its first ack (and, with
     * {@code resize}, its first resize; with {@code afterAppends}, its "idle" line: every append
     * acknowledged), SIGKILLs it, reads its acks.
     *
     * @return the shrinks the child completed (its "resize" lines that lowered the capacity).
     */
    private long runChild(final SplittableRandom random, final int round, final long killAfter, final boolean afterAppends,
                          final Map<String, Long> floors, final String context, final String... options) throws Exception {
        final Path out = root.resolve("round-" + round + ".out");
        final Path err = root.resolve("round-" + round + ".err");
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final List<String> command = new ArrayList<>(List.of(java, "-Xmx192m", "-XX:MaxDirectMemorySize=192m",
            "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), WarmCrashWorkload.class.getName(), root.toString(),
            Integer.toString(SEGMENTS), Long.toString(random.nextLong()), "120"));
        command.addAll(List.of(options));
        final Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // A resizing child is killed only after its first resize, so every round crashes among resizes.
            final boolean resizing = List.of(options).contains("resize");
            String seen;
            while (!(seen = Files.readString(out, StandardCharsets.US_ASCII)).contains("ack ")
                || resizing && !seen.contains("resize ") || afterAppends && !seen.contains("idle")) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    fail(context + " the workload acknowledged nothing: " + read(err));
                }
                Thread.sleep(5);
            }
            Thread.sleep(killAfter);
            assertTrue(process.isAlive(), () -> context + " the workload exited early: " + read(err));
        } finally {
            process.destroyForcibly();
            process.waitFor(60, TimeUnit.SECONDS);
        }
        assertEquals(SIGKILL_EXIT, process.exitValue(), () -> context + " not killed by SIGKILL: " + read(err));
        long shrinks = 0;
        for (final String line : Files.readAllLines(out, StandardCharsets.US_ASCII)) {
            final String[] parts = line.split(" ");
            if (parts.length == 4 && parts[0].equals("ack")) {
                floors.merge(parts[1], Long.parseLong(parts[2]) + Long.parseLong(parts[3]), Math::max);
            } else if (parts.length == 3 && parts[0].equals("resize") && Long.parseLong(parts[2]) < Long.parseLong(parts[1])) {
                shrinks++;
            }
        }
        return shrinks;
    }

    /** What a check found: the store's warm restore and the bytes served from the reopened cache alone. */
    private record Verified(WarmRestoreStats stats, long warmBytes) {
    }

    /** Reopens the cache at {@code capacity} (resizable up to {@code maxCapacity} if not 0) and checks every byte. */
    private Verified verify(final Map<String, Long> floors, final String context, final long capacity, final long maxCapacity)
        throws Exception {
        try (BlockCache cache = WarmCrashWorkload.cache(root, "warm-crash-check", capacity, maxCapacity);
             SegmentStore store = WarmCrashWorkload.checkStore(cache, root, "warm-crash-check")) {
            final WarmRestoreStats stats = store.warmRestore();
            long warm = 0;
            for (final Map.Entry<String, Long> floor : floors.entrySet()) {
                final String name = floor.getKey();
                final int segment = WarmCrashWorkload.segmentIndex(name);
                assertTrue(store.exists(name), () -> context + " segment " + name + " is gone");
                final SegmentInfo info = store.info(name);
                assertTrue(info.length() >= floor.getValue(), () -> context + " " + name + " length=" + info.length()
                    + " < acknowledged end=" + floor.getValue());
                // The warm bytes: what the reopened cache holds, read from it alone.
                long at = 0;
                while (at < info.length()) {
                    final ByteBuf chunk = Unpooled.buffer((int) Math.min(1 << 20, info.length() - at));
                    store.read(name, at, chunk);
                    final int n = chunk.readableBytes();
                    check(context, name, segment, at, chunk, n);
                    warm += n;
                    at = n > 0 ? at + n : nextCached(store, name, at + 1, info.length());
                }
            }
            // Then every byte, through the log where the cache has none (its fills evict).
            for (final Map.Entry<String, Long> floor : floors.entrySet()) {
                final String name = floor.getKey();
                final int segment = WarmCrashWorkload.segmentIndex(name);
                final SegmentInfo info = store.info(name);
                long at = 0;
                while (at < info.length()) {
                    try (ReadResult result = store.readThrough(name, at, (int) Math.min(1 << 20, info.length() - at))
                        .get(30, TimeUnit.SECONDS)) {
                        final int n = result.length();
                        assertTrue(n > 0, () -> context + " " + name + " nothing read: " + result.status());
                        check(context, name, segment, at, result.data(), n);
                        at += n;
                    }
                }
                floors.put(name, info.length());
            }
            System.out.println(context + " " + stats + " warm bytes=" + warm);
            return new Verified(stats, warm);
        }
    }

    /**
     * @return an offset at or after {@code from} whose byte the cache holds, probing every 512
     *         bytes (cached entries are longer), or {@code end}.
     */
    private static long nextCached(final SegmentStore store, final String name, final long from, final long end) {
        final ByteBuf one = Unpooled.buffer(1, 1);
        for (long at = from; at < end; at = Math.min(end, at + 512)) {
            one.clear();
            store.read(name, at, one);
            if (one.readableBytes() == 1) {
                return at;
            }
        }
        return end;
    }

    private static void check(final String context, final String name, final int segment, final long at, final ByteBuf data,
                              final int n) {
        for (int i = 0; i < n; i++) {
            final byte expected = WarmCrashWorkload.byteAt(segment, at + i);
            final byte actual = data.getByte(data.readerIndex() + i);
            if (expected != actual) {
                fail(context + " " + name + " byte at offset=" + (at + i) + " is " + actual + ", expected " + expected);
            }
        }
    }

    private static String read(final Path path) {
        try {
            return Files.readString(path);
        } catch (final IOException e) {
            return e.toString();
        }
    }
}
