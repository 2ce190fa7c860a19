package io.streamcache.log.internal.recovery;

import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Model test of recovery's parallel work against the sequential recovery as the reference: on
 * random logs, intact or damaged (a torn or garbled tail, a flipped byte anywhere, a file cut
 * short, the oldest file deleted while its data are live), recovery with the prescan thread and
 * the work after the replay cut into chunks of one segment on three threads
 * ({@link RecoveryWorkers}) yields exactly what recovery on one thread yields: the same segments,
 * locations, files (live bytes, data ends), tail and cut, or the same error at the same file and
 * position with the same words, under {@link CorruptionPolicy#FAIL} and {@link CorruptionPolicy#TRUNCATE}.
 */
class ParallelRecoveryModelTest {
    private static final int SEEDS = 24;

    @TempDir
    Path directory;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRecoverOrFailAsTheSequentialRecoveryDoes() throws IOException {
        final int[] outcomes = new int[2];
        int partitioned = 0;
        for (long seed = 1; seed <= SEEDS; seed++) {
            final Path dir = Files.createDirectory(directory.resolve("log-" + seed));
            // Half the logs with CREATE and DELETE in most files, half with them in few (the files
            // of DATA, SEAL and TRUNCATE only are the ones applied in lanes).
            final TestLogWriter writer = seed % 2 == 0 ? LogRecoveryTest.randomLog(dir, 9100 + seed, 1500)
                : laneLog(dir, 9100 + seed, 1500);
            final String damage = damage(dir, writer, new SplittableRandom(seed), (int) (seed % 5));
            for (final CorruptionPolicy policy : new CorruptionPolicy[] {CorruptionPolicy.FAIL, CorruptionPolicy.TRUNCATE}) {
                final String context = "seed=" + seed + " damage=" + damage + " policy=" + policy;
                final Object one = recover(LogRecovery.builder(dir).parallelScan(false), policy);
                final LogRecovery parallel = LogRecovery.builder(dir).parallelScan(true).work(3, 1).corruptionPolicy(policy)
                    .readOnly(true).build();
                final Object two = recover(parallel);
                partitioned += parallel.partitionedFiles();
                if (one instanceof RecoveredLog a) {
                    assertTrue(two instanceof RecoveredLog, context + ": parallel failed where sequential did not: " + two);
                    ParallelScanTest.assertSame(a, (RecoveredLog) two);
                    outcomes[0]++;
                } else {
                    final LogCorruptedException a = (LogCorruptedException) one;
                    assertTrue(two instanceof LogCorruptedException, context + ": parallel recovered where sequential failed: " + a);
                    final LogCorruptedException b = (LogCorruptedException) two;
                    assertEquals(List.of(a.fileNumber(), a.position(), a.getMessage()),
                        List.of(b.fileNumber(), b.position(), b.getMessage()), context);
                    outcomes[1]++;
                }
            }
        }
        // Both kinds of outcome were compared (the damages are chosen so), and files were applied in lanes.
        assertTrue(outcomes[0] > 0 && outcomes[1] > 0, "recovered=" + outcomes[0] + " failed=" + outcomes[1]);
        assertTrue(partitioned > 0, "files applied in lanes: " + partitioned);
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void shouldNameTheFirstSegmentInIdOrderWhoseBytesAreMissing() throws IOException {
        // 60 segments with data in file 1; the first 16 truncated to their length (nothing live
        // before file 2), then file 1 goes: segments 17 to 60 miss bytes, in every chunk; each
        // chunk stops at its first, and the lowest chunk's is reported.
        final TestLogWriter writer = new TestLogWriter(directory, 128 << 10, 16 << 10);
        for (int id = 1; id <= 60; id++) {
            writer.create(id, "segment-" + id);
            writer.data(id, 100 + id);
        }
        for (int id = 1; id <= 16; id++) {
            writer.truncate(id, 100 + id);
        }
        writer.roll();
        for (int id = 1; id <= 60; id++) {
            writer.data(id, 10);
        }
        writer.roll();
        writer.data(5, 10);
        writer.close();
        Files.delete(writer.path(1));
        final Object one = recover(LogRecovery.builder(directory).parallelScan(false), CorruptionPolicy.FAIL);
        for (int round = 0; round < 5; round++) {
            final Object two = recover(LogRecovery.builder(directory).parallelScan(true).work(3, 1), CorruptionPolicy.FAIL);
            final LogCorruptedException a = (LogCorruptedException) one;
            final LogCorruptedException b = (LogCorruptedException) two;
            assertTrue(a.getMessage().contains("segmentId=17 ") && a.getMessage().contains("a file was deleted while its data"
                + " were live"), a.getMessage());
            assertEquals(a.getMessage(), b.getMessage());
        }
    }

    /** @return the result, or the {@link LogCorruptedException} it threw; read-only: the files stay as they are. */
    private static Object recover(final LogRecovery.Builder builder, final CorruptionPolicy policy) throws IOException {
        return recover(builder.corruptionPolicy(policy).readOnly(true).build());
    }

    private static Object recover(final LogRecovery recovery) throws IOException {
        try {
            return recovery.recover();
        } catch (final LogCorruptedException e) {
            return e;
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void shouldFailAtTheFirstBrokenRecordInLogOrderWhateverItsLane() throws IOException {
        // File 2 holds DATA only (a file applied in lanes); two records in it break the history,
        // of segments in different lanes, the later one's lane before the earlier one's in lane
        // order. The error names the first in the log, as the sequential replay does.
        for (final int[] broken : new int[][] {{7, 5}, {5, 7}, {9, 9}}) {
            final Path dir = Files.createDirectory(directory.resolve("broken-" + broken[0] + "-" + broken[1]));
            final TestLogWriter writer = new TestLogWriter(dir, 128 << 10, 16 << 10);
            for (int id = 1; id <= 30; id++) {
                writer.create(id, "segment-" + id);
                writer.data(id, 50);
            }
            writer.roll();
            for (int id = 1; id <= 30; id++) {
                writer.data(id, 20);
                if (id == 15) {
                    writer.raw(io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA, broken[0], 1000,
                        TestLogWriter.pattern(broken[0], 1000, 10));
                }
                if (id == 25) {
                    writer.raw(io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA, broken[1], 2000,
                        TestLogWriter.pattern(broken[1], 2000, 10));
                }
            }
            writer.roll();
            writer.data(1, 10);
            writer.close();
            final LogCorruptedException one = (LogCorruptedException) recover(LogRecovery.builder(dir).parallelScan(false),
                CorruptionPolicy.FAIL);
            for (int round = 0; round < 5; round++) {
                final LogRecovery parallel = LogRecovery.builder(dir).parallelScan(true).work(3, 1).readOnly(true).build();
                final LogCorruptedException two = (LogCorruptedException) recover(parallel);
                assertEquals(1, parallel.partitionedFiles(), "file 2 applied in lanes");
                assertEquals(List.of(2L, one.position(), one.getMessage()), List.of(two.fileNumber(), two.position(),
                    two.getMessage()));
                assertTrue(two.getMessage().contains("segmentId=" + broken[0] + " ") && two.getMessage().contains("offset=1000"),
                    two.getMessage());
            }
        }
    }

    /**
     * A random log of mostly DATA, SEAL and TRUNCATE after 40 CREATEs: CREATE and DELETE are rare
     * (0.2% each), so most files hold none and are applied in lanes.
     */
    private static TestLogWriter laneLog(final Path dir, final long seed, final int operations) throws IOException {
        final TestLogWriter writer = new TestLogWriter(dir, 128 << 10, 16 << 10);
        final SplittableRandom random = new SplittableRandom(seed);
        final List<Integer> live = new java.util.ArrayList<>();
        int nextId = 1;
        for (int op = 0; op < operations; op++) {
            final int r = random.nextInt(1000);
            if (live.size() < 40 || r < 2) {
                writer.create(nextId, "segment-" + nextId);
                live.add(nextId++);
                continue;
            }
            final TestLogWriter.SegmentModel segment = writer.model().segment(live.get(random.nextInt(live.size())));
            if (r < 4) {
                writer.delete(segment.id);
                live.remove(Integer.valueOf(segment.id));
            } else if (r < 900) {
                if (!segment.sealed) {
                    writer.data(segment.id, 1 + random.nextInt(random.nextBoolean() ? 3000 : 100));
                }
            } else if (r < 910) {
                writer.seal(segment.id);
            } else {
                final long keep = random.nextBoolean() ? 0 : random.nextLong(segment.length - segment.start + 1);
                writer.truncate(segment.id, segment.length - keep);
            }
            if (random.nextInt(20) == 0) {
                writer.flush();
            }
        }
        writer.close();
        return writer;
    }

    /** Damages the log one of five ways; @return what was done. */
    private static String damage(final Path dir, final TestLogWriter writer, final SplittableRandom random, final int kind)
        throws IOException {
        final long last = writer.fileNumber();
        switch (kind) {
            case 0:
                return "none";
            case 1: {
                // Garbage over part of the tail's last written page: a torn or damaged tail.
                final Path tail = writer.path(last);
                final long position = Math.max(8192, writer.writePosition() - 1 - random.nextInt(4096));
                final byte[] junk = new byte[1 + random.nextInt(200)];
                random.nextBytes(junk);
                LogFiles.write(tail, position, java.nio.ByteBuffer.wrap(junk));
                return "garbage at tail file=" + last + " position=" + position;
            }
            case 2: {
                // One flipped byte in a random file, anywhere in its written part.
                final long file = 1 + random.nextInt((int) last);
                final Path path = writer.path(file);
                final byte[] bytes = Files.readAllBytes(path);
                final int at = 4096 + random.nextInt(Math.max(1, (int) Math.min(bytes.length, file == last
                    ? writer.writePosition() : bytes.length) - 4096));
                bytes[at] ^= (byte) (1 + random.nextInt(255));
                Files.write(path, bytes);
                return "flip file=" + file + " at=" + at;
            }
            case 3: {
                // A file before the tail cut short.
                final long file = 1 + random.nextInt((int) Math.max(1, last - 1));
                final Path path = writer.path(file);
                final byte[] bytes = Files.readAllBytes(path);
                final int length = 4096 + random.nextInt(bytes.length - 4096);
                Files.write(path, java.util.Arrays.copyOf(bytes, length));
                return "cut file=" + file + " to " + length;
            }
            default: {
                Files.delete(writer.path(1));
                return "file 1 deleted";
            }
        }
    }
}
