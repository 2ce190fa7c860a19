package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * A store's reads handed to its read-timeouts thread because they would otherwise wait for a
 * segment's lock on their caller's thread: thread-safe and lock-free, any number of threads
 * hand reads off at once. The thread's shutdown at close drops queued tasks, so the store's
 * close fails the reads still here with a {@link CacheClosedException} instead of leaving them
 * pending forever.
 *
 * <p><b>No garbage per hand-off but the caller's future.</b> A hand-off is a storm's common
 * case (a fill publishing holds the lock a reader tries), so it reuses its bookkeeping: each
 * read is carried by a {@link HandOff} taken from a pool of {@link #POOL} (made as first needed,
 * then reused), which holds the read's arguments (no capturing lambda), queues itself on an
 * intrusive list (no queue node), is its own completion callback, and is the record that the
 * close fails (no set entry). The thread is woken by one task per batch: the hand-off that
 * finds the list empty schedules the drain, which takes the whole list at once (the list of
 * Treiber's stack, taken whole as in Vyukov's intrusive MPSC queue, then reversed into arrival
 * order). Measured with {@code ReadHandOffBenchmark -prof gc}: see {@code docs/performance/isolation.md}, "What a handed-off read still allocates".
 * Beyond the pool's reads in flight, a hand-off makes a carrier of its own and records it in a
 * concurrent set, as every hand-off did before.
 *
 * <p>The free carriers are a stack of pool indices with a stamped head, as
 * {@code BufferStack}'s: the stamp makes a pop whose head is stale fail its compare-and-set
 * when the same carrier is on top again (the ABA case of a reused node).
 */
final class HandedOffReads {
    /** Carriers kept for reuse: reads handed off and not yet completed, beyond which a hand-off allocates its own. */
    static final int POOL = 1024;
    private static final VarHandle FREE_HEAD;
    private static final VarHandle BELOW = MethodHandles.arrayElementVarHandle(int[].class);
    private static final long POSITION_MASK = 0xFFFF_FFFFL;

    static {
        try {
            FREE_HEAD = MethodHandles.lookup().findVarHandle(HandedOffReads.class, "freeHead", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Issues a read handed off, on the read-timeouts thread: one of the store's read calls with
     * the arguments the carrier kept (those a call does not use are 0 or null).
     */
    @FunctionalInterface
    interface Issuer {
        CompletableFuture<ReadResult> issue(String name, Segment segment, long offset, int maxLength, long timeoutNanos,
                                            ReadBudget budget);
    }

    private final String storeName;
    private final IsolationCounters isolation;
    private final Executor executor;
    /** The carriers made so far, by pool index ({@code [0, made)}), written before their first push. */
    private final HandOff[] pool = new HandOff[POOL];
    /** Per pool index, the free carrier below it plus one (0: none), written with release. */
    private final int[] below = new int[POOL];
    /** Free carriers: a 32-bit stamp above the top's pool index plus one (0: empty). */
    @SuppressWarnings("unused") // through FREE_HEAD
    private volatile long freeHead;
    private final AtomicInteger made = new AtomicInteger();
    /** Reads handed off and not yet run, the last handed off first. */
    private final AtomicReference<HandOff> queued = new AtomicReference<>();
    /** Runs the queued reads on the thread; one object, scheduled once per batch. */
    private final Runnable drain = this::drain;
    /** Carriers beyond the pool not yet completed: the close fails them with the pool's. */
    private final Set<HandOff> overflow = ConcurrentHashMap.newKeySet();

    HandedOffReads(final String storeName, final IsolationCounters isolation, final Executor executor) {
        this.storeName = storeName;
        this.isolation = isolation;
        this.executor = executor;
    }

    /**
     * Issues {@code issuer} with these arguments on the store's read-timeouts thread and returns
     * a future of its outcome at once: the hand-off of a read that would wait for a segment's
     * lock on its caller's thread. A result nobody takes (the future was cancelled) is released.
     * Lock-free; allocates the returned future only while fewer than {@link #POOL} hand-offs
     * are in flight.
     */
    CompletableFuture<ReadResult> handOff(final Issuer issuer, final String name, final Segment segment, final long offset,
                                          final int maxLength, final long timeoutNanos, final ReadBudget budget) {
        isolation.readHandedOff();
        final CompletableFuture<ReadResult> later = new CompletableFuture<>();
        final HandOff carrier = take();
        carrier.issuer = issuer;
        carrier.name = name;
        carrier.segment = segment;
        carrier.offset = offset;
        carrier.maxLength = maxLength;
        carrier.timeoutNanos = timeoutNanos;
        carrier.budget = budget;
        carrier.later = later;
        // The carrier may run and be reused as soon as it is queued: only `later` from here on.
        HandOff top;
        do {
            top = queued.get();
            carrier.next = top;
        } while (!queued.compareAndSet(top, carrier));
        if (top == null) {
            try {
                executor.execute(drain);
            } catch (final RejectedExecutionException e) {
                failQueued();
            }
        }
        return later;
    }

    /** Fails the reads handed off and not yet completed; for the store's close, after the thread's shutdown. */
    void failPending() {
        failQueued();
        for (int i = 0, n = Math.min(made.get(), POOL); i < n; i++) {
            final HandOff carrier = pool[i];
            if (carrier != null) {
                failInFlight(carrier);
            }
        }
        for (final HandOff carrier : overflow) {
            failInFlight(carrier);
        }
    }

    private void failInFlight(final HandOff carrier) {
        final CompletableFuture<ReadResult> later = carrier.later;
        if (later != null) {
            // Its read completes later and finds the future failed: it releases the result.
            later.completeExceptionally(closedBeforeRun());
        }
    }

    /** Fails every read queued and not yet run (the thread is gone, or will not take them). */
    private void failQueued() {
        for (HandOff carrier = queued.getAndSet(null); carrier != null; ) {
            final HandOff next = carrier.next;
            carrier.next = null;
            finish(carrier, null, closedBeforeRun());
            carrier = next;
        }
    }

    private CacheClosedException closedBeforeRun() {
        return new CacheClosedException("segment store " + storeName + " closed before a handed-off read ran");
    }

    /** On the read-timeouts thread: issues every read queued, in the order they were handed off. */
    private void drain() {
        HandOff reversed = null;
        for (HandOff carrier = queued.getAndSet(null); carrier != null; ) {
            final HandOff next = carrier.next;
            carrier.next = reversed;
            reversed = carrier;
            carrier = next;
        }
        for (HandOff carrier = reversed; carrier != null; ) {
            final HandOff next = carrier.next;
            carrier.next = null;
            run(carrier);
            carrier = next;
        }
    }

    private void run(final HandOff carrier) {
        final CompletableFuture<ReadResult> issued;
        try {
            issued = carrier.issuer.issue(carrier.name, carrier.segment, carrier.offset, carrier.maxLength, carrier.timeoutNanos,
                carrier.budget);
        } catch (final RuntimeException e) {
            finish(carrier, null, e);
            return;
        }
        if (!issued.isDone()) {
            issued.whenComplete(carrier);
            return;
        }
        // Done already (a cached read, a failure found at once): its outcome read in place, as
        // whenComplete on a done future would give it, without the stage whenComplete makes.
        ReadResult result = null;
        Throwable failure = null;
        try {
            result = issued.join();
        } catch (final CompletionException e) {
            failure = e.getCause() != null ? e.getCause() : e;
        } catch (final CancellationException e) {
            failure = e;
        }
        finish(carrier, result, failure);
    }

    /** Completes a carrier's future with its read's outcome, the carrier back in the pool first. */
    private void finish(final HandOff carrier, final ReadResult result, final Throwable failure) {
        final CompletableFuture<ReadResult> later = carrier.later;
        carrier.issuer = null;
        carrier.name = null;
        carrier.segment = null;
        carrier.budget = null;
        carrier.later = null;
        give(carrier);
        if (failure != null) {
            later.completeExceptionally(failure);
        } else if (!later.complete(result)) {
            result.close();
        }
    }

    /** @return a free carrier: a pooled one, a new pooled one, or beyond the pool one of its own. */
    private HandOff take() {
        while (true) {
            final long h = (long) FREE_HEAD.getVolatile(this);
            final int top = (int) (h & POSITION_MASK);
            if (top == 0) {
                break;
            }
            final int under = (int) BELOW.getAcquire(below, top - 1);
            if (FREE_HEAD.compareAndSet(this, h, next(h, under))) {
                return pool[top - 1];
            }
        }
        while (true) {
            final int n = made.get();
            if (n >= POOL) {
                final HandOff own = new HandOff(-1);
                overflow.add(own);
                return own;
            }
            if (made.compareAndSet(n, n + 1)) {
                final HandOff fresh = new HandOff(n);
                // Read by failPending (a race with close fails a read that is about to be failed anyway).
                pool[n] = fresh;
                return fresh;
            }
        }
    }

    private void give(final HandOff carrier) {
        if (carrier.slot < 0) {
            overflow.remove(carrier);
            return;
        }
        final int id = carrier.slot + 1;
        while (true) {
            final long h = (long) FREE_HEAD.getVolatile(this);
            BELOW.setRelease(below, carrier.slot, (int) (h & POSITION_MASK));
            if (FREE_HEAD.compareAndSet(this, h, next(h, id))) {
                return;
            }
        }
    }

    /** The head after {@code h} with {@code id} (pool index + 1, or 0) on top and the stamp bumped. */
    private static long next(final long h, final int id) {
        return (((h >>> Integer.SIZE) + 1) << Integer.SIZE) | (id & POSITION_MASK);
    }

    /**
     * One read handed off: its arguments, its future, its link in the queue, and the callback of
     * the read it issued. Written by the handing-off thread before it is queued (the queue's
     * compare-and-set publishes it), then by the read-timeouts thread and the read's completing
     * thread, one after the other.
     */
    private final class HandOff implements BiConsumer<ReadResult, Throwable> {
        final int slot;
        Issuer issuer;
        String name;
        Segment segment;
        long offset;
        int maxLength;
        long timeoutNanos;
        ReadBudget budget;
        /** Read by failPending from the closing thread: volatile. */
        volatile CompletableFuture<ReadResult> later;
        HandOff next;

        HandOff(final int slot) {
            this.slot = slot;
        }

        @Override
        public void accept(final ReadResult result, final Throwable failure) {
            finish(this, result, failure);
        }
    }
}
