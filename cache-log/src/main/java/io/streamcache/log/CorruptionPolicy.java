package io.streamcache.log;

import io.streamcache.log.internal.recovery.LogRecovery;
/**
 * What {@code LogRecovery} does when it finds corruption before the tail of the log (see
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
    TRUNCATE,
    /**
     * As {@link #FAIL}, and a torn tail too fails the open (with a {@link LogCorruptedException}
     * naming the tail file and the position of the torn write) instead of being cut: for
     * deployments where a torn write means a disk lying about its forces, or where an operator
     * wants to look at every cut before the log is written again.
     */
    FAIL_ON_TORN_TAIL
}
