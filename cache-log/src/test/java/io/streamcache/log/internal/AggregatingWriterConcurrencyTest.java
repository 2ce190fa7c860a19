package io.streamcache.log.internal;

import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.data;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contest's write load on a real file system: 40 producer threads appending messages of
 * 100 B to 17 KB, each waiting for its append before the next, every batch forced. Everything is
 * then read back: by scanning the files, and through {@link LogDirectory#read} at the positions
 * the listener reported.
 */
@Timeout(120)
class AggregatingWriterConcurrencyTest {
    private static final int PRODUCERS = 40;
    private static final int APPENDS = 40;

    @TempDir
    Path directory;

    @ParameterizedTest
    @EnumSource(AlignmentPolicy.class)
    void shouldWriteEveryAppendOf40ProducersIntact(final AlignmentPolicy alignment) throws Exception {
        final TestLogs.RecordingListener listener = new TestLogs.RecordingListener();
        final List<Ack> acks = Collections.synchronizedList(new ArrayList<>());
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        final WriterStats stats;
        try (LogDirectory logDirectory = LogDirectory.open(LogConfig.builder(directory).fileLength(4 << 20).batchLength(512 << 10)
                 .alignment(alignment).build());
             AggregatingWriter writer = AggregatingWriter.start(logDirectory, listener, RecoveredLog.empty())) {
            final CyclicBarrier start = new CyclicBarrier(PRODUCERS);
            final List<Thread> threads = new ArrayList<>();
            for (int p = 1; p <= PRODUCERS; p++) {
                final int segment = p;
                threads.add(new Thread(() -> {
                    try {
                        final Random random = new Random(segment);
                        writer.create(writer.healthyEpoch(), segment, "queue-" + segment, null).get(30, TimeUnit.SECONDS);
                        start.await(30, TimeUnit.SECONDS);
                        long offset = 0;
                        for (int i = 0; i < APPENDS; i++) {
                            final int length = 100 + random.nextInt(17 * 1024 - 100 + 1);
                            assertEquals(offset, writer.append(segment, offset, data(segment, offset, length)).get(30, TimeUnit.SECONDS));
                            acks.add(new Ack(segment, offset, length));
                            offset += length;
                        }
                    } catch (final Throwable e) {
                        errors.add(e);
                    }
                }, "producer-" + p));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(List.of(), errors);
            stats = writer.stats();
            // Read every DATA record back where the listener said it landed.
            int read = 0;
            for (final long[] record : listener.records) {
                if (record[0] != LogRecordDescriptor.TYPE_DATA) {
                    continue;
                }
                final ByteBuffer payload = ByteBuffer.allocate((int)record[3]);
                assertEquals(record[3], logDirectory.read(record[4], record[5] + LogRecordDescriptor.HEADER_LENGTH, payload));
                assertArrayEquals(TestLogs.bytes((int)record[1], record[2], (int)record[3]), payload.array());
                read++;
            }
            assertEquals(PRODUCERS * APPENDS, read);
        }
        assertEquals(PRODUCERS * APPENDS, acks.size());
        assertEquals(PRODUCERS * (APPENDS + 1), stats.requests());
        assertTrue(stats.batches() < stats.requests(), () -> "batches aggregate requests: " + stats);
        TestLogs.assertWellFormed(directory);
        TestLogs.assertContains(directory, acks);
        // Each segment's records are contiguous and in offset order in the log.
        final Map<Integer, TreeMap<Long, byte[]>> data = TestLogs.data(TestLogScanner.records(directory));
        for (final Map.Entry<Integer, TreeMap<Long, byte[]>> segment : data.entrySet()) {
            long expected = 0;
            for (final Map.Entry<Long, byte[]> record : segment.getValue().entrySet()) {
                assertEquals(expected, record.getKey());
                expected += record.getValue().length;
            }
        }
    }
}
