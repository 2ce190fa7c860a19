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
 * <h2>Chained wakes</h2>
 * A synchronous producer parks in {@link LogRequest#awaitDone()} until its request completes,
 * and with one futex wake per acknowledged append this thread spent 7-8% of a 40-producer
 * write path's CPU in {@code futex_wake} alone (docs/benchmarks.md, "Write path against the raw
 * loop"). So a pooled request's waiter is woken by the owner of the request before it in the
 * list, when that owner is itself still waiting, instead of by this thread: the wakes of a run
 * of completions are spread over the producers they wake, as in a combining tree's or MCS
 * lock's hand-off to the next waiter (Mellor-Crummey and Scott, "Algorithms for scalable
 * synchronization on shared-memory multiprocessors", 1991), and this thread wakes only the first
 * waiter of a run (and any whose predecessor's owner had already left):
 * <pre>
 *  completion thread                 owner of r1 (parked)     owner of r2 (parked)   owner of r3
 *   | committed(r1), outcome(r1)
 *   | unpark(owner of r1)  --------&gt;  wakes up
 *   | committed(r2), outcome(r2)       |
 *   | r1.passWakeTo(r2): CAS null-&gt;r2  |
 *   | free r1                          | leaves awaitDone:
 *   | committed(r3), outcome(r3)       |   r1.wakeNext getAndSet PASSED = r2
 *   | r2.passWakeTo(r3): CAS null-&gt;r3  |   unpark(owner of r2) --&gt; wakes up
 *   | free r2                          v                           | getAndSet = r3
 *   |                                 returns r1's outcome         | unpark(owner of r3) --&gt; ...
 *   | (r3's owner left before the CAS: the CAS fails, this thread unparks r4's waiter itself)
 * </pre>
 * The CAS (this thread, from null to the next request) and the owner's {@code getAndSet} (to a
 * sentinel, as it leaves the wait) decide who wakes the next waiter: exactly one of them wins,
 * so no wake is lost and none is doubled. This thread chains to a request only while its owner
 * is seen waiting ({@link LogRequest#hasWaiter()}, unset before the getAndSet), so the owner
 * reaches the getAndSet; such an owner is never the next request's owner (that one submitted
 * the next request after it stopped waiting), which lets this thread free the request it
 * chains from only after completing the next one (the owner of the next request then finds its
 * other pooled request free, as {@link PooledRequests} requires). The next request's outcome
 * is written before the CAS, so whoever wakes its waiter wakes it to a completed request. Only
 * pooled requests (synchronous callers) chain: a future's dependents run on the thread that
 * completes it, so futures complete here as before, and an {@code ...Async} caller never waits
 * on anyone. Acknowledgement order is unchanged: every request is completed here, in order;
 * only who unparks a waiting thread changes.
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

    // Completion thread (the counters are read racily by tests).
    private LogRequest head;
    private volatile long chainedWakes;
    private volatile long directWakes;

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
            if (next.type() != LogRequest.TYPE_STOP && next.isPooled() && current.isPooled() && current.hasWaiter()) {
                // Chained wake: current's owner is still in awaitDone (so it is not next's owner,
                // which submitted next after leaving its own wait, and freeing current after
                // completing next keeps PooledRequests' two-suffice rule); it wakes next's waiter
                // when it leaves, unless it has left already.
                complete(next, false);
                if (current.passWakeTo(next)) {
                    chainedWakes = chainedWakes + 1;
                } else {
                    next.wakeWaiter();
                    directWakes = directWakes + 1;
                }
                release(current);
            } else {
                release(current);
                if (next.type() == LogRequest.TYPE_STOP) {
                    head = next;
                    return;
                }
                complete(next, true);
                directWakes = directWakes + 1;
            }
            current = next;
            head = next;
        }
    }

    /**
     * Unlinks a request the completion thread moved past and frees it (if pooled): neither this
     * thread nor a future a caller keeps may hold on to the requests handed off after it (every
     * request ever appended stayed reachable from the stub otherwise). The writer never touches
     * a request's link once it has a successor. Its last touch here: a pooled request may be
     * reused by its owner from then on.
     */
    private static void release(final LogRequest request) {
        request.clearHandoffNext();
        request.released();
    }

    /** Completion thread: completions whose waiter was woken by the previous request's owner (a chained wake). For tests. */
    long chainedWakes() {
        return chainedWakes;
    }

    /** Completion thread: completions this thread woke the waiter of itself (or that were not pooled). For tests. */
    long directWakes() {
        return directWakes;
    }

    /**
     * Applies and completes {@code request}; {@code wakeWaiter}: as {@link LogRequest#succeed(boolean)}
     * (false: the caller wakes a pooled request's waiter, itself or through a chained wake).
     */
    private void complete(final LogRequest request, final boolean wakeWaiter) {
        final Throwable error = request.failure;
        final boolean record = request.type() >= 0;
        final LogCommitHandler handler = request.handler();
        if (error == null) {
            if (record) {
                try {
                    handler.committed(request);
                } catch (final RuntimeException | Error e) {
                    request.dropData();
                    request.fail(e, wakeWaiter);
                    return;
                }
            }
            request.dropData();
            // A pooled request completes without a boxed offset; another's future with one.
            request.succeed(wakeWaiter);
        } else {
            if (record) {
                try {
                    handler.failed(request, error);
                } catch (final RuntimeException | Error e) {
                    LOG.warn("log {}: the commit handler failed on a failed request {}", name, request, e);
                }
            }
            request.dropData();
            request.fail(error, wakeWaiter);
        }
    }
}
