package io.streamcache.log.internal;

import io.streamcache.log.internal.recovery.RecoveredFile;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.internal.recovery.ScanEnd;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link LogSegmentTable#seed} (segment-major, the writer's start) against the calls it replaces
 * in their old order ({@link LogSegmentTable#restore} per live segment, then per file
 * {@link LogSegmentTable#file} and {@link LogSegmentTable#fileData} per data end) as the
 * reference: random tables (dense ids with gaps, data of ids never created, ends at or below a
 * segment's start, files with gaps in their numbers, sparse ids that take the per-call path),
 * compared in their segments, SNAPSHOT bytes, counts and dead files, then again after the same
 * random truncations and deletions on both.
 */
class LogSegmentTableSeedTest {
    @Test
    void shouldSeedWhatTheCallsInOrderBuild() {
        for (long seed = 1; seed <= 40; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final boolean sparse = seed % 5 == 0;
            final List<RecoveredSegment> live = new ArrayList<>();
            final int ids = 50 + random.nextInt(3000);
            final Map<Integer, RecoveredSegment> byId = new HashMap<>();
            for (int id = 0; id < ids; id++) {
                if (random.nextInt(5) == 0) {
                    continue;
                }
                final int segmentId = sparse && random.nextInt(10) == 0 ? 1_000_000_000 + id : id;
                final long length = random.nextInt(100_000);
                final long start = random.nextBoolean() ? 0 : random.nextLong(length + 1);
                final RecoveredSegment segment = new RecoveredSegment(segmentId, "segment-" + segmentId, start, length,
                    random.nextInt(10) == 0, false, 0, 0, null);
                live.add(segment);
                byId.put(segmentId, segment);
            }
            final List<RecoveredFile> files = new ArrayList<>();
            long number = 1 + random.nextInt(5);
            for (int f = random.nextInt(12); f >= 0; f--) {
                final Map<Integer, Long> ends = new HashMap<>();
                for (int k = random.nextInt(ids); k > 0; k--) {
                    final int id = random.nextInt(ids + 20);
                    final RecoveredSegment segment = byId.get(id);
                    ends.put(id, segment == null ? random.nextLong(1, 100_000) : random.nextLong(1, segment.length() + 2));
                }
                files.add(new RecoveredFile(number, Path.of("log-" + number), 1 << 20, ScanEnd.END_OF_FILE, 4096, ends.size(),
                    0, 0, ends));
                number += 1 + (random.nextInt(4) == 0 ? random.nextInt(3) : 0);
            }

            final LogSegmentTable seeded = new LogSegmentTable();
            seeded.seed(live, files);
            final LogSegmentTable reference = new LogSegmentTable();
            for (final RecoveredSegment segment : live) {
                reference.restore(segment.id(), segment.name(), segment.startOffset(), segment.length(), segment.sealed());
            }
            for (final RecoveredFile file : files) {
                reference.file(file.fileNumber());
                file.forEachDataEnd((id, end) -> reference.fileData(file.fileNumber(), id, end));
            }
            final String context = "seed=" + seed;
            assertSameTables(reference, seeded, live, files, context);

            // The same changes on both: their dead files must stay the same.
            for (int op = 0; op < 200 && !live.isEmpty(); op++) {
                final RecoveredSegment segment = live.get(random.nextInt(live.size()));
                if (!reference.contains(segment.id())) {
                    continue;
                }
                if (random.nextInt(3) == 0) {
                    reference.delete(segment.id());
                    seeded.delete(segment.id());
                } else {
                    final long to = Math.min(reference.length(segment.id()), reference.start(segment.id()) + random.nextInt(30_000));
                    reference.truncate(segment.id(), to);
                    seeded.truncate(segment.id(), to);
                }
                if (op % 20 == 0) {
                    assertSameTables(reference, seeded, live, files, context + " op=" + op);
                }
            }
            assertSameTables(reference, seeded, live, files, context + " at the end");
        }
    }

    /**
     * The table the store's opening seeds on its helper ({@link PreparedSegmentTable}) is the one
     * the writer would seed from the same recovery, and is taken once.
     */
    @Test
    void shouldHandTheWriterATableSeededOnAnotherThreadOnce() throws InterruptedException {
        for (long seed = 1; seed <= 10; seed++) {
            final SplittableRandom random = new SplittableRandom(seed);
            final RecoveredLog.Builder builder = RecoveredLog.builder();
            final int ids = 1 + random.nextInt(2000);
            for (int id = 1; id <= ids; id++) {
                if (random.nextInt(4) != 0) {
                    final long length = random.nextInt(50_000);
                    builder.segment(id, "s-" + id, random.nextLong(length + 1), length, random.nextInt(8) == 0);
                }
            }
            for (long file = 3; file < 3 + random.nextInt(8); file++) {
                builder.file(file);
                for (int k = random.nextInt(ids); k > 0; k--) {
                    builder.fileData(file, 1 + random.nextInt(ids + 10), random.nextLong(1, 60_000));
                }
            }
            final RecoveredLog recovered = builder.build();
            final Thread helper = new Thread(() -> recovered.prepareWriterTable(PreparedSegmentTable.seed(recovered.liveSegments(), recovered.files())));
            helper.start();
            helper.join();
            final PreparedSegmentTable prepared = recovered.takeWriterTable();
            assertNotNull(prepared);
            assertNull(recovered.takeWriterTable(), "taken once");
            final LogSegmentTable reference = new LogSegmentTable();
            reference.seed(recovered.liveSegments(), recovered.files());
            assertSameTables(reference, prepared.table(), recovered.liveSegments(), recovered.files(), "seed=" + seed);
        }
    }

    private static void assertSameTables(final LogSegmentTable reference, final LogSegmentTable seeded,
                                         final List<RecoveredSegment> live, final List<RecoveredFile> files, final String context) {
        for (final RecoveredSegment segment : live) {
            final LogSegmentTable.Entry a = reference.segment(segment.id());
            final LogSegmentTable.Entry b = seeded.segment(segment.id());
            assertEquals(a == null, b == null, context);
            if (a != null) {
                assertEquals(List.of(a.id, new String(a.name), a.start, a.length, a.sealed),
                    List.of(b.id, new String(b.name), b.start, b.length, b.sealed), context);
            }
        }
        assertEquals(reference.segmentCount(), seeded.segmentCount(), context);
        assertEquals(reference.nodeCount(), seeded.nodeCount(), context);
        assertEquals(reference.fileCount(), seeded.fileCount(), context);
        for (final RecoveredFile file : files) {
            assertEquals(reference.hasFile(file.fileNumber()), seeded.hasFile(file.fileNumber()), context);
        }
        final UnsafeBuffer one = new UnsafeBuffer(new byte[reference.snapshotPayloadLength()]);
        final UnsafeBuffer two = new UnsafeBuffer(new byte[seeded.snapshotPayloadLength()]);
        reference.putSnapshot(one, 0);
        seeded.putSnapshot(two, 0);
        assertArrayEquals(one.byteArray(), two.byteArray(), context);
        final LongArrayList deadOne = new LongArrayList();
        final LongArrayList deadTwo = new LongArrayList();
        reference.takeDeadFiles(deadOne);
        seeded.takeDeadFiles(deadTwo);
        final long[] a = deadOne.toLongArray();
        final long[] b = deadTwo.toLongArray();
        Arrays.sort(a);
        Arrays.sort(b);
        assertArrayEquals(a, b, context);
    }
}
