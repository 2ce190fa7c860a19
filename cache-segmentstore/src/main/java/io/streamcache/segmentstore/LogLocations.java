package io.streamcache.segmentstore;

import io.streamcache.segmentstore.internal.log.LogRecordDescriptor;
import io.streamcache.segmentstore.internal.log.LogRecordListener;
import io.streamcache.segmentstore.internal.log.history.LogFileChannels;
import io.streamcache.segmentstore.internal.log.recovery.LocationChunkPool;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;
import org.agrona.collections.Int2ObjectHashMap;

import java.io.IOException;
import java.util.Map;

/**
 * With a log: where each live segment's bytes are in the log files, a {@link LocationIndex} per
 * segment id (one entry per DATA record). Recovery hands over the indexes it rebuilt from the
 * record headers ({@link #adopt}); from then on the writer's listener ({@link #feed}) follows the
 * records as they become durable, before their appends commit. {@link ReadThrough} looks the
 * indexes up to load what is not cached.
 *
 * <p><b>Threading:</b> thread-safe. The map from id to index is an open-addressing map of
 * primitive int keys (agrona's {@link Int2ObjectHashMap}: no boxed {@code Integer} per lookup,
 * 12 to 25 bytes per segment by its fill, instead of a concurrent map's ~55), which is not thread-safe
 * itself, so every access holds its monitor: it is written only by the writer thread (the feed:
 * CREATE, DELETE, a dropped index) and by {@link #adopt} before the writer starts; the feed
 * looks an index up per DATA record on the writer thread, readers ({@link ReadThrough}, the
 * message-queue facade) on any thread, for a lookup of a few nanoseconds. The indexes are
 * thread-safe themselves and used outside the monitor.
 *
 * <p><b>Chunk pool:</b> the indexes take their storage chunks from one {@link LocationChunkPool}
 * and give them back when a TRUNCATE drops them or a DELETE clears the index, so that appends
 * allocate no index storage once segments are truncated or deleted as the log grows. The pool
 * holds at most {@link #POOL_BYTES} of free chunks (heap, counted by {@link #poolFootprint()});
 * the feed (the writer's thread) is its only user after {@link #adopt}.
 */
final class LogLocations {
    /** Each live segment's location index, by id; guarded by its own monitor. */
    private final Int2ObjectHashMap<LocationIndex> locations = new Int2ObjectHashMap<>();
    /** Bytes of free location chunks kept for reuse, at most: 8 MiB of heap. */
    static final long POOL_BYTES = 8L << 20;
    private final LocationChunkPool pool = new LocationChunkPool(POOL_BYTES, false);

    /** @return heap bytes of the free chunks the pool holds (at most {@link #POOL_BYTES}). */
    long poolFootprint() {
        return pool.footprint();
    }

    /**
     * @return the segment's location index, or null (no log records of it are known: recovered by
     *         a custom recovery hook, or an index dropped after it could not take a record).
     */
    LocationIndex get(final int segmentId) {
        synchronized (locations) {
            return locations.get(segmentId);
        }
    }

    private void put(final int segmentId, final LocationIndex index) {
        synchronized (locations) {
            locations.put(segmentId, index);
        }
    }

    private LocationIndex remove(final int segmentId) {
        synchronized (locations) {
            return locations.remove(segmentId);
        }
    }

    /** Takes the indexes recovery rebuilt, of the segments the table holds. */
    void adopt(final Map<Integer, LocationIndex> recovered, final SegmentTable table) {
        recovered.forEach((id, index) -> {
            if (table.segmentById(id) != null) {
                index.usePool(pool);
                put(id, index);
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
                    case LogRecordDescriptor.TYPE_CREATE -> put(segmentId, new LocationIndex(0, pool));
                    case LogRecordDescriptor.TYPE_DATA -> {
                        final LocationIndex index = get(segmentId);
                        if (index != null) {
                            index.add(segmentOffset, length, fileNumber, position);
                        }
                    }
                    case LogRecordDescriptor.TYPE_TRUNCATE -> {
                        final LocationIndex index = get(segmentId);
                        if (index != null) {
                            index.truncate(segmentOffset);
                        }
                    }
                    case LogRecordDescriptor.TYPE_DELETE -> {
                        final LocationIndex index = remove(segmentId);
                        if (index != null) {
                            index.clear();
                        }
                        table.forgetId(segmentId);
                    }
                    default -> {
                    }
                }
            } catch (final RuntimeException e) {
                remove(segmentId);
            }
            next.onRecord(type, segmentId, segmentOffset, length, fileNumber, position);
        }

        @Override
        public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                           final long position) {
            try {
                final LocationIndex index = get(segmentId);
                if (index != null) {
                    index.relocate(segmentOffset, length, fileNumber, position);
                }
            } catch (final RuntimeException e) {
                remove(segmentId);
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
