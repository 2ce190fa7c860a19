package io.streamcache.core;

/**
 * Thrown when no block could be had for an insert, append or replace, after the cache's
 * full-handler (the evictor's hook) had its chance and the bounded retry time ran out.
 * The entry involved is left exactly as it was and no block is leaked.
 */
public final class CacheFullException extends CacheException {
    private static final long serialVersionUID = 1L;

    private final int blocksNeeded;

    public CacheFullException(final String message, final int blocksNeeded) {
        super(message);
        this.blocksNeeded = blocksNeeded;
    }

    /**
     * @return how many blocks the failed operation asked for.
     */
    public int blocksNeeded() {
        return blocksNeeded;
    }
}
