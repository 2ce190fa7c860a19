package io.streamcache.segmentstore.internal.log;

import io.streamcache.segmentstore.log.DurabilityPolicy;
import io.streamcache.segmentstore.log.LogFailedException;
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

    private final byte type;
    private final int segmentId;
    private final long segmentOffset;
    private final byte[] name;
    private final Object attachment;
    /** Applies the outcome on the completion thread before the future completes. */
    private final LogCommitHandler handler;
    /** The data of a DATA request; dropped once the request completes. */
    private ByteBuf data;
    private final int length;
    /** The writer's epoch the producer saw healthy; a request of an older epoch fails. */
    final long epoch;

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

    @Override
    public boolean complete(final Long value) {
        final boolean completed = super.complete(value);
        wake();
        return completed;
    }

    @Override
    public boolean completeExceptionally(final Throwable failure) {
        final boolean completed = super.completeExceptionally(failure);
        wake();
        return completed;
    }

    @Override
    public boolean cancel(final boolean mayInterruptIfRunning) {
        final boolean cancelled = super.cancel(mayInterruptIfRunning);
        wake();
        return cancelled;
    }

    /** After completion: unparks the thread in {@link #awaitDone()}, if there is one. */
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

    @Override
    public String toString() {
        return "LogRequest{type=" + type + ", segmentId=" + segmentId + ", segmentOffset=" + segmentOffset + ", length=" + length
            + ", state=" + (isDone() ? (isCompletedExceptionally() ? "failed" : "done") : "pending") + '}';
    }
}
