package io.streamcache.log;

/**
 * An immutable exception: the log's writer refused a request because its queue and the queue's overflow (each
 * {@link LogConfig#queueCapacity()} requests) are full: the writer is behind, typically because
 * the disk stalls. An immutable value, safe to pass between threads.
 *
 * <p>Nothing was queued, reserved or changed: the segment's length is as it was, so the same
 * append may be retried (after some of the requests in flight complete). Only the calls that
 * never wait report it ({@code appendAsync}, {@code createAsync}, the facade's asynchronous
 * calls); the synchronous ones wait for room instead, with no lock held.
 */
public class LogQueueFullException extends LogException {
    private static final long serialVersionUID = 1L;

    private final int capacity;

    public LogQueueFullException(final String message, final int capacity) {
        super(message);
        this.capacity = capacity;
    }

    /** @return the capacity of the writer's queue (its overflow holds as many again). */
    public int capacity() {
        return capacity;
    }
}
