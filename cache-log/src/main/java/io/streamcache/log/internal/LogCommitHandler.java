package io.streamcache.log.internal;

/**
 * Applies an aggregating writer's outcome to the state the log protects, for the requests it is
 * given with: a submitter passes one with each request ({@link AggregatingWriter#append(long, int,
 * long, io.netty.buffer.ByteBuf, Object, LogCommitHandler)} and the other submitting methods), and
 * the writer's completion thread calls it for that request, in the order the requests were
 * submitted, each before the request's future completes. The writer holds no handler of its own:
 * completion flows one way, from the writer to what the request carries. The segment store passes
 * one long-lived handler with every request (so nothing is allocated for it per append): a
 * durable append enters the cache and the read index, a durable seal seals, a failed append gives
 * its offsets back.
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
