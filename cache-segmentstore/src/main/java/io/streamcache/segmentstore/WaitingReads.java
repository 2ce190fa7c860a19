package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A store's waiting reads: queues a read at or past the end of an unsealed segment in that
 * segment (its queue is the segment's, under its lock), times it out on the store's one
 * {@link StreamcacheThreads.Role#READ_TIMEOUTS read-timeouts} thread, and completes the waiters a
 * segment hands out (an append reached them, a seal, a delete, the store closing). See
 * <em>Waiting reads</em> in {@link SegmentStore}'s class comment for the contract.
 *
 * <p><b>Threading:</b> thread-safe. {@link #readOrWait} takes the segment's lock;
 * {@link #complete} and {@link #fail} are called with no lock held, by the thread that took the
 * waiters out of the queue (appending, committing, sealing, deleting), and complete the futures
 * on it: a woken waiter's fresh read takes the segment's lock again, after the appender released
 * it (see the design note in {@link SegmentStore}). A timeout runs on the timeout thread and
 * goes to the segment ({@link Waiter}); the thread is created through the
 * {@link StreamcacheThreads} the store was given, on the first waiting read.
 */
final class WaitingReads {
    private final String storeName;
    private final ScheduledThreadPoolExecutor scheduler;
    /** The store's isolation counts (reads past the end); set once by the store, may be null in tests. */
    volatile IsolationCounters counters;

    /**
     * @param storeName the store's name, in the timeout thread's name and in messages.
     * @param threads   creates the timeout thread (role {@link StreamcacheThreads.Role#READ_TIMEOUTS}).
     */
    WaitingReads(final String storeName, final StreamcacheThreads threads) {
        this.storeName = storeName;
        this.scheduler = new ScheduledThreadPoolExecutor(1, threads.factory(StreamcacheThreads.Role.READ_TIMEOUTS, storeName));
        scheduler.setRemoveOnCancelPolicy(true);
        scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Reads at once if bytes are available (or the segment is sealed, or {@code timeoutNanos} is
     * 0), else queues a waiter in the segment with its timeout scheduled: see
     * {@link SegmentStore#readOrWait}. Takes the segment's lock.
     *
     * @param timeoutNanos the wait, at least 0.
     */
    CompletableFuture<ReadResult> readOrWait(final Segment segment, final long offset, final int maxLength, final long timeoutNanos) {
        return readOrWait(segment, offset, maxLength, timeoutNanos, false);
    }

    /**
     * As {@link #readOrWait(Segment, long, int, long)}; with {@code pastEndAtOnce} a read past
     * every offset given to an append completes at once with {@link ReadStatus#PAST_END}
     * instead of waiting ({@link SegmentStore#readAsync}'s rule).
     */
    CompletableFuture<ReadResult> readOrWait(final Segment segment, final long offset, final int maxLength, final long timeoutNanos,
                                             final boolean pastEndAtOnce) {
        return readOrWait(segment, offset, maxLength, timeoutNanos, pastEndAtOnce, false);
    }

    /**
     * As {@link #readOrWait(Segment, long, int, long, boolean)}; with {@code tryOnly} it never
     * waits for the segment's lock.
     *
     * @return the future, or null if {@code tryOnly} and another thread holds the segment's lock.
     */
    CompletableFuture<ReadResult> readOrWait(final Segment segment, final long offset, final int maxLength, final long timeoutNanos,
                                             final boolean pastEndAtOnce, final boolean tryOnly) {
        if (tryOnly) {
            if (!segment.tryLock()) {
                return null;
            }
        } else {
            segment.lock();
        }
        final Waiter waiter;
        try {
            if (pastEndAtOnce && !segment.deleted && !segment.sealed && offset > DurableSegmentTable.reservedLength(segment)) {
                // Past every offset an append has been given: no append can reach it before the
                // ones before it, so waiting would only end in the timeout.
                if (counters != null) {
                    counters.readPastEnd();
                }
                return CompletableFuture.completedFuture(ReadResult.empty(segment.name, offset, ReadStatus.PAST_END));
            }
            if (offset < segment.length || segment.sealed || timeoutNanos == 0 || segment.deleted || offset < segment.startOffset) {
                return CompletableFuture.completedFuture(segment.readLocked(offset, maxLength));
            }
            waiter = segment.newWaiter(offset, maxLength);
            segment.addWaiter(waiter);
        } catch (final SegmentException | CacheClosedException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            segment.unlock();
        }
        // The timeout is scheduled with the segment's lock released: the scheduler's queue has a
        // lock of its own (ScheduledThreadPoolExecutor's), and a reader waiting for it with the
        // segment's held made that segment's appends and completions wait too. An append may
        // complete the waiter first: its cancel then found no task, so cancel it here.
        try {
            final ScheduledFuture<?> task = scheduler.schedule(waiter, timeoutNanos, TimeUnit.NANOSECONDS);
            waiter.timeoutTask = task;
            if (waiter.future.isDone()) {
                task.cancel(false);
            }
        } catch (final RejectedExecutionException e) {
            // The store is closing; its close fails the waiters it finds, and this one may be past it.
            waiter.future.completeExceptionally(new CacheClosedException("segment store " + storeName + " is closed"));
        }
        return waiter.future;
    }

    /**
     * Completes waiters taken out of a segment's queue, in their (offset) order, each with a
     * fresh read; a result nobody takes (the future was cancelled) is released. The caller holds
     * no lock.
     */
    void complete(final Segment segment, final Waiter head) {
        for (Waiter waiter = head; waiter != null; ) {
            final Waiter next = waiter.next;
            waiter.next = null;
            waiter.cancelTimeout();
            final ReadResult result;
            try {
                result = segment.read(waiter.offset, waiter.maxLength);
            } catch (final RuntimeException e) {
                waiter.future.completeExceptionally(e);
                waiter = next;
                continue;
            }
            if (!waiter.future.complete(result)) {
                result.close();
            }
            waiter = next;
        }
    }

    /**
     * Fails the waiters of a deleted segment: with a {@link CacheClosedException} if the store is
     * closing, else with a {@link SegmentNotFoundException}. The caller holds no lock.
     */
    void fail(final Segment segment, final Waiter head, final boolean storeClosed) {
        for (Waiter waiter = head; waiter != null; ) {
            final Waiter next = waiter.next;
            waiter.next = null;
            waiter.cancelTimeout();
            waiter.future.completeExceptionally(storeClosed
                ? new CacheClosedException("segment store " + storeName + " is closed (segment=" + segment.name + ")")
                : new SegmentNotFoundException(segment.name, "was deleted while a read waited at offset=" + waiter.offset));
            waiter = next;
        }
    }

    /**
     * @return the timeout thread as an executor: it also issues the reads a read budget's release
     *         let through (see {@link ReadBudget}), so that neither a reading call nor a release
     *         runs them on its caller's thread.
     */
    java.util.concurrent.Executor executor() {
        return scheduler;
    }

    /** Stops the timeout thread; a read that would wait from now on fails with a {@link CacheClosedException}. */
    void shutdown() {
        scheduler.shutdownNow();
    }
}
