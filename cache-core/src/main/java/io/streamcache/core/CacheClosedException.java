package io.streamcache.core;

/**
 * Thrown by any operation on a cache (or a component built on one: a cache manager, a segment
 * store) after it was closed; an immutable value. Nothing was changed. A member of the
 * {@link CacheException} family since the error hierarchy was unified (it used to be an
 * {@link IllegalStateException}): catch {@link StreamcacheException} to handle it with the rest.
 */
public final class CacheClosedException extends CacheException {
    private static final long serialVersionUID = 1L;

    public CacheClosedException(final String message) {
        super(message);
    }
}
