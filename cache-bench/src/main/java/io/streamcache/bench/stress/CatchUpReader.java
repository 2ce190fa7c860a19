package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentTruncatedException;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;

import java.util.SplittableRandom;

/**
 * One catch-up reader thread: picks a segment at random, reads it from its start (its
 * truncation point) up to where its tail was when the pass began (behind the tail, so mostly
 * evicted bytes once the cache has filled, read through the log), verifying every byte, then
 * picks another. If the retention thread truncates the segment under it, it skips to the new
 * start. Publishes its segment and position for the sampler's lag measure ({@link #lagBytes()}).
 *
 * <p>With {@code --catchup-share F} it waits before each read while catch-up reads exceed that
 * share of all reads ({@link StressRun#paceCatchUp()}).
 *
 * <p>With {@code --policy reader-aware} each pass registers a policy reader for its segment at
 * the offset it starts from, moves it to the end of every read (and of every truncation skip)
 * and closes it when the pass ends, before the next segment is picked.
 */
final class CatchUpReader implements Runnable {
    /** Most bytes one catch-up read asks for. */
    static final int MAX_READ_LENGTH = 1 << 20;

    private final StressRun run;
    private final int id;
    private final SplittableRandom random;
    /** The segment being read, null between passes; written by the reader, read by the sampler. */
    private volatile StressRun.SegmentState current;
    /** The next offset to read in {@link #current}; written by the reader, read by the sampler. */
    private volatile long position;

    CatchUpReader(final StressRun run, final int id) {
        this.run = run;
        this.id = id;
        this.random = new SplittableRandom(run.config.seed * 17 + id);
    }

    /**
     * @return how many acknowledged bytes of its segment this reader has yet to read, or -1
     *     between passes; any thread (a racy but consistent-enough snapshot for a gauge).
     */
    long lagBytes() {
        final StressRun.SegmentState segment = current;
        if (segment == null) {
            return -1;
        }
        return Math.max(0, segment.appendedEnd - position);
    }

    @Override
    public void run() {
        final String reader = "catchup-" + id;
        try {
            while (!run.stopping()) {
                final StressRun.SegmentState segment = run.segments[random.nextInt(run.segments.length)];
                final long end = segment.appendedEnd;
                if (end == 0) {
                    Thread.sleep(10);
                    continue;
                }
                position = segment.truncatedTo;
                current = segment;
                final ReaderAwarePolicy.Reader registered = run.register(segment, position);
                try {
                    while (position < end && !run.stopping()) {
                        run.paceCatchUp();
                        if (run.stopping()) {
                            // The pacing returns at once when stopping: a read now would be one past the share.
                            break;
                        }
                        final int wanted = (int) Math.min(run.config.catchupReadSize, end - position);
                        try (ReadResult result = run.fetch(segment, position, wanted, run.metrics.catchupRead)) {
                            if (result.length() == 0) {
                                break;
                            }
                            if (!run.verify(segment, result, reader)) {
                                return;
                            }
                            position = result.nextOffset();
                        } catch (final Exception e) {
                            final SegmentTruncatedException truncated = StressRun.truncation(e);
                            if (truncated == null) {
                                throw e;
                            }
                            position = Math.max(position, truncated.startOffset());
                            run.metrics.truncatedSkips.increment();
                        }
                        if (registered != null) {
                            registered.position(position);
                        }
                    }
                } finally {
                    if (registered != null) {
                        registered.close();
                    }
                }
                current = null;
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final Exception e) {
            if (!run.stopping()) {
                run.fail("catch-up reader " + id, e);
            }
        }
    }
}
