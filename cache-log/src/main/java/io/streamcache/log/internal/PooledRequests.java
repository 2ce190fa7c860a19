package io.streamcache.log.internal;

/**
 * One thread's two reusable {@link LogRequest}s, for synchronous appends (the caller submits,
 * then waits on its own thread): with them an append allocates no request. See <em>Pooled
 * requests</em> in {@link LogRequest} for when a request is free again.
 *
 * <p>Two suffice: the completion list keeps only the last completed request as its stub, so of
 * a thread's requests at most one is done but not yet free, and once the thread's next request
 * completed, the one before it is free (the completion thread moved past it before completing
 * the next). If neither is free (a writer that stopped with a request of this thread as its
 * stub, or a request still pending after its waiter gave up), a new one replaces the first;
 * the old one becomes garbage once the log lets go of it. So the pool holds at most two
 * requests per thread that ever appended synchronously (about 100 bytes each).
 *
 * <p><b>Threading:</b> confined to its thread (a {@link ThreadLocal}); the requests' free
 * flags are the only state shared with the log's threads.
 */
final class PooledRequests {
    private static final ThreadLocal<PooledRequests> POOLS = ThreadLocal.withInitial(PooledRequests::new);

    private LogRequest first = LogRequest.newPooled();
    private LogRequest second = LogRequest.newPooled();

    private PooledRequests() {
    }

    /** @return the calling thread's pool. */
    static PooledRequests current() {
        return POOLS.get();
    }

    /**
     * @return a free request of this thread (its owner is the calling thread): one of the two,
     *         or a new one if neither is free.
     */
    LogRequest take() {
        if (first.isFree()) {
            return first;
        }
        if (second.isFree()) {
            return second;
        }
        first = LogRequest.newPooled();
        return first;
    }
}
