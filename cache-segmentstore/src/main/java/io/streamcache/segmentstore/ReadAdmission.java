package io.streamcache.segmentstore;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Admits a store's asynchronous view reads through its {@link ReadBudget} and the reader's:
 * issues the read at once when both have room, queues it in the spent one (or fails it at once,
 * if that one is fail-fast), and charges each result to both budgets until it is released. See
 * {@link ReadBudget} for the contract.
 *
 * <p><b>Threading:</b> thread-safe. Never blocks: a read that must wait is a queued
 * {@link ReadBudget.Admission}, issued later by the thread that releases the result making room
 * (the read itself only takes a segment's lock briefly and completes or queues its future).
 */
final class ReadAdmission {
    private final ReadBudget store;
    private final IsolationCounters counters;

    ReadAdmission(final ReadBudget store, final IsolationCounters counters) {
        this.store = store;
        this.counters = counters;
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
        final ReadBudget spent = spent(reader);
        if (spent == null) {
            return charged(read.get(), reader);
        }
        if (spent.isFailFast()) {
            counters.readBudgetRefused();
            return CompletableFuture.failedFuture(new ReadBudgetExceededException(spent.name(), spent.limit(), spent.used()));
        }
        final Waiting waiting = new Waiting(reader, read);
        spent.enqueue(waiting);
        return waiting.later;
    }

    /** @return the budget without room (the reader's first), or null if both have room. */
    private ReadBudget spent(final ReadBudget reader) {
        if (reader != null && !reader.hasRoom()) {
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
