package io.streamcache.segmentstore;

import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.segmentstore.internal.compaction.CompactedSegments;

import java.util.Set;

/** The segments the compactor works on: a store's, through its API and its location indexes. */
final class StoreSegments implements CompactedSegments {
    private final SegmentStore store;

    StoreSegments(final SegmentStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public Set<String> segmentNames() {
        return store.segmentNames();
    }

    @Override
    public SegmentInfo info(final String segment) {
        return store.info(segment);
    }

    @Override
    public void truncate(final String segment, final long offset) {
        store.truncate(segment, offset);
    }

    @Override
    public LocationIndex locations(final String segment) {
        return store.locations(segment);
    }
}
