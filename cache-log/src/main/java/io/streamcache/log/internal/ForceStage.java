package io.streamcache.log.internal;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.LogFile;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The aggregating writer's forces in flight ({@link io.streamcache.log.LogConfig#forcesInFlight()}
 * above 1, with EVERY_BATCH): the writer thread writes a batch, then issues a <em>ticket</em>
 * (numbered 1, 2, ... in write order) that one of the stage's forcing threads takes and forces
 * the file for, while the writer goes on writing the next batches. The writer learns here, in
 * ticket order, up to which batch the log is durable; it applies and completes the requests of
 * those batches itself (so requests still complete in submission order).
 * <pre>
 *  writer thread                       forcing threads (N, ticket t goes to thread (t-1) mod N)
 *   | pwrite(batch k)
 *   | issue(k): file, stream end,   -&gt;  force(), identity check ... returns or throws
 *   |   file start and end              issuedAtEnd[k] = tickets issued by then; status[k] = DONE/FAILED
 *   | pwrite(batch k+1), issue(k+1) -&gt;  force() ...
 *   | collect(): durable up to the last ticket it may trust; apply, complete in order
 *   v
 * </pre>
 * <b>What a returned force proves.</b> A force that began after batch k's write returned covers
 * every byte written before it began, so the log is durable up to the highest such end, not
 * only up to the force's own batch. But when forces of one file overlap, a write-back error may
 * be reported to only one of them (Linux reports an error once per open file, to the first
 * force that checks for it), and another that ran at the same time may return without error
 * although bytes it covers were lost. So ticket j is trusted only once every ticket issued
 * before j returned has returned too, all without error: then any error of the bytes j covers
 * was reported to one of them. {@link #collect()} consumes tickets up to the last trusted one;
 * a failed ticket fails every ticket not consumed before it, and the writer zeros what they
 * wrote ({@link #abandon()} says from where).
 *
 * <p><b>Threads.</b> The ticket arrays are a ring of N slots: the writer fills slot (t-1) mod N
 * and then publishes t in {@link #issued} (volatile), the slot's forcing thread fills the outcome
 * and then publishes it in {@link #status} (volatile); the writer reuses a slot only once it
 * consumed the ticket before (at most N tickets are issued and not consumed). The writer
 * unparks a forcing thread after each issue, a forcing thread the writer after each force;
 * parking with a permit loses no wake-up. Every method but the forcing threads' loop is for the
 * writer thread only.
 */
final class ForceStage {
    private static final int PENDING = 0;
    private static final int DONE = 1;
    private static final int FAILED = 2;
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final int slots;
    private final Thread[] threads;
    private final WriterCounters counters;
    private Thread writer;

    // Per slot: the ticket's file and its identity, its stream end, the file positions its write started and ended at.
    private final LogFile[] file;
    private final FileIdentity[] identity;
    private final long[] streamEnd;
    private final long[] fileStart;
    private final long[] fileEnd;
    // Per slot, by its forcing thread before the status: tickets issued when the force returned, the error.
    private final long[] issuedAtEnd;
    /** Per slot, by its forcing thread before the status: how long the force took, in nanoseconds. */
    private final long[] forceNanos;
    private final Throwable[] error;
    private final AtomicIntegerArray status;

    /** Tickets issued: written by the writer after the slot, read by the forcing threads. */
    private volatile long issued;
    private volatile boolean stopped;

    // Writer thread.
    private long consumed;
    private long durableStream;
    private long durableFileEnd;

    ForceStage(final String name, final int slots, final WriterCounters counters, final StreamcacheThreads threads) {
        this.slots = slots;
        this.counters = counters;
        this.file = new LogFile[slots];
        this.identity = new FileIdentity[slots];
        this.streamEnd = new long[slots];
        this.fileStart = new long[slots];
        this.fileEnd = new long[slots];
        this.issuedAtEnd = new long[slots];
        this.forceNanos = new long[slots];
        this.error = new Throwable[slots];
        this.status = new AtomicIntegerArray(slots);
        this.threads = new Thread[slots];
        for (int i = 0; i < slots; i++) {
            final int slot = i;
            this.threads[i] = threads.newThread(StreamcacheThreads.Role.LOG_FORCER, name, () -> run(slot));
        }
    }

    /** Starts the forcing threads; {@code writerThread} is unparked after each force. */
    void start(final Thread writerThread) {
        this.writer = writerThread;
        for (final Thread thread : threads) {
            thread.start();
        }
    }

    private int slot(final long ticket) {
        return (int)((ticket - 1) % slots);
    }

    // ------------------------------------------------------------------------------------------
    // Forcing threads
    // ------------------------------------------------------------------------------------------

    private void run(final int slot) {
        long next = slot + 1;
        while (true) {
            while (issued < next) {
                if (stopped) {
                    return;
                }
                LockSupport.parkNanos(this, PARK_NANOS);
            }
            Throwable failure = null;
            final long forceStart = System.nanoTime();
            try {
                file[slot].force();
                forceNanos[slot] = System.nanoTime() - forceStart;
                // As the writer's own forces: one stat per force, so that no force
                // acknowledges appends into a file deleted or replaced under the writer.
                final FileIdentity checked = identity[slot];
                if (checked != null) {
                    checked.check();
                }
            } catch (final Throwable e) {
                failure = e;
            }
            issuedAtEnd[slot] = issued;
            error[slot] = failure;
            status.set(slot, failure == null ? DONE : FAILED);
            LockSupport.unpark(writer);
            next += slots;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writer thread
    // ------------------------------------------------------------------------------------------

    /** Whether N tickets are issued and not consumed: the next must wait. */
    boolean full() {
        return issued - consumed >= slots;
    }

    /** Whether a ticket is issued and not consumed. */
    boolean inFlight() {
        return issued > consumed;
    }

    /**
     * Issues a force of {@code target} for the write of {@code [start, end)} that just returned;
     * the caller checked that the stage is not {@link #full()}.
     *
     * @param targetIdentity the file's identity, checked after the force ({@link FileIdentity#check()}:
     *                       a file deleted or replaced fails the ticket); null: not checked.
     * @param stream         the stream position the write ended at.
     */
    void issue(final LogFile target, final FileIdentity targetIdentity, final long stream, final long start, final long end) {
        final long ticket = issued + 1;
        final int slot = slot(ticket);
        file[slot] = target;
        identity[slot] = targetIdentity;
        streamEnd[slot] = stream;
        fileStart[slot] = start;
        fileEnd[slot] = end;
        error[slot] = null;
        status.lazySet(slot, PENDING);
        issued = ticket;
        LockSupport.unpark(threads[slot]);
    }

    /**
     * Consumes the tickets the log's durability may be established by: up to the last ticket
     * {@code j} such that every ticket up to the highest issued before j's force returned has
     * returned without error.
     *
     * @return whether the log became durable further: {@link #durableStream()} and
     *         {@link #durableFileEnd()} say how far.
     */
    boolean collect() {
        final long last = issued;
        long done = consumed;
        while (done < last && status.get(slot(done + 1)) == DONE) {
            done++;
        }
        long trusted = 0;
        for (long j = consumed + 1; j <= done; j++) {
            if (issuedAtEnd[slot(j)] <= done) {
                trusted = j;
            }
        }
        if (trusted == 0) {
            return false;
        }
        final int slot = slot(trusted);
        durableStream = streamEnd[slot];
        durableFileEnd = fileEnd[slot];
        for (long j = consumed + 1; j <= trusted; j++) {
            file[slot(j)] = null;
            identity[slot(j)] = null;
            counters.force(forceNanos[slot(j)]);
        }
        consumed = trusted;
        return true;
    }

    /**
     * @return the error of a ticket not consumed whose force failed (the first), or null: once
     *         one failed, no ticket after the last one {@link #collect()} trusted can be.
     */
    IOException failure() {
        for (long j = consumed + 1; j <= issued; j++) {
            final int slot = slot(j);
            if (status.get(slot) == FAILED) {
                final Throwable e = error[slot];
                return e instanceof IOException ? (IOException)e
                    : new IOException("forcing the log file failed: " + e, e);
            }
        }
        return null;
    }

    /** Waits until the force of every ticket issued has returned. */
    void awaitAll() {
        for (long j = consumed + 1; j <= issued; j++) {
            final int slot = slot(j);
            while (status.get(slot) == PENDING) {
                LockSupport.parkNanos(this, PARK_NANOS);
            }
        }
    }

    /**
     * Waits until a forcing thread reports (if a force is in flight), or the writer is unparked
     * otherwise, or {@code nanos} passed.
     */
    void awaitReport(final long nanos) {
        for (long j = consumed + 1; j <= issued; j++) {
            if (status.get(slot(j)) == PENDING) {
                // Its forcing thread unparks the writer when it returns.
                LockSupport.parkNanos(this, nanos);
                return;
            }
        }
    }

    /**
     * Gives up every ticket not consumed (the writer failed; their forces returned, see
     * {@link #awaitAll()}).
     *
     * @return the file position the first of them started at: every byte from there to the end
     *         of what was written is not acknowledged; -1 if none.
     */
    long abandon() {
        if (consumed == issued) {
            return -1;
        }
        final long start = fileStart[slot(consumed + 1)];
        for (long j = consumed + 1; j <= issued; j++) {
            file[slot(j)] = null;
            identity[slot(j)] = null;
        }
        consumed = issued;
        return start;
    }

    long durableStream() {
        return durableStream;
    }

    long durableFileEnd() {
        return durableFileEnd;
    }

    /** Stops the forcing threads once nothing is in flight, and waits for them to end. */
    void stop() {
        stopped = true;
        for (final Thread thread : threads) {
            LockSupport.unpark(thread);
        }
        for (final Thread thread : threads) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
