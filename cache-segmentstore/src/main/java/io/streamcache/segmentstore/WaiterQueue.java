package io.streamcache.segmentstore;

import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * A segment's waiting reads, in offset order then arrival: made on the segment's first waiting
 * read (most segments never have one, so they pay one null reference for it), and the timeout
 * every waiter of the segment runs (so neither the segment nor a waiter allocates a lambda for it).
 *
 * <p><b>Threading:</b> guarded by the segment's lock: every method but {@link #accept} expects
 * the caller to hold it; {@link #accept} (a timeout, on the store's timeout thread) takes it.
 */
final class WaiterQueue implements Consumer<Waiter> {
    private final Segment segment;
    private final PriorityQueue<Waiter> queue = new PriorityQueue<>(Waiter.ORDER);
    private long sequence;

    WaiterQueue(final Segment segment) {
        this.segment = segment;
    }

    /** A new waiter for {@code [offset, offset + maxLength)}, not queued yet. */
    Waiter newWaiter(final long offset, final int maxLength) {
        return new Waiter(this, offset, maxLength, sequence++);
    }

    void add(final Waiter waiter) {
        queue.add(waiter);
    }

    /**
     * Takes the waiters whose offset is below {@code end} out of the queue.
     *
     * @return the first of them, linked through {@link Waiter#next} in offset order, or null.
     */
    Waiter take(final long end) {
        if (queue.isEmpty() || queue.peek().offset >= end) {
            return null;
        }
        Waiter head = null;
        Waiter tail = null;
        while (!queue.isEmpty() && queue.peek().offset < end) {
            final Waiter waiter = queue.poll();
            waiter.next = null;
            if (head == null) {
                head = waiter;
            } else {
                tail.next = waiter;
            }
            tail = waiter;
        }
        return head;
    }

    int size() {
        return queue.size();
    }

    /**
     * A waiter's timeout fired (on the store's timeout thread; takes the segment's lock):
     * completes it with {@link ReadStatus#TIMED_OUT} if it still waits.
     */
    @Override
    public void accept(final Waiter waiter) {
        final boolean removed;
        segment.lock();
        try {
            removed = queue.remove(waiter);
        } finally {
            segment.unlock();
        }
        if (removed) {
            waiter.future.complete(ReadResult.empty(segment.name, waiter.offset, ReadStatus.TIMED_OUT));
        }
    }
}
