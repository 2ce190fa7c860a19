package io.streamcache.segmentstore.internal.log;

import io.streamcache.segmentstore.log.AlignmentPolicy;
import io.streamcache.segmentstore.log.DurabilityPolicy;
import io.streamcache.segmentstore.log.LogConfig;
import io.streamcache.segmentstore.log.LogFailedException;
import io.streamcache.segmentstore.log.LogFile;
import io.streamcache.segmentstore.log.WriterStats;
import io.netty.buffer.ByteBuf;
import io.streamcache.core.CacheClosedException;
import org.agrona.BufferUtil;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.UnsafeBuffer;
import org.jctools.queues.MpscArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import static io.streamcache.segmentstore.internal.log.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.segmentstore.internal.log.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.CRC_OFFSET;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.HEADER_LENGTH;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.PADDING_HEADER_LENGTH;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_CREATE;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_DATA;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_DELETE;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_SEAL;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_SNAPSHOT;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.TYPE_TRUNCATE;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.align;
import static io.streamcache.segmentstore.internal.log.LogRecordDescriptor.alignedLength;
import static org.agrona.UnsafeAccess.UNSAFE;

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
 * batch's request count (seed 5: aggregation, 4K alignment, pre-written files).
 *
 * <h2>Threads</h2>
 * <pre>
 *  producer threads (any number)
 *   | store: segment lock; offset reserved; the request (which is the future) built
 *   | queue.offer(request); unpark the writer if it sleeps; unlock; wait on the future
 *   v
 *  [ MPSC queue: jctools MpscArrayQueue, bounded ]
 *   |
 *   v
 *  writer thread (one)
 *   | drain: per request, header + payload copied into the 4 KB-aligned batch buffer, CRC32C
 *   | queue empty, batch full, or maxDelay passed: pad or cut the tail to a 4 KB boundary
 *   | pwrite(batch) once; fdatasync once (EVERY_BATCH)
 *   | durable records: segment table, listener (location index); dead files retired
 *   | durable requests linked, in order, to the completion list; unpark the completer
 *   v
 *  [ intrusive linked list of requests: never blocks the writer ]
 *   |
 *   v
 *  completion thread (one)
 *   | per request, in submission order: handler.committed(r)
 *   |   (the store: segment lock, bytes into cache + read index or a NOT_CACHED gap,
 *   |    length += n, tail readers woken)
 *   | r.complete(offset), or handler.failed(r, e) and r.completeExceptionally(e)
 *   v
 *  the producer wakes up
 *
 *  log directory thread: keeps spare files pre-written; deletes (or recycles) retired files
 * </pre>
 * Producers never wait for the writer or the completion thread except when the queue is full
 * ({@link LogConfig#queueCapacity()}: they spin, yield, then park briefly). The writer never
 * waits for the completion thread: finished requests are linked to an intrusive list (the
 * requests are the nodes) that the completion thread follows. So the completion thread may take
 * segment locks that producers hold while they submit, and committing data into the cache
 * (a copy, a lock, waking tail readers and producers) overlaps the next write and force.
 *
 * <h2>Batches</h2>
 * The writer drains the queue into the batch buffer until it is empty, the batch holds
 * {@link LogConfig#batchLength()} bytes, or the oldest record of the batch has waited
 * {@link LogConfig#maxDelay()} while requests kept coming (checked every 64 requests); then it
 * writes. It never waits for a batch to fill: when the queue is empty it writes what it has at
 * once, so a lone producer's append goes out at once and the end of a burst never waits on a
 * timer. Batches are as large as the load makes them: while one is written and forced, the next
 * gathers in the queue.
 *
 * <h2>4 KB alignment</h2>
 * Every write starts and ends on a 4 KB boundary of the file ({@link AlignmentPolicy}):
 * <pre>
 *  PAD   | rec | rec | rec |pad: skip to 4K |            written: [start, next 4K boundary)
 *  CUT   | rec | rec | re|c rec |                        written: [start, last 4K boundary);
 *                          ^ carried: "c rec" moves to the buffer's head, rewritten with the next batch
 * </pre>
 * A padding record (8 bytes: magic, type, length to skip) says where the next record starts, so
 * recovery never takes padding for the end of the log. A cut tail's requests complete with the
 * batch that writes it: the next one if requests are waiting when the cut write is done (under
 * load they are: they gathered during the force), else a padded write of the tail at once (the
 * burst is over). {@link AlignmentPolicy#ADAPTIVE} cuts batches of
 * {@link LogConfig#cutThreshold()} bytes or more and pads smaller ones. A page that holds acknowledged data is never written again (except the
 * page holding a recovered tail, rewritten once with the same bytes and a padding record).
 *
 * <h2>Durability and completion</h2>
 * With {@link DurabilityPolicy#EVERY_BATCH} each batch is forced before any of its requests
 * completes; the completion thread completes requests strictly in submission order, after the
 * commit handler applied each (the store puts the data into the cache and the read index there,
 * so tail readers only ever see durable bytes). Records become part of the writer's
 * {@link LogSegmentTable segment table} and are reported to the {@link LogRecordListener} as
 * they become durable, never before.
 *
 * <h2>Files</h2>
 * The log is a sequence of files from the {@link LogDirectory}; the first record of each is a
 * SNAPSHOT of the segment table (the writer's own, which matches the log position exactly),
 * written and forced when the writer moves to the file. A record that does not fit in the
 * current file's rest moves the writer to the next file; the rest stays zero. A file other than
 * the current one whose data are all dead (every segment with data in it deleted, or truncated
 * past its highest offset there) is retired after the record that killed it is durable.
 *
 * <h2>Disk errors</h2>
 * An {@link IOException} from a write or a force (a full disk: {@code No space left on device},
 * an I/O error) fails the requests of the batch and every request not yet written with a
 * {@link LogFailedException} whose cause is the error, and fails the writer: it rejects new
 * requests ({@link #healthyEpoch()} throws) and fails any still queued, until
 * {@link #recover()} succeeds. Recovery writes again over the range the failed write may have
 * touched (zeros after the last acknowledged byte) and forces it, or retries the file roll that
 * failed; only then does the writer accept requests again, in a new epoch. The writer runs that
 * recovery by itself every {@link LogConfig#retryInterval()} (1 s by default) while it is failed
 * and idle, so appends resume once space returns without anyone calling {@link #recover()}
 * (counted in {@link #automaticRecoveries()}, logged at INFO from the writer thread). A request carries the
 * epoch in which it was admitted; one admitted before a failure fails even if it reaches the
 * writer after a recovery, so its offsets can be given back and reused. Nothing acknowledged is
 * ever rewritten, so nothing acknowledged is lost.
 *
 * <h2>Garbage</h2>
 * Per request a producer allocates the {@link LogRequest}, which is its future (about 80 bytes);
 * waiting on it adds the JDK's wait node. The writer thread allocates nothing per request or per
 * batch (the batch buffer, the CRC, the record arrays are pre-allocated; the table's maps
 * allocate when a segment or file is added). The completion thread allocates the boxed offset
 * each future completes with (a {@code Long} beyond the small-value cache) and whatever the
 * futures' dependents allocate. Rolls, failures and recovery allocate.
 *
 * <h2>Appends are atomic records</h2>
 * One append is one record, so it is in the log whole or not at all: an append may be at most
 * {@link #maxAppendLength()} bytes ({@link LogConfig#maxAppendLength()}: 16 MiB by default). An
 * append longer than what the batch buffer has room for is not split: the writer first writes
 * the batch (or keeps its cut tail), then moves to a longer buffer (kept for the next long
 * append), puts the record there and writes it, with the records before it, in one write that
 * ends the batch; after that write it moves back to its batch buffer with the carried tail:
 * <pre>
 *  batch buffer   | rec | rec |                         accept(long): used + aligned &gt; capacity
 *  long buffer    | rec | rec | LONG RECORD ........ | pad |   one write, forced; then back
 * </pre>
 * A SNAPSHOT leaves room for one such record in every file, and recovery's torn-write window
 * and the zeroing of a resumed tail cover one such write. A segment name may be at most
 * {@link #MAX_NAME_LENGTH} bytes of UTF-8.
 */
public final class AggregatingWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AggregatingWriter.class);

    /** Longest segment name, in UTF-8 bytes: a CREATE record must fit in a page. */
    public static final int MAX_NAME_LENGTH = PAGE_LENGTH - HEADER_LENGTH;

    /** Bit 0 of {@link #state}: the writer is failed. Bits 1..63: the epoch. */
    private static final long FAILED = 1;
    private static final int DELAY_CHECK_MASK = 63;
    private static final int IDLE_SPINS = 64;
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long COMPLETER_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long PRODUCER_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    // ------------------------------------------------------------------------------------------
    // Settings (immutable)
    // ------------------------------------------------------------------------------------------

    private final String name;
    private final LogDirectory directory;
    private final LogCommitHandler handler;
    private final LogRecordListener listener;
    private final long fileLength;
    private final int batchLength;
    /** Capacity of the batch buffer the writer normally uses. */
    private final int batchCapacity;
    private final int maxPayload;
    private final int cutThreshold;
    private final AlignmentPolicy alignment;
    private final DurabilityPolicy.Kind durability;
    private final long forceIntervalNanos;
    private final long maxDelayNanos;
    /** 0: no automatic retry after a failure. */
    private final long retryIntervalNanos;

    // ------------------------------------------------------------------------------------------
    // Shared between producers and the writer
    // ------------------------------------------------------------------------------------------

    private final MpscArrayQueue<LogRequest> queue;
    private final Object terminationLock = new Object();
    private final Thread writerThread;
    private final Thread completerThread;
    /** Epoch &lt;&lt; 1 | FAILED: written by the writer thread, read by producers (volatile). */
    private volatile long state;
    /** The error that failed the writer; written before {@link #state}, read after it. */
    private volatile LogFailedException failure;
    private volatile boolean closing;
    /** Set under {@link #terminationLock} once the writer drains no more. */
    private volatile boolean terminated;
    /** The writer is parked or about to park: a producer that offered must unpark it. Dekker with the queue's index. */
    private volatile boolean writerParked;
    /** The completion thread is parked or about to park. Dekker with {@link LogRequest#handoffNextRelease}. */
    private volatile boolean completerParked;
    private boolean closeCalled;

    // ------------------------------------------------------------------------------------------
    // Writer thread
    // ------------------------------------------------------------------------------------------

    // The batch buffer in use and its views: the normal one, or the long one while a long append is written.
    private ByteBuffer buffer;
    private UnsafeBuffer ub;
    private ByteBuffer writeView;
    private ByteBuffer crcView;
    private ByteBuffer copyView;
    private int capacity;
    /** The normal batch buffer, of {@link #batchCapacity} bytes. */
    private final ByteBuffer batchBuffer;
    /** A buffer for a record longer than a batch, kept for the next one; null until one came. */
    private ByteBuffer longBuffer;
    private final CRC32C crc = new CRC32C();
    private final LogSegmentTable table = new LogSegmentTable();
    private final LongArrayList deadFiles = new LongArrayList();
    // The records in the buffer not yet written, in order.
    private final byte[] recordType;
    private final int[] recordSegment;
    private final long[] recordOffset;
    private final int[] recordLength;
    private final long[] recordPosition;
    private final byte[][] recordName;
    private int recordCount;

    private LogFile file;
    private long fileNumber;
    /** File position of buffer[0]: a multiple of 4 KB. */
    private long filePosition;
    /** Bytes in the buffer: a carried tail or a resumed prefix, then new records. */
    private int used;
    /** Bytes at the buffer's head that are durable already (a resumed tail page being rewritten). */
    private int durablePrefix;
    /** Records were added since the last write. */
    private boolean newRecords;
    private long firstNewNanos;
    /** A stream position counts every byte written since start: request i completes once the log is durable up to its end. */
    private long streamBase;
    private LogRequest pendingHead;
    private LogRequest pendingTail;
    private LogRequest handoffTail;
    private boolean handedOff;
    private boolean truncatedOrDeleted;
    private long lastForceNanos;
    private boolean unforced;
    /** Bytes from {@link #filePosition} a failed write may have touched: recovery rewrites them. */
    private int failedExtent;
    /** A roll failed: recovery retries it. */
    private boolean rollPending;
    /** Set by a clean finish (read after joining the writer thread): the last file and the end of its last write; -1 otherwise. */
    private long cleanEndFileNumber = -1;
    private long cleanEndPosition = -1;
    private long pendingPayloadBytes;
    private long pendingPaddingBytes;
    private long completedRequests;
    private long completedFailures;
    /** When a failed writer retries its recovery by itself next (System.nanoTime()). */
    private long nextRetryNanos;

    // ------------------------------------------------------------------------------------------
    // Completion thread
    // ------------------------------------------------------------------------------------------

    private LogRequest handoffHead;

    // ------------------------------------------------------------------------------------------
    // Stats: written by the writer thread only, read by any thread (volatile).
    // ------------------------------------------------------------------------------------------

    private volatile long batches;
    private volatile long bytesWritten;
    private volatile long payloadBytes;
    private volatile long paddingBytes;
    private volatile long forces;
    private volatile long requests;
    private volatile long failedRequests;
    private volatile long filesRolled;
    private volatile long filesRetired;
    private volatile int bufferedBytes;
    private volatile long automaticRecoveries;
    /** The file records go to now: written by the writer thread, read by compaction. */
    private volatile long currentFileNumber;
    private volatile long copiedRecords;
    private volatile long copiedBytes;
    private volatile long copiesSkipped;

    private AggregatingWriter(final LogDirectory directory, final LogCommitHandler handler, final LogRecordListener listener,
                              final RecoveredState recovered) throws IOException {
        final LogConfig config = directory.config();
        this.name = directory.name();
        this.directory = directory;
        this.handler = Objects.requireNonNull(handler, "handler");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.fileLength = config.fileLength();
        this.batchLength = config.batchLength();
        this.batchCapacity = config.bufferCapacity();
        this.maxPayload = config.maxAppendLength();
        this.cutThreshold = config.cutThreshold();
        this.alignment = config.alignment();
        this.durability = config.durability().kind();
        this.forceIntervalNanos = config.durability().interval().toNanos();
        this.maxDelayNanos = config.maxDelay().toNanos();
        this.retryIntervalNanos = saturatedNanos(config.retryInterval());
        this.queue = new MpscArrayQueue<>(config.queueCapacity());

        this.batchBuffer = BufferUtil.allocateDirectAligned(batchCapacity, PAGE_LENGTH);
        use(batchBuffer);
        final int maxRecords = batchCapacity / HEADER_LENGTH + 1;
        this.recordType = new byte[maxRecords];
        this.recordSegment = new int[maxRecords];
        this.recordOffset = new long[maxRecords];
        this.recordLength = new int[maxRecords];
        this.recordPosition = new long[maxRecords];
        this.recordName = new byte[maxRecords][];

        final LogRequest stub = new LogRequest(LogRequest.TYPE_STOP, 0, 0, null, null, null, 0);
        this.handoffTail = stub;
        this.handoffHead = stub;

        for (final RecoveredState.SegmentState segment : recovered.segments()) {
            table.restore(segment.segmentId(), segment.name(), segment.startOffset(), segment.length(), segment.sealed());
        }
        recovered.files().forEach((number, data) -> {
            table.file(number);
            data.forEach((segment, end) -> table.fileData(number, segment, end));
        });
        lastForceNanos = System.nanoTime();
        if (recovered.hasTail()) {
            resume(recovered.tailFileNumber(), recovered.tailPosition());
        } else {
            roll();
        }
        bufferedBytes = used;

        this.writerThread = new Thread(this::runWriter, "streamcache-log-writer-" + name);
        this.completerThread = new Thread(this::runCompleter, "streamcache-log-completer-" + name);
        writerThread.setDaemon(true);
        completerThread.setDaemon(true);
        directory.start();
        completerThread.start();
        writerThread.start();
    }

    /**
     * Starts a writer on a directory: continues the log at the recovered tail, or starts a new
     * file (numbered after any file in the directory) if recovery set none. The positioning
     * (reopening and zeroing the tail, or creating the first file and writing its SNAPSHOT) runs
     * on the calling thread; then the writer, completion and directory threads start.
     *
     * @param handler   applies outcomes, on the completion thread.
     * @param listener  observes durable records, on the writer thread.
     * @param recovered the state to start from (segments for the snapshots, files, tail).
     * @throws IOException if the first file cannot be created or the tail cannot be rewritten.
     */
    public static AggregatingWriter start(final LogDirectory directory, final LogCommitHandler handler,
                                          final LogRecordListener listener, final RecoveredState recovered) throws IOException {
        return new AggregatingWriter(directory, handler, listener, recovered);
    }

    /**
     * Starts a writer with no handler and no listener on a new log (after any file in the
     * directory): the futures alone report the outcomes.
     */
    public static AggregatingWriter start(final LogDirectory directory) throws IOException {
        return new AggregatingWriter(directory, LogCommitHandler.NONE, LogRecordListener.NONE, new RecoveredState());
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
        if (closing) {
            throw new CacheClosedException("log writer " + name + " is closed");
        }
        final long current = state;
        if ((current & FAILED) != 0) {
            final LogFailedException error = failure;
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
     * @return the request, which is the future: completes with {@code segmentOffset}.
     * @throws IllegalArgumentException if the data is longer than {@link #maxAppendLength()}.
     * @throws CacheClosedException     if the writer is closing.
     */
    public LogRequest append(final long epoch, final int segmentId, final long segmentOffset, final ByteBuf data,
                             final Object attachment) {
        Objects.requireNonNull(data, "data");
        if (data.readableBytes() > maxPayload) {
            throw new IllegalArgumentException("length=" + data.readableBytes() + " is more than maxAppendLength=" + maxPayload
                + " of log " + name);
        }
        return submit(new LogRequest(TYPE_DATA, segmentId, segmentOffset, data, null, attachment, epoch));
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
    public LogRequest create(final long epoch, final int segmentId, final String segmentName, final Object attachment) {
        final byte[] bytes = segmentName.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("segment name of " + bytes.length + " UTF-8 bytes is longer than " + MAX_NAME_LENGTH);
        }
        return submit(new LogRequest(TYPE_CREATE, segmentId, 0, null, bytes, attachment, epoch));
    }

    /**
     * Submits a SEAL record: the segment's final length is {@code length}.
     */
    public LogRequest seal(final long epoch, final int segmentId, final long length, final Object attachment) {
        return submit(new LogRequest(TYPE_SEAL, segmentId, length, null, null, attachment, epoch));
    }

    /**
     * Submits a TRUNCATE record: the segment's start offset moves to {@code startOffset}.
     */
    public LogRequest truncate(final long epoch, final int segmentId, final long startOffset, final Object attachment) {
        return submit(new LogRequest(TYPE_TRUNCATE, segmentId, startOffset, null, null, attachment, epoch));
    }

    /**
     * Submits a DELETE record.
     */
    public LogRequest delete(final long epoch, final int segmentId, final Object attachment) {
        return submit(new LogRequest(TYPE_DELETE, segmentId, 0, null, null, attachment, epoch));
    }

    /**
     * Submits a compaction copy: a DATA record with {@link LogRecordDescriptor#FLAG_COPY} holding
     * the readable bytes of {@code data}, which are the segment's bytes at {@code segmentOffset}
     * as an older file holds them. The writer checks its (durable) segment table when it takes
     * the request: a copy of a segment that is gone, or of bytes truncated away, is skipped (the
     * future completes, nothing is written). Not applied by the commit handler; the listener
     * sees it through {@link LogRecordListener#onCopy}.
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
        return submit(new LogRequest(LogRequest.TYPE_COPY, segmentId, segmentOffset, data, null, null, healthyEpoch()));
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
        return submit(new LogRequest(LogRequest.TYPE_RETIRE, 0, fileNumber, null, null, null, healthyEpoch()));
    }

    /**
     * @return the number of the file records go to now (it changes as the writer rolls).
     */
    public long currentFileNumber() {
        return currentFileNumber;
    }

    /**
     * @return compaction copies written, their payload bytes, and copies skipped (their bytes
     *         were dead when the writer took them), since start.
     */
    public long[] copyCounts() {
        return new long[] {copiedRecords, copiedBytes, copiesSkipped};
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
        if (closing) {
            return CompletableFuture.failedFuture(new CacheClosedException("log writer " + name + " is closed"));
        }
        final LogRequest request = new LogRequest(LogRequest.TYPE_RECOVER, 0, 0, null, null, null, 0);
        try {
            submit(request);
        } catch (final CacheClosedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return request.thenApply(offset -> null);
    }

    private LogRequest submit(final LogRequest request) {
        if (closing) {
            throw new CacheClosedException("log writer " + name + " is closed");
        }
        int attempts = 0;
        while (!queue.offer(request)) {
            if (closing) {
                throw new CacheClosedException("log writer " + name + " is closed");
            }
            backOff(attempts++);
        }
        if (writerParked) {
            LockSupport.unpark(writerThread);
        }
        if (terminated) {
            drainAfterTermination();
        }
        return request;
    }

    private static void backOff(final int attempts) {
        if (attempts < 100) {
            Thread.onSpinWait();
        } else if (attempts < 200) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(PRODUCER_PARK_NANOS);
        }
    }

    /**
     * Fails what a producer queued after the writer stopped draining (it raced with
     * {@link #close()}): on the producer's thread, without the handler.
     */
    private void drainAfterTermination() {
        synchronized (terminationLock) {
            LogRequest request;
            while ((request = queue.relaxedPoll()) != null) {
                request.dropData();
                request.completeExceptionally(new CacheClosedException("log writer " + name + " is closed"));
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writer thread: main loop
    // ------------------------------------------------------------------------------------------

    private void runWriter() {
        int polls = 0;
        while (true) {
            try {
                final LogRequest request = queue.relaxedPoll();
                if (request != null) {
                    accept(request);
                    if (newRecords && (used >= batchLength
                        || ((++polls & DELAY_CHECK_MASK) == 0 && System.nanoTime() - firstNewNanos >= maxDelayNanos))) {
                        writeBatch(false);
                    }
                    continue;
                }
                polls = 0;
                if (newRecords) {
                    writeBatch(false);
                    continue;
                }
                if (recordCount > 0 && queueStaysEmpty()) {
                    // A cut tail and nothing after it: the burst is over, write it padded now.
                    writeBatch(true);
                    continue;
                }
                if (unforced && System.nanoTime() - lastForceNanos >= forceIntervalNanos) {
                    forceFile();
                    continue;
                }
                if (retryDue()) {
                    retryRecovery();
                    continue;
                }
                if (closing) {
                    if (queue.isEmpty()) {
                        finish();
                        return;
                    }
                    continue;
                }
                idle();
            } catch (final IOException e) {
                fail(e, null);
            } catch (final RuntimeException | Error e) {
                LOG.error("log writer {} hit an unexpected error; it fails its requests until recover()", name, e);
                fail(new IOException("unexpected error in the log writer: " + e, e), null);
            }
        }
    }

    /** Spins briefly: whether the queue stayed empty. */
    private boolean queueStaysEmpty() {
        for (int i = 0; i < IDLE_SPINS; i++) {
            if (!queue.isEmpty()) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    private void idle() {
        if (!queueStaysEmpty()) {
            return;
        }
        final long now = System.nanoTime();
        long timeout = IDLE_PARK_NANOS;
        if (unforced) {
            timeout = Math.min(timeout, lastForceNanos + forceIntervalNanos - now);
        }
        if (retryIntervalNanos > 0 && (state & FAILED) != 0) {
            timeout = Math.min(timeout, nextRetryNanos - now);
        }
        if (timeout <= 0) {
            return;
        }
        writerParked = true;
        if (queue.isEmpty() && !closing) {
            LockSupport.parkNanos(this, timeout);
        }
        writerParked = false;
    }

    private void accept(final LogRequest request) {
        final byte type = request.type();
        if (type == LogRequest.TYPE_RECOVER) {
            recoverNow(request);
            return;
        }
        final long current = state;
        if ((current & FAILED) != 0 || request.epoch != current >>> 1) {
            completeInOrder(request, rejection(current));
            return;
        }
        if (type == LogRequest.TYPE_RETIRE) {
            retireNow(request);
            return;
        }
        if (type == LogRequest.TYPE_COPY && !copyWanted(request)) {
            copiesSkipped = copiesSkipped + 1;
            completeInOrder(request, null);
            return;
        }
        try {
            final byte[] nameBytes = request.nameBytes();
            final boolean data = type == TYPE_DATA || type == LogRequest.TYPE_COPY;
            final int length = data ? request.length() : nameBytes != null ? nameBytes.length : 0;
            if (data && (length == 0 || request.data().refCnt() == 0)) {
                completeInOrder(request, length == 0 ? null
                    : new IllegalStateException("the data of an append were released before the append completed: " + request));
                return;
            }
            final int aligned = alignedLength(length);
            if (filePosition + used + aligned > fileLength) {
                roll();
            }
            if (used + aligned > capacity) {
                writeBatch(false);
            }
            if (used + aligned > capacity) {
                // One append longer than a batch: written with what precedes it in one write.
                growFor(used + aligned);
            }
            putRecord(type, request.segmentId(), request.segmentOffset(), request.data(), nameBytes, length);
        } catch (final IOException e) {
            fail(e, request);
            return;
        } catch (final RuntimeException | Error e) {
            LOG.error("log writer {} hit an unexpected error on {}; it fails its requests until recover()", name, request, e);
            fail(new IOException("unexpected error in the log writer: " + e, e), request);
            return;
        }
        request.endStream = streamBase + used;
        appendPending(request);
    }

    /** Whether a copy's bytes are still live in the durable table: the segment exists and holds them past its start. */
    private boolean copyWanted(final LogRequest request) {
        final LogSegmentTable.Entry entry = table.segment(request.segmentId());
        final long end = request.segmentOffset() + request.length();
        return entry != null && end > entry.start && end <= entry.length;
    }

    /** Retires a file compaction emptied: forces what was written (the copies), then hands the file over. */
    private void retireNow(final LogRequest request) {
        final long number = request.segmentOffset();
        if (number == fileNumber) {
            completeInOrder(request, new IllegalArgumentException("fileNumber=" + number + " is the current file of log " + name));
            return;
        }
        if (table.hasFile(number)) {
            try {
                if (unforced) {
                    forceFile();
                }
            } catch (final IOException e) {
                fail(e, request);
                return;
            }
            table.removeFile(number);
            listener.onFileRetired(number);
            directory.retire(number);
            filesRetired = filesRetired + 1;
        }
        completeInOrder(request, null);
    }

    private LogFailedException rejection(final long current) {
        final LogFailedException error = failure;
        if ((current & FAILED) != 0 || error != null) {
            return error != null ? error : new LogFailedException("log " + name + " is failed", null);
        }
        return new LogFailedException("log " + name + ": request admitted in an earlier epoch", null);
    }

    private void appendPending(final LogRequest request) {
        request.next = null;
        if (pendingTail == null) {
            pendingHead = request;
        } else {
            pendingTail.next = request;
        }
        pendingTail = request;
    }

    /**
     * Completes a request that writes nothing after the requests before it: at once if none is
     * pending, else with the write that completes them.
     */
    private void completeInOrder(final LogRequest request, final Throwable error) {
        if (pendingHead == null) {
            handoff(request, error);
            signalCompleter();
        } else {
            request.failure = error;
            request.endStream = streamBase + used;
            appendPending(request);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writer thread: records and batches
    // ------------------------------------------------------------------------------------------

    private void putRecord(final byte type, final int segmentId, final long segmentOffset, final ByteBuf data, final byte[] nameBytes,
                           final int length) {
        final int index = used;
        if (type == LogRequest.TYPE_COPY) {
            LogRecordDescriptor.putHeader(ub, index, TYPE_DATA, LogRecordDescriptor.FLAG_COPY, length, segmentId, segmentOffset);
        } else {
            LogRecordDescriptor.putHeader(ub, index, type, length, segmentId, segmentOffset);
        }
        final int payloadIndex = index + HEADER_LENGTH;
        if (data != null) {
            copyPayload(data, payloadIndex, length);
        } else if (nameBytes != null) {
            ub.putBytes(payloadIndex, nameBytes);
        }
        final int aligned = alignedLength(length);
        final int payloadEnd = payloadIndex + length;
        if (index + aligned > payloadEnd) {
            ub.setMemory(payloadEnd, index + aligned - payloadEnd, (byte)0);
        }
        ub.putInt(index + CRC_OFFSET, LogRecordDescriptor.crc(crc, fileNumber, crcView, index, length), ByteOrder.LITTLE_ENDIAN);

        final int i = recordCount++;
        recordType[i] = type;
        recordSegment[i] = segmentId;
        recordOffset[i] = segmentOffset;
        recordLength[i] = length;
        recordPosition[i] = filePosition + index;
        recordName[i] = nameBytes;
        used = index + aligned;
        pendingPayloadBytes += length;
        if (!newRecords) {
            newRecords = true;
            firstNewNanos = System.nanoTime();
        }
    }

    /**
     * Copies a producer's bytes into the batch buffer without allocating for direct and heap
     * buffers (Netty's {@code getBytes(int, ByteBuffer)} duplicates a direct buffer per call);
     * other kinds (composites) through {@code getBytes}.
     */
    private void copyPayload(final ByteBuf data, final int index, final int length) {
        final int from = data.readerIndex();
        if (data.hasMemoryAddress()) {
            UNSAFE.copyMemory(null, data.memoryAddress() + from, null, ub.addressOffset() + index, length);
        } else if (data.hasArray()) {
            ub.putBytes(index, data.array(), data.arrayOffset() + from, length);
        } else {
            copyView.limit(index + length).position(index);
            data.getBytes(from, copyView);
        }
    }

    /**
     * Writes the buffer's records out: padded to the next 4 KB boundary, or cut at the last one
     * (the tail carried), per the alignment policy; {@code pad} forces padding.
     */
    private void writeBatch(final boolean pad) throws IOException {
        final boolean cut = !pad && (alignment == AlignmentPolicy.CUT || (alignment == AlignmentPolicy.ADAPTIVE && used >= cutThreshold));
        final int end;
        if (cut) {
            end = used & -PAGE_LENGTH;
            if (end == 0) {
                // Less than a page: nothing to write; the records wait for the requests queued
                // behind them, or are written padded if none are.
                newRecords = false;
                return;
            }
        } else {
            end = align(used, PAGE_LENGTH);
            final int gap = end - used;
            if (gap > 0) {
                LogRecordDescriptor.putPadding(ub, used, gap);
                ub.setMemory(used + PADDING_HEADER_LENGTH, gap - PADDING_HEADER_LENGTH, (byte)0);
                pendingPaddingBytes += gap;
            }
            if (end == 0) {
                return;
            }
        }
        failedExtent = Math.max(failedExtent, end);
        writeView.limit(end).position(0);
        file.write(writeView, filePosition);
        if (durability == DurabilityPolicy.Kind.EVERY_BATCH) {
            forceFile();
        } else if (durability == DurabilityPolicy.Kind.INTERVAL) {
            if (System.nanoTime() - lastForceNanos >= forceIntervalNanos) {
                forceFile();
            } else {
                unforced = true;
            }
        }
        failedExtent = 0;

        final long writtenEnd = filePosition + end;
        final long durableStream = streamBase + end;
        applyRecords(writtenEnd);
        completePending(durableStream);
        final int carry = used - end;
        if (carry > 0) {
            // end >= 4096 > carry: the ranges do not overlap.
            ub.putBytes(0, ub, end, carry);
            used = carry;
        } else {
            used = 0;
        }
        filePosition = writtenEnd;
        streamBase = durableStream;
        durablePrefix = 0;
        newRecords = false;
        if (buffer != batchBuffer && used + PAGE_LENGTH <= batchCapacity) {
            shrink();
        }

        batches = batches + 1;
        bytesWritten = bytesWritten + end;
        payloadBytes = payloadBytes + pendingPayloadBytes;
        paddingBytes = paddingBytes + pendingPaddingBytes;
        pendingPayloadBytes = 0;
        pendingPaddingBytes = 0;
        bufferedBytes = used;
        if (truncatedOrDeleted) {
            retireDeadFiles();
        }
        signalCompleter();
    }

    /** Makes {@code target} the batch buffer in use (writer thread, or the constructor). */
    private void use(final ByteBuffer target) {
        buffer = target;
        ub = new UnsafeBuffer(target);
        writeView = target.duplicate();
        crcView = target.duplicate();
        copyView = target.duplicate();
        capacity = target.capacity();
    }

    /**
     * Moves the buffer's {@link #used} bytes into a buffer of at least {@code length} bytes and a
     * page (the kept long buffer if it is long enough, else a new one, kept for the next long
     * append): a long append's record is built there and written with the batch it ends.
     */
    private void growFor(final int length) {
        final int needed = align(length, PAGE_LENGTH) + PAGE_LENGTH;
        if (longBuffer == null || longBuffer.capacity() < needed) {
            longBuffer = BufferUtil.allocateDirectAligned(needed, PAGE_LENGTH);
        }
        final UnsafeBuffer from = ub;
        final int bytes = used;
        use(longBuffer);
        ub.putBytes(0, from, 0, bytes);
    }

    /** Back to the batch buffer once a long append is written: the carried tail (less than a page) moves over. */
    private void shrink() {
        final UnsafeBuffer from = ub;
        use(batchBuffer);
        ub.putBytes(0, from, 0, used);
    }

    private void forceFile() throws IOException {
        file.force();
        lastForceNanos = System.nanoTime();
        unforced = false;
        forces = forces + 1;
    }

    /** The records ending at or before {@code writtenEnd} are in the log: table, listener. */
    private void applyRecords(final long writtenEnd) {
        int i = 0;
        for (; i < recordCount; i++) {
            final int length = recordLength[i];
            final long position = recordPosition[i];
            if (position + alignedLength(length) > writtenEnd) {
                break;
            }
            final byte type = recordType[i];
            final int segment = recordSegment[i];
            final long offset = recordOffset[i];
            switch (type) {
                case TYPE_DATA:
                    table.data(segment, offset + length);
                    break;
                case LogRequest.TYPE_COPY:
                    table.copy(segment, offset + length);
                    copiedRecords = copiedRecords + 1;
                    copiedBytes = copiedBytes + length;
                    listener.onCopy(segment, offset, length, fileNumber, position);
                    continue;
                case TYPE_CREATE:
                    table.create(segment, recordName[i]);
                    recordName[i] = null;
                    break;
                case TYPE_SEAL:
                    table.seal(segment);
                    break;
                case TYPE_TRUNCATE:
                    table.truncate(segment, offset);
                    truncatedOrDeleted = true;
                    break;
                case TYPE_DELETE:
                    table.delete(segment);
                    truncatedOrDeleted = true;
                    break;
                default:
                    break;
            }
            listener.onRecord(type, segment, offset, length, fileNumber, position);
        }
        if (i > 0) {
            final int rest = recordCount - i;
            System.arraycopy(recordType, i, recordType, 0, rest);
            System.arraycopy(recordSegment, i, recordSegment, 0, rest);
            System.arraycopy(recordOffset, i, recordOffset, 0, rest);
            System.arraycopy(recordLength, i, recordLength, 0, rest);
            System.arraycopy(recordPosition, i, recordPosition, 0, rest);
            System.arraycopy(recordName, i, recordName, 0, rest);
            for (int j = rest; j < recordCount; j++) {
                recordName[j] = null;
            }
            recordCount = rest;
        }
    }

    private void completePending(final long durableStream) {
        while (pendingHead != null && pendingHead.endStream <= durableStream) {
            final LogRequest request = pendingHead;
            pendingHead = request.next;
            request.next = null;
            handoff(request, request.failure);
        }
        if (pendingHead == null) {
            pendingTail = null;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writer thread: files
    // ------------------------------------------------------------------------------------------

    /**
     * Moves to the next file: writes out the buffer (padded), takes the next file from the
     * directory, writes the segment table as its SNAPSHOT record and forces it.
     */
    private void roll() throws IOException {
        if (recordCount > 0 || pendingHead != null) {
            writeBatch(true);
        }
        if (unforced && file != null) {
            // INTERVAL: the file is closed below and never forced again; compaction may retire
            // the originals of copies it holds once they are written, so force it now.
            forceFile();
        }
        used = 0;
        durablePrefix = 0;
        final LogDirectory.NumberedFile next;
        try {
            next = directory.nextFile();
        } catch (final IOException | RuntimeException e) {
            rollPending = true;
            throw e;
        }
        directory.clearSpareError();
        final long start;
        try {
            start = writeSnapshot(next.file(), next.number());
        } catch (final IOException | RuntimeException e) {
            closeQuietly(next.file());
            directory.retire(next.number());
            rollPending = true;
            throw e;
        }
        rollPending = false;
        final LogFile old = file;
        file = next.file();
        fileNumber = next.number();
        filePosition = start;
        table.currentFile(fileNumber);
        currentFileNumber = fileNumber;
        if (old != null) {
            closeQuietly(old);
            filesRolled = filesRolled + 1;
        }
        retireDeadFiles();
    }

    /**
     * Writes the SNAPSHOT record at the head of a new file, padded to a page, and forces it.
     *
     * @return where the first batch goes.
     */
    private long writeSnapshot(final LogFile target, final long number) throws IOException {
        final int payload = table.snapshotPayloadLength();
        final int aligned = alignedLength(payload);
        final int total = align(aligned, PAGE_LENGTH);
        if (FIRST_RECORD_POSITION + (long)total + Math.max(batchLength, alignedLength(maxPayload) + PAGE_LENGTH) > fileLength) {
            throw new IOException("the segment table snapshot of " + total + " bytes (" + table.segmentCount()
                + " segments) leaves no room for a batch or an append of maxAppendLength=" + maxPayload + " in fileLength="
                + fileLength + "; configure longer log files");
        }
        final ByteBuffer bytes = total <= capacity ? buffer : BufferUtil.allocateDirectAligned(total, PAGE_LENGTH);
        final UnsafeBuffer out = bytes == buffer ? ub : new UnsafeBuffer(bytes);
        LogRecordDescriptor.putHeader(out, 0, TYPE_SNAPSHOT, payload, 0, 0);
        table.putSnapshot(out, HEADER_LENGTH);
        if (aligned > HEADER_LENGTH + payload) {
            out.setMemory(HEADER_LENGTH + payload, aligned - HEADER_LENGTH - payload, (byte)0);
        }
        out.putInt(CRC_OFFSET, LogRecordDescriptor.crc(crc, number, bytes.duplicate(), 0, payload), ByteOrder.LITTLE_ENDIAN);
        if (total > aligned) {
            LogRecordDescriptor.putPadding(out, aligned, total - aligned);
            out.setMemory(aligned + PADDING_HEADER_LENGTH, total - aligned - PADDING_HEADER_LENGTH, (byte)0);
        }
        final ByteBuffer view = bytes.duplicate();
        view.limit(total).position(0);
        target.write(view, FIRST_RECORD_POSITION);
        if (durability != DurabilityPolicy.Kind.NEVER) {
            target.force();
            forces = forces + 1;
        }
        return FIRST_RECORD_POSITION + total;
    }

    /**
     * Continues the log in file {@code number} after {@code position}: keeps the valid bytes of
     * the page holding it in the buffer (the first batch rewrites that page with them), and
     * zeros the span a torn batch may have reached after it, forced.
     */
    private void resume(final long number, final long position) throws IOException {
        if (position > fileLength) {
            throw new IOException("recovered tail position=" + position + " is past fileLength=" + fileLength + " of file " + number);
        }
        file = directory.openExisting(number);
        fileNumber = number;
        currentFileNumber = number;
        table.currentFile(number);
        final long page = position & -PAGE_LENGTH;
        final int prefix = (int)(position - page);
        filePosition = page;
        final byte[] prefixBytes = new byte[prefix];
        if (prefix > 0) {
            final ByteBuffer head = ByteBuffer.wrap(prefixBytes);
            final int read = file.read(head, page);
            if (read != prefix) {
                throw new IOException("short read of the tail page of file " + number + " at position=" + page + ": " + read + " of "
                    + prefix + " bytes");
            }
        }
        ub.setMemory(0, capacity, (byte)0);
        ub.putBytes(0, prefixBytes);
        // A torn write reaches at most one batch, or one long append, past the page.
        final long tornSpan = Math.max(capacity, (long)align(alignedLength(maxPayload), PAGE_LENGTH) + PAGE_LENGTH);
        final long zeroEnd = durability == DurabilityPolicy.Kind.EVERY_BATCH ? Math.min(fileLength, page + tornSpan) : fileLength;
        for (long at = page; at < zeroEnd; ) {
            final int chunk = (int)Math.min(capacity, zeroEnd - at);
            writeView.limit(chunk).position(0);
            file.write(writeView, at);
            if (at == page) {
                ub.setMemory(0, prefix, (byte)0);
            }
            at += chunk;
        }
        ub.putBytes(0, prefixBytes);
        file.force();
        used = prefix;
        durablePrefix = prefix;
    }

    private void retireDeadFiles() {
        truncatedOrDeleted = false;
        deadFiles.clear();
        table.takeDeadFiles(deadFiles);
        for (int i = 0; i < deadFiles.size(); i++) {
            final long number = deadFiles.getLong(i);
            listener.onFileRetired(number);
            directory.retire(number);
            filesRetired = filesRetired + 1;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writer thread: failure and recovery
    // ------------------------------------------------------------------------------------------

    /**
     * Fails the writer: every pending request, then {@code current}, fails with the error, and
     * new requests are rejected until {@link #recover()}.
     */
    private void fail(final IOException cause, final LogRequest current) {
        final LogFailedException error = new LogFailedException("log " + name + ": writing file " + fileNumber + " at position="
            + filePosition + " failed: " + cause.getMessage() + "; the log rejects requests until it recovers (it retries by itself"
            + " every retryInterval, or call recover())", cause);
        failure = error;
        state = (((state >>> 1) + 1) << 1) | FAILED;
        nextRetryNanos = System.nanoTime() + retryIntervalNanos;
        for (LogRequest request = pendingHead; request != null; ) {
            final LogRequest next = request.next;
            request.next = null;
            handoff(request, error);
            request = next;
        }
        pendingHead = null;
        pendingTail = null;
        if (current != null) {
            handoff(current, error);
        }
        for (int i = 0; i < recordCount; i++) {
            recordName[i] = null;
        }
        recordCount = 0;
        used = durablePrefix;
        newRecords = false;
        pendingPayloadBytes = 0;
        pendingPaddingBytes = 0;
        bufferedBytes = used;
        signalCompleter();
    }

    private void recoverNow(final LogRequest request) {
        final long current = state;
        if ((current & FAILED) == 0) {
            completeInOrder(request, null);
            return;
        }
        try {
            repair();
        } catch (final IOException | RuntimeException e) {
            handoff(request, new LogFailedException("log " + name + ": recover() failed, the log stays failed: " + e, e));
            signalCompleter();
            return;
        }
        state = current & ~FAILED;
        handoff(request, null);
        signalCompleter();
    }

    /**
     * What recovery does before the writer takes requests again: retries the roll that failed, or
     * rewrites the range the failed write may have touched (the durable prefix, then zeros: never
     * an acknowledged byte changed, never a request's record left to be read back) and forces it.
     */
    private void repair() throws IOException {
        if (rollPending) {
            roll();
        } else {
            if (failedExtent > 0) {
                // The failed write's range: the durable prefix (if any), then zeros.
                ub.setMemory(durablePrefix, failedExtent - durablePrefix, (byte)0);
                writeView.limit(failedExtent).position(0);
                file.write(writeView, filePosition);
            }
            forceFile();
            failedExtent = 0;
        }
    }

    /** Whether a failed writer should retry its recovery by itself now. */
    private boolean retryDue() {
        return retryIntervalNanos > 0 && (state & FAILED) != 0 && !closing && System.nanoTime() - nextRetryNanos >= 0;
    }

    /**
     * The automatic retry: {@link #repair()} on the writer thread, as {@link #recover()} does;
     * once it succeeds the writer takes requests again (in the epoch the failure began: every
     * request admitted before it has failed already). Requests are refused until then, so none
     * waits for it.
     */
    private void retryRecovery() {
        nextRetryNanos = System.nanoTime() + retryIntervalNanos;
        try {
            repair();
        } catch (final IOException | RuntimeException e) {
            LOG.debug("log {}: retrying after the disk error failed: {}", name, e.toString());
            return;
        }
        state = state & ~FAILED;
        automaticRecoveries = automaticRecoveries + 1;
        LOG.info("log {}: the disk took the retried write after the error ({}); appends are accepted again", name,
            failure != null && failure.getCause() != null ? failure.getCause().getMessage() : failure);
    }

    private static long saturatedNanos(final java.time.Duration duration) {
        try {
            return duration.toNanos();
        } catch (final ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private void finish() {
        try {
            if ((state & FAILED) == 0) {
                // A resumed tail page not rewritten yet (nothing appended since the open) is
                // written back padded: resume() zeroed it after the prefix, and a clean mark must
                // not point past zeros in the middle of a page.
                if (recordCount > 0 || pendingHead != null || (used & (PAGE_LENGTH - 1)) != 0) {
                    writeBatch(true);
                }
                if (unforced) {
                    forceFile();
                }
                if ((state & FAILED) == 0 && durability != DurabilityPolicy.Kind.NEVER) {
                    // Everything written is forced: the directory may mark the close clean.
                    cleanEndFileNumber = fileNumber;
                    cleanEndPosition = (filePosition + used + PAGE_LENGTH - 1) & -(long) PAGE_LENGTH;
                }
            }
        } catch (final IOException e) {
            fail(e, null);
        }
        synchronized (terminationLock) {
            terminated = true;
            LogRequest request;
            while ((request = queue.relaxedPoll()) != null) {
                handoff(request, new CacheClosedException("log writer " + name + " is closed"));
            }
        }
        handoff(new LogRequest(LogRequest.TYPE_STOP, 0, 0, null, null, null, 0), null);
        signalCompleter();
        closeQuietly(file);
        bufferedBytes = 0;
    }

    // ------------------------------------------------------------------------------------------
    // Hand-off to the completion thread
    // ------------------------------------------------------------------------------------------

    private void handoff(final LogRequest request, final Throwable error) {
        request.failure = error;
        if (request.type() >= 0) {
            if (error == null) {
                completedRequests++;
            } else {
                completedFailures++;
            }
        }
        handoffTail.handoffNextRelease(request);
        handoffTail = request;
        handedOff = true;
    }

    private void signalCompleter() {
        if (!handedOff) {
            return;
        }
        handedOff = false;
        requests = completedRequests;
        failedRequests = completedFailures;
        // The release store of the link must not pass the load of the flag (Dekker with the completer).
        VarHandle.fullFence();
        if (completerParked) {
            LockSupport.unpark(completerThread);
        }
    }

    private void runCompleter() {
        LogRequest head = handoffHead;
        while (true) {
            final LogRequest next = head.handoffNextAcquire();
            if (next == null) {
                completerParked = true;
                if (head.handoffNextAcquire() == null) {
                    LockSupport.parkNanos(this, COMPLETER_PARK_NANOS);
                }
                completerParked = false;
                continue;
            }
            // Unlink what is done: neither this field nor a future a caller keeps may hold on to
            // the requests handed off after it (every request ever appended stayed reachable from
            // the stub otherwise). The writer never touches a request's link once it has a successor.
            head.clearHandoffNext();
            head = next;
            handoffHead = next;
            if (next.type() == LogRequest.TYPE_STOP) {
                return;
            }
            complete(next);
        }
    }

    private void complete(final LogRequest request) {
        final Throwable error = request.failure;
        final boolean record = request.type() >= 0;
        if (error == null) {
            if (record) {
                try {
                    handler.committed(request);
                } catch (final RuntimeException | Error e) {
                    request.dropData();
                    request.completeExceptionally(e);
                    return;
                }
            }
            request.dropData();
            request.complete(request.segmentOffset());
        } else {
            if (record) {
                try {
                    handler.failed(request, error);
                } catch (final RuntimeException | Error e) {
                    LOG.warn("log {}: the commit handler failed on a failed request {}", name, request, e);
                }
            }
            request.dropData();
            request.completeExceptionally(error);
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
        if (writerThread.isAlive() || cleanEndFileNumber < 0) {
            return null;
        }
        return new long[] {cleanEndFileNumber, cleanEndPosition};
    }

    /**
     * @return whether the writer is failed (rejecting requests until {@link #recover()}).
     */
    public boolean isFailed() {
        return (state & FAILED) != 0;
    }

    /**
     * @return the error that failed the writer last (also after a recovery), or null.
     */
    public LogFailedException lastFailure() {
        return failure;
    }

    /**
     * @return how many times the writer recovered by itself after a disk error
     *         ({@link LogConfig#retryInterval()}), since it started.
     */
    public long automaticRecoveries() {
        return automaticRecoveries;
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
        return new WriterStats(batches, bytesWritten, payloadBytes, paddingBytes, forces, requests, failedRequests, queue.size(),
            bufferedBytes, filesRolled, filesRetired, isFailed());
    }

    /**
     * Stops accepting requests, writes (padded) and forces what was submitted before, completes
     * it, stops the threads and closes the current file. Requests that race with it fail with a
     * {@link CacheClosedException}. Does not close the directory. Idempotent; waits for the
     * threads.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closeCalled) {
                return;
            }
            closeCalled = true;
        }
        closing = true;
        LockSupport.unpark(writerThread);
        joinQuietly(writerThread);
        joinQuietly(completerThread);
    }

    private static void joinQuietly(final Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (final InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(final LogFile file) {
        if (file == null) {
            return;
        }
        try {
            file.close();
        } catch (final IOException e) {
            LOG.debug("closing {} failed", file.path(), e);
        }
    }

    @Override
    public String toString() {
        return "AggregatingWriter{name=" + name + ", directory=" + directory.path() + ", failed=" + isFailed() + '}';
    }
}
