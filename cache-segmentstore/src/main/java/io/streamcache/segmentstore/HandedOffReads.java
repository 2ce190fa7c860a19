package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A store's reads handed to its read-timeouts thread because they would otherwise wait for a
 * segment's lock on their caller's thread: thread-safe (a concurrent set of the futures not yet
 * completed). The thread's shutdown at close drops queued tasks, so the store's close fails the
 * reads still here with a {@link CacheClosedException} instead of leaving them pending forever.
 */
final class HandedOffReads {
    private final String storeName;
    private final IsolationCounters isolation;
    private final Executor executor;
    /** Reads handed to the executor and not yet completed. */
    private final Set<CompletableFuture<ReadResult>> pending = ConcurrentHashMap.newKeySet();

    HandedOffReads(final String storeName, final IsolationCounters isolation, final Executor executor) {
        this.storeName = storeName;
        this.isolation = isolation;
        this.executor = executor;
    }

    /**
     * Runs {@code read} on the store's read-timeouts thread and returns a future of its outcome
     * at once: the hand-off of a read that would wait for a segment's lock on its caller's
     * thread. A result nobody takes (the future was cancelled) is released.
     */
    CompletableFuture<ReadResult> handOff(final Supplier<CompletableFuture<ReadResult>> read) {
        isolation.readHandedOff();
        final CompletableFuture<ReadResult> later = new CompletableFuture<>();
        pending.add(later);
        later.whenComplete((result, failure) -> pending.remove(later));
        try {
            executor.execute(() -> {
                final CompletableFuture<ReadResult> issued;
                try {
                    issued = read.get();
                } catch (final RuntimeException e) {
                    later.completeExceptionally(e);
                    return;
                }
                issued.whenComplete((result, failure) -> {
                    if (failure != null) {
                        later.completeExceptionally(failure);
                    } else if (!later.complete(result)) {
                        result.close();
                    }
                });
            });
        } catch (final RejectedExecutionException e) {
            later.completeExceptionally(new CacheClosedException("segment store " + storeName + " is closed"));
        }
        return later;
    }

    /** Fails the reads handed off and not yet run; for the store's close, after the thread's shutdown. */
    void failPending() {
        for (final CompletableFuture<ReadResult> read : pending) {
            read.completeExceptionally(new CacheClosedException("segment store " + storeName + " closed before a handed-off read ran"));
        }
    }
}
