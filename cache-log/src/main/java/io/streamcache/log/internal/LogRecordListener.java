package io.streamcache.log.internal;

/**
 * Observes where records land: called on the aggregating writer's thread for every record of a
 * batch once the batch is in the log (as the durability policy defines it), in log order, before
 * any of the batch's requests is committed; and when a dead log file is retired. For a location
 * index (segment offset to file position) that historical reads use once data is evicted.
 * Implementations must be quick and must not block: the writer waits for them.
 */
public interface LogRecordListener {
    /** A listener that does nothing. */
    LogRecordListener NONE = new LogRecordListener() {
        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                             final long fileNumber, final long position) {
        }

        @Override
        public void onFileRetired(final long fileNumber) {
        }
    };

    /**
     * A record is in the log.
     *
     * @param type          a {@link LogRecordDescriptor} {@code TYPE_*} other than padding and snapshot.
     * @param segmentId     the segment.
     * @param segmentOffset DATA: the offset of the payload's first byte; as in the record otherwise.
     * @param length        the payload's length.
     * @param fileNumber    the log file.
     * @param position      the record's position in the file (its header; the payload follows
     *                      {@link LogRecordDescriptor#HEADER_LENGTH} bytes later).
     */
    void onRecord(byte type, int segmentId, long segmentOffset, int length, long fileNumber, long position);

    /**
     * A copy of a DATA record is in the log (compaction, {@link LogRecordDescriptor#FLAG_COPY}):
     * the bytes {@code [segmentOffset, segmentOffset + length)} of the segment, which it already
     * holds, are now also at {@code position} of {@code fileNumber}, and must be read there from
     * now on (the original's file will be retired). Does nothing by default.
     */
    default void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                        final long position) {
    }

    /**
     * A log file's data are all dead and it is being deleted (or recycled): its records must not
     * be read any more.
     */
    void onFileRetired(long fileNumber);
}
