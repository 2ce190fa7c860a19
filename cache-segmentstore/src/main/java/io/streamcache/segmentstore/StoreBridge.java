package io.streamcache.segmentstore;

import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.recovery.RecoveryHook;
import io.streamcache.segmentstore.internal.StoreInternals;
import io.streamcache.segmentstore.internal.compaction.Compactor;

/**
 * What {@link StoreInternals} reaches of a store: its package-private parts (the log's writer and
 * directory, location indexes, compactor, historical reader) and the builder's package-private
 * hooks. Stateless and thread-safe; {@link SegmentStore}'s class initializer installs one.
 */
final class StoreBridge implements StoreInternals.Bridge {
    @Override
    public LogDirectory logDirectory(final SegmentStore store) {
        return store.logDirectory();
    }

    @Override
    public AggregatingWriter logWriter(final SegmentStore store) {
        return store.logWriter();
    }

    @Override
    public LocationIndex locations(final SegmentStore store, final String segment) {
        return store.locations(segment);
    }

    @Override
    public long locationMemoryBytes(final SegmentStore store) {
        return store.locationMemoryBytes();
    }

    @Override
    public Compactor compactor(final SegmentStore store) {
        return store.compactor();
    }

    @Override
    public HistoricalReader historicalReader(final SegmentStore store) {
        return store.historicalReader();
    }

    @Override
    public SegmentStore.Builder logRecovery(final SegmentStore.Builder builder, final RecoveryHook hook) {
        return builder.logRecovery(hook);
    }

    @Override
    public SegmentStore.Builder logListener(final SegmentStore.Builder builder, final LogRecordListener listener) {
        return builder.logListener(listener);
    }
}
