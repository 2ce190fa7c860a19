package io.streamcache.log.internal.recovery;

import io.streamcache.log.internal.location.LocationTable;
import io.streamcache.log.internal.location.LocationRows;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationMemory;

/**
 * One segment as recovery rebuilt it from the log; an immutable value except for the row of
 * its location index ({@link LocationRows}), which the store adopts ({@link LocationTable#adopt}).
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
 * @param locationsRow     the row of its location index, where its bytes {@code [startOffset, length)}
 *                         are (0 if deleted or unknown).
 * @param locationMemory   the memory of that row (null if there is no row).
 */
public record RecoveredSegment(int id, String name, long startOffset, long length, boolean sealed, boolean deleted,
                               long loggedFromOffset, long locationsRow, LocationMemory locationMemory) {
    /**
     * @return a standalone view over the row, for reading it before the store adopts it (it must
     *         not be kept past that, nor cleared: the row is the store's to free); a cleared
     *         index if there is no row.
     */
    public LocationIndex locations() {
        return LocationIndex.over(locationMemory, locationsRow);
    }
}
