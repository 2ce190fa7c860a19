package io.streamcache.segmentstore;

/** {@link IsolationMXBean} over a store's {@link SegmentStore#isolationStats()}. */
final class IsolationBean implements IsolationMXBean {
    private final SegmentStore store;

    IsolationBean(final SegmentStore store) {
        this.store = store;
    }

    @Override
    public long getAppendRoomWaits() {
        return store.isolationStats().appendRoomWaits();
    }

    @Override
    public long getAppendRoomWaitNanos() {
        return store.isolationStats().appendRoomWaitNanos();
    }

    @Override
    public long getAppendRoomRefusals() {
        return store.isolationStats().appendRoomRefusals();
    }

    @Override
    public long getFillsAdmitted() {
        return store.isolationStats().fillsAdmitted();
    }

    @Override
    public long getFillBytesAdmitted() {
        return store.isolationStats().fillBytesAdmitted();
    }

    @Override
    public long getFillsRefusedNoRoom() {
        return store.isolationStats().fillsRefusedNoRoom();
    }

    @Override
    public long getFillsRefusedBudget() {
        return store.isolationStats().fillsRefusedBudget();
    }

    @Override
    public long getFillsRefusedUnread() {
        return store.isolationStats().fillsRefusedUnread();
    }

    @Override
    public long getReadBudgetBytes() {
        return store.isolationStats().readBudgetBytes();
    }

    @Override
    public long getReadBudgetUsedBytes() {
        return store.isolationStats().readBudgetUsedBytes();
    }

    @Override
    public int getReadBudgetWaiting() {
        return store.isolationStats().readBudgetWaiting();
    }

    @Override
    public long getReadBudgetWaits() {
        return store.isolationStats().readBudgetWaits();
    }

    @Override
    public long getReadBudgetWaitNanos() {
        return store.isolationStats().readBudgetWaitNanos();
    }

    @Override
    public long getReadBudgetRefusals() {
        return store.isolationStats().readBudgetRefusals();
    }

    @Override
    public long getReadsPastEnd() {
        return store.isolationStats().readsPastEnd();
    }

    @Override
    public long getReadsHandedOff() {
        return store.isolationStats().readsHandedOff();
    }

    @Override
    public long getRangeBufferBytes() {
        return store.isolationStats().rangeBufferBytes();
    }

    @Override
    public long getRangeHeapFallbacks() {
        return store.isolationStats().rangeHeapFallbacks();
    }
}
