package io.streamcache.segmentstore;

import java.util.concurrent.atomic.LongAdder;

/**
 * A store's counts of how its readers and writers waited for each other, or did not: appends
 * that waited for cache memory, fills from the log admitted or refused, reads that waited for
 * or were refused their budget, reads past the end. Read as an {@link IsolationStats} snapshot.
 *
 * <p><b>Threading:</b> thread-safe; every count is a {@link LongAdder}, added to from the data
 * path without a lock (one striped add, no allocation).
 */
final class IsolationCounters {
    private final LongAdder appendRoomWaits = new LongAdder();
    private final LongAdder appendRoomWaitNanos = new LongAdder();
    private final LongAdder appendRoomRefusals = new LongAdder();
    private final LongAdder fillsAdmitted = new LongAdder();
    private final LongAdder fillBytesAdmitted = new LongAdder();
    private final LongAdder fillsRefusedNoRoom = new LongAdder();
    private final LongAdder fillsRefusedBudget = new LongAdder();
    private final LongAdder fillsRefusedUnread = new LongAdder();
    private final LongAdder readBudgetWaits = new LongAdder();
    private final LongAdder readBudgetWaitNanos = new LongAdder();
    private final LongAdder readBudgetRefusals = new LongAdder();
    private final LongAdder readsPastEnd = new LongAdder();
    private final LongAdder readsHandedOff = new LongAdder();

    /** An append found no room and waited {@code nanos} (with no lock held) before it went in or failed. */
    void appendRoomWaited(final long nanos) {
        appendRoomWaits.increment();
        appendRoomWaitNanos.add(nanos);
    }

    void appendRoomRefused() {
        appendRoomRefusals.increment();
    }

    void fillAdmitted(final long bytes) {
        fillsAdmitted.increment();
        fillBytesAdmitted.add(bytes);
    }

    void fillRefusedNoRoom() {
        fillsRefusedNoRoom.increment();
    }

    void fillRefusedUnread() {
        fillsRefusedUnread.increment();
    }

    void fillRefusedBudget() {
        fillsRefusedBudget.increment();
    }

    void readBudgetWaited(final long nanos) {
        readBudgetWaits.increment();
        readBudgetWaitNanos.add(nanos);
    }

    void readBudgetRefused() {
        readBudgetRefusals.increment();
    }

    void readPastEnd() {
        readsPastEnd.increment();
    }

    /** A read found its segment's lock held and was handed to the store's read-timeouts thread. */
    void readHandedOff() {
        readsHandedOff.increment();
    }

    /** @return the counts now, with the store's read budget's state and its range buffers'. */
    IsolationStats snapshot(final long readBudgetBytes, final long readBudgetUsedBytes, final int readBudgetWaiting,
                            final long rangeBufferBytes, final long rangeHeapFallbacks) {
        return new IsolationStats(appendRoomWaits.sum(), appendRoomWaitNanos.sum(), appendRoomRefusals.sum(), fillsAdmitted.sum(),
            fillBytesAdmitted.sum(), fillsRefusedNoRoom.sum(), fillsRefusedBudget.sum(), readBudgetBytes, readBudgetUsedBytes,
            readBudgetWaiting, readBudgetWaits.sum(), readBudgetWaitNanos.sum(), readBudgetRefusals.sum(), readsPastEnd.sum(),
            readsHandedOff.sum(), rangeBufferBytes, rangeHeapFallbacks, fillsRefusedUnread.sum());
    }
}
