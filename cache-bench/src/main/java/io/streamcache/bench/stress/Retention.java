package io.streamcache.bench.stress;

import java.util.concurrent.TimeUnit;

/**
 * The retention thread of a stress run: truncates each segment so that about
 * {@code --retention / segments} bytes stay behind its tail, as a broker's size-based retention
 * would, so the log's dead files are deleted and its disk use stays bounded. It never truncates
 * past the position of a segment's (first) tail reader; catch-up readers are not protected (a
 * broker's retention does not wait for a slow consumer either): one whose bytes were truncated
 * skips to the new start and the skip is counted. Runs on its own thread; the truncations are
 * synchronous (logged, then applied), one segment at a time.
 *
 * <p>A segment is truncated only once it holds {@link #step} bytes more than it keeps, so the
 * number of truncations (log records) stays proportional to the bytes appended, not to the time
 * or the number of segments.
 *
 * <p>With {@code --policy reader-aware} a truncation needs nothing from this thread: a
 * registered reader's position has one writer, its reader, which moves it to the new start when
 * its next read finds the bytes truncated. The run deletes no segment, so nothing calls the
 * policy's {@code forget}.
 */
final class Retention implements Runnable {
    /** Smallest truncation step: below it a truncation (a log record, a force) costs more than the bytes it frees. */
    static final long MIN_STEP = 64 << 10;
    private static final long IDLE_SLEEP_MILLIS = 10;

    private final StressRun run;
    private final long keep;
    private final long step;

    Retention(final StressRun run) {
        this.run = run;
        this.keep = Math.max(1, run.config.retention / run.segments.length);
        this.step = stepFor(keep);
    }

    /** The truncation step for a segment that keeps {@code keep} bytes: a quarter of it, at least {@link #MIN_STEP}. */
    static long stepFor(final long keep) {
        return Math.max(MIN_STEP, keep / 4);
    }

    /**
     * @return where to truncate a segment to, or -1 to leave it: {@code keep} bytes behind its
     *     acknowledged end, not past its tail reader, and only if that frees {@code step} bytes or more.
     */
    static long target(final long appendedEnd, final long tailPosition, final long truncatedTo, final long keep, final long step) {
        final long target = Math.min(appendedEnd - keep, tailPosition);
        return target - truncatedTo >= step ? target : -1;
    }

    @Override
    public void run() {
        try {
            while (!run.stopping()) {
                boolean truncated = false;
                for (int i = 0; i < run.segments.length && !run.stopping(); i++) {
                    final StressRun.SegmentState segment = run.segments[i];
                    final long from = segment.truncatedTo;
                    final long to = target(segment.appendedEnd, segment.tailPosition, from, keep, step);
                    if (to >= 0) {
                        run.store.truncate(segment.name, to);
                        segment.truncatedTo = to;
                        run.metrics.truncations.increment();
                        run.metrics.truncatedBytes.add(to - from);
                        truncated = true;
                    }
                }
                if (!truncated) {
                    TimeUnit.MILLISECONDS.sleep(IDLE_SLEEP_MILLIS);
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final RuntimeException e) {
            if (!run.stopping()) {
                run.fail("retention", e);
            }
        }
    }
}
