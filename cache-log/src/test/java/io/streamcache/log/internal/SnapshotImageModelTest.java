package io.streamcache.log.internal;

import io.streamcache.log.internal.recovery.SnapshotCodec;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SNAPSHOT the writer's table keeps encoded ({@link SnapshotImage}) against a plain model
 * of the table and the recovery package's own encoder ({@link SnapshotCodec#encode}): after
 * random sequences of creates, restores, appends, truncations, seals and deletes, the record it
 * writes decodes to exactly the model's segments, its bytes are what the encoder makes of the
 * same entries in the same order, and its header, CRC and padding are those of a SNAPSHOT record.
 */
class SnapshotImageModelTest {
    private record Model(int id, boolean sealed, long start, long length, String name) {
    }

    @Test
    void theKeptSnapshotEqualsTheEncodedTableAfterRandomChanges() {
        for (long seed = 1; seed <= 40; seed++) {
            run(seed, 200 + (int)(seed * 97 % 3000));
        }
    }

    private static void run(final long seed, final int steps) {
        final SplittableRandom random = new SplittableRandom(seed);
        final LogSegmentTable table = new LogSegmentTable();
        table.currentFile(1);
        final Map<Integer, Model> model = new HashMap<>();
        final CRC32C crc = new CRC32C();
        int nextId = 1;
        for (int step = 0; step < steps; step++) {
            final int op = random.nextInt(100);
            final List<Integer> ids = new ArrayList<>(model.keySet());
            final Integer some = ids.isEmpty() ? null : ids.get(random.nextInt(ids.size()));
            if (op < 25 || some == null) {
                final int id = random.nextInt(4) == 0 && some != null ? some : nextId++;
                final String name = name(random, id);
                if (random.nextBoolean()) {
                    table.create(id, name.getBytes(StandardCharsets.UTF_8));
                    model.put(id, new Model(id, false, 0, 0, name));
                } else {
                    final long length = random.nextLong(1 << 20);
                    final long start = random.nextLong(length + 1);
                    final boolean sealed = random.nextBoolean();
                    table.restore(id, name, start, length, sealed);
                    model.put(id, new Model(id, sealed, start, length, name));
                }
            } else if (op < 60) {
                final Model m = model.get(some);
                final long end = m.length() + random.nextLong(-100, 10_000);
                table.data(some, end);
                model.put(some, new Model(some, m.sealed(), m.start(), Math.max(m.length(), end), m.name()));
            } else if (op < 70) {
                final Model m = model.get(some);
                final long start = random.nextLong(m.length() + 1);
                table.truncate(some, start);
                model.put(some, new Model(some, m.sealed(), Math.max(m.start(), start), m.length(), m.name()));
            } else if (op < 75) {
                final Model m = model.get(some);
                table.seal(some);
                model.put(some, new Model(some, true, m.start(), m.length(), m.name()));
            } else if (op < 92) {
                table.delete(some);
                model.remove(some);
            } else if (op < 94) {
                table.delete(-some);
            } else {
                check(table, model, crc, seed, step, random.nextLong(1, 1000));
            }
        }
        check(table, model, crc, seed, steps, 7);
        assertTrue(table.snapshotImage().compactions() > 0, "seed=" + seed + ": the deletes' holes were compacted");
    }

    private static String name(final SplittableRandom random, final int id) {
        final StringBuilder name = new StringBuilder("s").append(id).append('-');
        for (int i = random.nextInt(40); i > 0; i--) {
            name.append(random.nextInt(10) == 0 ? 'é' : (char)('a' + random.nextInt(26)));
        }
        return name.toString();
    }

    private static void check(final LogSegmentTable table, final Map<Integer, Model> model, final CRC32C crc, final long seed,
                              final int step, final long fileNumber) {
        final String where = "seed=" + seed + " step=" + step;
        final int payload = table.snapshotPayloadLength();
        // The record the roller writes.
        final ByteBuffer record = table.snapshotRecord(fileNumber, crc);
        final int total = record.remaining();
        assertEquals(0, record.position(), where);
        assertEquals(LogRecordDescriptor.align(LogRecordDescriptor.alignedLength(payload), LogFileDescriptor.PAGE_LENGTH), total,
            where);
        final byte[] bytes = new byte[total];
        record.duplicate().get(bytes);
        final UnsafeBuffer out = new UnsafeBuffer(bytes);
        assertEquals(LogRecordDescriptor.MAGIC, out.getShort(LogRecordDescriptor.MAGIC_OFFSET, ByteOrder.LITTLE_ENDIAN), where);
        assertEquals(LogRecordDescriptor.TYPE_SNAPSHOT, out.getByte(LogRecordDescriptor.TYPE_OFFSET), where);
        assertEquals(0, out.getByte(LogRecordDescriptor.FLAGS_OFFSET), where);
        assertEquals(payload, out.getInt(LogRecordDescriptor.LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN), where);
        assertEquals(0, out.getInt(LogRecordDescriptor.SEGMENT_ID_OFFSET, ByteOrder.LITTLE_ENDIAN), where);
        assertEquals(0L, out.getLong(LogRecordDescriptor.SEGMENT_OFFSET_OFFSET, ByteOrder.LITTLE_ENDIAN), where);
        assertEquals(LogRecordDescriptor.crc(new CRC32C(), fileNumber, ByteBuffer.wrap(bytes), 0, payload),
            out.getInt(LogRecordDescriptor.CRC_OFFSET, ByteOrder.LITTLE_ENDIAN), where + ": CRC");

        // The payload decodes to the model, and is byte for byte the recovery encoder's output
        // for the same entries in the same order.
        final UnsafeBuffer payloadBytes = new UnsafeBuffer(bytes, LogRecordDescriptor.HEADER_LENGTH, payload);
        final List<SnapshotCodec.Entry> decoded = new ArrayList<>();
        final int count = SnapshotCodec.decode(payloadBytes, payload, (id, sealed, start, length, name) ->
            decoded.add(new SnapshotCodec.Entry(id, sealed, start, length, name)));
        assertEquals(model.size(), count, where);
        final Map<Integer, Model> found = new HashMap<>();
        for (final SnapshotCodec.Entry entry : decoded) {
            found.put(entry.segmentId(), new Model(entry.segmentId(), entry.sealed(), entry.startOffset(), entry.length(), entry.name()));
        }
        assertEquals(model, found, where);
        final byte[] encoded = new byte[SnapshotCodec.encodedLength(decoded)];
        assertEquals(payload, SnapshotCodec.encode(decoded, new UnsafeBuffer(encoded), 0), where);
        final byte[] written = new byte[payload];
        payloadBytes.getBytes(0, written);
        assertTrue(java.util.Arrays.equals(encoded, written), where + ": payload bytes differ from the encoder's");

        // Zeros to the record's 8-byte end, then a PADDING record to the page end, zeros after its header.
        final int aligned = LogRecordDescriptor.alignedLength(payload);
        for (int at = LogRecordDescriptor.HEADER_LENGTH + payload; at < aligned; at++) {
            assertEquals(0, bytes[at], where + ": byte " + at);
        }
        if (total > aligned) {
            assertEquals(LogRecordDescriptor.TYPE_PADDING, out.getByte(aligned + LogRecordDescriptor.TYPE_OFFSET), where);
            assertEquals(total - aligned - LogRecordDescriptor.PADDING_HEADER_LENGTH,
                out.getInt(aligned + LogRecordDescriptor.LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN), where);
            for (int at = aligned + LogRecordDescriptor.PADDING_HEADER_LENGTH; at < total; at++) {
                assertEquals(0, bytes[at], where + ": padding byte " + at);
            }
        }

        // The payload alone, as putSnapshot copies it.
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[payload + 16]);
        assertEquals(payload, table.putSnapshot(copy, 8), where);
        final byte[] copied = new byte[payload];
        copy.getBytes(8, copied);
        assertTrue(java.util.Arrays.equals(written, copied), where + ": putSnapshot differs from the record's payload");
    }
}
