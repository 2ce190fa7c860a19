package io.streamcache.log.internal;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogFileLostException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;
import static io.streamcache.log.internal.LogRecordDescriptor.TYPE_DATA;
import static io.streamcache.log.internal.LogRecordDescriptor.alignedLength;

/**
 * The aggregating writer's writer thread: drains the request queue into the {@link RecordBatch},
 * writes and forces batches through the {@link LogRoller}, hands durable or failed requests to
 * the {@link Completer} in submission order, and runs the failure and recovery state machine.
 * Its fields are confined to the writer thread, except the volatile ones that producers read
 * ({@link #state}, {@link #failure}, {@link #closing}, {@link #terminated}, {@link #writerParked})
 * and the clean end read after the thread is joined.
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
 * <p>With {@link LogConfig#fillBatches()} (for {@link DurabilityPolicy#NEVER} under a broker that
 * acknowledges from its own journal) it does wait: a batch whose records nobody waits for is held,
 * its queue empty, until it is full or {@link LogConfig#maxDelay()} old, the writer sleeping in
 * slices of at most {@link #FILL_PARK_NANOS} that asynchronous appends do not cut short; a request
 * someone waits for ({@link #awaited}), a force request and the close end the wait. Under NEVER a
 * write is a {@code pwrite} into the page cache, and each one also wakes the completion thread:
 * written at once, a bookie's adds went out one or two per write (a 4 KB page each for 100-byte
 * entries), a system call and two thread wakes per add; filled, one write carries up to maxDelay of adds.
 * <pre>
 *  writer thread (one)
 *   | drain: per request, header + payload copied into the 4 KB-aligned batch buffer, CRC32C
 *   | queue empty, batch full, or maxDelay passed: pad or cut the tail to a 4 KB boundary
 *   | pwrite(batch) once; fdatasync once (EVERY_BATCH)
 *   | durable records: segment table, listener (location index); dead files retired
 *   | durable requests linked, in order, to the completion list; unpark the completer
 * </pre>
 * A cut tail's requests complete with the batch that writes it: the next one if requests are
 * waiting when the cut write is done (under load they are: they gathered during the force), else
 * a padded write of the tail at once (the burst is over). {@link AlignmentPolicy#ADAPTIVE} cuts
 * batches of {@link LogConfig#cutThreshold()} bytes or more and pads smaller ones.
 *
 * <h2>Durability and completion</h2>
 * With {@link DurabilityPolicy#EVERY_BATCH} each batch is forced before any of its requests is
 * handed off; the completion thread completes requests strictly in submission order, after the
 * handler each carries applied it (the store puts the data into the cache and the read index
 * there, so tail readers only ever see durable bytes). A request that writes nothing (a rejection,
 * a skipped copy, a retire) completes after the requests before it.
 *
 * <p>With {@link DurabilityPolicy#interval} or {@link DurabilityPolicy#NEVER} a batch's requests
 * complete once it is written; the roller remembers that the file holds unforced writes, and
 * forces it when the interval is due (INTERVAL only), before it rolls away from it, before it
 * retires a file, and at close. A force request ({@link AggregatingWriter#force()}) waits, apart
 * from the pending records, until every record accepted before it is written: the write that
 * covers it is forced whatever the policy, or, if the batch holds no record, the writer forces
 * once for all the force requests waiting. Each one is handed to the completion thread after the
 * records it covers, so its future completes after theirs.
 *
 * <h2>Forces in flight</h2>
 * With EVERY_BATCH and {@link LogConfig#forcesInFlight()} N above 1, the writer does not force a
 * batch itself: it writes it, hands its force to the {@link ForceStage} (one of N forcing
 * threads), and goes on writing the next batches, in log order, while up to N forces run; with
 * N forces running, the batch keeps gathering requests until one returns. While fewer are
 * running, the next batch is written only once it is at least as long as the last batch written
 * (or {@link LogConfig#maxDelay()} passed since its first record, or no force is in flight): the
 * bytes that wait (with synchronous producers, about one append per producer) are split into
 * batches of equal length, one per force in flight, instead of a full batch followed by slivers
 * that each pay a force of their own (measured: with the rule "a page at least", 40 synchronous
 * producers and 4 forces in flight wrote 43 KB batches against 68-78 KB with one force, and
 * forced 0.21 times per append against 0.11-0.13). The written records
 * stay in the {@link RecordBatch} until the stage reports a force it may trust that covers
 * them; then they are applied (segment table, listener, dead files) and their requests handed
 * off, in order, here on the writer thread, as with one force. A roll, a retire of a file, a
 * force request that waits for nothing more to be written, and the close first wait for every
 * force in flight: the log only ever moves to a new file once the old one is wholly forced, so
 * the forces in flight are always of the current file, and no request of a new file completes
 * before the old file's last batch is forced. With N = 1 (the default), INTERVAL or NEVER, none
 * of this runs: the writer forces each batch before it writes the next.
 *
 * <h2>Disk errors</h2>
 * An {@link IOException} from a write or a force (a full disk: {@code No space left on device},
 * an I/O error) fails the requests of the batch and every request not yet written with a
 * {@link LogFailedException} whose cause is the error, and fails the writer: it rejects new
 * requests and fails any still queued, until a recovery succeeds. Recovery writes zeros from the
 * start of the first record not acknowledged to the end of the range the failed write may have
 * touched, and forces them, or retries the file roll that failed; only then does the writer
 * accept requests again, in a new epoch, and its next record goes where the zeros start. That
 * start is before the failed write when a cut write wrote the head of a record and carried its
 * tail: the record's request fails with the others (its tail was not written and forced), its
 * head is zeroed (the page it starts in is rewritten with the acknowledged bytes before it, then
 * a padding record to the end of the page, then zeros), so that no torn record is left for later
 * records to follow: recovery would refuse the log as damaged. Where that start is inside a page,
 * the padding, never zeros, ends the page: if the next record does not fit in the file the writer
 * rolls without writing the page again, and zeros inside a page of a file that later files follow
 * are damage to recovery. After a recovery no byte of a failed request's record is
 * left in the log; a request whose record was written whole (and forced, with EVERY_BATCH)
 * before the error, such as a cut tail written padded by a roll whose next file then fails, is
 * acknowledged, once. The
 * writer runs that recovery by itself every {@link LogConfig#retryInterval()} while it is failed
 * and idle (logged at INFO from this thread). A request carries the epoch in which it was
 * admitted; one admitted before a failure fails even if it reaches the writer after a recovery,
 * so its offsets can be given back and reused. No acknowledged byte is ever changed, so nothing
 * acknowledged is lost.
 *
 * <p>With forces in flight, a failed write or force first waits for every force in flight; the
 * requests of the batches a trusted force covers are acknowledged, every other one fails, and
 * the repair zeros from the first record not acknowledged (or the first byte of the first
 * write whose force was not trusted, after the durable prefix of a resumed page) to the end of
 * everything written, batches written after the failed one included: all of them in the
 * current file, since a roll waits for the forces in flight.
 *
 * <p><b>Why one class at ~820 lines:</b> what is here is the writer thread's state machine:
 * drain, write, make durable, complete in order, fail, repair, retry. Every part reads and
 * writes the same confined state (the pending list, the stream positions, the epoch), so a
 * split would pass that state around or share it; the parts with state of their own are
 * classes already: the batch buffer ({@link RecordBatch}), the files ({@link LogRoller}), the
 * forces in flight ({@link ForceStage}), completion ({@link Completer}).
 */
final class BatchWriter {
    private static final Logger LOG = LoggerFactory.getLogger(AggregatingWriter.class);

    /** Bit 0 of {@link #state}: the writer is failed. Bits 1..63: the epoch. */
    static final long FAILED = 1;
    private static final int DELAY_CHECK_MASK = 63;
    private static final int IDLE_SPINS = 64;
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * Longest single sleep of a writer filling a batch ({@link LogConfig#fillBatches()}): asynchronous
     * appends do not wake it, so it wakes this often to drain them into the batch, write it once
     * it is full, and keep the queue short.
     */
    private static final long FILL_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    // ------------------------------------------------------------------------------------------
    // Settings (immutable)
    // ------------------------------------------------------------------------------------------

    private final String name;
    private final RequestQueue queue;
    private final RecordBatch batch;
    private final LogRoller files;
    private final Completer completer;
    private final WriterCounters counters;
    private final int batchLength;
    private final int cutThreshold;
    private final AlignmentPolicy alignment;
    private final DurabilityPolicy.Kind durability;
    private final long forceIntervalNanos;
    private final long maxDelayNanos;
    private final boolean fillBatches;
    /** 0: no automatic retry after a failure. */
    private final long retryIntervalNanos;
    private final Thread thread;
    /** Forces in flight (EVERY_BATCH with {@link LogConfig#forcesInFlight()} above 1); null: each batch is forced before the next is written. */
    private final ForceStage forces;
    /**
     * With forces in flight: the length of the last batch handed to a force. While a force is in
     * flight, a shorter batch keeps gathering (up to maxDelay): see the class comment.
     */
    private int lastStagedLength;

    // ------------------------------------------------------------------------------------------
    // Shared with producers
    // ------------------------------------------------------------------------------------------

    /** Held while the queue is drained for the last time, and by a producer that drains after it. */
    final Object terminationLock = new Object();
    /** Epoch &lt;&lt; 1 | FAILED: written by the writer thread, read by producers (volatile). */
    volatile long state;
    /** The error that failed the writer; written before {@link #state}, read after it. */
    volatile LogFailedException failure;
    volatile boolean closing;
    /** Set under {@link #terminationLock} once the writer drains no more. */
    volatile boolean terminated;
    /** The writer is parked or about to park: a producer that offered must unpark it. Dekker with the queue's index. */
    volatile boolean writerParked;
    /**
     * The writer sleeps to fill its batch ({@link LogConfig#fillBatches()}): a producer that
     * offered a request someone waits for ({@link #awaited}) must unpark it. Dekker with the queue's index.
     */
    volatile boolean lingering;

    // ------------------------------------------------------------------------------------------
    // Writer thread
    // ------------------------------------------------------------------------------------------

    /** A stream position counts every byte written since start: request i completes once the log is durable up to its end. */
    private long streamBase;
    private LogRequest pendingHead;
    private LogRequest pendingTail;
    /** Force requests waiting for a force that covers their end ({@link LogRequest#endStream}), in arrival order. */
    private LogRequest forceHead;
    private LogRequest forceTail;
    /** Bytes from the batch's file position a failed write may have touched: recovery rewrites them. */
    private int failedExtent;
    /**
     * Set when the writer fails: the file position of the first record not acknowledged if it
     * starts before the batch's file position (a cut write wrote its head, its tail was carried):
     * recovery zeros from there. -1: none.
     */
    private long tornFrom = -1;
    /** When a failed writer retries its recovery by itself next (System.nanoTime()). */
    private long nextRetryNanos;
    /**
     * A request someone waits for ({@link #awaited}) is in the batch or pending: the batch is
     * written without waiting to fill. Cleared once a write leaves no record buffered.
     */
    private boolean batchAwaited;
    /** Set by a clean finish (read after joining the writer thread): the last file and the end of its last write; -1 otherwise. */
    long cleanEndFileNumber = -1;
    long cleanEndPosition = -1;

    BatchWriter(final String name, final LogConfig config, final RequestQueue queue, final RecordBatch batch,
                final LogRoller files, final Completer completer, final WriterCounters counters, final StreamcacheThreads threads) {
        this.name = name;
        this.queue = queue;
        this.batch = batch;
        this.files = files;
        this.completer = completer;
        this.counters = counters;
        this.batchLength = config.batchLength();
        this.cutThreshold = config.cutThreshold();
        this.alignment = config.alignment();
        this.durability = config.durability().kind();
        this.forceIntervalNanos = config.durability().interval().toNanos();
        this.maxDelayNanos = config.maxDelay().toNanos();
        this.fillBatches = config.fillBatches();
        this.retryIntervalNanos = saturatedNanos(config.retryInterval());
        this.thread = threads.newThread(StreamcacheThreads.Role.LOG_WRITER, name, this::run);
        this.forces = durability == DurabilityPolicy.Kind.EVERY_BATCH && config.forcesInFlight() > 1
            ? new ForceStage(name, config.forcesInFlight(), counters, threads) : null;
    }

    void start() {
        if (forces != null) {
            forces.start(thread);
        }
        thread.start();
    }

    Thread thread() {
        return thread;
    }

    // ------------------------------------------------------------------------------------------
    // Main loop
    // ------------------------------------------------------------------------------------------

    private void run() {
        int polls = 0;
        while (true) {
            try {
                if (forces != null && forces.inFlight()) {
                    collectForces();
                }
                final LogRequest request = queue.relaxedPoll();
                if (request != null) {
                    accept(request);
                    if (batch.hasNewRecords() && (batch.used() >= batchLength
                        || ((++polls & DELAY_CHECK_MASK) == 0 && System.nanoTime() - batch.firstNewNanos() >= maxDelayNanos))) {
                        writeBatch(false);
                    }
                    continue;
                }
                polls = 0;
                if (batch.hasNewRecords()) {
                    if (forces != null && (forces.full() || (forces.inFlight()
                        && batch.used() < Math.max(PAGE_LENGTH, lastStagedLength)
                        && System.nanoTime() - batch.firstNewNanos() < maxDelayNanos))) {
                        // Every force in flight, or shorter than the batch last written (and than
                        // a page) while one is: the batch gathers until a force returns, it is as
                        // long, or maxDelay passes, so that the waiting bytes are split into
                        // batches of equal length, not a long one and slivers forced one by one.
                        awaitForceOrRequest(forces.full() ? IDLE_PARK_NANOS
                            : maxDelayNanos - (System.nanoTime() - batch.firstNewNanos()));
                        continue;
                    }
                    if (fillBatches && forces == null && fillWanted()) {
                        fill();
                        continue;
                    }
                    writeBatch(false);
                    continue;
                }
                if (batch.bufferedRecords() > 0 && queueStaysEmpty()) {
                    // A cut tail and nothing after it: the burst is over, write it padded now.
                    writeBatch(true);
                    continue;
                }
                if (forceHead != null && batch.bufferedRecords() == 0) {
                    // Everything the waiting force requests cover is written: one force for all.
                    forceWritten();
                    continue;
                }
                if (intervalForceDue()) {
                    files.force();
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

    /**
     * @return whether someone waits for {@code request}'s completion: a synchronous append (a
     *         pooled request: its thread waits), or any request but an asynchronous append (a
     *         create, seal, truncate, delete, copy, retire, force, recovery or stop).
     */
    static boolean awaited(final LogRequest request) {
        return request.type() != TYPE_DATA || request.isPooled();
    }

    /**
     * With {@link LogConfig#fillBatches()}: whether the batch, its queue empty, should wait for
     * more appends rather than be written now: nobody waits for a request in it or for a force,
     * the writer is not closing or failed, and it is neither full nor maxDelay old.
     */
    private boolean fillWanted() {
        return !batchAwaited && forceHead == null && !closing && (state & FAILED) == 0 && batch.used() < batchLength
            && System.nanoTime() - batch.firstNewNanos() < maxDelayNanos;
    }

    /**
     * Sleeps while the batch fills: until maxDelay since its first record, at most
     * {@link #FILL_PARK_NANOS}, or until a request someone waits for is queued.
     */
    private void fill() {
        final long remaining = maxDelayNanos - (System.nanoTime() - batch.firstNewNanos());
        if (remaining <= 0) {
            return;
        }
        lingering = true;
        if (queue.isEmpty() && !closing) {
            LockSupport.parkNanos(this, Math.min(remaining, FILL_PARK_NANOS));
        }
        lingering = false;
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
        if (durability == DurabilityPolicy.Kind.INTERVAL && files.unforced()) {
            timeout = Math.min(timeout, files.lastForceNanos() + forceIntervalNanos - now);
        }
        if (retryIntervalNanos > 0 && (state & FAILED) != 0) {
            timeout = Math.min(timeout, nextRetryNanos - now);
        }
        if (timeout <= 0) {
            return;
        }
        writerParked = true;
        if (queue.isEmpty() && !closing) {
            if (forces != null && forces.inFlight()) {
                forces.awaitReport(timeout);
            } else {
                LockSupport.parkNanos(this, timeout);
            }
        }
        writerParked = false;
    }

    /** The batch waits for a force to return: waits for that, a request, or {@code nanos}. */
    private void awaitForceOrRequest(final long nanos) {
        if (!queueStaysEmpty() || nanos <= 0) {
            return;
        }
        writerParked = true;
        if (queue.isEmpty()) {
            forces.awaitReport(nanos);
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
        if (type == LogRequest.TYPE_FORCE) {
            acceptForce(request);
            return;
        }
        if (type == LogRequest.TYPE_COPY && !copyWanted(request)) {
            counters.copySkipped();
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
            if (!files.fits(batch.used(), aligned)) {
                roll();
            }
            if (batch.used() + aligned > batch.capacity()) {
                writeBatch(false);
            }
            if (batch.used() + aligned > batch.capacity()) {
                // One append longer than a batch: written with what precedes it in one write.
                batch.growFor(batch.used() + aligned);
            }
            batch.put(type, request.segmentId(), request.segmentOffset(), request.data(), nameBytes, length, files.fileNumber(),
                files.filePosition());
        } catch (final IOException e) {
            fail(e, request);
            return;
        } catch (final RuntimeException | Error e) {
            LOG.error("log writer {} hit an unexpected error on {}; it fails its requests until recover()", name, request, e);
            fail(new IOException("unexpected error in the log writer: " + e, e), request);
            return;
        }
        request.endStream = streamBase + batch.used();
        appendPending(request);
        if (awaited(request)) {
            batchAwaited = true;
        }
    }

    /** Whether a copy's bytes are still live in the durable table: the segment exists and holds them past its start. */
    private boolean copyWanted(final LogRequest request) {
        final LogSegmentTable.Entry entry = files.table().segment(request.segmentId());
        final long end = request.segmentOffset() + request.length();
        return entry != null && end > entry.start && end <= entry.length;
    }

    /** Retires a file compaction emptied: forces what was written (the copies), then hands the file over. */
    private void retireNow(final LogRequest request) {
        final long number = request.segmentOffset();
        if (number == files.fileNumber()) {
            completeInOrder(request, new IllegalArgumentException("fileNumber=" + number + " is the current file of log " + name));
            return;
        }
        try {
            // The copies out of the file may be written and not forced yet.
            drainForces();
            files.retire(number);
        } catch (final IOException e) {
            fail(e, request);
            return;
        }
        completeInOrder(request, null);
    }

    /**
     * Queues a force request: it completes once every record accepted before it is written and
     * forced. Its end is the end of the batch's records (they are written together), or the
     * stream written so far if the batch holds no record.
     */
    private void acceptForce(final LogRequest request) {
        request.endStream = batch.bufferedRecords() == 0 ? streamBase : streamBase + batch.used();
        request.next = null;
        if (forceTail == null) {
            forceHead = request;
        } else {
            forceTail.next = request;
        }
        forceTail = request;
    }

    /**
     * Forces the file if something written is not forced yet, then completes every waiting force
     * request: the caller checked that the batch holds no record, so each one's end is written.
     */
    private void forceWritten() throws IOException {
        drainForces();
        if (files.unforced()) {
            files.force();
        }
        completeForces(streamBase);
        completer.signal();
    }

    /** Hands off the force requests whose end is forced ({@code forcedStream}), after the records before them. */
    private void completeForces(final long forcedStream) {
        while (forceHead != null && forceHead.endStream <= forcedStream) {
            final LogRequest request = forceHead;
            forceHead = request.next;
            request.next = null;
            completer.handoff(request, null);
        }
        if (forceHead == null) {
            forceTail = null;
        }
    }

    /** INTERVAL: whether unforced writes are due for their force (never under the other policies). */
    private boolean intervalForceDue() {
        return durability == DurabilityPolicy.Kind.INTERVAL && files.unforced()
            && System.nanoTime() - files.lastForceNanos() >= forceIntervalNanos;
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
            completer.handoff(request, error);
            completer.signal();
        } else {
            request.failure = error;
            request.endStream = streamBase + batch.used();
            appendPending(request);
            batchAwaited = true;
        }
    }

    private void completePending(final long durableStream) {
        while (pendingHead != null && pendingHead.endStream <= durableStream) {
            final LogRequest request = pendingHead;
            pendingHead = request.next;
            request.next = null;
            completer.handoff(request, request.failure);
        }
        if (pendingHead == null) {
            pendingTail = null;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Batches and files
    // ------------------------------------------------------------------------------------------

    /**
     * Writes the batch's records out: padded to the next 4 KB boundary, or cut at the last one
     * (the tail carried), per the alignment policy; {@code pad} forces padding.
     */
    private void writeBatch(final boolean pad) throws IOException {
        final int used = batch.used();
        final boolean cut = !pad && (alignment == AlignmentPolicy.CUT || (alignment == AlignmentPolicy.ADAPTIVE && used >= cutThreshold));
        final int end = cut ? batch.cutEnd() : batch.padEnd();
        if (end == 0) {
            // Cut: less than a page, nothing to write; the records wait for the requests queued
            // behind them, or are written padded if none are. Padded: an empty batch.
            return;
        }
        if (forces != null) {
            writeStaged(end);
            return;
        }
        failedExtent = Math.max(failedExtent, end);
        files.write(batch.view(end));
        // A waiting force request makes this write's force due whatever the policy: the requests
        // that gather while it is forced form the next batch, so concurrent forces share one.
        final boolean force = durability == DurabilityPolicy.Kind.EVERY_BATCH || forceHead != null
            || (durability == DurabilityPolicy.Kind.INTERVAL && System.nanoTime() - files.lastForceNanos() >= forceIntervalNanos);
        if (force) {
            files.force();
        } else {
            // INTERVAL before its interval, or NEVER: written, not forced; a force request, a
            // roll, a retire or the close forces it.
            files.markUnforced();
        }
        failedExtent = 0;

        final long writtenEnd = files.filePosition() + end;
        final long durableStream = streamBase + end;
        files.apply(writtenEnd);
        completePending(durableStream);
        if (force) {
            completeForces(durableStream);
        }
        batch.written(end, files.filePosition());
        files.advance(end);
        streamBase = durableStream;
        if (batch.bufferedRecords() == 0) {
            batchAwaited = false;
        }

        counters.batch(end, batch.takePayloadBytes(), batch.takePaddingBytes());
        counters.bufferedBytes = batch.used();
        files.retireIfTruncated();
        completer.signal();
    }

    /**
     * With forces in flight: writes the batch's first {@code end} bytes and issues their force
     * (waiting first for a free slot); the records are applied and their requests completed when
     * the force returns ({@link #collectForces()}).
     */
    private void writeStaged(final int end) throws IOException {
        while (forces.full()) {
            collectForces();
            if (forces.full()) {
                forces.awaitReport(IDLE_PARK_NANOS);
            }
        }
        failedExtent = Math.max(failedExtent, end);
        final long start = files.filePosition();
        files.write(batch.view(end));
        failedExtent = 0;
        streamBase += end;
        // Not acknowledged from after the durable prefix of a resumed page it rewrote.
        forces.issue(files.file(), files.identity(), streamBase, start + batch.durablePrefix(), start + end);
        lastStagedLength = Math.min(end, batchLength);
        batch.written(end, start);
        files.advance(end);
        counters.batch(end, batch.takePayloadBytes(), batch.takePaddingBytes());
        counters.bufferedBytes = batch.used();
    }

    /**
     * Applies the records the forces that returned made durable and completes their requests, in
     * order.
     *
     * @throws IOException the error of a force that failed: the caller fails the writer.
     */
    private void collectForces() throws IOException {
        if (forces.collect()) {
            applyDurable(forces.durableStream(), forces.durableFileEnd(), true);
        }
        final IOException error = forces.failure();
        if (error != null) {
            throw error;
        }
    }

    /** Waits for every force in flight and applies what they made durable (nothing without forces in flight). */
    private void drainForces() throws IOException {
        if (forces != null && forces.inFlight()) {
            forces.awaitAll();
            collectForces();
        }
    }

    /** The log is durable up to {@code stream}, {@code fileEnd} in the current file: records applied, requests completed. */
    private void applyDurable(final long stream, final long fileEnd, final boolean retire) throws IOException {
        files.apply(fileEnd);
        completePending(stream);
        completeForces(stream);
        if (retire) {
            files.retireIfTruncated();
        }
        completer.signal();
    }

    /**
     * Moves to the next file: writes out the batch (padded), waits for the forces in flight
     * (no request of the new file may complete before the old one is forced), then the roller
     * takes the next file and writes its SNAPSHOT.
     */
    private void roll() throws IOException {
        if (batch.bufferedRecords() > 0 || pendingHead != null) {
            writeBatch(true);
        }
        drainForces();
        files.roll();
    }

    // ------------------------------------------------------------------------------------------
    // Failure and recovery
    // ------------------------------------------------------------------------------------------

    /**
     * Fails the writer: every pending request, then {@code current}, fails with the error, and
     * new requests are rejected until a recovery.
     */
    private void fail(final IOException cause, final LogRequest current) {
        // Forces in flight: what the ones that returned made durable is acknowledged (if they can
        // be trusted), every write after that is not.
        long unacknowledged = -1;
        if (forces != null && forces.inFlight()) {
            forces.awaitAll();
            if (forces.collect()) {
                try {
                    applyDurable(forces.durableStream(), forces.durableFileEnd(), false);
                } catch (final IOException e) {
                    throw new AssertionError("applying without retiring does no I/O", e);
                }
            }
            unacknowledged = forces.abandon();
        }
        final LogFailedException error = cause instanceof LogFileGoneException
            ? new LogFileLostException("log " + name + ": " + cause.getMessage() + "; the log rejects requests: close the store"
                + " and reopen it (recovery refuses a log whose files are missing)", cause)
            : new LogFailedException("log " + name + ": writing file " + files.fileNumber()
            + " at position=" + files.filePosition() + " failed: " + cause.getMessage() + "; the log rejects requests until it"
            + " recovers (it retries by itself every retryInterval, or call recover())", cause);
        failure = error;
        state = (((state >>> 1) + 1) << 1) | FAILED;
        nextRetryNanos = System.nanoTime() + retryIntervalNanos;
        for (LogRequest request = pendingHead; request != null; ) {
            final LogRequest next = request.next;
            request.next = null;
            completer.handoff(request, error);
            request = next;
        }
        pendingHead = null;
        pendingTail = null;
        for (LogRequest request = forceHead; request != null; ) {
            final LogRequest next = request.next;
            request.next = null;
            completer.handoff(request, error);
            request = next;
        }
        forceHead = null;
        forceTail = null;
        if (current != null) {
            completer.handoff(current, error);
        }
        if (tornFrom < 0) {
            // From the first record not acknowledged whose head is on disk (written, maybe forced,
            // by a cut write, or written whole with its force in flight), or the first write whose
            // force was in flight: all written, none acknowledged, all zeroed by the repair.
            long from = unacknowledged;
            if (batch.recordCount() > 0 && batch.position(0) < files.filePosition() && (from < 0 || batch.position(0) < from)) {
                from = batch.position(0);
            }
            tornFrom = from;
        }
        batch.discard();
        counters.bufferedBytes = batch.used();
        completer.signal();
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
            completer.handoff(request, new LogFailedException("log " + name + ": recover() failed, the log stays failed: " + e, e));
            completer.signal();
            return;
        }
        state = current & ~FAILED;
        completer.handoff(request, null);
        completer.signal();
    }

    /**
     * What recovery does before the writer takes requests again: retries the roll that failed, or
     * rewrites with zeros, and forces, everything from the start of the first record not
     * acknowledged to the end of the range the failed write may have touched: never an
     * acknowledged byte changed, never a failed request's record, whole or in part, left where
     * later records would follow it. That start is the batch's file position (after its durable
     * prefix), or before it when a cut write wrote the head of that record and carried its tail:
     * then the log's end moves back to it ({@link LogRoller#rewind}).
     */
    private void repair() throws IOException {
        if (files.rollPending()) {
            roll();
        } else {
            if (tornFrom >= 0) {
                files.rewind(tornFrom, files.filePosition() + failedExtent);
                tornFrom = -1;
            } else {
                if (failedExtent > 0) {
                    // The failed write's range: the durable prefix (if any) and padding to its
                    // page's end, then zeros.
                    files.write(batch.zeroedAfterPrefix(failedExtent));
                }
                files.force();
            }
            failedExtent = 0;
        }
    }

    /** Whether a failed writer should retry its recovery by itself now. */
    private boolean retryDue() {
        return retryIntervalNanos > 0 && (state & FAILED) != 0 && !closing && System.nanoTime() - nextRetryNanos >= 0;
    }

    /**
     * The automatic retry: {@link #repair()} on the writer thread, as a recover request does;
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
        counters.automaticRecovery();
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
                // A resumed tail page not rewritten yet (nothing appended since the open, or since
                // a repair moved the end into a page) is written back padded (resume() wrote it
                // with padding after the prefix already): the clean mark is the end of a write.
                if (batch.bufferedRecords() > 0 || pendingHead != null || (batch.used() & (PAGE_LENGTH - 1)) != 0) {
                    writeBatch(true);
                }
                drainForces();
                if (files.unforced()) {
                    files.force();
                }
                completeForces(streamBase);
                if ((state & FAILED) == 0) {
                    // Everything written is forced (under every policy: a close forces what it
                    // finds unforced): the directory may mark the close clean.
                    cleanEndFileNumber = files.fileNumber();
                    cleanEndPosition = (files.filePosition() + batch.used() + PAGE_LENGTH - 1) & -(long) PAGE_LENGTH;
                }
            }
        } catch (final IOException e) {
            fail(e, null);
        }
        synchronized (terminationLock) {
            terminated = true;
            LogRequest request;
            while ((request = queue.relaxedPoll()) != null) {
                completer.handoff(request, new CacheClosedException("log writer " + name + " is closed"));
            }
        }
        if (forces != null) {
            forces.stop();
        }
        completer.stop();
        files.close();
        counters.bufferedBytes = 0;
    }
}
