package io.streamcache.segmentstore;

import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * A read waiting for bytes at {@link #offset} of a segment: its fields other than the future
 * are guarded by the segment's lock; the future is completed by whichever thread takes the
 * waiter out of the segment's queue (an append, a seal, a delete, or the timeout task).
 * Runs as its own timeout task, so a waiting read allocates nothing more for its timeout than
 * the scheduler's task wrapper.
 */
final class Waiter implements Runnable {
    /** Queue order: by offset, then by arrival. */
    static final Comparator<Waiter> ORDER = (a, b) -> {
        final int byOffset = Long.compare(a.offset, b.offset);
        return byOffset != 0 ? byOffset : Long.compare(a.sequence, b.sequence);
    };

    final Segment segment;
    final long offset;
    final int maxLength;
    final long sequence;
    final CompletableFuture<ReadResult> future = new CompletableFuture<>();
    /** Set under the segment's lock before the waiter is queued. */
    ScheduledFuture<?> timeoutTask;
    /** Links the waiters taken out of the queue together, in offset order. */
    Waiter next;

    Waiter(final Segment segment, final long offset, final int maxLength, final long sequence) {
        this.segment = segment;
        this.offset = offset;
        this.maxLength = maxLength;
        this.sequence = sequence;
    }

    /** The timeout: runs on the store's scheduler thread. */
    @Override
    public void run() {
        segment.timeout(this);
    }

    /** Cancels the timeout task; call after taking the waiter out of the queue. */
    void cancelTimeout() {
        final ScheduledFuture<?> task = timeoutTask;
        if (task != null) {
            task.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "Waiter{segment=" + segment.name + ", offset=" + offset + ", maxLength=" + maxLength + '}';
    }
}
