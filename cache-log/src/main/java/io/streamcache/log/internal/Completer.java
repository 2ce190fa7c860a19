package io.streamcache.log.internal;

import io.streamcache.core.StreamcacheThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The aggregating writer's completion thread and the hand-off list that feeds it: the writer
 * thread calls {@link #handoff} and {@link #signal}; the completion thread (one, created here)
 * completes each request handed off, strictly in hand-off order, with what the request carries.
 *
 * <pre>
 *  writer thread
 *   | durable (or failed) requests linked, in order: handoff(r, error) -&gt; tail.next = r (release)
 *   | signal(): unpark the completer if it sleeps
 *   v
 *  [ intrusive linked list of requests: never blocks the writer ]
 *   |
 *   v
 *  completion thread (one)
 *   | per request, in submission order: r.handler().committed(r)
 *   |   (the store's handler: segment lock, bytes into cache + read index or a NOT_CACHED gap,
 *   |    length += n, tail readers woken)
 *   | r.complete(offset), or r.handler().failed(r, e) and r.completeExceptionally(e)
 *   v
 *  the producer wakes up
 * </pre>
 * Completion flows one way: the writer never calls into the code that submitted a request; the
 * request carries its {@link LogCommitHandler} (the store passes one long-lived handler with
 * every request, so nothing is allocated for it), and this thread applies it and completes the
 * request's future. The writer never waits for this thread, so the handler may take locks that
 * producers hold while they submit, and committing data into the cache overlaps the next write
 * and force.
 *
 * <p><b>Pooled requests</b> ({@link PooledRequests}) are reused by their owner once free: the
 * list keeps the last completed request as its stub (the writer links the next one to it), so
 * this thread frees a request ({@link LogRequest#released()}) only when it moves past it, after
 * unlinking it, and touches it no more. A pooled request completes without the boxed offset.
 *
 * <p><b>Design note: this thread wakes every waiter itself.</b> A synchronous producer parks in
 * {@link LogRequest#awaitDone()} and this thread unparks it once its request completes: one
 * futex wake per acknowledged append (5-8% of the write path's CPU with 40 synchronous
 * producers; docs/benchmarks.md, "Write path against the raw loop"). Two ways of moving those
 * wakes off this thread were built and measured, and neither was kept. A burst of wakes at the
 * end of a run of completions was level. Chained wakes (the owner of the previous pooled
 * request, while it still waits, wakes the next request's waiter as it leaves its wait, an
 * MCS-style hand-off decided by a CAS from this thread against the owner's getAndSet) took this
 * thread's wake share from 5.9% to only 5.4% and ran phase 1 of {@code contest} at a median
 * 185 MB/s against 220 MB/s (12 runs each, tmpfs, load average 3.5-14): on a loaded 2-core host
 * every hop of the chain waits in the run queue, where direct wakes make the whole batch
 * runnable at once (docs/benchmarks.md, "Waking synchronous producers").
 *
 * <p>The requests are the list's nodes: {@link LogRequest#handoffNextRelease} by the writer
 * pairs with {@link LogRequest#handoffNextAcquire} here. The parked flag is a Dekker pair with
 * that link: the writer stores the link, fences, then reads the flag; this thread sets the flag,
 * then reads the link again before it parks.
 */
final class Completer {
    private static final Logger LOG = LoggerFactory.getLogger(Completer.class);
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final String name;
    private final WriterCounters counters;
    private final Thread thread;

    // Writer thread.
    private LogRequest tail;
    private boolean handedOff;
    private long completedRequests;
    private long completedFailures;

    // Completion thread.
    private LogRequest head;

    /** The completion thread is parked or about to park. Dekker with {@link LogRequest#handoffNextRelease}. */
    private volatile boolean parked;

    Completer(final String name, final WriterCounters counters, final StreamcacheThreads threads) {
        this.name = name;
        this.counters = counters;
        final LogRequest stub = LogRequest.stop();
        this.tail = stub;
        this.head = stub;
        this.thread = threads.newThread(StreamcacheThreads.Role.LOG_COMPLETER, name, this::run);
    }

    void start() {
        thread.start();
    }

    Thread thread() {
        return thread;
    }

    /**
     * Writer thread: links {@code request} to the list with its outcome ({@code error} null: it
     * succeeded). The completion thread sees it after the next {@link #signal}, or its next wake-up.
     */
    void handoff(final LogRequest request, final Throwable error) {
        request.failure = error;
        if (request.type() >= 0) {
            if (error == null) {
                completedRequests++;
            } else {
                completedFailures++;
            }
        }
        tail.handoffNextRelease(request);
        tail = request;
        handedOff = true;
    }

    /**
     * Writer thread: wakes the completion thread if something was handed off since the last
     * signal, and publishes the request counts.
     */
    void signal() {
        if (!handedOff) {
            return;
        }
        handedOff = false;
        counters.requests = completedRequests;
        counters.failedRequests = completedFailures;
        // The release store of the link must not pass the load of the flag (Dekker with the completer).
        VarHandle.fullFence();
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Writer thread, last: the completion thread stops once it has completed everything handed
     * off before.
     */
    void stop() {
        handoff(LogRequest.stop(), null);
        signal();
    }

    private void run() {
        LogRequest current = head;
        while (true) {
            final LogRequest next = current.handoffNextAcquire();
            if (next == null) {
                parked = true;
                if (current.handoffNextAcquire() == null) {
                    LockSupport.parkNanos(this, PARK_NANOS);
                }
                parked = false;
                continue;
            }
            // Unlink what is done: neither this field nor a future a caller keeps may hold on to
            // the requests handed off after it (every request ever appended stayed reachable from
            // the stub otherwise). The writer never touches a request's link once it has a successor.
            current.clearHandoffNext();
            // Its last touch here: a pooled request may be reused by its owner from now on.
            current.released();
            current = next;
            head = next;
            if (next.type() == LogRequest.TYPE_STOP) {
                return;
            }
            complete(next);
        }
    }

    private void complete(final LogRequest request) {
        final Throwable error = request.failure;
        final boolean record = request.type() >= 0;
        final LogCommitHandler handler = request.handler();
        if (error == null) {
            if (record) {
                try {
                    handler.committed(request);
                } catch (final RuntimeException | Error e) {
                    request.dropData();
                    request.fail(e);
                    return;
                }
            }
            request.dropData();
            // A pooled request completes without a boxed offset; another's future with one.
            request.succeed();
        } else {
            if (record) {
                try {
                    handler.failed(request, error);
                } catch (final RuntimeException | Error e) {
                    LOG.warn("log {}: the commit handler failed on a failed request {}", name, request, e);
                }
            }
            request.dropData();
            request.fail(error);
        }
    }
}
