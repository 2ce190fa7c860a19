package io.streamcache.segmentstore;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Admits a store's asynchronous view reads through its {@link ReadBudget} and the reader's:
 * issues the read at once when both have room, queues it in the spent one (or fails it at once,
 * if that one is fail-fast), and charges each result to both budgets until it is released. See
 * {@link ReadBudget} for the contract.
 *
 * <p>A reader's budget is held to {@code 1 / ReadBudget.READER_SHARE_DIVISOR} of the store's
 * (see {@link ReadBudget}): a reader that holds that much waits in its own queue, so that one
 * reader never spends the store's budget for every other.
 *
 * <p><b>Threading:</b> thread-safe. Never blocks, and never runs another read on the caller's
 * thread: a read that must wait is a queued {@link ReadBudget.Admission}, issued later on the
 * {@code drainer} (the store's read-timeouts thread) once a release made room (the read itself
 * only takes a segment's lock briefly and completes or queues its future).
 */
final class ReadAdmission {
    private final ReadBudget store;
    private final IsolationCounters counters;
    /** Issues the reads a release let through (never the reading or the releasing thread). */
    private final Executor drainer;
    /** The most a reader's budget may hold of the store's before its reads wait in its own queue. */
    private final long readerCap;

    ReadAdmission(final ReadBudget store, final IsolationCounters counters, final Executor drainer) {
        this.store = store;
        this.counters = counters;
        this.drainer = drainer;
        this.readerCap = Math.max(1L, store.limit() / ReadBudget.READER_SHARE_DIVISOR);
        store.drainOn(drainer);
    }

    ReadBudget storeBudget() {
        return store;
    }

    /**
     * @param reader the reader's budget, or null.
     * @param read   issues the read (never blocks).
     * @return the read's future, its result charged to the budgets.
     */
    CompletableFuture<ReadResult> admit(final ReadBudget reader, final Supplier<CompletableFuture<ReadResult>> read) {
        if (reader != null) {
            reader.drainOn(drainer);
        }
        final ReadBudget spent = spent(reader);
        if (spent == null) {
            return charged(read.get(), reader);
        }
        if (spent.isFailFast()) {
            counters.readBudgetRefused();
            final long limit = spent == store ? spent.limit() : Math.min(spent.limit(), readerCap);
            return CompletableFuture.failedFuture(new ReadBudgetExceededException(spent.name(), limit, spent.used()));
        }
        final Waiting waiting = new Waiting(reader, read);
        spent.enqueue(waiting);
        return waiting.later;
    }

    /**
     * @return the budget without room (the reader's first, held to its share of the store's), or
     *         null if both have room.
     */
    private ReadBudget spent(final ReadBudget reader) {
        if (reader != null && !reader.hasRoom(readerCap)) {
            return reader;
        }
        return store.hasRoom() ? null : store;
    }

    /**
     * Charges the read's result once it exists and returns the same future (so cancelling it
     * still reaches the read: a waiting read's result nobody takes is released where it is made).
     */
    private CompletableFuture<ReadResult> charged(final CompletableFuture<ReadResult> future, final ReadBudget reader) {
        if (future.isDone()) {
            // The common case (a cache hit): charge now, no dependent future.
            if (!future.isCompletedExceptionally() && !future.isCancelled()) {
                future.join().charge(store, reader);
            }
            return future;
        }
        future.thenAccept(result -> result.charge(store, reader));
        return future;
    }

    /** Fails the reads waiting in the store's budget (the store is closing). */
    void close(final RuntimeException cause) {
        store.failWaiting(cause);
    }

    /** A read waiting for room in a budget. */
    private final class Waiting implements ReadBudget.Admission {
        private final ReadBudget reader;
        private final Supplier<CompletableFuture<ReadResult>> read;
        private final long since = System.nanoTime();
        final CompletableFuture<ReadResult> later = new CompletableFuture<>();

        Waiting(final ReadBudget reader, final Supplier<CompletableFuture<ReadResult>> read) {
            this.reader = reader;
            this.read = read;
        }

        @Override
        public boolean tryAdmit(final ReadBudget from) {
            if (later.isDone()) {
                // Cancelled by its caller meanwhile: nothing to read.
                return true;
            }
            final ReadBudget spent = spent(reader);
            if (spent == from) {
                return false;
            }
            if (spent != null) {
                // The reader's budget has room again, the store's not: wait there, in order.
                spent.enqueue(this);
                return true;
            }
            counters.readBudgetWaited(System.nanoTime() - since);
            final CompletableFuture<ReadResult> issued;
            try {
                issued = charged(read.get(), reader);
            } catch (final RuntimeException e) {
                later.completeExceptionally(e);
                return true;
            }
            issued.whenComplete((result, failure) -> {
                if (failure != null) {
                    later.completeExceptionally(failure);
                } else if (!later.complete(result)) {
                    result.close();
                }
            });
            return true;
        }

        @Override
        public void fail(final RuntimeException cause) {
            later.completeExceptionally(cause);
        }
    }
}
