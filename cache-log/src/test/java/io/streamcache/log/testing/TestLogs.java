package io.streamcache.log.testing;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.LogRecordListener;

import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.LogConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Small logs, deterministic payloads and checks for the log tests. Stateless; thread-safe.
 */
public final class TestLogs {
    /** Batch length of the small test logs. */
    public static final int BATCH = 16 * 1024;
    /** File length of the small test logs: a few batches, so files roll often. */
    public static final long FILE = 96 * 1024;

    private TestLogs() {
    }

    /**
     * @return a builder of a small log in {@code directory}: 96 KiB files, 16 KiB batches, no
     *         spare, no pre-writing, 2 ms max delay.
     */
    public static LogConfig.Builder small(final Path directory) {
        return LogConfig.builder(directory)
            .fileLength(FILE)
            .batchLength(BATCH)
            .cutThreshold(8 * 1024)
            .spareFiles(0)
            .preWrite(false)
            .maxDelay(Duration.ofMillis(2));
    }

    /**
     * @return the payload of an append: bytes {@code [offset, offset + length)} of segment {@code segment}'s pattern.
     */
    public static ByteBuf data(final int segment, final long offset, final int length) {
        return TestBytes.buffer(segment, offset, length);
    }

    public static byte[] bytes(final int segment, final long offset, final int length) {
        return TestBytes.pattern(segment, offset, length);
    }

    public static byte[] utf8(final String name) {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * One acknowledged append.
     */
    public record Ack(int segment, long offset, int length) {
    }

    /**
     * @return segment id to (offset to payload) of the DATA records, each offset once.
     */
    public static Map<Integer, TreeMap<Long, byte[]>> data(final List<TestLogScanner.Record> records) {
        final Map<Integer, TreeMap<Long, byte[]>> data = new TreeMap<>();
        for (final TestLogScanner.Record record : records) {
            if (record.type() == LogRecordDescriptor.TYPE_DATA) {
                data.computeIfAbsent(record.segmentId(), s -> new TreeMap<>()).put(record.segmentOffset(), record.payload());
            }
        }
        return data;
    }

    /**
     * Asserts that every acknowledged append is in the log, intact.
     */
    public static void assertContains(final Path directory, final List<Ack> acks) throws IOException {
        final Map<Integer, TreeMap<Long, byte[]>> data = data(TestLogScanner.records(directory));
        for (final Ack ack : acks) {
            final TreeMap<Long, byte[]> segment = data.get(ack.segment());
            assertNotNull(segment, () -> "no data of segment " + ack.segment() + " for " + ack);
            final byte[] payload = segment.get(ack.offset());
            assertNotNull(payload, () -> "acknowledged append missing: " + ack);
            assertArrayEquals(bytes(ack.segment(), ack.offset(), ack.length()), payload, () -> "payload of " + ack);
        }
    }

    /**
     * Asserts every write of the hooks started and ended on a 4 KB boundary.
     */
    public static void assertAlignedWrites(final HookedLogFile.Hooks hooks) {
        for (final long[] write : hooks.writes) {
            assertEquals(0, write[0] % LogFileDescriptor.PAGE_LENGTH, () -> "write at position=" + write[0]);
            assertEquals(0, write[1] % LogFileDescriptor.PAGE_LENGTH, () -> "write of length=" + write[1] + " at " + write[0]);
        }
    }

    /**
     * Asserts every scanned file has a valid header, starts with a SNAPSHOT, and has only
     * well-formed padding.
     */
    public static void assertWellFormed(final Path directory) throws IOException {
        for (final TestLogScanner.FileScan scan : TestLogScanner.scanDirectory(directory).values()) {
            assertTrue(scan.headerValid(), () -> "header of file " + scan.fileNumber());
            assertEquals(-1, scan.badPadding(), () -> "bad padding in file " + scan.fileNumber() + " at " + scan.badPadding());
            if (!scan.records().isEmpty()) {
                assertEquals(LogRecordDescriptor.TYPE_SNAPSHOT, scan.records().get(0).type(), () -> "first record of " + scan.fileNumber());
                assertEquals(LogFileDescriptor.FIRST_RECORD_POSITION, scan.records().get(0).position());
            }
        }
    }

    /**
     * A listener that records every durable record and every retired file.
     */
    public static final class RecordingListener implements LogRecordListener {
        public final List<long[]> records = new CopyOnWriteArrayList<>();
        public final List<Long> retired = new CopyOnWriteArrayList<>();

        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                             final long position) {
            records.add(new long[] {type, segmentId, segmentOffset, length, fileNumber, position});
        }

        @Override
        public void onFileRetired(final long fileNumber) {
            retired.add(fileNumber);
        }
    }

    /**
     * Waits (polling) until the condition holds or 10 s pass.
     */
    public static void awaitTrue(final java.util.function.BooleanSupplier condition, final String what) throws InterruptedException {
        awaitTrue(condition, () -> what);
    }

    public static void awaitTrue(final java.util.function.BooleanSupplier condition, final java.util.function.Supplier<String> what)
        throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what.get());
            }
            Thread.sleep(2);
        }
    }

    /**
     * @return a recovered log rebuilt by scanning the directory (the test's own small recovery:
     *         segments from the last SNAPSHOT and the records after it, tail of the last file),
     *         built by hand: also a {@code RecoveryHook} for the store tests.
     */
    public static RecoveredLog recover(final Path directory) throws IOException {
        final RecoveredLog.Builder log = RecoveredLog.builder();
        final Map<Integer, long[]> bounds = new TreeMap<>();
        final Map<Integer, String> names = new TreeMap<>();
        final Map<Integer, Boolean> sealed = new TreeMap<>();
        long lastFile = 0;
        long tail = 0;
        for (final TestLogScanner.FileScan scan : TestLogScanner.scanDirectory(directory).values()) {
            if (scan.records().isEmpty()) {
                continue;
            }
            lastFile = scan.fileNumber();
            tail = scan.tail();
            log.file(scan.fileNumber());
            for (final TestLogScanner.Record record : scan.records()) {
                final int id = record.segmentId();
                switch (record.type()) {
                    case LogRecordDescriptor.TYPE_SNAPSHOT:
                        bounds.clear();
                        names.clear();
                        sealed.clear();
                        readSnapshot(record.payload(), bounds, names, sealed);
                        break;
                    case LogRecordDescriptor.TYPE_CREATE:
                        names.put(id, new String(record.payload(), StandardCharsets.UTF_8));
                        bounds.put(id, new long[] {0, 0});
                        sealed.put(id, false);
                        break;
                    case LogRecordDescriptor.TYPE_DATA:
                        bounds.get(id)[1] = Math.max(bounds.get(id)[1], record.segmentOffset() + record.payload().length);
                        log.fileData(scan.fileNumber(), id, record.segmentOffset() + record.payload().length);
                        break;
                    case LogRecordDescriptor.TYPE_SEAL:
                        sealed.put(id, true);
                        break;
                    case LogRecordDescriptor.TYPE_TRUNCATE:
                        bounds.get(id)[0] = Math.max(bounds.get(id)[0], record.segmentOffset());
                        break;
                    case LogRecordDescriptor.TYPE_DELETE:
                        bounds.remove(id);
                        names.remove(id);
                        sealed.remove(id);
                        break;
                    default:
                        break;
                }
            }
        }
        for (final Map.Entry<Integer, long[]> entry : bounds.entrySet()) {
            log.segment(entry.getKey(), names.get(entry.getKey()), entry.getValue()[0], entry.getValue()[1], sealed.get(entry.getKey()));
        }
        if (lastFile > 0) {
            log.tail(lastFile, tail);
        }
        return log.build();
    }

    public static void readSnapshot(final byte[] payload, final Map<Integer, long[]> bounds, final Map<Integer, String> names,
                             final Map<Integer, Boolean> sealed) {
        final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(payload).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        final int count = buffer.getInt(LogFileDescriptor.SNAPSHOT_COUNT_OFFSET);
        int at = LogFileDescriptor.SNAPSHOT_ENTRIES_OFFSET;
        for (int i = 0; i < count; i++) {
            final int id = buffer.getInt(at + LogFileDescriptor.SNAPSHOT_SEGMENT_ID_OFFSET);
            final int flags = buffer.getInt(at + LogFileDescriptor.SNAPSHOT_FLAGS_OFFSET);
            final long start = buffer.getLong(at + LogFileDescriptor.SNAPSHOT_START_OFFSET);
            final long length = buffer.getLong(at + LogFileDescriptor.SNAPSHOT_LENGTH_OFFSET);
            final int nameLength = buffer.getInt(at + LogFileDescriptor.SNAPSHOT_NAME_LENGTH_OFFSET);
            final byte[] name = new byte[nameLength];
            buffer.get(at + LogFileDescriptor.SNAPSHOT_NAME_OFFSET, name);
            bounds.put(id, new long[] {start, length});
            names.put(id, new String(name, StandardCharsets.UTF_8));
            sealed.put(id, (flags & LogFileDescriptor.SNAPSHOT_FLAG_SEALED) != 0);
            at += LogFileDescriptor.snapshotEntryLength(nameLength);
        }
    }

    public static ByteBuf empty() {
        return Unpooled.EMPTY_BUFFER;
    }

    public static <T> List<T> list() {
        return new ArrayList<>();
    }
}
