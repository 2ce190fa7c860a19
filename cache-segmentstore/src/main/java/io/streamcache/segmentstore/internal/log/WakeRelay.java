package io.streamcache.segmentstore.internal.log;

import org.jctools.queues.MpmcArrayQueue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Wake-ups of parked owners of pooled requests, relayed from the completion thread to the owners
 * it already woke: the completion thread queues a done request instead of unparking its owner
 * while some woken owner is on its way to help, and each woken owner unparks up to
 * {@link #FAN_OUT} queued owners before it goes on. One completion thread; any number of owners.
 *
 * <pre>
 *  completion thread: commit r1, done  --unpark--&gt; t1 (helpers 1)
 *                     commit r2, done  --queue--&gt;  [ r2 ]
 *                     commit r3, done  --queue--&gt;  [ r2 r3 ]        t1 wakes: unparks t2, t3 (helpers 2)
 *                     commit r4, done  --queue--&gt;  [ r4 ]           t2 wakes: unparks t4 ...
 *                     list empty: drain, unpark whatever is queued, then park
 * </pre>
 *
 * <p><b>Why</b> (issue 14): unparking a thread is a {@code futex} wake, 4 us on the 2-core test
 * machine (a virtual machine: the wake-up is an interrupt to the other CPU); the completion
 * thread paid one per append, 35% of its time in a phase-1 profile of the message-queue workload,
 * serially, before it could commit the next request. Relayed, the wake-ups of a batch's owners
 * run on the owners' threads, in parallel with the completion thread's commits, and a batch's
 * last owner wakes sooner. The number of wake-ups is the same.
 *
 * <p><b>Progress:</b> every queued owner is unparked. A queued request is done, so its owner
 * returns as soon as anyone unparks it; the completion thread unparks the oldest queued owner
 * itself whenever no woken owner is counted as on its way ({@link #helpers} is 0), and unparks
 * everything queued before it waits for more work or stops. Only the completion thread queues;
 * any other thread that completes a request (a writer failing it outside the list) unparks
 * directly. A late or repeated unpark is harmless: owners re-check their request and park again.
 *
 * <p><b>Threading:</b> {@link #wake} and {@link #drain} on the completion thread (or, direct
 * only, any thread); {@link #help} on any owner thread. The queue is a jctools
 * {@code MpmcArrayQueue} (nothing allocated per request); {@link #helpers} an atomic count of
 * owners unparked by the relay rule that have not yet helped.
 */
final class WakeRelay {
    /** Owners a woken owner unparks before it goes on. */
    static final int FAN_OUT = 2;
    private static final int CAPACITY = 1024;

    private final MpmcArrayQueue<LogRequest> queued = new MpmcArrayQueue<>(CAPACITY);
    /** Owners unparked through {@link #unparkHelper} whose {@link #help} has not run yet. */
    private final AtomicInteger helpers = new AtomicInteger();
    private volatile Thread completionThread;

    /** Sets the one thread that may queue (the others unpark directly). */
    void completionThread(final Thread thread) {
        this.completionThread = thread;
    }

    /**
     * The pooled request {@code request} is done and its owner {@code owner} parked in
     * {@link LogRequest#awaitDone()}: unpark it now, or queue it for a woken owner to unpark.
     */
    void wake(final LogRequest request, final Thread owner) {
        if (Thread.currentThread() != completionThread) {
            LockSupport.unpark(owner);
            return;
        }
        if (helpers.get() == 0) {
            // No woken owner is on its way: restart the relay with the oldest queued owner, if any.
            final LogRequest oldest = queued.poll();
            if (oldest != null) {
                unparkHelper(oldest);
                if (!queued.offer(request)) {
                    unparkHelper(request);
                }
            } else {
                unparkHelper(request);
            }
            return;
        }
        if (!queued.offer(request)) {
            unparkHelper(request);
        }
    }

    /**
     * Owner thread, once its request is done: if the relay unparked it, unparks up to
     * {@link #FAN_OUT} queued owners.
     */
    void help(final LogRequest own) {
        if (!own.takeRelayWoken()) {
            return;
        }
        for (int i = 0; i < FAN_OUT; i++) {
            final LogRequest next = queued.poll();
            if (next == null) {
                break;
            }
            unparkHelper(next);
        }
        helpers.decrementAndGet();
    }

    /** Completion thread, before it waits for more work or stops: unparks every queued owner. */
    void drain() {
        LogRequest next;
        while ((next = queued.poll()) != null) {
            unparkHelper(next);
        }
    }

    /** Unparks {@code request}'s owner, counted as a helper once per relay wake-up it has not consumed. */
    private void unparkHelper(final LogRequest request) {
        final Thread owner = request.awaitingThread();
        if (owner == null) {
            // The owner has not parked, or left already (it re-checked the request): nothing to wake.
            return;
        }
        if (request.markRelayWoken()) {
            helpers.incrementAndGet();
        }
        LockSupport.unpark(owner);
    }

    /** @return owners counted as on their way to help (tests). */
    int helpers() {
        return helpers.get();
    }

    /** @return requests queued (tests). */
    int queued() {
        return queued.size();
    }
}
