package io.streamcache.segmentstore;

/** {@link StoreHealthMXBean} over a store's {@link SegmentStore#health()}. */
final class HealthBean implements StoreHealthMXBean {
    private final SegmentStore store;

    HealthBean(final SegmentStore store) {
        this.store = store;
    }

    @Override
    public String getState() {
        return store.health().state().name();
    }

    @Override
    public String getSummary() {
        return store.health().summary();
    }

    @Override
    public String[] getReasons() {
        return store.health().issues().stream().map(issue -> issue.reason().name()).toArray(String[]::new);
    }
}
