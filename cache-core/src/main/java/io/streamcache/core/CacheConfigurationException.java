package io.streamcache.core;

/**
 * An immutable exception, thrown when a cache cannot be built as configured: bad geometry, or memory that cannot be had
 * (direct memory over {@code -XX:MaxDirectMemorySize}, a file system without room for a mapped
 * file). The message names the setting to change. Nothing is left allocated.
 */
public final class CacheConfigurationException extends CacheException {
    private static final long serialVersionUID = 1L;

    public CacheConfigurationException(final String message) {
        super(message);
    }

    public CacheConfigurationException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
