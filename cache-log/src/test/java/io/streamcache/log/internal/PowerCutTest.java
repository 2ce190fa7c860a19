package io.streamcache.log.internal;

import io.streamcache.log.testing.PowerCutDisk;
import io.streamcache.log.testing.PowerCutLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogFile;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Power cuts at random points of a concurrent workload, over {@link PowerCutLogFile}s: whatever
 * the writer had acknowledged when the power went must be in the durable image, intact, and the
 * image must scan cleanly (well-formed padding, a clean end in every file but the last).
 *
 * <p>Each trial runs the same kind of workload (3 producers creating a segment each, then up to 4
 * appends in flight each, then a seal) with a different seed, alignment policy, pre-writing and
 * spare setting, and cuts the power just before a random disk operation, dropping or tearing the
 * unforced pages. A kill -9 would keep the page cache and prove nothing about forcing; this does.
 */
@Timeout(120)
class PowerCutTest {
    private static final int PRODUCERS = 3;
    private static final int APPENDS = 40;
    private static final int IN_FLIGHT = 4;
    private static final int TRIALS = 40;

    @TempDir
    Path root;

    /** What one run acknowledged. */
    private record Run(List<Ack> appends, Set<Integer> creates, Map<Integer, Long> seals, long operations, boolean cut) {
    }

    @ParameterizedTest
    @EnumSource(PowerCutLogFile.Mode.class)
    void shouldKeepEveryAcknowledgedAppendWhereverThePowerIsCut(final PowerCutLogFile.Mode mode) throws Exception {
        final Run calibration = run(root.resolve("calibration-" + mode), 1_000, Long.MAX_VALUE, mode);
        assertEquals(PRODUCERS * APPENDS, calibration.appends().size(), "without a cut, everything is acknowledged");
        verify(root.resolve("calibration-" + mode), calibration);
        final Random random = new Random(mode.ordinal() + 17);
        int cut = 0;
        for (int trial = 0; trial < TRIALS; trial++) {
            final long cutBefore = 1 + random.nextInt((int)(calibration.operations() * 3 / 4));
            final Path directory = root.resolve(mode + "-" + trial);
            final Run run = run(directory, trial, cutBefore, mode);
            verify(directory, run);
            cut += run.cut() ? 1 : 0;
        }
        assertTrue(cut >= TRIALS / 3, "many trials cut the power: " + cut);
    }

    @Test
    void shouldLoseUnforcedWritesAndKeepForcedOnesInTheModel() throws Exception {
        final PowerCutDisk disk = new PowerCutDisk(1);
        final Path path = root.resolve("model");
        final LogFile file = disk.open(path);
        file.write(java.nio.ByteBuffer.wrap(new byte[8192]), 0);
        final byte[] ones = new byte[8192];
        java.util.Arrays.fill(ones, (byte)1);
        file.write(java.nio.ByteBuffer.wrap(ones), 0);
        file.force();
        final byte[] twos = new byte[8192];
        java.util.Arrays.fill(twos, (byte)2);
        file.write(java.nio.ByteBuffer.wrap(twos), 4096);
        final java.nio.ByteBuffer read = java.nio.ByteBuffer.allocate(12288);
        assertEquals(12288, file.read(read, 0));
        assertEquals(2, read.get(4096), "reads see unforced writes");
        assertEquals(2, ((PowerCutLogFile)file).unforcedPages());
        disk.powerCut(PowerCutLogFile.Mode.DROP);
        final byte[] image = java.nio.file.Files.readAllBytes(path);
        assertEquals(1, image[4095]);
        assertEquals(1, image[4096], "the unforced write is lost");
        assertEquals(8192, image.length);
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> file.write(java.nio.ByteBuffer.wrap(twos), 0));
    }

    private Run run(final Path directory, final long seed, final long cutBefore, final PowerCutLogFile.Mode mode) throws Exception {
        final Random random = new Random(seed);
        final PowerCutDisk disk = new PowerCutDisk(seed);
        disk.cutBefore(cutBefore, mode);
        final AlignmentPolicy alignment = AlignmentPolicy.values()[(int)(seed % 3)];
        final LogConfig config = TestLogs.small(directory)
            .alignment(alignment)
            .preWrite(random.nextBoolean())
            .spareFiles(random.nextInt(2))
            .maxDelay(Duration.ofMillis(1))
            .fileFactory(disk)
            .build();
        final List<Ack> appends = Collections.synchronizedList(new ArrayList<>());
        final Set<Integer> creates = ConcurrentHashMap.newKeySet();
        final Map<Integer, Long> seals = new ConcurrentHashMap<>();
        final LogDirectory logDirectory;
        final AggregatingWriter writer;
        try {
            logDirectory = LogDirectory.open(config);
            writer = AggregatingWriter.start(logDirectory);
        } catch (final IOException e) {
            // The power went while the first file was made: nothing can have been acknowledged.
            return new Run(appends, creates, seals, disk.operations(), true);
        }
        try {
            final List<Thread> producers = new ArrayList<>();
            for (int p = 1; p <= PRODUCERS; p++) {
                final int segment = p;
                final long producerSeed = seed * 31 + p;
                producers.add(new Thread(() -> produce(writer, segment, producerSeed, appends, creates, seals)));
            }
            producers.forEach(Thread::start);
            for (final Thread producer : producers) {
                producer.join();
            }
        } finally {
            writer.close();
            logDirectory.close();
        }
        return new Run(new ArrayList<>(appends), creates, seals, disk.operations(), disk.isOff());
    }

    private static void produce(final AggregatingWriter writer, final int segment, final long seed, final List<Ack> appends,
                                final Set<Integer> creates, final Map<Integer, Long> seals) {
        final Random random = new Random(seed);
        try {
            final long epoch = writer.healthyEpoch();
            writer.create(epoch, segment, "segment-" + segment, null).get(10, TimeUnit.SECONDS);
            creates.add(segment);
            final Semaphore window = new Semaphore(IN_FLIGHT);
            final List<CompletableFuture<Long>> futures = new ArrayList<>();
            long offset = 0;
            for (int i = 0; i < APPENDS; i++) {
                // One in 16 longer than a batch (16 KiB): one record written in a longer write of its own.
                final int kind = random.nextInt(16);
                final int length = 1 + random.nextInt(kind == 0 ? 40_000 : kind < 3 ? 9000 : 1500);
                window.acquire();
                final long at = offset;
                final CompletableFuture<Long> future = writer.append(epoch, segment, at, data(segment, at, length), null);
                future.whenComplete((value, error) -> {
                    if (error == null) {
                        appends.add(new Ack(segment, at, length));
                    }
                    window.release();
                });
                futures.add(future);
                offset += length;
            }
            CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
            final long length = offset;
            writer.seal(epoch, segment, length, null).get(10, TimeUnit.SECONDS);
            seals.put(segment, length);
        } catch (final java.util.concurrent.ExecutionException | LogFailedException e) {
            // The power went: the rest is not acknowledged.
        } catch (final Exception e) {
            throw new AssertionError("producer " + segment + " failed", e);
        }
    }

    private static void verify(final Path directory, final Run run) throws IOException {
        final TreeMap<Long, TestLogScanner.FileScan> scans = TestLogScanner.scanDirectory(directory);
        long lastWithHeader = -1;
        for (final TestLogScanner.FileScan scan : scans.values()) {
            assertEquals(-1, scan.badPadding(), () -> "bad padding in " + scan);
            if (scan.headerValid()) {
                lastWithHeader = scan.fileNumber();
                if (!scan.records().isEmpty()) {
                    assertEquals(LogRecordDescriptor.TYPE_SNAPSHOT, scan.records().get(0).type());
                }
            }
        }
        for (final TestLogScanner.FileScan scan : scans.values()) {
            if (scan.headerValid() && scan.fileNumber() != lastWithHeader && !scan.records().isEmpty()) {
                final String stop = scan.stop();
                assertTrue(stop.equals("zero") || stop.equals("eof"), () -> "file " + scan.fileNumber() + " before the last ends "
                    + stop + " at " + scan.tail());
            }
        }
        TestLogs.assertContains(directory, run.appends());
        final List<TestLogScanner.Record> records = TestLogScanner.records(directory);
        for (final int segment : run.creates()) {
            assertTrue(records.stream().anyMatch(r -> r.type() == LogRecordDescriptor.TYPE_CREATE && r.segmentId() == segment),
                () -> "acknowledged CREATE of segment " + segment + " missing");
        }
        for (final Map.Entry<Integer, Long> seal : run.seals().entrySet()) {
            assertTrue(records.stream().anyMatch(r -> r.type() == LogRecordDescriptor.TYPE_SEAL && r.segmentId() == seal.getKey()
                && r.segmentOffset() == seal.getValue()), () -> "acknowledged SEAL missing: " + seal);
        }
    }
}
