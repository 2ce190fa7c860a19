package io.streamcache.log.internal;

import org.jctools.queues.MpscArrayQueue;

/**
 * The writer's request queue: thread-safe for any number of producers and one consumer (the
 * writer thread); a bounded main queue and a bounded overflow of the same capacity, both
 * pre-allocated jctools {@link MpscArrayQueue}s, so that an offer never waits and allocates
 * nothing.
 *
 * <pre>
 *  offer(r):  overflow empty and main.offer(r)  -&gt; queued (the common case)
 *             else overflow.offer(r)            -&gt; queued behind everything in main
 *             else                              -&gt; refused (false): both are full
 *  poll():    main first; the overflow only once main is empty
 * </pre>
 *
 * <p><b>Order:</b> a request offered after another's offer returned (on the same thread, or
 * after a lock both were queued under, such as a segment's lock) is polled after it. Once the
 * overflow holds a request, later offers go to the overflow too, and the overflow is polled only
 * when main is empty ({@link MpscArrayQueue#poll()} there, not the relaxed poll, so a main slot a
 * producer claimed before the overflow was used is waited for, not skipped); a request the writer
 * took from the overflow is already ahead of any later main offer. Offers on different threads
 * with no such order between them may be polled in either order, as with one queue.
 *
 * <p>The overflow lets a producer that holds a lock hand a request off without waiting while the
 * writer is slow (a stalled disk), as Netty's {@code ChannelOutboundBuffer} lets a write be queued
 * past its high-water mark and reports unwritability rather than blocking the event loop; only
 * when both are full is a request refused, and the caller decides (fail, or wait with no lock held).
 */
final class RequestQueue {
    private final MpscArrayQueue<LogRequest> main;
    private final MpscArrayQueue<LogRequest> overflow;

    RequestQueue(final int capacity) {
        this.main = new MpscArrayQueue<>(capacity);
        this.overflow = new MpscArrayQueue<>(capacity);
    }

    /** @return whether the request was queued; false if the main queue and the overflow are full. */
    boolean offer(final LogRequest request) {
        if (overflow.isEmpty() && main.offer(request)) {
            return true;
        }
        return overflow.offer(request);
    }

    /** On the writer thread: the next request, or null if none is queued (or one is still being stored). */
    LogRequest relaxedPoll() {
        final LogRequest request = main.relaxedPoll();
        if (request != null || overflow.isEmpty()) {
            return request;
        }
        final LogRequest claimed = main.poll();
        return claimed != null ? claimed : overflow.relaxedPoll();
    }

    boolean isEmpty() {
        return main.isEmpty() && overflow.isEmpty();
    }

    /** @return whether an offer would find room now (a hint: other producers race for it). */
    boolean hasRoom() {
        return overflow.size() < overflow.capacity();
    }

    /** @return requests queued, in the main queue and the overflow. */
    int size() {
        return main.size() + overflow.size();
    }

    /** @return requests the overflow holds now. */
    int overflowSize() {
        return overflow.size();
    }
}
