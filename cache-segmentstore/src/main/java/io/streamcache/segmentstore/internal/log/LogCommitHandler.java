package io.streamcache.segmentstore.internal.log;

/**
 * Applies the aggregating writer's outcomes to the state the log protects: called on the
 * writer's single completion thread, one request at a time, in the order the requests were
 * submitted, each before its future completes. The segment store implements it: a durable append
 * enters the cache and the read index, a durable seal seals, a failed append gives its offsets
 * back.
 *
 * <p>An implementation may take locks a producer holds while it submits (producers never wait
 * for the completion thread), must not wait for other requests of the same writer, and should
 * be quick: every later completion waits for it. An exception it throws fails that request's
 * future and nothing else.
 */
public interface LogCommitHandler {
    /** A handler that does nothing: the futures alone report the outcomes. */
    LogCommitHandler NONE = new LogCommitHandler() {
        @Override
        public void committed(final LogRequest request) {
        }

        @Override
        public void failed(final LogRequest request, final Throwable cause) {
        }
    };

    /**
     * The request's record is in the log (as the durability policy defines it).
     */
    void committed(LogRequest request);

    /**
     * The request was not written (a disk error, a rejection after one, or the writer closing).
     */
    void failed(LogRequest request, Throwable cause);
}
