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
}
