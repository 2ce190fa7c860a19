package io.streamcache.segmentstore;

import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * A read waiting for bytes at {@link #offset} of a segment: its fields other than the future
 * are guarded by the segment's lock; the future is completed by whichever thread takes the
 * waiter out of the segment's queue (an append, a seal, a delete, or the timeout task).
 * Runs as its own timeout task, so a waiting read allocates nothing more for its timeout than
 * the scheduler's task wrapper.
 *
 * <p>A waiter knows nothing of the queue that holds it: its timeout hands it to
 * {@link #onTimeout}, which its queue gives it (the segment's {@link WaiterQueue}, made with the
 * segment's first waiting read), so the dependency runs one way, from the queue to {@code Waiter}.
 */
final class Waiter implements Runnable {
    /** Queue order: by offset, then by arrival. */
    static final Comparator<Waiter> ORDER = (a, b) -> {
        final int byOffset = Long.compare(a.offset, b.offset);
        return byOffset != 0 ? byOffset : Long.compare(a.sequence, b.sequence);
    };

    /** Takes this waiter out of its queue and completes it, if it still waits: the segment's. */
    private final Consumer<? super Waiter> onTimeout;
    final long offset;
    final int maxLength;
    final long sequence;
    final CompletableFuture<ReadResult> future = new CompletableFuture<>();
    /**
     * Set by the thread that queued the waiter, just after it released the segment's lock:
     * volatile, read by whichever thread takes the waiter out (which may come first, and then
     * cancels nothing: the queuing thread cancels the task it sets on a done future).
     */
    volatile ScheduledFuture<?> timeoutTask;
    /** Links the waiters taken out of the queue together, in offset order. */
    Waiter next;

    /**
     * @param onTimeout what the timeout runs, on the store's timeout thread: the queue's owner
     *                  takes the waiter out if it still waits and completes it.
     */
    Waiter(final Consumer<? super Waiter> onTimeout, final long offset, final int maxLength, final long sequence) {
        this.onTimeout = onTimeout;
        this.offset = offset;
        this.maxLength = maxLength;
        this.sequence = sequence;
    }

    /** The timeout: runs on the store's scheduler thread. */
    @Override
    public void run() {
        onTimeout.accept(this);
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
        return "Waiter{offset=" + offset + ", maxLength=" + maxLength + '}';
    }
}
