package io.streamcache.segmentstore;

import io.streamcache.core.cache.CacheStats;
import io.streamcache.log.StoreLog;
import io.streamcache.log.WriterStats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Evaluates a store's {@link StoreHealth}: the levels it reads now (the log's failure, the disk's
 * free space, the read budget's waiting reads) and the refusals counted over a window, so that a
 * refusal a moment ago still shows at the next poll and a quiet store clears after one or two
 * windows. Thread-safe: the window's two snapshots change under this object's monitor, which
 * guards a few fields only (no I/O, no waiting under it); every other figure is read outside it.
 *
 * <p>The window: {@code baseline} is the refusal counts at least one window old, {@code latest}
 * the counts of the most recent poll that moved the window. A poll compares the counts now with
 * {@code baseline}, so it sees the refusals of the last one to two windows, however many callers
 * poll (a probe, a gauge, an MBean client): polling does not hide a refusal from another poller.
 */
final class HealthCheck {
    private final SegmentStore store;
    private final long windowNanos;
    private final long diskReserve;
    private final LongSupplier clock;
    private final long builtAt;
    private long[] baseline;
    private long[] latest;
    private long latestAt;

    HealthCheck(final SegmentStore store, final long windowNanos, final long diskReserve, final LongSupplier clock) {
        this.store = store;
        this.windowNanos = windowNanos;
        this.diskReserve = diskReserve;
        this.clock = clock;
        this.builtAt = clock.getAsLong();
        this.baseline = new long[4];
        this.latest = baseline;
        this.latestAt = builtAt;
    }

    long diskReserve() {
        return diskReserve;
    }

    StoreHealth evaluate() {
        if (store.isClosed()) {
            return StoreHealth.of(List.of(new StoreHealth.Issue(StoreHealth.Reason.CLOSED, StoreHealth.State.FAILED,
                "store " + store.name() + " is closed")));
        }
        final List<StoreHealth.Issue> issues = new ArrayList<>(2);
        final StoreLog log = store.log().orElse(null);
        if (log != null) {
            if (log.isFailed()) {
                final WriterStats writer = log.writerStats();
                final Throwable failure = log.lastFailure();
                issues.add(new StoreHealth.Issue(StoreHealth.Reason.LOG_FAILED, StoreHealth.State.FAILED,
                    "log " + log.directory().getFileName() + " failed: " + (failure != null ? failure.getMessage() : "unknown")
                        + "; appends refused until it recovers (automatic recoveries so far=" + log.automaticRecoveries()
                        + ", failed requests=" + writer.failedRequests() + ")"));
            }
            final long usable = usableSpace(log.directory());
            if (usable >= 0 && usable < diskReserve) {
                issues.add(new StoreHealth.Issue(StoreHealth.Reason.DISK_BELOW_RESERVE, StoreHealth.State.DEGRADED,
                    "usable=" + usable + " bytes on the log's file system, reserve=" + diskReserve + " bytes"));
            }
        }
        final IsolationStats isolation = store.isolationStats();
        final long now = clock.getAsLong();
        final long[] counts = {isolation.appendRoomRefusals(), isolation.fillsRefusedNoRoom(), isolation.readBudgetRefusals(),
            isolation.fillsRefusedBudget()};
        final long[] since = window(counts, now);
        final long appendRefusals = counts[0] - since[0];
        final long fillNoRoom = counts[1] - since[1];
        if (appendRefusals > 0 || fillNoRoom > 0) {
            final CacheStats cache = store.cache().stats();
            issues.add(new StoreHealth.Issue(StoreHealth.Reason.CACHE_FULL, StoreHealth.State.DEGRADED,
                "in the last health window " + appendRefusals + " append(s) refused and " + fillNoRoom
                    + " fill(s) uncached for want of cache room; utilization now=" + String.format("%.3f", cache.utilization())
                    + ", pinned entries=" + store.cacheManager().stats().entryPins()));
        }
        final long budgetRefusals = (counts[2] - since[2]) + (counts[3] - since[3]);
        if (isolation.readBudgetWaiting() > 0 || budgetRefusals > 0) {
            issues.add(new StoreHealth.Issue(StoreHealth.Reason.BUDGET_EXHAUSTED, StoreHealth.State.DEGRADED,
                "read budget used=" + isolation.readBudgetUsedBytes() + " of " + isolation.readBudgetBytes() + " bytes, reads waiting="
                    + isolation.readBudgetWaiting() + ", reads and fills refused in the last health window=" + budgetRefusals));
        }
        final WarmRestoreStats warm = store.warmRestore();
        if (warm.discardedTotal() > 0 && now - builtAt < windowNanos) {
            issues.add(new StoreHealth.Issue(StoreHealth.Reason.WARM_RESTART_DISCARDED, StoreHealth.State.DEGRADED,
                "warm restart discarded " + warm.discardedTotal() + " of " + warm.catalogEntries() + " catalog entries: "
                    + warm.discarded()));
        }
        return StoreHealth.of(issues);
    }

    /** Moves the window if the latest snapshot is a window old; returns the baseline to compare with. */
    private synchronized long[] window(final long[] counts, final long now) {
        if (now - latestAt >= windowNanos) {
            baseline = latest;
            latest = counts;
            latestAt = now;
        }
        return baseline;
    }

    /** @return the usable bytes of the directory's file system, or -1 if it cannot be read. */
    private static long usableSpace(final Path directory) {
        try {
            return Files.getFileStore(directory).getUsableSpace();
        } catch (final IOException | RuntimeException e) {
            return -1;
        }
    }
}
