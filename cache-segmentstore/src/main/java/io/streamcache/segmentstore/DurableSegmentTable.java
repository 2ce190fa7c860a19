package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogCommitHandler;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.log.internal.LogRequest;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogFileLostException;
import io.streamcache.log.LogQueueFullException;

import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The durability layer of a store with a log: decorates the in-memory {@link SegmentTable}, so
 * that every change goes to the log first (write-ahead, through the {@link AggregatingWriter}
 * it starts and owns) and is applied to the table only once durable ({@link LogCommits}, on the
 * writer's completion thread, in log order). See <em>Durable appends</em> in
 * {@link SegmentStore}'s class comment for the flow and the contract.
 *
 * <pre>
 *  producer (segment lock held)                       completion thread (in log order)
 *    check (live, not sealing, not deleting,            LogCommits.committed(request):
 *      expected offset), admit (writer epoch)             segment lock: apply to the table
 *    reserve the offset, writer.append/seal/...           (append / gap, seal, truncate, delete)
 *    inFlight++                                           unlock; complete woken reads
 *  unlock; return (or wait for) the request     --&gt;     the request's future completes
 * </pre>
 *
 * <p><b>Threading:</b> thread-safe. A request is admitted and queued under its segment's lock,
 * so a segment's records reach the log in the order their offsets were reserved; what this
 * layer keeps of a segment (its {@link SegmentDurability}: the reserved end, the requests in
 * flight and their epoch, a SEAL or DELETE in flight) is guarded by that lock too. The synchronous
 * operations wait for their request's future with no lock held; the completion thread takes
 * segment locks but never waits for a producer. Nothing waits for the writer's queue under a
 * segment's lock: when the queue and its overflow are full the writer refuses at once
 * ({@link LogQueueFullException}, nothing reserved); {@link #appendAsync} and
 * {@link #createAsync} fail their future with it, the synchronous operations release the lock,
 * wait in {@link AggregatingWriter#awaitRoom()} and try again.
 *
 * <p><b>Garbage:</b> the synchronous {@link #append} waits with a pooled log request of its
 * thread ({@link AggregatingWriter#appendPooled}) and allocates nothing per append;
 * {@link #appendAsync} returns the request, a future of its own, allocated per append.
 */
final class DurableSegmentTable implements SegmentMutations {
    private final SegmentTable table;
    private final WaitingReads waiting;
    private final AggregatingWriter writer;
    /** Applies the log's outcomes; passed with every request (one object, nothing allocated per append). */
    private final LogCommits logCommits = new LogCommits();
    /** The table's live segments by name (a durable DELETE or a failed CREATE removes one). */
    private final SegmentMap.ByName segments;
    private final SegmentMap.ById segmentsById;
    private final LongAdder uncachedCommitBytes = new LongAdder();

    /**
     * Starts the writer over {@code directory}, after recovery restored {@code recovered} into
     * the table.
     *
     * @param feed told of every record once durable (the location indexes, then the builder's listener).
     */
    DurableSegmentTable(final SegmentTable table, final WaitingReads waiting, final LogDirectory directory,
                        final LogRecordListener feed, final RecoveredLog recovered, final StreamcacheThreads threads)
        throws IOException {
        this.table = table;
        this.waiting = waiting;
        this.segments = table.segments;
        this.segmentsById = table.segmentsById;
        this.writer = AggregatingWriter.start(directory, feed, recovered, threads);
    }

    AggregatingWriter writer() {
        return writer;
    }

    /**
     * @return bytes of durable appends that could not enter the cache (it was full) and became
     *         NOT_CACHED gaps.
     */
    long uncachedCommitBytes() {
        return uncachedCommitBytes.sum();
    }

    @Override
    public void create(final String name) {
        while (true) {
            final Segment segment = table.newSegment(name);
            final LogRequest request;
            try {
                request = createLogged(segment);
            } catch (final LogQueueFullException e) {
                // createLogged undid the segment under its lock; wait with none held.
                writer.awaitRoom();
                continue;
            }
            await(request);
            table.undoIfClosed(segment);
            return;
        }
    }

    @Override
    public CompletableFuture<Void> createAsync(final String name) {
        final Segment segment = table.newSegment(name);
        final LogRequest request;
        try {
            request = createLogged(segment);
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
        table.undoIfClosed(segment);
        return request.thenApply(ignored -> null);
    }

    /**
     * The CREATE goes to the log under the new segment's lock, taken before the segment is
     * published, so no append of it can be queued before its CREATE. Returns without waiting
     * for it: an append queued after it is acknowledged only once both are durable.
     */
    private LogRequest createLogged(final Segment segment) {
        final LogRequest request;
        segment.lock();
        try {
            // Both puts take no lock (SegmentMap): creations on many threads do not queue here.
            if (segments.putIfAbsent(segment) != null) {
                throw new SegmentExistsException(segment.name);
            }
            try {
                final Segment sameId = segmentsById.putIfAbsent(segment);
                if (sameId != null) {
                    throw new IllegalStateException("segment id=" + segment.id + " of new segment=" + segment.name
                        + " is still the id of segment=" + sameId.name);
                }
                final long epoch = writer.healthyEpoch();
                final SegmentDurability durability = durability(segment);
                request = writer.create(epoch, segment.id, segment.name, segment, logCommits);
                durability.submitted(epoch);
            } catch (final RuntimeException e) {
                segments.remove(segment.name, segment);
                segmentsById.remove(segment);
                segment.deleteLocked(false);
                throw e;
            }
        } finally {
            segment.unlock();
        }
        return request;
    }

    /**
     * Waits for the append on this thread with a pooled log request (no future, no boxed
     * offset, no wait node: nothing allocated per append), and throws what the future of
     * {@link #appendAsync} would fail with.
     */
    @Override
    public long append(final String name, final long expectedOffset, final ByteBuf data) {
        final int length = checkAppendLength(name, data);
        final Segment segment = table.segment(name);
        while (true) {
            LogRequest request = null;
            segment.lock();
            try {
                final SegmentDurability durability = checkLogged(segment);
                final long offset = reserveAppend(segment, durability, expectedOffset, length);
                if (length == 0) {
                    return offset;
                }
                final long epoch = admit(segment, durability);
                try {
                    request = writer.appendPooled(epoch, segment.id, offset, data, segment, logCommits);
                } catch (final LogQueueFullException e) {
                    // Nothing was reserved: wait for the writer below, with the lock released.
                }
                if (request != null) {
                    durability.appendSubmitted(offset + length, epoch);
                }
            } finally {
                segment.unlock();
            }
            if (request != null) {
                return awaitPooled(request);
            }
            writer.awaitRoom();
        }
    }

    @Override
    public CompletableFuture<Long> appendAsync(final String name, final long expectedOffset, final ByteBuf data) {
        final int length = checkAppendLength(name, data);
        final Segment segment;
        try {
            segment = table.segment(name);
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
        segment.lock();
        try {
            final SegmentDurability durability = checkLogged(segment);
            final long offset = reserveAppend(segment, durability, expectedOffset, length);
            if (length == 0) {
                return CompletableFuture.completedFuture(offset);
            }
            final long epoch = admit(segment, durability);
            final LogRequest request = writer.append(epoch, segment.id, offset, data, segment, logCommits);
            durability.appendSubmitted(offset + length, epoch);
            return request;
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            segment.unlock();
        }
    }

    private int checkAppendLength(final String name, final ByteBuf data) {
        final int length = data.readableBytes();
        if (length > writer.maxAppendLength()) {
            throw new SegmentAppendTooLongException(name, length, writer.maxAppendLength());
        }
        return length;
    }

    /**
     * Under the segment's lock, once {@link #checkLogged}: checks that an append of
     * {@code length} bytes may go at {@code expectedOffset} (or the end), and returns the offset
     * it goes to. Changes nothing.
     */
    private static long reserveAppend(final Segment segment, final SegmentDurability durability, final long expectedOffset,
                                      final int length) {
        if (segment.sealed || durability.sealRequest() != null) {
            throw new SegmentSealedException(segment.name, durability.reservedLength());
        }
        SegmentTable.checkLength(segment, expectedOffset, durability.reservedLength());
        final long offset = durability.reservedLength();
        if (length > Long.MAX_VALUE - offset) {
            throw new IllegalArgumentException("length=" + length + " would take segment=" + segment.name
                + " past Long.MAX_VALUE, offset=" + offset);
        }
        return offset;
    }

    /**
     * Waits for a pooled request on its owner thread and reads its outcome before returning
     * (the request is reused by this thread's next synchronous append); rethrows like
     * {@link #await}.
     */
    private static long awaitPooled(final LogRequest request) {
        request.awaitDone();
        final Throwable cause = request.failureCause();
        if (cause == null) {
            return request.segmentOffset();
        }
        throw rethrown(cause, null);
    }

    @Override
    public long seal(final String name) {
        while (true) {
            try {
                return sealLogged(table.segment(name));
            } catch (final LogQueueFullException e) {
                writer.awaitRoom();
            }
        }
    }

    private long sealLogged(final Segment segment) {
        final LogRequest request;
        segment.lock();
        try {
            final SegmentDurability durability = checkLogged(segment);
            if (segment.sealed) {
                return segment.length;
            }
            if (durability.sealRequest() != null) {
                request = durability.sealRequest();
            } else {
                final long epoch = admit(segment, durability);
                request = writer.seal(epoch, segment.id, durability.reservedLength(), segment, logCommits);
                durability.sealSubmitted(request, epoch);
            }
        } finally {
            segment.unlock();
        }
        return await(request);
    }

    @Override
    public void truncate(final String name, final long offset) {
        while (true) {
            try {
                truncateLogged(table.segment(name), offset);
                return;
            } catch (final LogQueueFullException e) {
                writer.awaitRoom();
            }
        }
    }

    private void truncateLogged(final Segment segment, final long offset) {
        final LogRequest request;
        segment.lock();
        try {
            final SegmentDurability durability = checkLogged(segment);
            if (offset > segment.length) {
                throw new IllegalArgumentException("offset=" + offset + " is past length=" + segment.length + " of segment="
                    + segment.name);
            }
            if (offset <= segment.startOffset) {
                return;
            }
            final long epoch = admit(segment, durability);
            request = writer.truncate(epoch, segment.id, offset, segment, logCommits);
            durability.submitted(epoch);
        } finally {
            segment.unlock();
        }
        await(request);
    }

    @Override
    public void delete(final String name) {
        table.ensureOpen();
        while (true) {
            try {
                deleteLogged(table.segment(name));
                return;
            } catch (final LogQueueFullException e) {
                writer.awaitRoom();
            }
        }
    }

    private void deleteLogged(final Segment segment) {
        final LogRequest request;
        segment.lock();
        try {
            final SegmentDurability durability = checkLogged(segment);
            final long epoch = admit(segment, durability);
            request = writer.delete(epoch, segment.id, segment, logCommits);
            durability.deleteSubmitted(epoch);
        } finally {
            segment.unlock();
        }
        await(request);
    }

    /**
     * Under the segment's lock: the segment is live and not being deleted.
     *
     * @return its durability record.
     */
    private static SegmentDurability checkLogged(final Segment segment) {
        segment.checkLive();
        final SegmentDurability durability = durability(segment);
        if (durability.deleting()) {
            throw new SegmentNotFoundException(segment.name, "is being deleted");
        }
        return durability;
    }

    /**
     * Under the segment's lock: its durability record, made the first time. A segment without
     * one has never had a request logged by this layer (a new one, or one recovered from the
     * log), so nothing of it is in flight and its length is where the next append goes. One
     * object per segment, never per append.
     */
    private static SegmentDurability durability(final Segment segment) {
        SegmentDurability durability = segment.durability;
        if (durability == null) {
            durability = new SegmentDurability(segment.length);
            segment.durability = durability;
        }
        return durability;
    }

    /**
     * Under the segment's lock: the end of the offsets handed to appends, durable or still in
     * flight; the segment's length if this layer never logged a change of it (or there is no log).
     */
    static long reservedLength(final Segment segment) {
        final SegmentDurability durability = segment.durability;
        return durability != null ? Math.max(segment.length, durability.reservedLength()) : segment.length;
    }

    /**
     * With a log: the writer's epoch to submit in, if it accepts requests and the segment has
     * none in flight from an earlier epoch (their failures give offsets back, which must happen
     * before new offsets are reserved). The caller holds the segment's lock.
     */
    private long admit(final Segment segment, final SegmentDurability durability) {
        final long epoch = writer.healthyEpoch();
        if (durability.inFlightBefore(epoch)) {
            throw new LogFailedException("segment=" + segment.name + " still has " + durability.inFlight()
                + " log requests in flight from before the log failed; retry once they have failed", writer.lastFailure());
        }
        return epoch;
    }

    /**
     * Waits for a log request; rethrows its failure (a {@link LogFailedException} wrapped anew,
     * so the stack shows the waiting caller).
     */
    private static long await(final CompletableFuture<Long> request) {
        try {
            return request.join();
        } catch (final CompletionException e) {
            throw rethrown(e.getCause(), e);
        } catch (final CancellationException e) {
            throw new CacheClosedException("log request cancelled: " + e.getMessage());
        }
    }

    /**
     * @return what to throw for a request that failed with {@code cause}: a
     *         {@link LogFailedException} anew (so the stack shows the waiting caller), another
     *         unchecked one as it is, anything else wrapped ({@code wrapped} if given).
     */
    private static RuntimeException rethrown(final Throwable cause, final CompletionException wrapped) {
        if (cause instanceof LogFileLostException) {
            throw new LogFileLostException(cause.getMessage(), cause.getCause() != null ? cause.getCause() : cause);
        }
        if (cause instanceof LogFailedException) {
            throw new LogFailedException(cause.getMessage(), cause.getCause() != null ? cause.getCause() : cause);
        }
        if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause;
        }
        if (cause instanceof Error) {
            throw (Error) cause;
        }
        throw wrapped != null ? wrapped : new CompletionException(cause);
    }

    /** For {@link LogCommits}: completes the waiters a commit took out of the queue. */
    private void complete(final Segment segment, final Waiter woken) {
        waiting.complete(segment, woken);
    }

    /** For {@link LogCommits}: deletes a segment already out of the table by name. */
    private void deleteSegment(final Segment segment, final boolean storeClosed) {
        table.deleteSegment(segment, storeClosed);
    }

    /**
     * Applies the log's outcomes to the segments: on the writer's completion thread, in log
     * order. Takes the segment's lock; never waits for the writer.
     */
    private final class LogCommits implements LogCommitHandler {
        @Override
        public void committed(final LogRequest request) {
            final Segment segment = (Segment) request.attachment();
            Waiter woken = null;
            boolean deleted = false;
            segment.lock();
            try {
                segment.durability.completed();
                if (segment.deleted) {
                    return;
                }
                switch (request.type()) {
                    case LogRecordDescriptor.TYPE_DATA:
                        if (request.segmentOffset() != segment.length) {
                            throw new IllegalStateException("durable append at offset=" + request.segmentOffset() + " but segment="
                                + segment.name + " has length=" + segment.length);
                        }
                        // Never waits for memory here: a full cache is made room in with the
                        // lock released, once, and then the bytes become a gap (the log has them).
                        if (!segment.commitWithoutWaitLocked(request.data())) {
                            if (segment.deleted) {
                                return;
                            }
                            uncachedCommitBytes.add(request.length());
                        }
                        woken = segment.takeWaiters(segment.length);
                        break;
                    case LogRecordDescriptor.TYPE_SEAL:
                        segment.durability.sealDone();
                        woken = segment.sealLocked();
                        break;
                    case LogRecordDescriptor.TYPE_TRUNCATE:
                        segment.truncateLocked(request.segmentOffset());
                        break;
                    case LogRecordDescriptor.TYPE_DELETE:
                        deleted = true;
                        break;
                    default:
                        break;
                }
            } finally {
                segment.unlock();
            }
            if (woken != null) {
                complete(segment, woken);
            }
            if (deleted) {
                segments.remove(segment.name, segment);
                deleteSegment(segment, false);
            }
        }

        @Override
        public void failed(final LogRequest request, final Throwable cause) {
            final Segment segment = (Segment) request.attachment();
            boolean remove = false;
            segment.lock();
            try {
                final SegmentDurability durability = segment.durability;
                durability.completed();
                switch (request.type()) {
                    case LogRecordDescriptor.TYPE_DATA:
                        durability.appendFailed(request.segmentOffset());
                        break;
                    case LogRecordDescriptor.TYPE_CREATE:
                        remove = !segment.deleted;
                        break;
                    case LogRecordDescriptor.TYPE_SEAL:
                        durability.sealDone();
                        break;
                    case LogRecordDescriptor.TYPE_DELETE:
                        durability.deleteFailed();
                        break;
                    default:
                        break;
                }
            } finally {
                segment.unlock();
            }
            if (remove) {
                segments.remove(segment.name, segment);
                deleteSegment(segment, false);
            }
        }
    }
}
