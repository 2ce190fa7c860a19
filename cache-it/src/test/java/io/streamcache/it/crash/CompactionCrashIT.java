package io.streamcache.it.crash;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.recovery.LogRecovery;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Compaction under SIGKILL: a child JVM ({@link CompactionCrashWorkload}) appends while its
 * compactor copies the idle and slow segments' bytes out of old files and retires them, and is
 * killed at a random moment, several times over one directory; after each kill this JVM opens the
 * store and checks every segment.
 *
 * <pre>
 *  round r = 1..rounds (streamcache.compactionCrash.rounds, 6)
 *    start the child; wait for its first ack; let it run 200..1200 ms; SIGKILL (exit 137)
 *    open a store over the directory (recovery), then per segment:
 *      length &gt;= the end of every acknowledged append (and every length verified before)
 *      idle and slow: start 0, so every acknowledged byte must be there
 *      every byte of [start, length), read through the store from the log, is the workload's
 *        byte at that offset: a byte lost, doubled or misplaced by a copy shows as a wrong byte or length
 *  at the end: the first log file (the idle segment's original) is gone, so compaction ran
 * </pre>
 * About 13 s of CI time with the defaults.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CompactionCrashIT {
    private static final int SIGKILL_EXIT = 137;

    @TempDir
    Path root;

    @Test
    void shouldKeepEveryAcknowledgedByteExactlyOnceWhenKilledDuringCompaction() throws Exception {
        killAndVerify(root, Integer.getInteger("streamcache.compactionCrash.rounds", 6), 0, "CompactionCrashIT");
    }

    /**
     * The rounds of the class comment over {@code root/log}, the workload and the checks run with
     * {@link io.streamcache.log.LogConfig.Builder#checkpointFiles checkpointFiles}.
     *
     * @return with checkpoints, in how many rounds a read-only recovery before the open started
     *         from the checkpoint the kill left (0 without).
     */
    static int killAndVerify(final Path root, final int rounds, final int checkpointFiles, final String name) throws Exception {
        final long configured = Long.getLong("streamcache.crash.seed", 0);
        final long seed = configured != 0 ? configured : System.nanoTime();
        final SplittableRandom random = new SplittableRandom(seed);
        final Path directory = Files.createDirectories(root.resolve("log"));
        final Map<String, Long> floors = new HashMap<>();
        int fromCheckpoint = 0;
        System.out.println(name + " seed=" + seed + " directory=" + root);
        for (int round = 1; round <= rounds; round++) {
            final String context = "seed=" + seed + " round=" + round + ":";
            final Path out = root.resolve("round-" + round + ".out");
            final Path err = root.resolve("round-" + round + ".err");
            final String java = ProcessHandle.current().info().command().orElseThrow();
            final Process process = new ProcessBuilder(List.of(java, "-Xmx192m", "-XX:MaxDirectMemorySize=192m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), CompactionCrashWorkload.class.getName(), directory.toString(),
                Long.toString(random.nextLong()), "120", Integer.toString(checkpointFiles))).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try {
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!Files.readString(out, StandardCharsets.US_ASCII).contains("ack ")) {
                    if (!process.isAlive() || System.nanoTime() > deadline) {
                        fail(context + " the workload acknowledged nothing: " + Files.readString(err));
                    }
                    Thread.sleep(5);
                }
                Thread.sleep(200 + random.nextInt(1001));
                assertTrue(process.isAlive(), () -> context + " the workload exited early: " + read(err));
            } finally {
                process.destroyForcibly();
                process.waitFor(60, TimeUnit.SECONDS);
            }
            assertEquals(SIGKILL_EXIT, process.exitValue(), () -> context + " not killed by SIGKILL: " + read(err));
            for (final String line : Files.readAllLines(out, StandardCharsets.US_ASCII)) {
                final String[] parts = line.split(" ");
                if (parts.length == 4 && parts[0].equals("ack")) {
                    floors.merge(parts[1], Long.parseLong(parts[2]) + Long.parseLong(parts[3]), Math::max);
                }
            }
            if (checkpointFiles > 0) {
                final LogRecovery recovery = LogRecovery.builder(directory).readOnly(true).checkpoint(true).build();
                recovery.recover();
                fromCheckpoint += recovery.checkpointUsed() ? 1 : 0;
                System.out.println(context + " recovery " + (recovery.checkpointUsed() ? "started from" : "did not use")
                    + " the checkpoint");
            }
            verify(directory, floors, context, checkpointFiles);
            final TreeSet<Long> files = fileNumbers(directory);
            System.out.println(context + " verified " + floors + "; files " + files.first() + ".." + files.last() + " (" + files.size() + ")");
        }
        final TreeSet<Long> numbers = fileNumbers(directory);
        assertTrue(numbers.first() > 1, "the idle segment's first file was compacted away: " + numbers + " seed=" + seed);
        return fromCheckpoint;
    }

    private static void verify(final Path directory, final Map<String, Long> floors, final String context, final int checkpointFiles)
        throws Exception {
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).name("compaction-crash-check").registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).name("compaction-crash-check")
                 .log(CompactionCrashWorkload.logConfig(directory, checkpointFiles)).build()) {
            for (final Map.Entry<String, Long> floor : floors.entrySet()) {
                final String name = floor.getKey();
                assertTrue(store.exists(name), () -> context + " segment " + name + " is gone");
                final SegmentInfo info = store.info(name);
                assertTrue(info.length() >= floor.getValue(), () -> context + " " + name + " length=" + info.length()
                    + " < acknowledged end=" + floor.getValue());
                if (!name.startsWith("busy-")) {
                    assertEquals(0, info.startOffset(), () -> context + " " + name + " was never truncated");
                }
                final int segment = CompactionCrashWorkload.index(name);
                long at = info.startOffset();
                while (at < info.length()) {
                    try (ReadResult result = store.readThrough(name, at, (int) Math.min(1 << 20, info.length() - at))
                        .get(30, TimeUnit.SECONDS)) {
                        final int length = result.length();
                        assertTrue(length > 0, () -> context + " " + name + " nothing read: " + result.status());
                        for (int i = 0; i < length; i++) {
                            final byte expected = CompactionCrashWorkload.byteAt(segment, at + i);
                            final byte actual = result.data().getByte(result.data().readerIndex() + i);
                            if (expected != actual) {
                                fail(context + " " + name + " byte at offset=" + (at + i) + " is " + actual + ", expected " + expected);
                            }
                        }
                        at += length;
                    }
                }
                floors.put(name, info.length());
            }
        }
    }

    private static TreeSet<Long> fileNumbers(final Path directory) throws IOException {
        final TreeSet<Long> numbers = new TreeSet<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "log-*.log")) {
            for (final Path path : stream) {
                numbers.add(LogFileDescriptor.fileNumber(path.getFileName().toString()));
            }
        }
        return numbers;
    }

    private static String read(final Path path) {
        try {
            return Files.readString(path);
        } catch (final IOException e) {
            return e.toString();
        }
    }
}
