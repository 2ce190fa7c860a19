package io.streamcache.segmentstore.log.recovery;

/**
 * What {@link LogRecovery} does when it finds corruption before the tail of the log (see
 * {@link LogCorruptedException}); an immutable value.
 */
public enum CorruptionPolicy {
    /**
     * Fail the open with a {@link LogCorruptedException} naming file and position, and change
     * nothing on disk (the default): an operator decides, nothing acknowledged is silently lost.
     */
    FAIL,
    /**
     * Cut the log at the corruption as if it were a torn tail: keep every record before it, drop
     * (zero) the rest of that file and delete every later file, losing their data, and open.
     * For brokers that replicate and would rather re-fetch than stay down.
     */
    TRUNCATE
}
