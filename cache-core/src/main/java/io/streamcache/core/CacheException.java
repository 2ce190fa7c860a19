package io.streamcache.core;

/**
 * The block cache's family of {@link StreamcacheException}s: the cache could not do what it was
 * asked (full, closed, misconfigured, its metadata found broken); an immutable value, safe to
 * pass between threads.
 *
 * <p>Bad arguments are reported with the JDK's {@link IllegalArgumentException} family instead,
 * so that callers can tell "you called it wrong" from "the cache could not do it".
 */
public class CacheException extends StreamcacheException {
    private static final long serialVersionUID = 1L;

    public CacheException(final String message) {
        super(message);
    }

    public CacheException(final String message, final Throwable cause) {
        super(message, cause);
    }

    /**
     * For conditions a loaded system meets routinely, where a stack trace costs more than it
     * tells: {@code writableStackTrace = false} skips filling it (most of an exception's cost).
     *
     * @param message            what happened, with the figures that explain it.
     * @param writableStackTrace whether to fill in the stack trace.
     */
    protected CacheException(final String message, final boolean writableStackTrace) {
        super(message, writableStackTrace);
    }
}
