package io.streamcache.segmentstore;

import io.streamcache.segmentstore.internal.log.LogRecordDescriptor;
import io.streamcache.segmentstore.internal.log.LogRecordListener;
import io.streamcache.segmentstore.internal.log.history.LogFileChannels;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * With a log: where each live segment's bytes are in the log files, a {@link LocationIndex} per
 * segment id (one entry per DATA record). Recovery hands over the indexes it rebuilt from the
 * record headers ({@link #adopt}); from then on the writer's listener ({@link #feed}) follows the
 * records as they become durable, before their appends commit. {@link ReadThrough} looks the
 * indexes up to load what is not cached.
 *
 * <p><b>Threading:</b> thread-safe: a concurrent map of indexes that are thread-safe
 * themselves; the feed runs on the writer's thread, lookups on any.
 */
final class LogLocations {
    /** Each live segment's location index, by id. */
    private final ConcurrentHashMap<Integer, LocationIndex> locations = new ConcurrentHashMap<>();

    /**
     * @return the segment's location index, or null (no log records of it are known: recovered by
     *         a custom recovery hook, or an index dropped after it could not take a record).
     */
    LocationIndex get(final int segmentId) {
        return locations.get(segmentId);
    }

    /** Takes the indexes recovery rebuilt, of the segments the table holds. */
    void adopt(final Map<Integer, LocationIndex> recovered, final SegmentTable table) {
        recovered.forEach((id, index) -> {
            if (table.segmentById(id) != null) {
                locations.put(id, index);
            }
        });
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
        private final SegmentTable table;
        private final LogFileChannels logChannels;

        LocationFeed(final LogRecordListener next, final SegmentTable table, final LogFileChannels logChannels) {
            this.next = next;
            this.table = table;
            this.logChannels = logChannels;
        }

        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                             final long fileNumber, final long position) {
            try {
                switch (type) {
                    case LogRecordDescriptor.TYPE_CREATE -> locations.put(segmentId, new LocationIndex(0));
                    case LogRecordDescriptor.TYPE_DATA -> {
                        final LocationIndex index = locations.get(segmentId);
                        if (index != null) {
                            index.add(segmentOffset, length, fileNumber, position);
                        }
                    }
                    case LogRecordDescriptor.TYPE_TRUNCATE -> {
                        final LocationIndex index = locations.get(segmentId);
                        if (index != null) {
                            index.truncate(segmentOffset);
                        }
                    }
                    case LogRecordDescriptor.TYPE_DELETE -> {
                        final LocationIndex index = locations.remove(segmentId);
                        if (index != null) {
                            index.clear();
                        }
                        table.forgetId(segmentId);
                    }
                    default -> {
                    }
                }
            } catch (final RuntimeException e) {
                locations.remove(segmentId);
            }
            next.onRecord(type, segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                           final long position) {
            try {
                final LocationIndex index = locations.get(segmentId);
                if (index != null) {
                    index.relocate(segmentOffset, length, fileNumber, position);
                }
            } catch (final RuntimeException e) {
                locations.remove(segmentId);
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
