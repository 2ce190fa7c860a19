package io.streamcache.segmentstore;

import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A budget of read memory, thread-safe: the bytes that unreleased {@link ReadResult}s hold (the
 * cache entries they pin, or the log's bytes they carry) charged to it. Every store has one
 * ({@link SegmentStore.Builder#readBudget(long)}); a broker may make one per reader or per channel
 * ({@link #waiting}, {@link #failFast(String, long)}) and pass it to {@link SegmentStore#readAsync(String, long,
 * int, java.time.Duration, ReadBudget)} or {@link SegmentStore#readThrough(String, long, int,
 * ReadBudget)}.
 *
 * <p><b>Admission, not reservation.</b> A read is admitted while every budget it goes through
 * (the store's, and the reader's if it passes one) has room ({@link #used()} below
 * {@link #limit()}); its result is charged its length once it exists, and gives it back when its
 * reference count reaches zero. A budget therefore overshoots its limit by at most the reads it
 * admitted at once (each at most its {@code maxLength}), and a waiting read at the tail of a
 * segment holds nothing while it waits. This is the shape of Pulsar's limit on reads in flight
 * ({@code managedLedgerMaxReadsInFlightSizeInMB}) and of CacheLib's handles, which pin an item
 * only while a reader holds it.
 *
 * <p><b>Over budget.</b> A {@linkplain #waiting waiting} budget queues the read: its future
 * completes once results charged to the budget are released, in arrival order. Neither the
 * reading call nor the releasing one issues the queued reads: a release that makes room hands
 * them to the store's read-timeouts thread (a lock-free flag and one task), which issues them,
 * so that a {@code readAsync} or a {@code ReadResult.close} on a broker's event loop never runs
 * other readers' reads. A {@linkplain #failFast(String, long) fail-fast} budget fails the future at once with a
 * {@link ReadBudgetExceededException}. Either way only the reads of the budget that is spent
 * wait: a reader over its own budget never holds up another reader, and the store's budget
 * bounds them all.
 *
 * <p><b>A reader's share of the store's budget.</b> A store admits a reader's read only while
 * that reader holds less than half of the store's budget ({@link #READER_SHARE_DIVISOR}), whatever
 * its own limit: a reader whose own budget is as large as the store's (or larger) waits, or
 * fails if it is fail-fast, in its own queue once it holds half, and the other half stays for
 * every other reader. This is the fairness of a per-flow cap, as Linux's {@code tcp_mem} and
 * per-socket buffer limits keep one socket from taking the whole pool. Reads passed without a
 * budget of their own share the store's budget as one.
 */
public final class ReadBudget {
    /** A reader's budget is held, in a store, to the store's budget divided by this. */
    public static final int READER_SHARE_DIVISOR = 2;
    private final String name;
    private final long limit;
    private final boolean failFast;
    private final AtomicLong used = new AtomicLong();
    /** Releases so far: a drain whose oldest read did not fit loops again only if one came meanwhile. */
    private final AtomicLong releases = new AtomicLong();
    /** Reads waiting for room, oldest first; each returns false if it still found none (it is put back first). */
    private final ConcurrentLinkedDeque<Admission> queue = new ConcurrentLinkedDeque<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    /** Whether a drain has been handed to {@link #drainer} and has not started yet. */
    private final AtomicBoolean drainHandedOff = new AtomicBoolean();
    /** Runs the drains (the store's read-timeouts thread; the last store a read went through); null: inline. */
    private volatile Executor drainer;

    /** A read waiting in a budget's queue. */
    interface Admission {
        /**
         * @param from the budget whose queue it waited in.
         * @return whether the read went on (admitted, or moved to another budget's queue); false: put it back.
         */
        boolean tryAdmit(ReadBudget from);

        /** Fails the read (its store closed). */
        void fail(RuntimeException cause);
    }

    private ReadBudget(final String name, final long limit, final boolean failFast) {
        this.name = Objects.requireNonNull(name, "name");
        if (limit <= 0) {
            throw new IllegalArgumentException("limit=" + limit + " of read budget=" + name + " must be positive");
        }
        this.limit = limit;
        this.failFast = failFast;
    }

    /**
     * @return a budget of {@code limit} bytes whose reads wait for room when it is spent.
     * @throws IllegalArgumentException if {@code limit} is not positive.
     */
    public static ReadBudget waiting(final String name, final long limit) {
        return new ReadBudget(name, limit, false);
    }

    /**
     * @return a budget of {@code limit} bytes whose reads fail at once with a
     *         {@link ReadBudgetExceededException} when it is spent.
     * @throws IllegalArgumentException if {@code limit} is not positive.
     */
    public static ReadBudget failFast(final String name, final long limit) {
        return new ReadBudget(name, limit, true);
    }

    public String name() {
        return name;
    }

    /** @return the bytes above which no read is admitted. */
    public long limit() {
        return limit;
    }

    /** @return the bytes charged now (results not yet released). */
    public long used() {
        return used.get();
    }

    /** @return whether an over-budget read fails at once (else it waits). */
    public boolean isFailFast() {
        return failFast;
    }

    /** @return reads waiting for room now. */
    public int waitingReads() {
        return queue.size();
    }

    /** @return whether a read may be admitted now. */
    boolean hasRoom() {
        return used.get() < limit;
    }

    /** @return whether a read may be admitted now with this budget held to {@code cap} bytes (a store's share). */
    boolean hasRoom(final long cap) {
        return used.get() < Math.min(limit, cap);
    }

    /** Sets the executor the drains are handed to (a store's, on every read it admits through this budget). */
    void drainOn(final Executor executor) {
        if (drainer != executor) {
            drainer = executor;
        }
    }

    /** Charges {@code bytes} (a result that exists now), whether or not there is room. */
    void charge(final long bytes) {
        used.addAndGet(bytes);
    }

    /** Gives back {@code bytes}; the reads waiting that now fit are issued on the drainer, not here. */
    void release(final long bytes) {
        used.addAndGet(-bytes);
        releases.incrementAndGet();
        if (!queue.isEmpty()) {
            handOffDrain();
        }
    }

    /** Queues a read until there is room (never issued on this thread). */
    void enqueue(final Admission admission) {
        queue.addLast(admission);
        // Room may have returned between the caller's check and the queueing: no release would
        // see this read then.
        if (hasRoom()) {
            handOffDrain();
        }
    }

    /**
     * Hands a drain to the drainer unless one is handed off and not started: one task however
     * many releases, never a wait. Without a drainer (or if it refuses: its store closed) the
     * drain runs here.
     */
    private void handOffDrain() {
        final Executor executor = drainer;
        if (executor == null) {
            drain();
            return;
        }
        if (!drainHandedOff.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(() -> {
                // Cleared first: a release after this point hands off again, and the loop below
                // or the next task sees its room.
                drainHandedOff.set(false);
                drain();
            });
        } catch (final RejectedExecutionException e) {
            drainHandedOff.set(false);
            drain();
        }
    }

    /**
     * Admits waiting reads, oldest first, while there is room; one thread at a time (a read
     * admitted here may complete a future whose callback releases a result and comes back:
     * that call leaves the work to this loop).
     */
    private void drain() {
        while (hasRoom() && !queue.isEmpty()) {
            final long releasesBefore = releases.get();
            if (!draining.compareAndSet(false, true)) {
                return;
            }
            boolean refused = false;
            try {
                Admission next;
                while (hasRoom() && (next = queue.pollFirst()) != null) {
                    if (!next.tryAdmit(this)) {
                        queue.addFirst(next);
                        refused = true;
                        break;
                    }
                }
            } finally {
                draining.set(false);
            }
            if (refused && releases.get() == releasesBefore) {
                // The oldest read does not fit although this budget is under its limit (a
                // reader's budget is held to its share of the store's, below its own limit):
                // the next release drains again. Looping here instead spun the drainer (the
                // store's read-timeouts thread) at 100% for as long as the reader held its
                // results, and the timeouts and handed-off reads of every other reader waited.
                return;
            }
        }
    }

    /** Fails every read waiting here (the store that queued them closed). */
    void failWaiting(final RuntimeException cause) {
        Admission next;
        while ((next = queue.pollFirst()) != null) {
            next.fail(cause);
        }
    }

    @Override
    public String toString() {
        return "ReadBudget{name=" + name + ", limit=" + limit + ", used=" + used.get() + ", failFast=" + failFast + ", waiting="
            + queue.size() + '}';
    }
}
