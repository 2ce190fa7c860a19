package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One tail reader thread: follows the tails of its share of the segments (segment {@code j}
 * when {@code j % tailReaders == id}; reader {@code id % segments} alone when there are more
 * readers than segments), reading what is new in each and verifying every byte. When a sweep
 * finds nothing new it waits at one tail with {@code readOrWait}, holding no thread in the store.
 * A tail that fell behind into evicted bytes reads through the log.
 */
final class TailReader implements Runnable {
    /** Most bytes one tail read asks for. */
    static final int MAX_READ_LENGTH = 256 << 10;
    /** How long an idle reader waits at a tail before sweeping again. */
    static final Duration WAIT = Duration.ofMillis(20);

    private final StressRun run;
    private final int id;
    private final StressRun.SegmentState[] followed;
    private final long[] positions;

    TailReader(final StressRun run, final int id) {
        this.run = run;
        this.id = id;
        final int readers = run.config.tailReaders;
        final int segments = run.segments.length;
        if (readers > segments) {
            followed = new StressRun.SegmentState[] {run.segments[id % segments]};
        } else {
            followed = new StressRun.SegmentState[(segments - id + readers - 1) / readers];
            for (int i = 0; i < followed.length; i++) {
                followed[i] = run.segments[id + i * readers];
            }
        }
        positions = new long[followed.length];
    }

    @Override
    public void run() {
        final String reader = "tail-" + id;
        int waitAt = 0;
        try {
            while (!run.stopping()) {
                boolean progressed = false;
                for (int i = 0; i < followed.length && !run.stopping(); i++) {
                    try (ReadResult result = run.fetch(followed[i], positions[i], MAX_READ_LENGTH, run.metrics.tailRead)) {
                        if (result.length() > 0) {
                            if (!run.verify(followed[i], result, reader)) {
                                return;
                            }
                            positions[i] = result.nextOffset();
                            progressed = true;
                        }
                    }
                }
                if (!progressed && !run.stopping()) {
                    waitAt = (waitAt + 1) % followed.length;
                    final StressRun.SegmentState segment = followed[waitAt];
                    try (ReadResult result = run.store.readOrWait(segment.name, positions[waitAt], MAX_READ_LENGTH, WAIT)
                        .get(StressRun.READ_THROUGH_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                        if (result.status() == ReadStatus.TIMED_OUT) {
                            run.metrics.tailTimeouts.increment();
                        } else if (result.length() > 0) {
                            run.metrics.cacheHits.increment();
                            if (!run.verify(segment, result, reader)) {
                                return;
                            }
                            positions[waitAt] = result.nextOffset();
                        }
                    }
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final Exception e) {
            if (!run.stopping()) {
                run.fail("tail reader " + id, e);
            }
        }
    }
}
