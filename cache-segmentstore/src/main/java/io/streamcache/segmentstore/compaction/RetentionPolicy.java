package io.streamcache.segmentstore.compaction;

import io.streamcache.segmentstore.internal.compaction.Compactor;
import java.time.Duration;
import java.util.Objects;

/**
 * How much of a segment to keep: immutable, thread-safe. At most {@link #maxLength()} bytes
 * before its end, and only bytes appended within {@link #maxAge()}; the {@code Compactor}
 * enforces it in the background by truncating the segment's head (the store's
 * {@code truncate}), so a reader may still see older bytes until the next pass.
 *
 * <p>Age is measured from when this process first saw the bytes: the compactor samples each
 * segment's length at every pass and truncates to the newest sample taken at least
 * {@code maxAge} ago. Bytes recovered after a restart count as new (they are kept longer, never
 * shorter), and the precision is the pass interval.
 *
 * @param maxLength the most bytes kept from the end; {@link Long#MAX_VALUE} for no limit.
 * @param maxAge    the longest bytes are kept; {@code null} for no limit.
 */
public record RetentionPolicy(long maxLength, Duration maxAge) {
    /** Keeps everything. */
    public static final RetentionPolicy KEEP_ALL = new RetentionPolicy(Long.MAX_VALUE, null);

    /**
     * @throws IllegalArgumentException if {@code maxLength} is negative or {@code maxAge} negative.
     */
    public RetentionPolicy {
        if (maxLength < 0) {
            throw new IllegalArgumentException("maxLength=" + maxLength + " must be >= 0");
        }
        if (maxAge != null && maxAge.isNegative()) {
            throw new IllegalArgumentException("maxAge=" + maxAge + " must not be negative");
        }
    }

    /**
     * @return a policy keeping at most {@code maxLength} bytes from the end.
     */
    public static RetentionPolicy ofLength(final long maxLength) {
        return new RetentionPolicy(maxLength, null);
    }

    /**
     * @return a policy keeping the bytes appended within {@code maxAge}.
     */
    public static RetentionPolicy ofAge(final Duration maxAge) {
        return new RetentionPolicy(Long.MAX_VALUE, Objects.requireNonNull(maxAge, "maxAge"));
    }

    /**
     * @return whether the policy limits anything.
     */
    public boolean limits() {
        return maxLength != Long.MAX_VALUE || maxAge != null;
    }
}
