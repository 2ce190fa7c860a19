package io.streamcache.segmentstore;

import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedDeque;
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
 * completes once results charged to the budget are released (on the releasing thread, which
 * then issues the read: a call that never blocks), in arrival order. A {@linkplain #failFast(String, long)
 * fail-fast} budget fails the future at once with a {@link ReadBudgetExceededException}. Either
 * way only the reads of the budget that is spent wait: a reader over its own budget never holds
 * up another reader, and the store's budget bounds them all.
 */
public final class ReadBudget {
    private final String name;
    private final long limit;
    private final boolean failFast;
    private final AtomicLong used = new AtomicLong();
    /** Reads waiting for room, oldest first; each returns false if it still found none (it is put back first). */
    private final ConcurrentLinkedDeque<Admission> queue = new ConcurrentLinkedDeque<>();
    private final AtomicBoolean draining = new AtomicBoolean();

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

    /** Charges {@code bytes} (a result that exists now), whether or not there is room. */
    void charge(final long bytes) {
        used.addAndGet(bytes);
    }

    /** Gives back {@code bytes} and admits the reads waiting that now fit. */
    void release(final long bytes) {
        used.addAndGet(-bytes);
        if (!queue.isEmpty()) {
            drain();
        }
    }

    /** Queues a read until there is room (it may run at once, on this thread, if room returned meanwhile). */
    void enqueue(final Admission admission) {
        queue.addLast(admission);
        // Room may have returned between the caller's check and the queueing: no release would
        // see this read then.
        if (hasRoom()) {
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
            if (!draining.compareAndSet(false, true)) {
                return;
            }
            try {
                Admission next;
                while (hasRoom() && (next = queue.pollFirst()) != null) {
                    if (!next.tryAdmit(this)) {
                        queue.addFirst(next);
                        break;
                    }
                }
            } finally {
                draining.set(false);
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
