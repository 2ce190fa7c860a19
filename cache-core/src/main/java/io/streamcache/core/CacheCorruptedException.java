package io.streamcache.core;

/**
 * An immutable exception, thrown when the cache finds its own metadata inconsistent (a broken block chain). This
 * signals a bug or memory overwritten from outside the cache, never bad caller input.
 */
public final class CacheCorruptedException extends CacheException {
    private static final long serialVersionUID = 1L;

    public CacheCorruptedException(final String message) {
        super(message);
    }
}
