package io.streamcache.segmentstore.internal.log.recovery;

/**
 * One segment as recovery rebuilt it from the log; an immutable value except for its
 * {@link #locations()}, which is thread-safe and handed over to the store.
 *
 * @param id               the segment's id in the log records.
 * @param name             its name.
 * @param startOffset      its start offset: bytes before it were truncated.
 * @param length           its length: the end of its last DATA record (the final length if sealed).
 * @param sealed           whether a SEAL record was logged.
 * @param deleted          whether a DELETE record was logged (it then holds no bytes, and its
 *                         name may belong to a later segment).
 * @param loggedFromOffset the first offset whose bytes the log files hold: 0 for a segment
 *                         created in them, its length in the oldest file's SNAPSHOT otherwise;
 *                         never after {@code startOffset} for a live segment.
 * @param locations        where its bytes {@code [startOffset, length)} are (empty if deleted).
 */
public record RecoveredSegment(int id, String name, long startOffset, long length, boolean sealed, boolean deleted,
                               long loggedFromOffset, LocationIndex locations) {
}
