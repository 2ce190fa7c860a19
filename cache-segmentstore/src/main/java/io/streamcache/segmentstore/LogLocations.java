package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.log.internal.history.LogFileChannels;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationMemory;
import io.streamcache.log.internal.location.LocationTable;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * With a log: where each live segment's bytes are in the log files, a location index per
 * segment id (one entry per DATA record) in a {@link LocationTable}: off-heap rows, with no
 * object per segment. Recovery hands over the rows it rebuilt from the record headers
 * ({@link #adoptLive}); from then on the writer's listener ({@link #feed}) follows the records
 * as they become durable, before their appends commit. {@link ReadThrough} looks the indexes up
 * ({@link #get}: a view made per lookup) to load what is not cached.
 *
 * <p>Heap per live segment: 4 bytes (its row's number in a page of the table; see
 * {@link LocationTable}). The indexes' contents are off-heap, in one {@link LocationMemory} per
 * log (metadata of the log, outside the cache's memory bound; {@link #reservedBytes()}).
 *
 * <p><b>Threading:</b> thread-safe: the table's stripes (see {@link LocationTable}). The feed
 * runs on the writer's thread; {@link #adoptLive} before the writer starts; {@link #close} after
 * it stopped. A view obtained from {@link #get} finds nothing once its segment is deleted.
 *
 * <p><b>Lifetime:</b> {@link #close()} (after the writer stopped) frees every row and gives the
 * memory back to the system; a view obtained before then finds nothing.
 */
final class LogLocations implements AutoCloseable {
    /** Ids per page of the table. */
    static final int PAGE_IDS = LocationTable.PAGE_IDS;

    /** The memory of the rows made here and of those recovery built for this store. */
    private final LocationMemory memory = new LocationMemory();
    private final LocationTable table = new LocationTable(memory);

    /** @return the memory in which recovery builds the indexes it hands to {@link #adoptLive}. */
    LocationMemory memory() {
        return memory;
    }

    /** @return bytes of direct memory the indexes' memory holds (0 once closed). */
    long reservedBytes() {
        return memory.reservedBytes();
    }

    /**
     * @return a view of the segment's location index, or null (no log records of it are known:
     *         recovered by a custom recovery hook, or an index dropped after it could not take a
     *         record).
     */
    LocationIndex get(final int segmentId) {
        return table.get(segmentId);
    }

    /** @return pages of the table held now (tests). */
    int pageCount() {
        return table.pageCount();
    }

    /**
     * Takes the location indexes of recovery's live segments, without consulting the store's
     * table: {@link LogOpening} runs this on a helper thread while {@link SegmentTable#restore}
     * restores the same segments from the same {@link RecoveredLog} (its live segments, each with
     * a distinct id), so it takes exactly what {@link #adopt} would take after the restore. A
     * restore that fails fails the open, and the store's close of this table gives them back.
     * Rows of another memory (a recovery hook that scanned on its own) are copied into this one.
     */
    void adoptLive(final List<RecoveredSegment> live) {
        for (final RecoveredSegment segment : live) {
            table.adopt(segment.id(), segment.locationsRow(), segment.locationMemory());
        }
    }

    /**
     * Takes the standalone indexes recovery rebuilt, of the segments the table holds; clears the
     * others (they would hold memory until close).
     */
    void adopt(final Map<Integer, LocationIndex> recovered, final SegmentTable segments) {
        recovered.forEach((id, index) -> {
            if (segments.segmentById(id) != null) {
                table.adopt(id, index);
            } else {
                index.clear();
            }
        });
    }

    /**
     * Frees every index held and gives the memory back: after the writer stopped (its feed then
     * drops what it is given). Idempotent.
     */
    @Override
    public void close() {
        table.close();
        memory.close();
    }

    /**
     * @param next     the builder's listener, told of everything after the indexes.
     * @param table    forgets a segment's id once its DELETE is durable.
     * @param channels the historical reader's channels: a retired file's is closed.
     * @return the writer's listener.
     */
    LogRecordListener feed(final LogRecordListener next, final SegmentTable table, final LogFileChannels channels) {
        return new LocationFeed(next, table, channels);
    }

    /**
     * Follows the records as they become durable into the location indexes (before their
     * requests commit, on the writer's thread), closes the read channel of a retired file, and
     * passes everything on to the listener given to the builder. Never throws: an index that
     * cannot take a record is dropped (its segment's evicted bytes then stay NOT_CACHED).
     */
    private final class LocationFeed implements LogRecordListener {
        private final LogRecordListener next;
        private final SegmentTable segments;
        private final LogFileChannels logChannels;

        LocationFeed(final LogRecordListener next, final SegmentTable segments, final LogFileChannels logChannels) {
            this.next = next;
            this.segments = segments;
            this.logChannels = logChannels;
        }

        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                             final long fileNumber, final long position) {
            try {
                switch (type) {
                    case LogRecordDescriptor.TYPE_CREATE -> table.create(segmentId, 0);
                    case LogRecordDescriptor.TYPE_DATA -> table.add(segmentId, segmentOffset, length, fileNumber, position);
                    case LogRecordDescriptor.TYPE_TRUNCATE -> table.truncate(segmentId, segmentOffset);
                    case LogRecordDescriptor.TYPE_DELETE -> {
                        // The id first: a read that finds no index then finds the segment gone
                        // by id too, and reports the delete (ReadThrough), not a NOT_CACHED.
                        segments.forgetId(segmentId);
                        table.remove(segmentId);
                    }
                    default -> {
                    }
                }
            } catch (final RuntimeException | OutOfMemoryError e) {
                // OutOfMemoryError: direct memory for the index ran out; the log goes on without it.
                table.remove(segmentId);
            }
            next.onRecord(type, segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                           final long position) {
            try {
                table.relocate(segmentId, segmentOffset, length, fileNumber, position);
            } catch (final RuntimeException | OutOfMemoryError e) {
                // OutOfMemoryError: direct memory for the index ran out; the log goes on without it.
                table.remove(segmentId);
            }
            next.onCopy(segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onFileRetired(final long fileNumber) {
            try {
                logChannels.close(fileNumber);
            } catch (final IOException e) {
                // A read-only channel: nothing to lose; the file goes anyway.
            }
            next.onFileRetired(fileNumber);
        }
    }
}
