package io.streamcache.log.internal.recovery;

/**
 * Why a {@link LogScanner} stopped where it did: the classification of the first bytes that are
 * not a valid record. An immutable value.
 */
public enum ScanEnd {
    /** The records run to the end of the file: it is full. */
    END_OF_FILE,
    /**
     * A zero page at a page boundary and no valid record after it (or the file's end at a page
     * boundary before its FILE_LENGTH): the clean end of what was written.
     */
    ZEROS,
    /**
     * A page boundary followed by bytes that are not a valid record (not all zeros), and no valid
     * record after: the end of what was written, with stale bytes of a recycled file after it
     * (their CRCs are seeded with another file number), or the torn first page of a write.
     */
    STALE,
    /**
     * Bytes inside a page that do not validate (a partial record, a bad CRC, zeros where the
     * padding should be), or any invalid bytes followed by valid records all within the
     * torn-write window: a write cut short. Legal only in the tail.
     */
    TORN,
    /**
     * Bytes that do not validate followed by valid records beyond the torn-write window, or a
     * record that validates but breaks the format (a first record that is not a SNAPSHOT, a
     * SNAPSHOT elsewhere): never the result of a torn write.
     */
    CORRUPT,
    /** The file header (page 0) does not validate; no record was scanned. */
    BAD_HEADER,
    /** The visitor stopped the scan at a valid record. */
    STOPPED
}
