package io.streamcache.segmentstore.log;

import io.streamcache.core.CacheException;

/**
 * Root of the durable log's exceptions; an immutable value, safe to pass between threads.
 */
public class LogException extends CacheException {
    private static final long serialVersionUID = 1L;

    public LogException(final String message) {
        super(message);
    }

    public LogException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
