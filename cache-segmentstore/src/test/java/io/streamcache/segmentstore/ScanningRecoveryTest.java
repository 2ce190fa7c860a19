package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.recovery.ScanningRecoveryHook;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store built over an existing log directory recovers it through the default
 * {@link io.streamcache.log.internal.recovery.ScanningRecoveryHook}: after a clean close,
 * after being abandoned (a crash that keeps the page cache), after its tail was cut at random
 * bytes, and with a flipped bit before the tail.
 */
@Timeout(120)
class ScanningRecoveryTest {
    @TempDir
    Path root;

    @RegisterExtension
    final Closer closer = new Closer();

    private BlockCache cache() {
        final BlockCache cache = TestSegments.cache(8 << 20);
        closer.add(cache);
        return cache;
    }

    private SegmentStore open(final BlockCache cache, final Path directory, final CorruptionPolicy policy) {
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            // What the open itself finds: every file read at open, no recovery checkpoint (with one, whether a
            // damaged file is before it depends on how far the checkpoint thread got; CheckpointRecoveryTest covers that).
            .log(TestLogs.small(directory).checkpointFiles(0).build())
            .logCorruptionPolicy(policy)
            .readThroughRangeLength(32 * 1024)
            .build();
        closer.add(store);
        return store;
    }

    private static long seed(final String segment) {
        return segment.hashCode();
    }

    /** Reads {@code [from, to)} of a segment through the log, in steps of at most 10 000 bytes. */
    static byte[] readThrough(final SegmentStore store, final String name, final long from, final long to) throws Exception {
        final byte[] out = new byte[(int) (to - from)];
        long at = from;
        while (at < to) {
            try (ReadResult result = store.readThrough(name, at, (int) Math.min(10_000, to - at)).get(30, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, () -> "no bytes at offset=" + result.offset() + " status=" + result.status());
                result.data().getBytes(result.data().readerIndex(), out, (int) (at - from), result.length());
                at += result.length();
            }
        }
        return out;
    }

    private static void assertSegmentBytes(final SegmentStore store, final String name, final long from, final long to) throws Exception {
        assertArrayEquals(TestSegments.pattern(seed(name), from, (int) (to - from)), readThrough(store, name, from, to),
            () -> "bytes of segment=" + name + " [" + from + ", " + to + ")");
    }

    private static void copyDirectory(final Path from, final Path to) throws IOException {
        Files.createDirectories(to);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(from)) {
            for (final Path file : files) {
                Files.copy(file, to.resolve(file.getFileName()));
            }
        }
    }

    /** Appends from 4 threads to 4 segments until each holds about {@code perSegment} bytes; returns the acked ends. */
    private static Map<String, TreeSet<Long>> appendConcurrently(final SegmentStore store, final long perSegment, final long seed)
        throws Exception {
        final Map<String, TreeSet<Long>> ends = new TreeMap<>();
        final ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            final List<Future<TreeSet<Long>>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                final String name = "s" + t;
                store.create(name);
                final Random random = new Random(seed + t);
                results.add(threads.submit(() -> {
                    final TreeSet<Long> acked = new TreeSet<>();
                    final List<CompletableFuture<Long>> inFlight = new ArrayList<>();
                    final List<Integer> lengths = new ArrayList<>();
                    long offset = 0;
                    while (offset < perSegment) {
                        final int length = 1 + random.nextInt(3000);
                        inFlight.add(store.appendAsync(name, TestSegments.buffer(seed(name), offset, length)));
                        lengths.add(length);
                        offset += length;
                    }
                    for (int i = 0; i < inFlight.size(); i++) {
                        final long at = inFlight.get(i).get(30, TimeUnit.SECONDS);
                        acked.add(at + lengths.get(i));
                    }
                    return acked;
                }));
            }
            for (int t = 0; t < 4; t++) {
                ends.put("s" + t, results.get(t).get(60, TimeUnit.SECONDS));
            }
        } finally {
            threads.shutdownNow();
        }
        return ends;
    }

    @Test
    void shouldReopenAClosedStoreWithItsSegmentsDataAndOffsets() throws Exception {
        final Path directory = root.resolve("log");
        final BlockCache cache = cache();
        final SegmentStore first = open(cache, directory, CorruptionPolicy.FAIL);
        final Map<String, TreeSet<Long>> ends = appendConcurrently(first, 150_000, 1);
        first.truncate("s0", 20_000);
        first.seal("s1");
        first.delete("s2");
        first.create("empty");
        final long s0 = ends.get("s0").last();
        final long s1 = ends.get("s1").last();
        final long s3 = ends.get("s3").last();
        first.close();

        final SegmentStore second = open(cache, directory, CorruptionPolicy.FAIL);
        assertEquals(new TreeSet<>(List.of("empty", "s0", "s1", "s3")), second.segmentNames());
        assertEquals(new SegmentInfo("s0", 20_000, s0, s0, false), second.info("s0"));
        assertEquals(new SegmentInfo("s1", 0, s1, s1, true), second.info("s1"));
        assertEquals(new SegmentInfo("s3", 0, s3, s3, false), second.info("s3"));
        assertEquals(new SegmentInfo("empty", 0, 0, 0, false), second.info("empty"));
        try (ReadResult result = second.read("s3", 0, 100)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status(), "recovered bytes are NOT_CACHED gaps");
        }
        assertSegmentBytes(second, "s0", 20_000, s0);
        assertSegmentBytes(second, "s1", 0, s1);
        assertSegmentBytes(second, "s3", 0, s3);
        assertEquals(s3, second.append("s3", TestSegments.buffer(seed("s3"), s3, 5000)), "appends continue at the length");
        second.create("s2");
        assertEquals(0, second.append("s2", TestSegments.buffer(seed("s2"), 0, 777)));
        second.close();

        final SegmentStore third = open(cache, directory, CorruptionPolicy.FAIL);
        assertEquals(s3 + 5000, third.info("s3").length());
        assertSegmentBytes(third, "s3", 0, s3 + 5000);
        assertSegmentBytes(third, "s2", 0, 777);
        assertSegmentBytes(third, "s0", 20_000, s0);
        TestLogs.assertWellFormed(directory);
    }

    @Test
    void shouldRecoverEveryAcknowledgedAppendOfAnAbandonedStore() throws Exception {
        final Path directory = root.resolve("log");
        final BlockCache cache = cache();
        final SegmentStore abandoned = open(cache, directory, CorruptionPolicy.FAIL);
        final Map<String, TreeSet<Long>> ends = appendConcurrently(abandoned, 200_000, 2);
        Thread.sleep(50);
        final Path copy = root.resolve("copy");
        copyDirectory(directory, copy);

        final SegmentStore recovered = open(cache(), copy, CorruptionPolicy.FAIL);
        for (final Map.Entry<String, TreeSet<Long>> segment : ends.entrySet()) {
            final long length = segment.getValue().last();
            assertEquals(length, recovered.info(segment.getKey()).length(), "nothing else appears: segment=" + segment.getKey());
            assertSegmentBytes(recovered, segment.getKey(), 0, length);
            assertEquals(length, recovered.append(segment.getKey(), TestSegments.buffer(seed(segment.getKey()), length, 100)));
        }
        assertEquals(4, recovered.segmentCount());
    }

    @Test
    void shouldRecoverAPrefixOfTheAcknowledgedAppendsWhenTheTailIsCutAtRandomBytes() throws Exception {
        final Path directory = root.resolve("log");
        final BlockCache cache = cache();
        final SegmentStore abandoned = open(cache, directory, CorruptionPolicy.FAIL);
        final Map<String, TreeSet<Long>> ends = appendConcurrently(abandoned, 100_000, 3);
        Thread.sleep(50);
        final Path snapshot = root.resolve("snapshot");
        copyDirectory(directory, snapshot);
        final long lastFile = lastFileNumber(snapshot);
        final long lastLength = Files.size(snapshot.resolve(LogFileDescriptor.fileName(lastFile)));
        final Random random = new Random(3);
        for (int round = 0; round < 12; round++) {
            final long cut = LogFileDescriptor.FIRST_RECORD_POSITION + (long) (random.nextDouble()
                * (lastLength - LogFileDescriptor.FIRST_RECORD_POSITION));
            final Path copy = root.resolve("cut-" + round);
            copyDirectory(snapshot, copy);
            // A write cut short leaves the pre-written zeros from the cut on (a shorter file is damage, not a torn write).
            try (FileChannel channel = FileChannel.open(copy.resolve(LogFileDescriptor.fileName(lastFile)), StandardOpenOption.WRITE)) {
                final ByteBuffer zeros = ByteBuffer.allocate((int) (lastLength - cut));
                while (zeros.hasRemaining()) {
                    channel.write(zeros, cut + zeros.position());
                }
            }
            final BlockCache roundCache = cache();
            final SegmentStore recovered = open(roundCache, copy, CorruptionPolicy.FAIL);
            for (final Map.Entry<String, TreeSet<Long>> segment : ends.entrySet()) {
                final String name = segment.getKey();
                final long length = recovered.exists(name) ? recovered.info(name).length() : 0;
                assertTrue(length == 0 || segment.getValue().contains(length),
                    () -> "cut=" + cut + ": segment=" + name + " length=" + length + " is not the end of an acknowledged append");
                assertSegmentBytes(recovered, name, 0, length);
                if (recovered.exists(name)) {
                    assertEquals(length, recovered.append(name, TestSegments.buffer(seed(name), length, 100)), "cut=" + cut);
                }
            }
            recovered.close();
        }
    }

    @Test
    void shouldFailWithTheFileAndPositionOfAFlippedBitBeforeTheTail() throws Exception {
        final Path directory = root.resolve("log");
        final BlockCache cache = cache();
        final SegmentStore first = open(cache, directory, CorruptionPolicy.FAIL);
        final Map<String, TreeSet<Long>> ends = appendConcurrently(first, 150_000, 4);
        final long[] victim = new long[] {Long.MAX_VALUE, 0, 0, 0};
        first.locations("s0").forEach((offset, length, fileNumber, position) -> {
            // Inside a page: a record failing at a page boundary of a file before the tail reads
            // as the file's end (stale bytes), and the next file's SNAPSHOT then disagrees.
            if (fileNumber < victim[0] && length > 100 && position % LogFileDescriptor.PAGE_LENGTH != 0) {
                victim[0] = fileNumber;
                victim[1] = position;
                victim[2] = length;
                victim[3] = offset;
            }
        });
        first.close();
        assertTrue(victim[0] < lastFileNumber(directory), "the victim is before the tail file");
        final Path clean = root.resolve("clean");
        copyDirectory(directory, clean);

        final Path file = directory.resolve(LogFileDescriptor.fileName(victim[0]));
        final long flipAt = victim[1] + LogRecordDescriptor.HEADER_LENGTH + victim[2] / 2;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, flipAt);
            one.put(0, (byte) (one.get(0) ^ 0x10)).position(0);
            channel.write(one, flipAt);
        }
        final byte[] before = Files.readAllBytes(file);
        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(cache(), directory, CorruptionPolicy.FAIL));
        assertEquals(victim[0], e.fileNumber(), e.getMessage());
        assertTrue(e.position() >= victim[1] && e.position() <= flipAt, e.getMessage());
        assertTrue(e.getMessage().contains(file.getFileName().toString()) && e.getMessage().contains("position=" + e.position()),
            e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(file), "FAIL changes nothing on disk");

        final SegmentStore truncated = open(cache(), directory, CorruptionPolicy.TRUNCATE);
        final long length = truncated.info("s0").length();
        assertTrue(length <= victim[3], "s0 is cut at the corrupt record: length=" + length + " record offset=" + victim[3]);
        assertTrue(length == 0 || ends.get("s0").contains(length), "length=" + length);
        assertSegmentBytes(truncated, "s0", 0, length);
        assertEquals(length, truncated.append("s0", TestSegments.buffer(seed("s0"), length, 10)));

        final SegmentStore intact = open(cache(), clean, CorruptionPolicy.FAIL);
        assertFalse(intact.segmentNames().isEmpty());
        assertNotNull(intact.locations("s0"));
        assertSegmentBytes(intact, "s0", 0, ends.get("s0").last());
    }

    @Test
    void shouldFailClearlyOnAFlippedBitInARecordAtAPageBoundary() throws Exception {
        final Path directory = root.resolve("log");
        final SegmentStore first = open(cache(), directory, CorruptionPolicy.FAIL);
        appendConcurrently(first, 150_000, 5);
        final long[] victim = new long[] {Long.MAX_VALUE, 0, 0};
        first.locations("s1").forEach((offset, length, fileNumber, position) -> {
            if (fileNumber < victim[0] && length > 100 && position % LogFileDescriptor.PAGE_LENGTH == 0
                && position > LogFileDescriptor.FIRST_RECORD_POSITION) {
                victim[0] = fileNumber;
                victim[1] = position;
                victim[2] = length;
            }
        });
        first.close();
        org.junit.jupiter.api.Assumptions.assumeTrue(victim[0] < lastFileNumber(directory), "a page-aligned record before the tail");
        final long flipAt = victim[1] + LogRecordDescriptor.HEADER_LENGTH + victim[2] / 2;
        try (FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(victim[0])), StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
            final ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, flipAt);
            one.put(0, (byte) (one.get(0) ^ 0x01)).position(0);
            channel.write(one, flipAt);
        }
        // A record failing at a page boundary reads as the end of its file; the next file's
        // SNAPSHOT then contradicts what the records left, and that is where the error points.
        final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(cache(), directory, CorruptionPolicy.FAIL));
        assertTrue(e.fileNumber() == victim[0] || e.fileNumber() == victim[0] + 1, e.getMessage());
        assertTrue(e.getMessage().contains("position="), e.getMessage());
    }

    @Test
    void shouldDeriveTheTornWriteWindowFromTheDurabilityPolicy() {
        final LogConfig everyBatch = TestLogs.small(root).maxAppendLength(TestLogs.BATCH - LogRecordDescriptor.HEADER_LENGTH).build();
        assertEquals(TestLogs.BATCH + LogFileDescriptor.PAGE_LENGTH, ScanningRecoveryHook.tornWriteWindow(everyBatch));
        // An append longer than a batch is written in one write of its own length (and a page).
        final LogConfig longAppends = TestLogs.small(root).build();
        assertEquals(LogRecordDescriptor.align(LogRecordDescriptor.alignedLength(longAppends.maxAppendLength()), LogFileDescriptor.PAGE_LENGTH)
            + LogFileDescriptor.PAGE_LENGTH, ScanningRecoveryHook.tornWriteWindow(longAppends));
        final LogConfig never = TestLogs.small(root).durability(DurabilityPolicy.NEVER).build();
        assertTrue(ScanningRecoveryHook.tornWriteWindow(never) >= never.fileLength());
        final ScanningRecoveryHook hook = new ScanningRecoveryHook(CorruptionPolicy.FAIL);
        assertThrows(IllegalStateException.class, () -> hook.recover(null), "scan first");
    }

    @Test
    void shouldTakeAScanningHookGivenToTheBuilder() throws Exception {
        final Path directory = root.resolve("log");
        final SegmentStore first = open(cache(), directory, CorruptionPolicy.FAIL);
        first.create("a");
        first.append("a", TestSegments.buffer(seed("a"), 0, 5000));
        first.close();
        final ScanningRecoveryHook hook = new ScanningRecoveryHook(CorruptionPolicy.TRUNCATE);
        final BlockCache cache = cache();
        final SegmentStore second = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).build()).logRecovery(hook).build();
        closer.add(second);
        assertEquals(5000, second.info("a").length());
        assertNotNull(hook.recoveredLog());
        assertEquals(1, hook.locations().size());
        assertSegmentBytes(second, "a", 0, 5000);
    }

    private static long lastFileNumber(final Path directory) throws IOException {
        long last = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (final Path file : files) {
                last = Math.max(last, LogFileDescriptor.fileNumber(file.getFileName().toString()));
            }
        }
        return last;
    }
}
