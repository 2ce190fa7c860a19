package io.streamcache.core;

/**
 * An immutable exception, thrown when no block could be had for an insert, append or replace, after the cache's
 * full-handler (the evictor's hook) had its chance and the bounded retry time ran out.
 * The entry involved is left exactly as it was and no block is leaked.
 *
 * <p>A full cache is routine under load (a broker may meet it thousands of times a second while
 * its evictor catches up), so this exception carries no stack trace: filling one cost ~870 bytes
 * and a stack walk per throw, and the place it is thrown from is always the allocation of
 * blocks. The message says which cache, how many blocks were wanted and why none could be had.
 */
public final class CacheFullException extends CacheException {
    private static final long serialVersionUID = 1L;

    private final int blocksNeeded;

    public CacheFullException(final String message, final int blocksNeeded) {
        super(message, false);
        this.blocksNeeded = blocksNeeded;
    }

    /**
     * @return how many blocks the failed operation asked for.
     */
    public int blocksNeeded() {
        return blocksNeeded;
    }
}
