package io.streamcache.it.crash;

/**
 * Walks one segment written by the {@link CrashWorkload} record by record, from offset 0 to its
 * length, checking every byte with {@link CrashRecordDescriptor#check}: use from one thread.
 * Reads through a {@link Source} in chunks of {@link #CHUNK_LENGTH} bytes.
 */
final class CrashSegmentScan {
    /** Bytes asked of the source per read: 1 MiB. */
    static final int CHUNK_LENGTH = 1 << 20;

    /**
     * Where the segment's bytes come from.
     */
    @FunctionalInterface
    interface Source {
        /**
         * Copies bytes of the segment from {@code offset} into {@code destination}[0, n).
         *
         * @return n, at least 1 and at most {@code maxLength}.
         * @throws Exception if no byte can be had at {@code offset}.
         */
        int read(long offset, byte[] destination, int maxLength) throws Exception;
    }

    /**
     * Told of every record the scan accepts, in offset order.
     */
    @FunctionalInterface
    interface RecordVisitor {
        void onRecord(long offset, int length);
    }

    private final byte[] chunk = new byte[CHUNK_LENGTH];
    private long chunkOffset;
    private int chunkLength;
    private final byte[] record = new byte[CrashRecordDescriptor.MAX_RECORD_LENGTH];

    /**
     * Scans segment {@code segment} (its index in the workload) over {@code [0, length)}.
     *
     * @return null if every byte is a byte of a whole record the workload writes at its offset,
     *         and the last record ends at {@code length}; else what is wrong and where.
     */
    String scan(final int segment, final long length, final Source source, final RecordVisitor visitor) throws Exception {
        final String name = CrashWorkload.segmentName(segment);
        chunkOffset = 0;
        chunkLength = 0;
        long offset = 0;
        while (offset < length) {
            if (length - offset < CrashRecordDescriptor.HEADER_LENGTH) {
                return "segment=" + name + " ends at length=" + length + " inside a record header at offset=" + offset;
            }
            copy(offset, record, CrashRecordDescriptor.HEADER_LENGTH, source);
            final int recordLength = CrashRecordDescriptor.recordLength(record);
            if (recordLength < 0) {
                return "segment=" + name + " has no record header at offset=" + offset + " (length=" + length + ")";
            }
            if (recordLength > length - offset) {
                return "segment=" + name + " ends at length=" + length + " inside the record at offset=" + offset + " of length="
                    + recordLength;
            }
            copy(offset, record, recordLength, source);
            final String problem = CrashRecordDescriptor.check(segment, offset, record, recordLength);
            if (problem != null) {
                return "segment=" + name + " record at offset=" + offset + ": " + problem;
            }
            visitor.onRecord(offset, recordLength);
            offset += recordLength;
        }
        return null;
    }

    private void copy(final long offset, final byte[] destination, final int length, final Source source) throws Exception {
        int done = 0;
        while (done < length) {
            final long at = offset + done;
            if (at < chunkOffset || at >= chunkOffset + chunkLength) {
                chunkOffset = at;
                chunkLength = 0;
                chunkLength = source.read(at, chunk, CHUNK_LENGTH);
                if (chunkLength < 1 || chunkLength > CHUNK_LENGTH) {
                    throw new IllegalStateException("source returned n=" + chunkLength + " bytes at offset=" + at);
                }
            }
            final int from = (int) (at - chunkOffset);
            final int n = Math.min(length - done, chunkLength - from);
            System.arraycopy(chunk, from, destination, done, n);
            done += n;
        }
    }
}
