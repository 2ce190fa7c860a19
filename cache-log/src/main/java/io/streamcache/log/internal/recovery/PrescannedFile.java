package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogRecordDescriptor;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One log file as a {@link LogScanner} read and validated it ahead of the replay, on another
 * thread ({@link LogRecovery} with a parallel scan): the scan's result, every valid record's
 * header fields in packed arrays, the payloads of its CREATE records, and the digest of its
 * SNAPSHOT ({@link TableDigest}). The replay then takes the records from here in file order,
 * exactly as a scan would have handed them to it, without reading or checking the file again.
 *
 * <p>Filled by one thread, then handed to another through a blocking queue (which publishes it);
 * never changed after.
 */
final class PrescannedFile implements LogRecordVisitor {
    final long fileNumber;
    LogFileScan scan;
    /** The scan failed to read the file: rethrown by the replay when it reaches the file. */
    Exception failure;

    private int count;
    private byte[] types = new byte[256];
    private byte[] flags = new byte[256];
    private int[] segmentIds = new int[256];
    private long[] segmentOffsets = new long[256];
    private int[] lengths = new int[256];
    private long[] positions = new long[256];
    /** CREATE payloads (names), back to back; {@link #nameAt} is each record's index in it, else -1. */
    private ByteBuffer names = ByteBuffer.allocate(4096);
    private int[] nameAt = new int[256];

    /** Whether the first record is a SNAPSHOT whose payload decoded. */
    boolean snapshotDecoded;
    long snapshotDigest;
    int snapshotEntries;

    PrescannedFile(final long fileNumber) {
        this.fileNumber = fileNumber;
    }

    int recordCount() {
        return count;
    }

    @Override
    public boolean onRecord(final LogRecordView record) {
        if (count == types.length) {
            final int capacity = count * 2;
            types = Arrays.copyOf(types, capacity);
            flags = Arrays.copyOf(flags, capacity);
            segmentIds = Arrays.copyOf(segmentIds, capacity);
            segmentOffsets = Arrays.copyOf(segmentOffsets, capacity);
            lengths = Arrays.copyOf(lengths, capacity);
            positions = Arrays.copyOf(positions, capacity);
            nameAt = Arrays.copyOf(nameAt, capacity);
        }
        final int i = count++;
        types[i] = record.type();
        flags[i] = record.flags();
        segmentIds[i] = record.segmentId();
        segmentOffsets[i] = record.segmentOffset();
        lengths[i] = record.length();
        positions[i] = record.position();
        nameAt[i] = -1;
        if (record.type() == LogRecordDescriptor.TYPE_CREATE) {
            final int length = record.length();
            if (names.remaining() < length) {
                final ByteBuffer grown = ByteBuffer.allocate(Math.max(names.capacity() * 2, names.position() + length));
                names.flip();
                grown.put(names);
                names = grown;
            }
            nameAt[i] = names.position();
            record.payload().getBytes(0, names, names.position(), length);
            names.position(names.position() + length);
        } else if (record.type() == LogRecordDescriptor.TYPE_SNAPSHOT && i == 0) {
            digest(record);
        }
        return true;
    }

    private void digest(final LogRecordView record) {
        final long[] sum = {0};
        try {
            snapshotEntries = SnapshotCodec.decodeRaw(record.payload(), record.length(),
                (id, sealed, start, length, payload, nameOffset, nameLength) -> {
                sum[0] += TableDigest.entry(id, sealed, start, length, TableDigest.nameHash(payload, nameOffset, nameLength));
                return true;
            });
            snapshotDigest = sum[0];
            snapshotDecoded = true;
        } catch (final IllegalArgumentException e) {
            snapshotDecoded = false;
        }
    }

    /**
     * @return whether the records from {@code from} on are all DATA (not copies), SEAL or
     *         TRUNCATE: each changes only its own segment ({@link LogReplay#applyPartitioned}).
     */
    boolean onlyOwnSegmentRecords(final int from) {
        for (int i = from; i < count; i++) {
            final byte type = types[i];
            final boolean own = type == LogRecordDescriptor.TYPE_DATA ? (flags[i] & LogRecordDescriptor.FLAG_COPY) == 0
                : type == LogRecordDescriptor.TYPE_SEAL || type == LogRecordDescriptor.TYPE_TRUNCATE;
            if (!own) {
                return false;
            }
        }
        return true;
    }

    int segmentId(final int i) {
        return segmentIds[i];
    }

    long position(final int i) {
        return positions[i];
    }

    /** Points {@code view} at record {@code i} (header fields only: no payload). */
    void view(final int i, final LogRecordView view) {
        view.set(fileNumber, positions[i], types[i], segmentIds[i], segmentOffsets[i], lengths[i]);
        view.flags(flags[i]);
    }

    /**
     * Hands the records {@code [from, recordCount())} to {@code visitor} in order through
     * {@code view}, as the scan found them.
     *
     * @return the index of the record the visitor stopped at, or {@link #recordCount()}.
     */
    int replay(final int from, final LogRecordView view, final LogRecordVisitor visitor) {
        for (int i = from; i < count; i++) {
            view.set(fileNumber, positions[i], types[i], segmentIds[i], segmentOffsets[i], lengths[i]);
            view.flags(flags[i]);
            if (nameAt[i] >= 0) {
                view.payload(names, nameAt[i]);
            }
            if (!visitor.onRecord(view)) {
                return i;
            }
        }
        return count;
    }
}
