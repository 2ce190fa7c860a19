package io.streamcache.core;

/**
 * Thrown by any operation on a cache (or a component built on one) after it was closed.
 */
public final class CacheClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public CacheClosedException(final String message) {
        super(message);
    }
}
