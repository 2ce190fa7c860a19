package io.streamcache.core;

/**
 * Root of every exception streamcache throws for a condition it could not handle (as opposed to
 * a call made wrongly); an immutable value, safe to pass between threads. Unchecked.
 *
 * <p>Three families extend it, one per layer, so that a broker can catch as wide or as narrow
 * as it needs:
 * <pre>
 *  StreamcacheException
 *   +-- CacheException            the block cache        (io.streamcache.core)
 *   |    +-- CacheFullException, CacheClosedException, CacheConfigurationException,
 *   |        CacheCorruptedException
 *   +-- SegmentException          segments of a store    (io.streamcache.segmentstore)
 *   |    +-- SegmentNotFoundException, SegmentExistsException, SegmentSealedException,
 *   |        SegmentTruncatedException, ...
 *   +-- LogException              the durable log        (io.streamcache.log)
 *        +-- LogFailedException, LogCorruptedException, ...
 * </pre>
 * Calls made wrongly (a bad argument such as a negative offset, an address that names no entry,
 * an entry longer than the configured maximum) throw the JDK's {@link IllegalArgumentException}
 * or a subclass of it, never a {@code StreamcacheException}. {@code docs/errors.md} lists every
 * exception with when it is thrown and whether the operation changed anything.
 */
public abstract class StreamcacheException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    protected StreamcacheException(final String message) {
        super(message);
    }

    protected StreamcacheException(final String message, final Throwable cause) {
        super(message, cause);
    }

    /**
     * For conditions a loaded system meets routinely, where a stack trace costs more than it
     * tells: {@code writableStackTrace = false} skips filling it (most of an exception's cost).
     *
     * @param message            what happened, with the figures that explain it.
     * @param writableStackTrace whether to fill in the stack trace.
     */
    protected StreamcacheException(final String message, final boolean writableStackTrace) {
        super(message, null, true, writableStackTrace);
    }
}
