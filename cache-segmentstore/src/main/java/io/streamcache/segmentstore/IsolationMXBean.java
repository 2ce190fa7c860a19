package io.streamcache.segmentstore;

/**
 * A segment store's isolation counts as an MXBean, registered as
 * {@code io.streamcache:type=Isolation,name=<store name>} while the store is open: thread-safe
 * (each attribute reads a striped counter or an atomic, as {@link IsolationStats} does). See
 * {@link IsolationStats} for what each attribute means.
 */
public interface IsolationMXBean {
    long getAppendRoomWaits();

    long getAppendRoomWaitNanos();

    long getAppendRoomRefusals();

    long getFillsAdmitted();

    long getFillBytesAdmitted();

    long getFillsRefusedNoRoom();

    long getFillsRefusedBudget();

    long getFillsRefusedUnread();

    long getReadBudgetBytes();

    long getReadBudgetUsedBytes();

    int getReadBudgetWaiting();

    long getReadBudgetWaits();

    long getReadBudgetWaitNanos();

    long getReadBudgetRefusals();

    long getReadsPastEnd();

    long getReadsHandedOff();

    long getRangeBufferBytes();

    long getRangeHeapFallbacks();
}
