package io.streamcache.segmentstore;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A store's health as a broker's health check wants it, an immutable value safe to pass between
 * threads: one {@link State} (the worst of its issues) and the issues that make it so, each with a
 * {@link Reason} a program can act on and a detail for a person. From {@link SegmentStore#health()};
 * {@code docs/operations.md} maps the states onto a bookie's {@code /api/v1/bookie/state} and
 * Kubernetes probes.
 *
 * @param state  the worst severity among the issues; {@link State#HEALTHY} with none.
 * @param issues what is wrong now, worst first; an immutable list, empty when healthy.
 */
public record StoreHealth(State state, List<Issue> issues) {

    /** The healthy value: no issues. */
    public static final StoreHealth HEALTHY = new StoreHealth(State.HEALTHY, List.of());

    /**
     * A store's health, from best to worst: compare with {@link Enum#compareTo(Enum)}.
     */
    public enum State {
        /** Serving appends and reads as configured. */
        HEALTHY,
        /**
         * Serving, but some requests wait, are refused or are served slower than configured
         * (cache without room, budgets spent, disk low): route new load elsewhere if you can.
         */
        DEGRADED,
        /** Not accepting appends (the log is failed, the store closed): take it out of service. */
        FAILED
    }

    /** Why a store is not healthy; each value's comment says what was measured. */
    public enum Reason {
        /**
         * The log's writer is failed after a disk error: appends are refused until it recovers
         * (by itself every {@code LogConfig.retryInterval()}, or through {@code StoreLog.recover()}).
         * {@link State#FAILED}.
         */
        LOG_FAILED,
        /**
         * The file system of the log's directory has less usable space than the store's reserve
         * ({@link SegmentStore.Builder#diskReserve(long)}): the writer may soon fail to roll to a
         * new file. {@link State#DEGRADED}.
         */
        DISK_BELOW_RESERVE,
        /**
         * Appends or fills from the log found no room after the cache manager's eviction (every
         * entry pinned by unreleased reads, or appends outrunning eviction) within the health
         * window: appends failed with {@code CacheFullException}, fills were served uncached.
         * {@link State#DEGRADED}.
         */
        CACHE_FULL,
        /**
         * The store's read budget is spent with reads waiting for it now, or reads and fills were
         * refused for want of budget within the health window. {@link State#DEGRADED}.
         */
        BUDGET_EXHAUSTED,
        /**
         * The store (or the storage built on it) is recovering: scanning its log at start, or
         * rebuilding what a broker keeps over it. Reported by owners through
         * {@link StoreHealth#recovering(String)}. {@link State#DEGRADED}: not yet ready to serve.
         */
        RECOVERY_IN_PROGRESS,
        /**
         * The warm restart discarded catalog entries (damaged chains, digests that did not match,
         * segments truncated or gone): their bytes are read from the log again. Reported for one
         * health window after the build, then cleared (the counts stay in
         * {@link SegmentStore#warmRestore()}). {@link State#DEGRADED}.
         */
        WARM_RESTART_DISCARDED,
        /** The store is closed. {@link State#FAILED}. */
        CLOSED
    }

    /**
     * One thing wrong with a store.
     *
     * @param reason   what kind of issue.
     * @param severity how bad: {@link State#DEGRADED} or {@link State#FAILED}.
     * @param detail   the figures behind it, for a person (and a log line).
     */
    public record Issue(Reason reason, State severity, String detail) {
        public Issue {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(severity, "severity");
            Objects.requireNonNull(detail, "detail");
            if (severity == State.HEALTHY) {
                throw new IllegalArgumentException("an issue's severity is DEGRADED or FAILED, not HEALTHY (reason " + reason + ")");
            }
        }
    }

    public StoreHealth {
        Objects.requireNonNull(state, "state");
        issues = List.copyOf(issues);
        State worst = State.HEALTHY;
        for (final Issue issue : issues) {
            worst = issue.severity().compareTo(worst) > 0 ? issue.severity() : worst;
        }
        if (worst != state) {
            throw new IllegalArgumentException("state=" + state + " is not the worst severity of the issues (" + worst + "): " + issues);
        }
    }

    /**
     * @param issues what is wrong, in any order.
     * @return the health those issues make: the worst severity, the issues worst first.
     */
    public static StoreHealth of(final List<Issue> issues) {
        if (issues.isEmpty()) {
            return HEALTHY;
        }
        final List<Issue> sorted = new ArrayList<>(issues);
        sorted.sort((a, b) -> b.severity().compareTo(a.severity()));
        return new StoreHealth(sorted.get(0).severity(), sorted);
    }

    /**
     * @param detail what is being recovered, for a person.
     * @return the health of a store or storage still recovering: {@link State#DEGRADED} with
     *         {@link Reason#RECOVERY_IN_PROGRESS}.
     */
    public static StoreHealth recovering(final String detail) {
        return of(List.of(new Issue(Reason.RECOVERY_IN_PROGRESS, State.DEGRADED, detail)));
    }

    /**
     * @return whether the store serves appends: not {@link State#FAILED} (a liveness or
     *         readiness probe's answer).
     */
    public boolean serving() {
        return state != State.FAILED;
    }

    /**
     * @param reason a reason.
     * @return whether one of the issues has that reason.
     */
    public boolean has(final Reason reason) {
        for (final Issue issue : issues) {
            if (issue.reason() == reason) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return one line for a log or an MBean attribute: the state, then each issue as
     *         {@code REASON (detail)}, separated by {@code "; "}.
     */
    public String summary() {
        if (issues.isEmpty()) {
            return state.name();
        }
        final StringBuilder line = new StringBuilder(state.name()).append(": ");
        for (int i = 0; i < issues.size(); i++) {
            if (i > 0) {
                line.append("; ");
            }
            line.append(issues.get(i).reason()).append(" (").append(issues.get(i).detail()).append(')');
        }
        return line.toString();
    }
}
