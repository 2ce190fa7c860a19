package io.streamcache.log.internal.recovery;

/**
 * Receives the valid records of a log file from a {@link LogScanner}, in file order, on the
 * scanning thread. Padding records are skipped, not reported.
 */
@FunctionalInterface
public interface LogRecordVisitor {
    /**
     * @param record the record: a flyweight the scanner reuses, valid only during this call.
     * @return true to go on; false to stop the scan at this record ({@link ScanEnd#STOPPED} at
     *         its position, as if it were the first byte not accepted).
     */
    boolean onRecord(LogRecordView record);
}
