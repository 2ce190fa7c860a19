package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;

/**
 * What a {@link LogScanner} found in one log file, a value filled by the scanner and read on the
 * thread that scanned (or handed over across a happens-before edge): the header, how many
 * records validated, where they end and why ({@link ScanEnd}), and what lies after that end.
 *
 * <pre>
 *  file:  | header | SNAPSHOT | records ... | first invalid byte ... later valid records ... | zeros |
 *                                           ^ endPosition           ^ laterRecordPosition    ^ laterRecordEnd
 *                                           |&lt;-------------- dirty: nonzero bytes up to dirtyEnd ---------&gt;|
 * </pre>
 */
public final class LogFileScan {
    private final long fileNumber;
    private final long size;
    private boolean headerValid;
    private long fileLength = -1;
    private ScanEnd end;
    private long endPosition;
    private String reason;
    private long recordCount;
    private long dataRecordCount;
    private long dataLength;
    private long paddingCount;
    private long laterRecordPosition = -1;
    private long laterRecordEnd = -1;
    private long dirtyEnd = -1;
    private long bytesRead;
    private long epoch = -1;

    LogFileScan(final long fileNumber, final long size) {
        this.fileNumber = fileNumber;
        this.size = size;
    }

    /**
     * A file a recovery checkpoint covers, as the checkpoint's scan of it found it (not read again).
     */
    static LogFileScan covered(final long fileNumber, final long fileLength, final long epoch, final ScanEnd end,
                               final long endPosition, final long recordCount, final long dataLength) {
        final LogFileScan scan = new LogFileScan(fileNumber, fileLength);
        scan.header(true, fileLength, epoch);
        scan.end(end, endPosition, null);
        scan.recordCount = recordCount;
        scan.dataLength = dataLength;
        return scan;
    }

    void header(final boolean valid, final long fileLength, final long epoch) {
        this.headerValid = valid;
        this.fileLength = fileLength;
        this.epoch = epoch;
    }

    void end(final ScanEnd end, final long endPosition, final String reason) {
        this.end = end;
        this.endPosition = endPosition;
        this.reason = reason;
    }

    void countRecord(final byte type, final int length) {
        recordCount++;
        if (type == LogRecordDescriptor.TYPE_DATA) {
            dataRecordCount++;
            dataLength += length;
        }
    }

    void countPadding() {
        paddingCount++;
    }

    void later(final long firstPosition, final long lastEnd, final long dirtyEnd) {
        this.laterRecordPosition = firstPosition;
        this.laterRecordEnd = lastEnd;
        this.dirtyEnd = dirtyEnd;
    }

    void bytesRead(final long bytesRead) {
        this.bytesRead = bytesRead;
    }

    /**
     * @return the file's number, as named (the CRC seed the scan used).
     */
    public long fileNumber() {
        return fileNumber;
    }

    /**
     * @return the file's size on disk when the scan began.
     */
    public long size() {
        return size;
    }

    /**
     * @return whether page 0 validated: magic, version, page length, file number, file length, CRC.
     */
    public boolean headerValid() {
        return headerValid;
    }

    /**
     * @return EPOCH from the header (the writer epoch of the writer that created the file), or -1
     *         if the header is not valid.
     */
    public long epoch() {
        return epoch;
    }

    /**
     * @return FILE_LENGTH from the header, or -1 if the header is not valid.
     */
    public long fileLength() {
        return fileLength;
    }

    /**
     * @return why the scan stopped.
     */
    public ScanEnd end() {
        return end;
    }

    /**
     * @return where the valid records end: the position of the first byte not accepted (the file
     *         length for {@link ScanEnd#END_OF_FILE}, the stopping record's position for
     *         {@link ScanEnd#STOPPED}, 0 for {@link ScanEnd#BAD_HEADER}).
     */
    public long endPosition() {
        return endPosition;
    }

    /**
     * @return what the bytes at {@link #endPosition()} are, as {@code name=value} facts; null for
     *         {@link ScanEnd#END_OF_FILE}.
     */
    public String reason() {
        return reason;
    }

    /**
     * @return valid records reported to the visitor (padding not counted).
     */
    public long recordCount() {
        return recordCount;
    }

    /**
     * @return valid DATA records among them.
     */
    public long dataRecordCount() {
        return dataRecordCount;
    }

    /**
     * @return payload bytes of those DATA records.
     */
    public long dataLength() {
        return dataLength;
    }

    /**
     * @return padding records skipped.
     */
    public long paddingCount() {
        return paddingCount;
    }

    /**
     * @return the position of the first valid record found after {@link #endPosition()} (probing
     *         every later page boundary), or -1 if none.
     */
    public long laterRecordPosition() {
        return laterRecordPosition;
    }

    /**
     * @return the end (aligned) of the last valid record found after {@link #endPosition()}, or -1.
     */
    public long laterRecordEnd() {
        return laterRecordEnd;
    }

    /**
     * @return the end of the last page after {@link #endPosition()} that is not all zeros, looking
     *         no further than the torn-write window; -1 if none.
     */
    public long dirtyEnd() {
        return dirtyEnd;
    }

    /**
     * @return where writing resumes if the log is cut at {@link #endPosition()}: the next page
     *         boundary at or after it.
     */
    public long resumePosition() {
        return LogRecordDescriptor.align(endPosition, LogFileDescriptor.PAGE_LENGTH);
    }

    /**
     * @return the end of what must be zeroed after {@link #resumePosition()} to cut the log at
     *         {@link #endPosition()}: the later valid records and the dirty pages; at least
     *         {@link #resumePosition()}.
     */
    public long zeroEnd() {
        final long resume = resumePosition();
        long zeroEnd = Math.max(resume, dirtyEnd);
        if (laterRecordEnd > 0) {
            zeroEnd = Math.max(zeroEnd, LogRecordDescriptor.align(laterRecordEnd, LogFileDescriptor.PAGE_LENGTH));
        }
        return zeroEnd;
    }

    /**
     * @return bytes the scan read from the file.
     */
    public long bytesRead() {
        return bytesRead;
    }

    /**
     * @return whether the file holds any valid record (before or after {@link #endPosition()}).
     */
    public boolean hasRecords() {
        return recordCount > 0 || laterRecordPosition >= 0;
    }

    @Override
    public String toString() {
        return "LogFileScan{fileNumber=" + fileNumber + ", size=" + size + ", headerValid=" + headerValid + ", fileLength="
            + fileLength + ", end=" + end + ", endPosition=" + endPosition + ", reason=" + reason + ", records=" + recordCount
            + ", dataRecords=" + dataRecordCount + ", dataLength=" + dataLength + ", paddings=" + paddingCount
            + ", laterRecordPosition=" + laterRecordPosition + ", laterRecordEnd=" + laterRecordEnd + ", dirtyEnd=" + dirtyEnd
            + '}';
    }
}
