package io.streamcache.log.internal;

import io.streamcache.core.internal.concurrent.Waits;
import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.internal.recovery.Checkpointer;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogQueueFullException;
import io.streamcache.log.LogFileLostException;
import io.streamcache.log.LogWriterMXBean;
import io.streamcache.log.WriterStats;

import javax.management.ObjectName;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_CREATE;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DELETE;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_SEAL;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_TRUNCATE;

/**
 * Group commit of many producers' records into a log: thread-safe; any number of producer
 * threads submit requests, one writer thread writes them, one completion thread completes them.
 *
 * <h2>Why</h2>
 * An append is acknowledged only once it is on disk, and forcing each small append alone runs
 * at the disk's force rate (about 9k 4 KB writes+fdatasync per second on this project's
 * machines) whatever its size. A writer that gathers every producer's pending appends into one
 * large write and one force pays that cost once per batch: throughput approaches the disk's
 * bandwidth for large batches, and for small appends the appends per second multiply by the
 * batch's request count (the RocketMQ-on-PMEM contest design: aggregation, 4K alignment, pre-written files).
 *
 * <h2>Threads and pieces</h2>
 * <pre>
 *  producer threads (any number)                                  AggregatingWriter (this class)
 *   | store: segment lock; offset reserved; the request (which is the future, and carries the
 *   |        store's commit handler) built
 *   | queue.offer(request); unpark the writer if it sleeps; unlock; wait on the future
 *   v
 *  [ MPSC queue: jctools MpscArrayQueue, bounded; an overflow of the same capacity behind it ]
 *   |
 *   v
 *  writer thread (one)                                            BatchWriter
 *   | drain into the batch buffer: header + payload, CRC32C        RecordBatch
 *   | pwrite(batch) once; fdatasync once (EVERY_BATCH)             LogRoller (files, segment table)
 *   |   (forcesInFlight N &gt; 1: the fdatasync on one of N forcing       ForceStage
 *   |    threads while the writer writes the next batches)
 *   | durable records: segment table, listener (location index); dead files retired
 *   | durable requests linked, in order, to the completion list; unpark the completer
 *   v
 *  [ intrusive linked list of requests: never blocks the writer ]
 *   |
 *   v
 *  completion thread (one)                                        Completer
 *   | per request, in submission order: r.handler().committed(r), r.complete(offset)
 *   |   (or r.handler().failed(r, e), r.completeExceptionally(e))
 *   v
 *  the producer wakes up
 *
 *  log directory thread: keeps spare files pre-written; deletes (or recycles) retired files
 *  counters: WriterCounters, read through stats() and the LogWriter MXBean
 * </pre>
 * Producers never wait for the writer or the completion thread. When the queue
 * ({@link LogConfig#queueCapacity()}) is full a request goes to the overflow behind it, which
 * keeps the order ({@link RequestQueue}); when that is full too, the record-submitting methods
 * ({@code append}, {@code appendPooled}, {@code create}, {@code seal}, {@code truncate},
 * {@code delete}) throw {@link LogQueueFullException} at once, nothing queued, so that a caller
 * holding a lock never waits under it; a synchronous caller releases its lock, waits in
 * {@link #awaitRoom()} and retries. {@link #copy}, {@link #retireFile}, {@link #force()} and
 * {@link #recover()}, called with no lock held, wait for room instead (spin briefly, then park
 * 50 us at a time). The writer never
 * waits for the completion thread, and never calls into the code that submitted a request: it
 * completes what the request carries. Batching, alignment and disk errors are described in
 * {@link BatchWriter}, the batch buffer and long appends in {@link RecordBatch}, files in
 * {@link LogRoller}, completion in {@link Completer}. The threads are created through the
 * {@link StreamcacheThreads} given to {@link #start(LogDirectory, LogRecordListener, RecoveredLog, StreamcacheThreads)}
 * (roles {@code LOG_WRITER}, {@code LOG_COMPLETER}, {@code LOG_FORCER} with
 * {@link LogConfig#forcesInFlight()} above 1, and {@code LOG_FILES} for the directory).
 *
 * <h2>Disk errors</h2>
 * A failed write or force fails the writer: it rejects new requests ({@link #healthyEpoch()}
 * throws) until {@link #recover()} succeeds, or the writer's own retry every
 * {@link LogConfig#retryInterval()} (1 s by default) does (counted in
 * {@link #automaticRecoveries()}). See {@link BatchWriter}.
 *
 * <h2>Garbage</h2>
 * Per request a producer allocates the {@link LogRequest}, which is its future (about 80 bytes);
 * waiting on it adds the JDK's wait node, unless it waits with {@link LogRequest#awaitDone()}.
 * A synchronous append ({@link #appendPooled}) allocates nothing: its request is one of the
 * thread's two pooled ones, and completes without a boxed offset. The commit handler is the submitter's long-lived
 * object, passed by reference. The writer thread allocates nothing per request or per batch (the
 * batch buffer, the CRC, the record arrays are pre-allocated; the table's maps allocate when a
 * segment or file is added). The completion thread allocates the boxed offset each future (not
 * pooled) completes with (a {@code Long} beyond the small-value cache) and whatever the futures'
 * dependents allocate. Rolls, failures and recovery allocate.
 *
 * <h2>Appends are atomic records</h2>
 * One append is one record, so it is in the log whole or not at all: an append may be at most
 * {@link #maxAppendLength()} bytes ({@link LogConfig#maxAppendLength()}: 16 MiB by default); one
 * longer than a batch is written alone with the records before it ({@link RecordBatch}). A
 * SNAPSHOT leaves room for one such record in every file, and recovery's torn-write window and
 * the zeroing of a resumed tail cover one such write. A segment name may be at most
 * {@link #MAX_NAME_LENGTH} bytes of UTF-8.
 */
public final class AggregatingWriter implements AutoCloseable {
    /** Longest segment name, in UTF-8 bytes: a CREATE record must fit in a page. */
    public static final int MAX_NAME_LENGTH = PAGE_LENGTH - HEADER_LENGTH;

    private static final long PRODUCER_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final String name;
    private final LogDirectory directory;
    private final int maxPayload;
    private final RequestQueue queue;
    private final int queueCapacity;
    private final WriterCounters counters = new WriterCounters();
    private final LogRoller files;
    private final Completer completer;
    private final BatchWriter writer;
    private final ObjectName objectName;
    /** Writes the recovery checkpoint after rolls, if {@link LogConfig#checkpointFiles()} is positive; else null. */
    private final Checkpointer checkpointer;
    private boolean closeCalled;

    private AggregatingWriter(final LogDirectory directory, final LogRecordListener listener, final RecoveredLog recovered,
                              final StreamcacheThreads threads) throws IOException {
        final LogConfig config = directory.config();
        this.name = directory.name();
        this.directory = directory;
        this.maxPayload = config.maxAppendLength();
        this.queue = new RequestQueue(config.queueCapacity());
        this.queueCapacity = config.queueCapacity();
        final RecordBatch batch = new RecordBatch(config.bufferCapacity());
        // The table seeded beside the store's restore, if the opening prepared one from this recovery.
        final PreparedSegmentTable prepared = recovered.takeWriterTable();
        this.files = new LogRoller(directory, Objects.requireNonNull(listener, "listener"), counters, batch,
            prepared != null ? prepared.table() : new LogSegmentTable());
        this.completer = new Completer(name, counters, threads);
        this.writer = new BatchWriter(name, config, queue, batch, files, completer, counters, threads);

        // The live segments, then every recovered file's data ends (segment-major: LogSegmentTable.seed).
        if (prepared == null) {
            files.table().seed(recovered.liveSegments(), recovered.files());
        }
        if (recovered.hasTail()) {
            // Writes only what differs on disk: nothing after a clean close (the mark stays until
            // that succeeded, so a failed open leaves it), the torn span after a crash.
            files.resume(recovered.tailFileNumber(), recovered.tailEndPosition());
            directory.beginWriting();
        } else {
            directory.beginWriting();
            files.roll();
        }
        counters.bufferedBytes = batch.used();

        // Set before the writer thread starts: the roller reads it there.
        this.checkpointer = config.checkpointFiles() > 0 ? Checkpointer.start(config, threads, name) : null;
        if (checkpointer != null) {
            files.onRoll(checkpointer::fileStarted);
        }
        try {
            directory.start(threads);
            completer.start();
            writer.start();
        } catch (final RuntimeException | Error e) {
            if (checkpointer != null) {
                checkpointer.close();
            }
            throw e;
        }
        this.objectName = config.registerMBeans() ? LogMBeans.register("LogWriter", name, new MXBeanAdapter(this)) : null;
    }

    /**
     * Starts a writer on a directory: continues the log at the recovered tail, or starts a new
     * file (numbered after any file in the directory) if recovery set none. The positioning
     * (reopening and zeroing the tail, or creating the first file and writing its SNAPSHOT) runs
     * on the calling thread; then the writer, completion and directory threads start, created by
     * {@code threads}, and the writer's MBean is registered (if the config says so).
     *
     * @param listener  observes durable records, on the writer thread.
     * @param recovered the state to start from: its live segments (for the snapshots), its files'
     *                  data ends, its tail.
     * @param threads   creates the writer, completion and directory threads.
     * @throws IOException if the first file cannot be created or the tail cannot be rewritten.
     */
    public static AggregatingWriter start(final LogDirectory directory, final LogRecordListener listener,
                                          final RecoveredLog recovered, final StreamcacheThreads threads) throws IOException {
        return new AggregatingWriter(directory, listener, recovered, Objects.requireNonNull(threads, "threads"));
    }

    /**
     * {@link #start(LogDirectory, LogRecordListener, RecoveredLog, StreamcacheThreads)} with
     * {@link StreamcacheThreads#defaults()}.
     */
    public static AggregatingWriter start(final LogDirectory directory, final LogRecordListener listener,
                                          final RecoveredLog recovered) throws IOException {
        return start(directory, listener, recovered, StreamcacheThreads.defaults());
    }

    /**
     * Starts a writer with no listener on a new log (after any file in the directory): the
     * futures (and the handlers given with the requests) alone report the outcomes.
     */
    public static AggregatingWriter start(final LogDirectory directory) throws IOException {
        return start(directory, LogRecordListener.NONE, RecoveredLog.empty());
    }

    // ------------------------------------------------------------------------------------------
    // Producers
    // ------------------------------------------------------------------------------------------

    /**
     * @return the current epoch, to pass to the submitting methods, if the writer accepts
     *         requests; a request submitted with it fails if the writer fails meanwhile.
     * @throws LogFailedException   if the writer is failed (the cause is the disk error).
     * @throws CacheClosedException if the writer is closing.
     */
    public long healthyEpoch() {
        if (writer.closing) {
            throw new CacheClosedException("log writer " + name + " is closed");
        }
        final long current = writer.state;
        if ((current & BatchWriter.FAILED) != 0) {
            final LogFailedException error = writer.failure;
            if (error instanceof LogFileLostException) {
                throw new LogFileLostException("log " + name + " lost its current file and rejects requests: " + error.getMessage(),
                    error.getCause());
            }
            throw new LogFailedException("log " + name + " is failed and rejects requests until it recovers (it retries by itself"
                + " every retryInterval, or call recover()); it failed with: "
                + (error != null && error.getCause() != null ? error.getCause() : error), error != null ? error.getCause() : null);
        }
        return current >>> 1;
    }

    /**
     * Submits a DATA record: the readable bytes of {@code data} (its indices are not moved) at
     * {@code segmentOffset} of the segment. The producer must not change those bytes, nor
     * release the buffer, before the future completes.
     *
     * @param epoch      from {@link #healthyEpoch()}.
     * @param attachment handed back through {@link LogRequest#attachment()}; may be null.
     * @param handler    applies the outcome on the completion thread before the future completes.
     * @return the request, which is the future: completes with {@code segmentOffset}.
     * @throws IllegalArgumentException if the data is longer than {@link #maxAppendLength()}.
     * @throws LogQueueFullException   if the queue and its overflow are full (nothing queued; never waits).
     * @throws CacheClosedException     if the writer is closing.
     */
    public LogRequest append(final long epoch, final int segmentId, final long segmentOffset, final ByteBuf data,
                             final Object attachment, final LogCommitHandler handler) {
        checkAppend(data, handler);
        return submit(new LogRequest(TYPE_DATA, segmentId, segmentOffset, data, null, attachment, handler, epoch));
    }

    /** The checks both appends make before anything is queued. */
    private void checkAppend(final ByteBuf data, final LogCommitHandler handler) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(handler, "handler");
        if (data.readableBytes() > maxPayload) {
            throw new IllegalArgumentException("length=" + data.readableBytes() + " is more than maxAppendLength=" + maxPayload
                + " of log " + name);
        }
    }

    /**
     * {@link #append(long, int, long, ByteBuf, Object, LogCommitHandler)} with a pooled request
     * of the calling thread ({@link PooledRequests}): nothing is allocated. For a caller that
     * waits for it on this thread with {@link LogRequest#awaitDone()}, then reads its outcome
     * ({@link LogRequest#failureCause()}, else {@link LogRequest#segmentOffset()}) before it
     * submits anything else: the request is reused afterwards, and its future never completes
     * (do not hand it out, join it or chain on it).
     *
     * @throws IllegalArgumentException if the data is longer than {@link #maxAppendLength()}.
     * @throws LogQueueFullException   if the queue and its overflow are full (nothing queued; never waits).
     * @throws CacheClosedException     if the writer is closing.
     */
    public LogRequest appendPooled(final long epoch, final int segmentId, final long segmentOffset, final ByteBuf data,
                                   final Object attachment, final LogCommitHandler handler) {
        checkAppend(data, handler);
        final LogRequest request = PooledRequests.current().take();
        request.reuse(segmentId, segmentOffset, data, attachment, handler, epoch);
        try {
            return submit(request);
        } catch (final RuntimeException | Error e) {
            // submit throws only before the offer: nothing else ever saw the request.
            request.dropData();
            request.released();
            throw e;
        }
    }

    /**
     * {@link #append(long, int, long, ByteBuf, Object, LogCommitHandler)} with no handler.
     */
    public LogRequest append(final long epoch, final int segmentId, final long segmentOffset, final ByteBuf data,
                             final Object attachment) {
        return append(epoch, segmentId, segmentOffset, data, attachment, LogCommitHandler.NONE);
    }

    /**
     * {@link #append(long, int, long, ByteBuf, Object)} in the current epoch.
     *
     * @throws LogFailedException if the writer is failed.
     */
    public LogRequest append(final int segmentId, final long segmentOffset, final ByteBuf data) {
        return append(healthyEpoch(), segmentId, segmentOffset, data, null);
    }

    /**
     * Submits a CREATE record.
     *
     * @throws IllegalArgumentException if the name is longer than {@link #MAX_NAME_LENGTH} bytes of UTF-8.
     */
    public LogRequest create(final long epoch, final int segmentId, final String segmentName, final Object attachment,
                             final LogCommitHandler handler) {
        Objects.requireNonNull(handler, "handler");
        final byte[] bytes = segmentName.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("segment name of " + bytes.length + " UTF-8 bytes is longer than " + MAX_NAME_LENGTH);
        }
        return submit(new LogRequest(TYPE_CREATE, segmentId, 0, null, bytes, attachment, handler, epoch));
    }

    /** {@link #create(long, int, String, Object, LogCommitHandler)} with no handler. */
    public LogRequest create(final long epoch, final int segmentId, final String segmentName, final Object attachment) {
        return create(epoch, segmentId, segmentName, attachment, LogCommitHandler.NONE);
    }

    /**
     * Submits a SEAL record: the segment's final length is {@code length}.
     */
    public LogRequest seal(final long epoch, final int segmentId, final long length, final Object attachment,
                           final LogCommitHandler handler) {
        return submit(new LogRequest(TYPE_SEAL, segmentId, length, null, null, attachment, Objects.requireNonNull(handler, "handler"),
            epoch));
    }

    /** {@link #seal(long, int, long, Object, LogCommitHandler)} with no handler. */
    public LogRequest seal(final long epoch, final int segmentId, final long length, final Object attachment) {
        return seal(epoch, segmentId, length, attachment, LogCommitHandler.NONE);
    }

    /**
     * Submits a TRUNCATE record: the segment's start offset moves to {@code startOffset}.
     */
    public LogRequest truncate(final long epoch, final int segmentId, final long startOffset, final Object attachment,
                               final LogCommitHandler handler) {
        return submit(new LogRequest(TYPE_TRUNCATE, segmentId, startOffset, null, null, attachment,
            Objects.requireNonNull(handler, "handler"), epoch));
    }

    /** {@link #truncate(long, int, long, Object, LogCommitHandler)} with no handler. */
    public LogRequest truncate(final long epoch, final int segmentId, final long startOffset, final Object attachment) {
        return truncate(epoch, segmentId, startOffset, attachment, LogCommitHandler.NONE);
    }

    /**
     * Submits a DELETE record.
     */
    public LogRequest delete(final long epoch, final int segmentId, final Object attachment, final LogCommitHandler handler) {
        return submit(new LogRequest(TYPE_DELETE, segmentId, 0, null, null, attachment, Objects.requireNonNull(handler, "handler"),
            epoch));
    }

    /** {@link #delete(long, int, Object, LogCommitHandler)} with no handler. */
    public LogRequest delete(final long epoch, final int segmentId, final Object attachment) {
        return delete(epoch, segmentId, attachment, LogCommitHandler.NONE);
    }

    /**
     * Submits a compaction copy: a DATA record with {@link LogRecordDescriptor#FLAG_COPY} holding
     * the readable bytes of {@code data}, which are the segment's bytes at {@code segmentOffset}
     * as an older file holds them. The writer checks its (durable) segment table when it takes
     * the request: a copy of a segment that is gone, or of bytes truncated away, is skipped (the
     * future completes, nothing is written). No commit handler; the listener sees it through
     * {@link LogRecordListener#onCopy}.
     *
     * @return the request, which is the future: completes with {@code segmentOffset} once the
     *         copy is in the log (or skipped).
     * @throws IllegalArgumentException if the data are longer than {@link #maxAppendLength()}.
     * @throws LogFailedException       if the writer is failed.
     */
    public LogRequest copy(final int segmentId, final long segmentOffset, final ByteBuf data) {
        Objects.requireNonNull(data, "data");
        if (data.readableBytes() > maxPayload) {
            throw new IllegalArgumentException("length=" + data.readableBytes() + " is more than maxAppendLength=" + maxPayload
                + " of log " + name);
        }
        return submitWaiting(new LogRequest(LogRequest.TYPE_COPY, segmentId, segmentOffset, data, null, null, healthyEpoch()));
    }

    /**
     * Retires log file {@code fileNumber} (deletes or recycles it) after the requests before this
     * one, once whatever the writer wrote is forced: for compaction, once the file's live records
     * were {@link #copy copied} and the copies completed. The caller guarantees that the file
     * holds no live byte that was not copied. A file already retired is a no-op.
     *
     * @return completes with {@code fileNumber}, or exceptionally with an
     *         {@link IllegalArgumentException} if it is the current file, or a
     *         {@link LogFailedException} if the writer is failed.
     */
    public LogRequest retireFile(final long fileNumber) {
        return submitWaiting(new LogRequest(LogRequest.TYPE_RETIRE, 0, fileNumber, null, null, null, healthyEpoch()));
    }

    /**
     * @return the number of the file records go to now (it changes as the writer rolls).
     */
    public long currentFileNumber() {
        return files.currentFileNumber();
    }

    /**
     * @return compaction copies written, their payload bytes, and copies skipped (their bytes
     *         were dead when the writer took them), since start.
     */
    public long[] copyCounts() {
        return new long[] {counters.copiedRecords, counters.copiedBytes, counters.copiesSkipped};
    }

    /**
     * Makes a failed writer healthy again, once the disk is: the writer rewrites the range the
     * failed write may have touched (zeros after the last acknowledged byte) and forces it, or
     * retries the file roll that failed. Requests queued before it fail; requests admitted after
     * it succeeds are written. On a healthy writer it completes at once (after the requests
     * before it).
     *
     * @return completes when the writer is healthy, or exceptionally with a
     *         {@link LogFailedException} if the disk still fails (the writer stays failed).
     */
    public CompletableFuture<Void> recover() {
        if (writer.closing) {
            return CompletableFuture.failedFuture(new CacheClosedException("log writer " + name + " is closed"));
        }
        final LogRequest request = new LogRequest(LogRequest.TYPE_RECOVER, 0, 0, null, null, null, 0);
        try {
            submitWaiting(request);
        } catch (final CacheClosedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return request.thenApply(offset -> null);
    }

    /**
     * Forces the log on demand, whatever the {@link io.streamcache.log.DurabilityPolicy}:
     * the future completes once every request submitted before this call is written and forced
     * ({@code fdatasync}), and after each of those requests' futures completed. The writer takes
     * it in queue order: it writes the batch holding the requests before it, then forces once for
     * every force request waiting (concurrent calls share one force); under {@code EVERY_BATCH}
     * that force is the batch's own, and with nothing written since the last force there is none.
     *
     * @return completes with null, or exceptionally with a {@link LogFailedException} if the
     *         writer is failed or fails before the force succeeds (the requests before it failed
     *         or may not be forced), or a {@link CacheClosedException} if the writer is closed.
     */
    public CompletableFuture<Void> force() {
        final LogRequest request;
        try {
            request = submitWaiting(new LogRequest(LogRequest.TYPE_FORCE, 0, 0, null, null, null, healthyEpoch()));
        } catch (final LogFailedException | CacheClosedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return request.thenApply(offset -> null);
    }

    /**
     * Queues a request without waiting: into the queue, or its overflow while the writer is
     * behind ({@link RequestQueue}).
     *
     * @throws LogQueueFullException if both are full (nothing was queued).
     * @throws CacheClosedException  if the writer is closing.
     */
    private LogRequest submit(final LogRequest request) {
        if (writer.closing) {
            throw new CacheClosedException("log writer " + name + " is closed");
        }
        if (!queue.offer(request)) {
            throw new LogQueueFullException("log " + name + " refused the request: its queue and the overflow (queueCapacity="
                + queueCapacity + " requests each) are full; the writer is behind (a slow or stalled disk)", queueCapacity);
        }
        queued(request);
        return request;
    }

    /**
     * Queues a request, waiting for room if the queue and its overflow are full (spins briefly,
     * then parks): for callers that hold no lock (compaction, force, recovery).
     */
    private LogRequest submitWaiting(final LogRequest request) {
        if (writer.closing) {
            throw new CacheClosedException("log writer " + name + " is closed");
        }
        int attempts = 0;
        while (!queue.offer(request)) {
            if (writer.closing) {
                throw new CacheClosedException("log writer " + name + " is closed");
            }
            backOff(attempts++);
        }
        queued(request);
        return request;
    }

    private void queued(final LogRequest request) {
        // A writer filling a batch (LogConfig.fillBatches) sleeps through asynchronous appends:
        // only a request someone waits for wakes it. Dekker with the queue's index, as writerParked.
        if (writer.writerParked || (writer.lingering && BatchWriter.awaited(request))) {
            LockSupport.unpark(writer.thread());
        }
        if (writer.terminated) {
            drainAfterTermination();
        }
    }

    /**
     * Waits until the queue (or its overflow) has room again, or the writer closes: for a
     * synchronous caller refused with {@link LogQueueFullException}, with no lock held, before
     * it retries (another producer may take the room first: it may be refused again).
     */
    public void awaitRoom() {
        int attempts = 0;
        while (!queue.hasRoom() && !writer.closing) {
            backOff(attempts++);
        }
    }

    /** Spins briefly, then parks: no {@code Thread.yield} loop (it burns a core the writer may need). */
    private static void backOff(final int attempts) {
        if (attempts < 100) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(PRODUCER_PARK_NANOS);
        }
    }

    /**
     * Fails what a producer queued after the writer stopped draining (it raced with
     * {@link #close()}): on the producer's thread, without the handler.
     */
    private void drainAfterTermination() {
        synchronized (writer.terminationLock) {
            LogRequest request;
            while ((request = queue.relaxedPoll()) != null) {
                request.dropData();
                request.fail(new CacheClosedException("log writer " + name + " is closed"));
                // Never linked to the completion list: a pooled one is free once failed.
                request.released();
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // State, stats, lifecycle
    // ------------------------------------------------------------------------------------------

    /**
     * @return after {@link #close()}: the log's end if the writer finished cleanly (everything
     *         written forced, never failed since its last recovery, a durability policy that
     *         forces): {@code {fileNumber, endPosition}} with endPosition the 4 KB boundary after
     *         the last record (fileNumber 0 if no file was ever written); null otherwise, or
     *         before close.
     */
    public long[] cleanEnd() {
        synchronized (this) {
            if (!closeCalled) {
                return null;
            }
        }
        if (writer.thread().isAlive() || writer.cleanEndFileNumber < 0) {
            return null;
        }
        return new long[] {writer.cleanEndFileNumber, writer.cleanEndPosition};
    }

    /**
     * @return whether the writer is failed (rejecting requests until {@link #recover()}).
     */
    public boolean isFailed() {
        return (writer.state & BatchWriter.FAILED) != 0;
    }

    /**
     * @return the error that failed the writer last (also after a recovery), or null.
     */
    public LogFailedException lastFailure() {
        return writer.failure;
    }

    /**
     * @return how many times the writer recovered by itself after a disk error
     *         ({@link LogConfig#retryInterval()}), since it started.
     */
    public long automaticRecoveries() {
        return counters.automaticRecoveries;
    }

    /**
     * @return the longest append: one record's payload, {@link LogConfig#maxAppendLength()}.
     */
    public int maxAppendLength() {
        return maxPayload;
    }

    public String name() {
        return name;
    }

    public LogDirectory directory() {
        return directory;
    }

    /**
     * @return a snapshot of the counters.
     */
    public WriterStats stats() {
        return counters.snapshot(queue.size(), isFailed());
    }

    /**
     * Stops accepting requests, writes (padded) and forces what was submitted before, completes
     * it, stops the threads, closes the current file and unregisters the MBean. Requests that
     * race with it fail with a {@link CacheClosedException}. Does not close the directory.
     * Idempotent; waits for the threads.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closeCalled) {
                return;
            }
            closeCalled = true;
        }
        writer.closing = true;
        LockSupport.unpark(writer.thread());
        Waits.joinUninterruptibly(writer.thread());
        Waits.joinUninterruptibly(completer.thread());
        if (checkpointer != null) {
            checkpointer.close();
        }
        LogMBeans.unregister(objectName);
    }

    @Override
    public String toString() {
        return "AggregatingWriter{name=" + name + ", directory=" + directory.path() + ", failed=" + isFailed() + '}';
    }

    /** The writer's MBean: each attribute reads the counter now. */
    private static final class MXBeanAdapter implements LogWriterMXBean {
        private final AggregatingWriter writer;

        MXBeanAdapter(final AggregatingWriter writer) {
            this.writer = writer;
        }

        @Override
        public String getName() {
            return writer.name;
        }

        @Override
        public long getBatches() {
            return writer.counters.batches;
        }

        @Override
        public long getBytesWritten() {
            return writer.counters.bytesWritten;
        }

        @Override
        public long getPayloadBytes() {
            return writer.counters.payloadBytes;
        }

        @Override
        public long getPaddingBytes() {
            return writer.counters.paddingBytes;
        }

        @Override
        public long getForces() {
            return writer.counters.forces;
        }

        @Override
        public long getRequests() {
            return writer.counters.requests;
        }

        @Override
        public long getFailedRequests() {
            return writer.counters.failedRequests;
        }

        @Override
        public int getQueueDepth() {
            return writer.queue.size();
        }

        @Override
        public int getBufferedBytes() {
            return writer.counters.bufferedBytes;
        }

        @Override
        public double getMeanBatchLength() {
            return writer.stats().meanBatchLength();
        }

        @Override
        public long getFilesRolled() {
            return writer.counters.filesRolled;
        }

        @Override
        public long getFilesRetired() {
            return writer.counters.filesRetired;
        }

        @Override
        public long getAutomaticRecoveries() {
            return writer.counters.automaticRecoveries;
        }

        @Override
        public boolean isFailed() {
            return writer.isFailed();
        }
    }
}
