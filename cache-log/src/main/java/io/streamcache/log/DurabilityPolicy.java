package io.streamcache.log;

import java.time.Duration;
import java.util.Objects;

/**
 * When the aggregating writer forces (fdatasync) the log, and so what an acknowledgement
 * means; an immutable value.
 *
 * <ul>
 *   <li>{@link #EVERY_BATCH} (the default): every batch is forced before its requests complete.
 *       An acknowledged append survives a power cut.</li>
 *   <li>{@link #interval(Duration)}: requests complete once their batch is written (in the page
 *       cache); the log is forced at most once per interval, and when the writer goes idle with
 *       unforced writes older than the interval. Survives a process crash; a power cut may lose
 *       up to an interval of acknowledged appends.</li>
 *   <li>{@link #NEVER}: requests complete once written; the writer forces on its own only when
 *       it leaves a file (a roll), before it deletes a file (after a truncate, a delete or
 *       compaction), and at close. For tests, for brokers that replicate instead, and for brokers
 *       that keep their own write-ahead journal and force the log at their checkpoints with
 *       {@link StoreLog#force()}. An acknowledged append survives a process crash only.</li>
 * </ul>
 *
 * <p>Under every policy {@link StoreLog#force()} forces on demand: once it completes, everything
 * acknowledged (or queued) before it survives a power cut. It is how a broker with a journal of
 * its own (BookKeeper's bookie) runs under {@code NEVER} and forces at its checkpoints.
 */
public final class DurabilityPolicy {
    /** The kinds of policy; immutable constants. */
    public enum Kind {
        EVERY_BATCH,
        INTERVAL,
        NEVER
    }

    /** Force every batch before completing its requests. */
    public static final DurabilityPolicy EVERY_BATCH = new DurabilityPolicy(Kind.EVERY_BATCH, Duration.ZERO);
    /** Never force; complete requests once written. */
    public static final DurabilityPolicy NEVER = new DurabilityPolicy(Kind.NEVER, Duration.ZERO);

    private final Kind kind;
    private final Duration interval;

    private DurabilityPolicy(final Kind kind, final Duration interval) {
        this.kind = kind;
        this.interval = interval;
    }

    /**
     * @param interval the longest time between forces, positive.
     * @return a policy that completes requests once written and forces at most once per interval.
     */
    public static DurabilityPolicy interval(final Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval=" + interval + " must be positive");
        }
        return new DurabilityPolicy(Kind.INTERVAL, interval);
    }

    public Kind kind() {
        return kind;
    }

    /**
     * @return the interval between forces of an {@link Kind#INTERVAL} policy; zero for the others.
     */
    public Duration interval() {
        return interval;
    }

    @Override
    public boolean equals(final Object other) {
        return other instanceof DurabilityPolicy && ((DurabilityPolicy)other).kind == kind
            && ((DurabilityPolicy)other).interval.equals(interval);
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + interval.hashCode();
    }

    @Override
    public String toString() {
        return kind == Kind.INTERVAL ? "INTERVAL(" + interval + ")" : kind.name();
    }
}
