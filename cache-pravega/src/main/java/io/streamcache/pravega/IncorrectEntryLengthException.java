package io.streamcache.pravega;

import io.pravega.segmentstore.storage.CacheException;

/**
 * Thrown by {@link StreamcacheCacheStorage#append} when the caller's expected length is not the
 * entry's length; nothing is appended. Immutable.
 *
 * <p>Pravega's {@code CacheStorage} names {@code IncorrectCacheEntryLengthException} for this,
 * but its constructor is package-private in Pravega 0.13, so this is the closest exception
 * another package can throw: a sibling under Pravega's {@link CacheException}. Code that catches
 * {@code CacheException} sees both; code that catches the Pravega class by name does not see
 * this one (no Pravega 0.13 code does). docs/pravega.md gives the one-line Pravega change that
 * would let this class go.
 */
public final class IncorrectEntryLengthException extends CacheException {
    private static final long serialVersionUID = 1L;

    public IncorrectEntryLengthException(final String message) {
        super(message);
    }
}
