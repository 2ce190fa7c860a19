package io.streamcache.core;

/**
 * Root of the domain exceptions thrown by streamcache; thread-agnostic value type.
 *
 * <p>Programming errors (bad arguments, use after close) are reported with the JDK's
 * {@link IllegalArgumentException} / {@link IllegalStateException} family instead, so that
 * callers can tell "you called it wrong" from "the cache could not do it".
 */
public class CacheException extends RuntimeException {
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
        super(message, null, true, writableStackTrace);
    }
}
