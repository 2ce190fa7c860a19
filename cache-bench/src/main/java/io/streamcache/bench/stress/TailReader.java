package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentTruncatedException;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One tail reader thread: follows the tails of its share of the segments (segment {@code j}
 * when {@code j % tailReaders == id}; reader {@code id % segments} alone when there are more
 * readers than segments), reading what is new in each and verifying every byte. When a sweep
 * finds nothing new it waits at one tail with {@code readOrWait}, holding no thread in the store.
 * A tail that fell behind into evicted bytes reads through the log.
 *
 * <p>A reader starts at the acknowledged end of each segment it follows (so after a prefill it
 * follows the tail, as a consumer attaching to a live stream would). The first reader of a
 * segment publishes its position in {@link StressRun.SegmentState#tailPosition}: the retention
 * thread never truncates past it and the sampler measures the reader's lag from it. A reader
 * whose position was truncated anyway (a second reader of a segment) skips to the new start.
 *
 * <p>With {@code --policy reader-aware} the reader registers one policy reader per segment it
 * follows, at the position it starts from, moves it to the end of every read (and of every
 * truncation skip), and closes them all when it stops.
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
    /** The reader-aware policy's handle of each followed segment while running; null elements with another policy. */
    private final ReaderAwarePolicy.Reader[] registered;
    /** Whether this reader is the first follower of the segment, which publishes its position. */
    private final boolean first;

    /** Builds the reader on the starting thread, before it starts: the first positions are published then. */
    TailReader(final StressRun run, final int id) {
        this.run = run;
        this.id = id;
        final int readers = run.config.tailReaders;
        final int segments = run.segments.length;
        if (readers > segments) {
            followed = new StressRun.SegmentState[] {run.segments[id % segments]};
            first = id < segments;
        } else {
            followed = new StressRun.SegmentState[(segments - id + readers - 1) / readers];
            for (int i = 0; i < followed.length; i++) {
                followed[i] = run.segments[id + i * readers];
            }
            first = true;
        }
        positions = new long[followed.length];
        registered = new ReaderAwarePolicy.Reader[followed.length];
        for (int i = 0; i < followed.length; i++) {
            positions[i] = Math.max(followed[i].appendedEnd - run.resumeRewind, followed[i].truncatedTo);
            publish(i);
        }
    }

    private void publish(final int i) {
        if (first) {
            followed[i].tailPosition = positions[i];
        }
    }

    /** Moves the reader of followed segment {@code i} to {@code next}: publishes it and tells the policy (allocation-free). */
    private void moveTo(final int i, final long next) {
        positions[i] = next;
        publish(i);
        final ReaderAwarePolicy.Reader reader = registered[i];
        if (reader != null) {
            reader.position(next);
        }
    }

    @Override
    public void run() {
        final String reader = "tail-" + id;
        int waitAt = 0;
        try {
            for (int i = 0; i < followed.length; i++) {
                registered[i] = run.register(followed[i], positions[i]);
            }
            while (!run.stopping()) {
                boolean progressed = false;
                for (int i = 0; i < followed.length && !run.stopping(); i++) {
                    try (ReadResult result = run.fetch(followed[i], positions[i], MAX_READ_LENGTH, run.metrics.tailRead)) {
                        if (result.length() > 0) {
                            if (!run.verify(followed[i], result, reader)) {
                                return;
                            }
                            run.metrics.tailReaderBytes[id].add(result.length());
                            moveTo(i, result.nextOffset());
                            progressed = true;
                        }
                    } catch (final Exception e) {
                        skipIfTruncated(i, e);
                        progressed = true;
                    }
                }
                if (!progressed && !run.stopping()) {
                    waitAt = (waitAt + 1) % followed.length;
                    final StressRun.SegmentState segment = followed[waitAt];
                    final long call = System.nanoTime();
                    final CompletableFuture<ReadResult> waiting = run.store.readOrWait(segment.name, positions[waitAt], MAX_READ_LENGTH, WAIT);
                    run.metrics.waitCall.record(System.nanoTime() - call, 0);
                    try (ReadResult result = StressRun.await(waiting)) {
                        if (result.status() == ReadStatus.TIMED_OUT) {
                            run.metrics.tailTimeouts.increment();
                        } else if (result.length() > 0) {
                            run.metrics.cacheHits.increment();
                            run.metrics.tailRead.reads.increment();
                            run.metrics.tailRead.hits.increment();
                            if (!run.verify(segment, result, reader)) {
                                return;
                            }
                            run.metrics.tailReaderBytes[id].add(result.length());
                            moveTo(waitAt, result.nextOffset());
                        }
                    } catch (final Exception e) {
                        skipIfTruncated(waitAt, e);
                    }
                }
            }
            // A last look at what was appended since this reader's last read, so that a short run
            // (fewer operations than one scheduling slice) still checks the bytes it wrote.
            for (int i = 0; i < followed.length; i++) {
                try (ReadResult result = run.store.read(followed[i].name, positions[i], MAX_READ_LENGTH)) {
                    if (result.length() > 0 && !run.verify(followed[i], result, reader)) {
                        return;
                    }
                } catch (final Exception e) {
                    skipIfTruncated(i, e);
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final Exception e) {
            if (!run.stopping()) {
                run.fail("tail reader " + id, e);
            }
        } finally {
            for (final ReaderAwarePolicy.Reader handle : registered) {
                if (handle != null) {
                    handle.close();
                }
            }
        }
    }

    /** Moves the reader of followed segment {@code i} to its new start if {@code e} says it was truncated; rethrows anything else. */
    private void skipIfTruncated(final int i, final Exception e) throws Exception {
        final SegmentTruncatedException truncated = StressRun.truncation(e);
        if (truncated == null) {
            throw e;
        }
        moveTo(i, Math.max(positions[i], truncated.startOffset()));
        run.metrics.truncatedSkips.increment();
    }
}
