package io.streamcache.log.internal;

import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogFailedException;
import io.netty.buffer.ByteBuf;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

/**
 * One request to the {@link AggregatingWriter}, which is also its future: created by a producer
 * thread, handed to the writer thread through the request queue (whose offer publishes the
 * producer's plain writes), then to the completion thread, which applies it through the
 * {@link LogCommitHandler} it carries (set by whoever submitted it) and completes it. The
 * accessors may be read on any thread after the request is submitted; the fields without
 * accessors belong to the writer and completion threads.
 *
 * <p>The future completes with the request's {@link #segmentOffset()} once its record is in the
 * log as the {@link DurabilityPolicy} defines it (forced, by default), or exceptionally with a
 * {@link LogFailedException} or {@link io.streamcache.core.CacheClosedException}. Completing or
 * cancelling it from outside changes nothing in the log.
 *
 * <p><b>Allocation:</b> this object is all a producer allocates per request (about 80 bytes
 * with the future's fields); waiting on it with {@code join()} or {@code get()} adds the JDK's
 * small wait node, waiting with {@link #awaitDone()} adds nothing.
 *
 * <h2>Pooled requests</h2>
 * A synchronous caller (one that submits and then waits on its own thread) does not need a
 * future it can hand out, so it takes a <em>pooled</em> request ({@link PooledRequests}, two
 * per thread) and nothing is allocated per append. A pooled request is reused, so its
 * {@code CompletableFuture} side is never completed: its outcome is its own state, read after
 * {@link #awaitDone()} through {@link #isDone()} and {@link #failureCause()} (no boxed offset);
 * {@code join()}, {@code get()} and the dependent stages must not be used on it. Its life:
 * <pre>
 *  owner thread              writer thread               completion thread
 *  take() a free one
 *  reuse(...): free=false
 *  queue.offer (publishes) --&gt; batch, handoff(r)  --------&gt; complete: outcome (volatile), wake
 *  awaitDone, read outcome                                 ... later, when the next request is
 *                                                          handed over: moves past r (it was the
 *                                                          list's stub), unlinks it, free=true
 *  next take(): r again only if free (acquire)
 * </pre>
 * The completion list keeps the last completed request as its stub, and the writer links the
 * next request to it, so a request is not reusable when it completes but only once the
 * completion thread moved past it ({@link #released()}, a release store after its last touch);
 * the owner reads {@code free} with acquire before it reuses one. A request failed outside the
 * list (queued as the writer terminated) is freed by whoever failed it. Only the owner thread
 * takes and reuses its requests; every other thread only completes and frees them.
 */
public final class LogRequest extends CompletableFuture<Long> {
    /** Not a record: re-validates the log after a disk error. */
    static final byte TYPE_RECOVER = -1;
    /** Not a record: tells the completion thread to stop. */
    static final byte TYPE_STOP = -2;
    /** A DATA record with {@link LogRecordDescriptor#FLAG_COPY}: compaction moving bytes; no commit handler call. */
    static final byte TYPE_COPY = -3;
    /** Not a record: retires a file whose live data were copied (the file number is the segment offset). */
    static final byte TYPE_RETIRE = -4;
    /** Not a record: completes once every record accepted before it is written and forced. */
    static final byte TYPE_FORCE = -5;

    private static final VarHandle HANDOFF_NEXT;

    static {
        try {
            HANDOFF_NEXT = MethodHandles.lookup().findVarHandle(LogRequest.class, "handoffNext", LogRequest.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Pooled outcomes ({@link #outcome}). */
    private static final int PENDING = 0;
    private static final int SUCCEEDED = 1;
    private static final int FAILED = 2;

    // Set by the submitter before the queue's offer publishes them (a pooled request's owner
    // sets them again on reuse, only while it is free); read-only for the other threads.
    private byte type;
    private int segmentId;
    private long segmentOffset;
    private byte[] name;
    private Object attachment;
    /** Applies the outcome on the completion thread before the future completes. */
    private LogCommitHandler handler;
    /** The data of a DATA request; dropped once the request completes. */
    private ByteBuf data;
    private int length;
    /** The writer's epoch the producer saw healthy; a request of an older epoch fails. */
    long epoch;

    /** Reused through {@link PooledRequests}: its outcome is {@link #outcome}, its future never completes. */
    private final boolean pooled;
    /** Pooled: PENDING, SUCCEEDED or FAILED; written (release) by whoever completes it, after {@link #pooledFailure}. */
    private volatile int outcome;
    /** Pooled: why it failed; plain, published by the write of {@link #outcome}. */
    private Throwable pooledFailure;
    /**
     * Pooled: neither the writer nor the completion thread can reach it any more (it was never
     * submitted, or the completion thread moved past it): its owner may reuse it. Written true
     * with release after the last touch, read by the owner with acquire.
     */
    private volatile boolean free = true;

    // Writer thread.
    /** Stream position of the end of the request's last record: it completes once the log is durable up to here. */
    long endStream;
    /** Next request in the writer's pending list. */
    LogRequest next;
    /** Why the request failed; set by the writer before the hand-off, read by the completion thread after it. */
    Throwable failure;

    /** Next request handed to the completion thread: set with release by the writer, read with acquire by the completer. */
    @SuppressWarnings("unused")
    private volatile LogRequest handoffNext;

    /**
     * The thread in {@link #awaitDone()}, if any: written by it before it checks
     * {@link #isDone()}, read by whoever completes this after completing it (both volatile, so
     * one of the two sees the other).
     */
    private volatile Thread awaiting;

    LogRequest(final byte type, final int segmentId, final long segmentOffset, final ByteBuf data, final byte[] name,
               final Object attachment, final long epoch) {
        this(type, segmentId, segmentOffset, data, name, attachment, LogCommitHandler.NONE, epoch);
    }

    LogRequest(final byte type, final int segmentId, final long segmentOffset, final ByteBuf data, final byte[] name,
               final Object attachment, final LogCommitHandler handler, final long epoch) {
        this.pooled = false;
        this.type = type;
        this.handler = handler;
        this.segmentId = segmentId;
        this.segmentOffset = segmentOffset;
        this.data = data;
        this.length = data != null ? data.readableBytes() : 0;
        this.name = name;
        this.attachment = attachment;
        this.epoch = epoch;
    }

    /** A free pooled request, for {@link PooledRequests}. */
    private LogRequest() {
        this.pooled = true;
        this.type = TYPE_STOP;
        this.handler = LogCommitHandler.NONE;
    }

    static LogRequest newPooled() {
        return new LogRequest();
    }

    /**
     * Owner thread: makes a free pooled request a new DATA request (the queue's offer publishes
     * these writes to the writer).
     *
     * @throws IllegalStateException if it is not pooled or not free (still reachable by the
     *                               writer or the completion thread).
     */
    void reuse(final int segmentId, final long segmentOffset, final ByteBuf data, final Object attachment,
               final LogCommitHandler handler, final long epoch) {
        if (!pooled || !free) {
            throw new IllegalStateException("request reused while not free: " + this);
        }
        this.free = false;
        this.type = LogRecordDescriptor.TYPE_DATA;
        this.segmentId = segmentId;
        this.segmentOffset = segmentOffset;
        this.data = data;
        this.length = data.readableBytes();
        this.name = null;
        this.attachment = attachment;
        this.handler = handler;
        this.epoch = epoch;
        this.endStream = 0;
        this.next = null;
        this.failure = null;
        this.pooledFailure = null;
        this.outcome = PENDING;
    }

    /** @return whether this request is reused through {@link PooledRequests}. */
    public boolean isPooled() {
        return pooled;
    }

    /** @return pooled: whether its owner may reuse it now (acquire). */
    boolean isFree() {
        return free;
    }

    /**
     * Pooled: nothing in the log reaches this request any more (release, after the caller's last
     * touch); its owner may reuse it. A no-op on a request that is not pooled.
     */
    void released() {
        if (pooled) {
            free = true;
        }
    }

    /**
     * Completes with {@link #segmentOffset()}: a pooled request without boxing it.
     */
    void succeed() {
        if (pooled) {
            outcome = SUCCEEDED;
            wake();
        } else {
            complete(segmentOffset);
        }
    }

    /**
     * Completes exceptionally with {@code error}.
     */
    void fail(final Throwable error) {
        if (pooled) {
            pooledFailure = error;
            outcome = FAILED;
            wake();
        } else {
            completeExceptionally(error);
        }
    }

    /**
     * @return after {@link #awaitDone()} (or once {@link #isDone()}): why the request failed, or
     *         null if it succeeded (its value is then {@link #segmentOffset()}). Works on pooled
     *         requests and others alike; allocates nothing for a pooled one.
     */
    public Throwable failureCause() {
        if (pooled) {
            return outcome == FAILED ? pooledFailure : null;
        }
        if (!isCompletedExceptionally()) {
            return null;
        }
        try {
            join();
            return null;
        } catch (final java.util.concurrent.CompletionException e) {
            return e.getCause() != null ? e.getCause() : e;
        } catch (final java.util.concurrent.CancellationException e) {
            return e;
        }
    }

    /** A pooled request is done once its outcome is set; any other once its future is. */
    @Override
    public boolean isDone() {
        return pooled ? outcome != PENDING : super.isDone();
    }

    /**
     * @return the record type: one of {@link LogRecordDescriptor}'s {@code TYPE_*} (DATA, CREATE,
     *         SEAL, TRUNCATE, DELETE).
     */
    public byte type() {
        return type;
    }

    public int segmentId() {
        return segmentId;
    }

    /**
     * @return DATA: the offset of the data's first byte; SEAL: the final length; TRUNCATE: the
     *         new start offset; CREATE, DELETE: 0. Also the future's value.
     */
    public long segmentOffset() {
        return segmentOffset;
    }

    /**
     * @return DATA: the producer's buffer (its readable bytes are the data; the producer must not
     *         change them, nor release the buffer, before the future completes); null otherwise,
     *         and after completion.
     */
    public ByteBuf data() {
        return data;
    }

    /**
     * @return DATA: the data's length; 0 otherwise.
     */
    public int length() {
        return length;
    }

    /**
     * @return CREATE: the segment's name as UTF-8; null otherwise.
     */
    byte[] nameBytes() {
        return name;
    }

    /**
     * @return what the submitter attached (the store attaches its segment); may be null.
     */
    public Object attachment() {
        return attachment;
    }

    /**
     * @return what applies the outcome on the completion thread ({@link LogCommitHandler#NONE}
     *         if the submitter gave none).
     */
    LogCommitHandler handler() {
        return handler;
    }

    /**
     * Waits until the future is done, without allocating (unlike {@code join()}, which allocates
     * the JDK's wait node): for the one thread that submitted the request and waits for it; any
     * other thread uses the future's own methods. Interrupts do not end the wait (as with
     * {@code join()}); the thread's interrupt status is kept.
     */
    public void awaitDone() {
        if (isDone()) {
            return;
        }
        awaiting = Thread.currentThread();
        boolean interrupted = false;
        while (!isDone()) {
            LockSupport.park(this);
            interrupted |= Thread.interrupted();
        }
        awaiting = null;
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@inheritDoc}
     *
     * @throws UnsupportedOperationException on a pooled request: its future is never completed
     *                                       (it is reused), its outcome is its own state.
     */
    @Override
    public boolean complete(final Long value) {
        checkNotPooled();
        final boolean completed = super.complete(value);
        wake();
        return completed;
    }

    /** @throws UnsupportedOperationException on a pooled request (see {@link #complete(Long)}). */
    @Override
    public boolean completeExceptionally(final Throwable failure) {
        checkNotPooled();
        final boolean completed = super.completeExceptionally(failure);
        wake();
        return completed;
    }

    /** @throws UnsupportedOperationException on a pooled request (see {@link #complete(Long)}). */
    @Override
    public boolean cancel(final boolean mayInterruptIfRunning) {
        checkNotPooled();
        final boolean cancelled = super.cancel(mayInterruptIfRunning);
        wake();
        return cancelled;
    }

    private void checkNotPooled() {
        if (pooled) {
            throw new UnsupportedOperationException("a pooled log request is completed only by the log: " + this);
        }
    }

    /** After completion: unparks the thread in {@link #awaitDone()}, if there is one. A pooled request's owner ignores a late unpark (it re-checks). */
    private void wake() {
        final Thread thread = awaiting;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    /** @return a request that tells the completion thread to stop (also the hand-off list's stub). */
    static LogRequest stop() {
        return new LogRequest(TYPE_STOP, 0, 0, null, null, null, 0);
    }

    LogRequest handoffNextAcquire() {
        return (LogRequest)HANDOFF_NEXT.getAcquire(this);
    }

    void handoffNextRelease(final LogRequest next) {
        HANDOFF_NEXT.setRelease(this, next);
    }

    /** Drops the link to the next request: called by the completion thread once it moved past this one. */
    void clearHandoffNext() {
        HANDOFF_NEXT.set(this, null);
    }

    void dropData() {
        data = null;
    }

    private boolean failed() {
        return pooled ? outcome == FAILED : isCompletedExceptionally();
    }

    @Override
    public String toString() {
        return "LogRequest{" + (pooled ? "pooled, " : "") + "type=" + type + ", segmentId=" + segmentId + ", segmentOffset=" + segmentOffset + ", length=" + length
            + ", state=" + (isDone() ? (failed() ? "failed" : "done") : "pending") + (pooled ? ", free=" + free : "") + '}';
    }
}
