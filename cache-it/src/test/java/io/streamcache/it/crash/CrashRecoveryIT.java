package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Crash consistency of the durable segment store: a child JVM ({@link CrashWorkload}) appends
 * from several producer threads and is killed with SIGKILL at a random moment, repeatedly, over
 * one log directory; after each kill this JVM recovers the store and checks it.
 *
 * <pre>
 *  round r = 1..rounds, one log directory throughout
 *    start CrashWorkload (recovers the directory, continues every segment at its length)
 *    wait for its first "ack" line; let it run minRunMillis..maxRunMillis; SIGKILL (exit 137)
 *    [torn test: cut the tail log file at a random byte of its last batches]
 *    scan the files (LogRecovery, read-only): every byte where the location index says it is
 *    build a SegmentStore over the directory (its own recovery) and, for every segment:
 *      length &gt;= every acknowledged end (and every length an earlier round verified)
 *      every byte of [0, length), read through the store, is a byte of a whole record the
 *        workload wrote at that offset; the last record ends exactly at length; every
 *        acknowledged append is one of those records (same offset, same length)
 *      the store's length equals the files' length
 *      an append lands at offset == length
 * </pre>
 * A kill keeps the page cache, so this shows recovery and the acknowledgement protocol, not that
 * the writer forces before it acknowledges (cache-segmentstore's power-cut tests do that).
 *
 * <p>Settings (system properties, small defaults so that CI stays within a few minutes on two
 * cores): {@code streamcache.crash.rounds} (4), {@code streamcache.crash.tornRounds} (3),
 * {@code streamcache.crash.minRunMillis} (300), {@code streamcache.crash.maxRunMillis} (1500),
 * {@code streamcache.crash.bytesPerSecond} (64 MiB/s; 0 for as fast as the disk goes),
 * {@code streamcache.crash.seed} (0: a new seed, printed). Every failure message names the seed
 * and the round; rerun with {@code -Dstreamcache.crash.seed=...} (kill times still vary).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrashRecoveryIT {
    private static final int SEGMENTS = 6;
    private static final int PRODUCERS = 3;
    /** The child halts by itself after this long, in case the test dies before killing it. */
    private static final int CHILD_MAX_SECONDS = 120;
    /** Exit status of a process killed by SIGKILL: 128 + 9. */
    private static final int SIGKILL_EXIT = 137;
    private static final long TEST_CACHE_CAPACITY = 128L << 20;
    /** The workload's rate cap: 64 MiB/s, all producers together. */
    private static final long BYTES_PER_SECOND_DEFAULT = 64L << 20;

    @TempDir
    Path root;

    private long seed;
    private SplittableRandom random;
    private Path logDirectory;
    /** Per segment: the bytes that must survive (acknowledged, or verified in an earlier round). */
    private final long[] floors = new long[SEGMENTS];
    /** Per segment: whether it must exist (it was seen after a recovery). */
    private final boolean[] known = new boolean[SEGMENTS];
    private int round;
    /** The child's {@link io.streamcache.log.LogConfig.Builder#forcesInFlight}. */
    private int forcesInFlight = 1;

    @BeforeEach
    void setUp() throws IOException {
        final long configured = Long.getLong("streamcache.crash.seed", 0);
        seed = configured != 0 ? configured : System.nanoTime();
        random = new SplittableRandom(seed);
        logDirectory = Files.createDirectories(root.resolve("log"));
        System.out.println("CrashRecoveryIT seed=" + seed + " directory=" + root);
    }

    @ParameterizedTest(name = "forcesInFlight={0}")
    @ValueSource(ints = {1, 4})
    void shouldReadBackEveryAcknowledgedAppendAfterRepeatedKills(final int forces) throws Exception {
        forcesInFlight = forces;
        final int rounds = Integer.getInteger("streamcache.crash.rounds", 4);
        for (round = 1; round <= rounds; round++) {
            final Acks acks = runAndKill();
            final RecoveredLog files = recoverFiles();
            verify(acks, files, null);
        }
    }

    @Test
    void shouldRecoverATornTailAfterAKill() throws Exception {
        final int rounds = Integer.getInteger("streamcache.crash.tornRounds", 3);
        for (round = 1; round <= rounds; round++) {
            final Acks acks = runAndKill();
            final RecoveredLog before = recoverFiles();
            final long[] guaranteed = tearTail(before);
            final RecoveredLog after = recoverFiles();
            for (final RecoveredSegment segment : after.liveSegments()) {
                final RecoveredSegment old = before.segment(segment.name());
                assertNotNull(old, context() + " segment=" + segment.name() + " appeared only after the tail was cut");
                assertTrue(segment.length() <= old.length(), context() + " segment=" + segment.name() + " has length="
                    + segment.length() + " after the cut, more than length=" + old.length() + " before it");
            }
            verify(acks, after, guaranteed);
        }
    }

    // ------------------------------------------------------------------------------------------
    // The child
    // ------------------------------------------------------------------------------------------

    /**
     * Runs the workload over the log directory until a random moment after its first
     * acknowledgement, kills it with SIGKILL, and returns what it acknowledged.
     */
    private Acks runAndKill() throws Exception {
        final Path out = root.resolve("round-" + round + ".out");
        final Path err = root.resolve("round-" + round + ".err");
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final List<String> command = List.of(java, "-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC",
            "-D" + CrashWorkload.FORCES_PROPERTY + "=" + forcesInFlight,
            "-cp", System.getProperty("java.class.path"), CrashWorkload.class.getName(),
            logDirectory.toString(), Integer.toString(SEGMENTS), Integer.toString(PRODUCERS), Long.toString(random.nextLong()),
            Long.toString(Long.getLong("streamcache.crash.bytesPerSecond", BYTES_PER_SECOND_DEFAULT)), Integer.toString(CHILD_MAX_SECONDS));
        final Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!firstAckWritten(out)) {
                if (!process.isAlive()) {
                    fail(context() + " the workload exited with status=" + process.exitValue() + " before its first ack: " + stderr(err));
                }
                if (System.nanoTime() > deadline) {
                    fail(context() + " the workload acknowledged nothing within 60 s: " + stderr(err));
                }
                Thread.sleep(5);
            }
            final int minMillis = Integer.getInteger("streamcache.crash.minRunMillis", 300);
            final int maxMillis = Integer.getInteger("streamcache.crash.maxRunMillis", 1500);
            Thread.sleep(minMillis + random.nextInt(Math.max(1, maxMillis - minMillis + 1)));
            assertTrue(process.isAlive(), () -> context() + " the workload exited with status=" + process.exitValue()
                + " before the kill: " + stderr(err));
        } finally {
            // Process.destroyForcibly() is kill(pid, SIGKILL) on Linux; the exit status proves it.
            process.destroyForcibly();
            process.waitFor(60, TimeUnit.SECONDS);
        }
        assertEquals(SIGKILL_EXIT, process.exitValue(), () -> context() + " the workload did not die of SIGKILL: " + stderr(err));
        final Acks acks = Acks.parse(out);
        System.out.println(context() + " killed after acks=" + acks.count + " (" + acks.bytes + " bytes)");
        return acks;
    }

    private static boolean firstAckWritten(final Path out) throws IOException {
        if (Files.size(out) == 0) {
            return false;
        }
        return new String(Files.readAllBytes(out), StandardCharsets.US_ASCII).contains("\nack ");
    }

    private static String stderr(final Path err) {
        try {
            final String text = Files.readString(err, StandardCharsets.UTF_8);
            return text.length() > 8000 ? text.substring(0, 8000) + "..." : text;
        } catch (final IOException e) {
            return "(stderr unreadable: " + e + ")";
        }
    }

    // ------------------------------------------------------------------------------------------
    // Checks
    // ------------------------------------------------------------------------------------------

    /**
     * Scans the log files, read-only: what a recovery finds, without changing them.
     */
    private RecoveredLog recoverFiles() throws IOException {
        return LogRecovery.builder(logDirectory).readOnly(true).build().recover();
    }

    /**
     * Checks the files and then the store after a kill.
     *
     * @param guaranteed per segment, the length the log still holds whole after a cut tail
     *                   (acknowledgements beyond it may be lost); null if nothing was cut.
     */
    private void verify(final Acks acks, final RecoveredLog files, final long[] guaranteed) throws Exception {
        final long[] expected = new long[SEGMENTS];
        for (int i = 0; i < SEGMENTS; i++) {
            final TreeMap<Long, Integer> segmentAcks = acks.of(i);
            if (guaranteed != null) {
                final long whole = guaranteed[i];
                segmentAcks.entrySet().removeIf(ack -> ack.getKey() + ack.getValue() > whole);
                expected[i] = Math.min(floors[i], guaranteed[i]);
            } else {
                expected[i] = floors[i];
            }
            if (!segmentAcks.isEmpty()) {
                expected[i] = Math.max(expected[i], segmentAcks.lastKey() + segmentAcks.lastEntry().getValue());
            }
        }
        final long[] lengths = verifyFiles(acks, files, expected, guaranteed);
        verifyStore(acks, lengths, expected);
    }

    /**
     * @return per segment, its length in the files (-1 if absent).
     */
    private long[] verifyFiles(final Acks acks, final RecoveredLog files, final long[] expected, final long[] guaranteed)
        throws Exception {
        final long[] lengths = new long[SEGMENTS];
        Arrays.fill(lengths, -1);
        final CrashSegmentScan scan = new CrashSegmentScan();
        for (final RecoveredSegment segment : files.liveSegments()) {
            final int index = CrashWorkload.segmentIndex(segment.name());
            assertTrue(index >= 0 && index < SEGMENTS, () -> context() + " the files hold a segment the workload never created: "
                + segment);
            assertEquals(0, segment.startOffset(), () -> context() + " segment=" + segment.name() + " was never truncated: " + segment);
            lengths[index] = segment.length();
            try (LogFileSource source = new LogFileSource(files, segment)) {
                final String problem = scan.scan(index, segment.length(), source, acks.matcher(index, context() + " in the log files:"));
                assertEquals(null, problem, () -> context() + " in the log files: " + problem);
            }
            acks.assertAllMatched(index, context() + " in the log files:");
        }
        for (int i = 0; i < SEGMENTS; i++) {
            final int index = i;
            // A segment must exist once a round saw it, unless a cut tail took its CREATE too.
            if (expected[i] > 0 || (known[i] && guaranteed == null)) {
                assertTrue(lengths[i] >= expected[i], () -> context() + " segment=" + CrashWorkload.segmentName(index)
                    + " lost acknowledged bytes in the log files: length=" + lengths[index] + " < expected=" + expected[index]
                    + acks.firstBeyond(index, lengths[index]));
            }
        }
        return lengths;
    }

    /**
     * Builds a store over the directory (recovering it), reads every segment back through it,
     * and appends one record to each.
     */
    private void verifyStore(final Acks acks, final long[] fileLengths, final long[] expected) throws Exception {
        final CrashSegmentScan scan = new CrashSegmentScan();
        try (BlockCache cache = BlockCache.builder().capacity(TEST_CACHE_CAPACITY).name("crash-test").registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).name("crash-test").log(CrashWorkload.logConfig(logDirectory)).build()) {
            int count = 0;
            for (int i = 0; i < SEGMENTS; i++) {
                final int index = i;
                final String name = CrashWorkload.segmentName(i);
                if (!store.exists(name)) {
                    assertEquals(-1, fileLengths[i], () -> context() + " segment=" + name + " is in the files but not in the store");
                    continue;
                }
                count++;
                final long length = store.info(name).length();
                assertEquals(fileLengths[i], length, () -> context() + " segment=" + name + " has length=" + length
                    + " in the store but length=" + fileLengths[index] + " in the files");
                assertTrue(length >= expected[i], () -> context() + " segment=" + name + " lost acknowledged bytes: length="
                    + length + " < expected=" + expected[index] + acks.firstBeyond(index, length));
                final String problem = scan.scan(index, length, (offset, destination, maxLength) -> readThrough(store, name, offset,
                    destination, maxLength), acks.matcher(index, context() + " read through the store:"));
                assertEquals(null, problem, () -> context() + " read through the store: " + problem);
                acks.assertAllMatched(index, context());

                final int recordLength = CrashWorkload.recordLength(random);
                final ByteBuf record = Unpooled.buffer(recordLength, recordLength);
                CrashRecordDescriptor.encode(i, length, recordLength, record);
                final long offset = store.appendAsync(name, record).get(30, TimeUnit.SECONDS);
                assertEquals(length, offset, () -> context() + " segment=" + name + ": an append after recovery landed at offset="
                    + offset + ", not at the recovered length=" + length);
                floors[i] = length + recordLength;
                known[i] = true;
            }
            assertEquals(count, store.segmentCount(), () -> context() + " the store holds segments the workload never created");
        }
    }

    private static int readThrough(final SegmentStore store, final String name, final long offset, final byte[] destination,
                                   final int maxLength) throws Exception {
        final ReadResult result = store.readThrough(name, offset, maxLength).get(30, TimeUnit.SECONDS);
        try {
            final int n = result.length();
            if (n == 0) {
                throw new IllegalStateException("readThrough(" + name + ", offset=" + offset + ") returned no data: " + result);
            }
            final ByteBuf data = result.data();
            data.getBytes(data.readerIndex(), destination, 0, n);
            return n;
        } finally {
            result.release();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Torn tail
    // ------------------------------------------------------------------------------------------

    /**
     * Zeroes the tail log file from a random byte of its last two batches (or of the page after
     * them) to its end, as a crash that loses the unforced pages of a file's tail would.
     *
     * @return per segment, the length still whole in the files: up to its first record that
     *         did not end before the cut.
     */
    private long[] tearTail(final RecoveredLog log) throws IOException {
        final long[] guaranteed = new long[SEGMENTS];
        if (log.tailFileNumber() == 0) {
            return guaranteed;
        }
        final long tailEnd = log.tailEndPosition();
        final long from = Math.max(LogFileDescriptor.FIRST_RECORD_POSITION, tailEnd - 2L * CrashWorkload.LOG_BATCH_LENGTH);
        final long to = Math.max(from, tailEnd + LogFileDescriptor.PAGE_LENGTH);
        final long cut = from + random.nextLong(to - from + 1);
        final long tailFile = log.tailFileNumber();
        final Path path = logDirectory.resolve(LogFileDescriptor.fileName(tailFile));
        // Zeros from the cut on: the writer creates files whole (forced), so a crash loses unforced
        // bytes, never the file's length; a shorter file is damage, which recovery refuses.
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
            final java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocate((int) Math.min(1 << 20, Math.max(0, channel.size() - cut)));
            for (long at = cut; at < channel.size(); ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), channel.size() - at));
                at += channel.write(zeros, at);
            }
        }
        System.out.println(context() + " cut " + path.getFileName() + " at position=" + cut + " (its records ended at " + tailEnd + ")");
        for (final RecoveredSegment segment : log.liveSegments()) {
            final int index = CrashWorkload.segmentIndex(segment.name());
            if (index < 0 || index >= SEGMENTS) {
                continue;
            }
            final long[] whole = {segment.length()};
            try (LogFileSource source = new LogFileSource(log, segment)) {
                source.forEachRecord((offset, length, fileNumber, position) -> {
                    final long end = position + alignedRecordLength(length);
                    if (fileNumber == tailFile && end > cut && offset < whole[0]) {
                        whole[0] = offset;
                    }
                });
            }
            guaranteed[index] = whole[0];
        }
        return guaranteed;
    }

    private static long alignedRecordLength(final int payloadLength) {
        final int alignment = LogRecordDescriptor.RECORD_ALIGNMENT;
        return (LogRecordDescriptor.HEADER_LENGTH + (long) payloadLength + alignment - 1) / alignment * alignment;
    }

    private String context() {
        return "seed=" + seed + " forcesInFlight=" + forcesInFlight + " round=" + round + ":";
    }

    // ------------------------------------------------------------------------------------------
    // Acknowledgements
    // ------------------------------------------------------------------------------------------

    /**
     * What one run of the workload acknowledged: per segment, offset to length.
     */
    private static final class Acks {
        final List<TreeMap<Long, Integer>> bySegment = new ArrayList<>();
        final List<Matcher> matchers = new ArrayList<>();
        long count;
        long bytes;

        Acks() {
            for (int i = 0; i < SEGMENTS; i++) {
                bySegment.add(new TreeMap<>());
                matchers.add(new Matcher(bySegment.get(i)));
            }
        }

        /**
         * Reads the workload's stdout; a last line without its newline (cut by the kill) is dropped.
         */
        static Acks parse(final Path out) throws IOException {
            final Acks acks = new Acks();
            final String text = new String(Files.readAllBytes(out), StandardCharsets.US_ASCII);
            final int end = text.lastIndexOf('\n');
            if (end < 0) {
                return acks;
            }
            for (final String line : text.substring(0, end).split("\n")) {
                final String[] fields = line.split(" ");
                if (!fields[0].equals("ack")) {
                    continue;
                }
                final int index = CrashWorkload.segmentIndex(fields[1]);
                if (index < 0 || index >= SEGMENTS || fields.length != 4) {
                    throw new IllegalStateException("bad line from the workload: " + line);
                }
                final long offset = Long.parseLong(fields[2]);
                final int length = Integer.parseInt(fields[3]);
                acks.bySegment.get(index).put(offset, length);
                acks.count++;
                acks.bytes += length;
            }
            return acks;
        }

        TreeMap<Long, Integer> of(final int segment) {
            return bySegment.get(segment);
        }

        Matcher matcher(final int segment, final String context) {
            return matchers.get(segment).reset(context + " segment=" + CrashWorkload.segmentName(segment));
        }

        void assertAllMatched(final int segment, final String context) {
            final Matcher matcher = matchers.get(segment);
            assertTrue(!matcher.remaining.hasNext() && matcher.current == null, () -> context + " segment="
                + CrashWorkload.segmentName(segment) + " lacks the acknowledged append at offset=" + matcher.current.getKey()
                + " length=" + matcher.current.getValue());
        }

        String firstBeyond(final int segment, final long length) {
            for (final Map.Entry<Long, Integer> ack : bySegment.get(segment).entrySet()) {
                if (ack.getKey() + ack.getValue() > length) {
                    return "; first acknowledged append lost: offset=" + ack.getKey() + " length=" + ack.getValue();
                }
            }
            return "";
        }
    }

    /**
     * Checks, record by record in offset order, that every acknowledged append is a record the
     * scan found: same offset, same length.
     */
    private static final class Matcher implements CrashSegmentScan.RecordVisitor {
        private final TreeMap<Long, Integer> acks;
        Iterator<Map.Entry<Long, Integer>> remaining;
        Map.Entry<Long, Integer> current;

        private String context = "";

        Matcher(final TreeMap<Long, Integer> acks) {
            this.acks = acks;
            reset("");
        }

        Matcher reset(final String newContext) {
            this.context = newContext;
            remaining = acks.entrySet().iterator();
            current = remaining.hasNext() ? remaining.next() : null;
            return this;
        }

        @Override
        public void onRecord(final long offset, final int length) {
            if (current == null || current.getKey() > offset) {
                return;
            }
            if (current.getKey() < offset) {
                throw new AssertionError(context + " the acknowledged append at offset=" + current.getKey() + " length="
                    + current.getValue() + " is not a record boundary (the next record starts at offset=" + offset + ")");
            }
            if (current.getValue() != length) {
                throw new AssertionError(context + " the acknowledged append at offset=" + offset + " had length=" + current.getValue()
                    + ", the record there has length=" + length);
            }
            current = remaining.hasNext() ? remaining.next() : null;
        }
    }
}
