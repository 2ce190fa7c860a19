package io.streamcache.log;

import io.streamcache.core.StreamcacheException;

/**
 * The durable log's family of {@link StreamcacheException}s (its disk failed, its files are
 * damaged, its directory is held by another writer, ...); an immutable value, safe to pass
 * between threads.
 */
public class LogException extends StreamcacheException {
    private static final long serialVersionUID = 1L;

    public LogException(final String message) {
        super(message);
    }

    public LogException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
