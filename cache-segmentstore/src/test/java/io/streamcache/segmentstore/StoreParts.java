package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.segmentstore.internal.compaction.Compactor;

/**
 * Test fixture: the parts of a {@link SegmentStore} that are not its API (its log's writer and
 * directory, its compactor and historical reader), for the tests of this module that sit in
 * other packages (compaction, queue) and check those parts directly. Tests of this package call
 * the store's package-private accessors themselves. Stateless: each method reads the store's
 * final field of the same name; as thread-safe as what it returns.
 */
public final class StoreParts {
    private StoreParts() {
    }

    /** @return the log's directory, or null without a log. */
    public static LogDirectory logDirectory(final SegmentStore store) {
        return store.logDirectory();
    }

    /** @return the log's writer, or null without a log. */
    public static AggregatingWriter logWriter(final SegmentStore store) {
        return store.logWriter();
    }

    /** @return see {@link SegmentStore#locations(String)}. */
    public static LocationIndex locations(final SegmentStore store, final String segment) {
        return store.locations(segment);
    }

    /** @return the compactor the builder's {@code compaction} set up, or null. */
    public static Compactor compactor(final SegmentStore store) {
        return store.compactor();
    }

    /** @return with a log, the reader read-through loads ranges with; else null. */
    public static HistoricalReader historicalReader(final SegmentStore store) {
        return store.historicalReader();
    }
}
