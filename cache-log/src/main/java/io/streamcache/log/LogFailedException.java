package io.streamcache.log;

/**
 * A request failed because the log's disk failed (the cause: an {@link java.io.IOException},
 * such as {@code No space left on device}), or was rejected because the log has been failed
 * since such an error; an immutable value, safe to pass between threads.
 *
 * <p>The request was not acknowledged: its bytes may or may not be in the log file, and a
 * later {@link StoreLog#recover()} (or the writer's own retry) overwrites them before the log accepts appends
 * again. Everything acknowledged before the error is intact.
 */
public class LogFailedException extends LogException {
    private static final long serialVersionUID = 1L;

    public LogFailedException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
