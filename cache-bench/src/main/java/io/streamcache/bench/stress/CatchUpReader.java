package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;

import java.util.SplittableRandom;

/**
 * One catch-up reader thread: picks a segment at random, reads it from its start up to where
 * its tail was when the pass began (behind the tail, so mostly evicted bytes once the cache has
 * filled, read through the log), verifying every byte, then picks another.
 */
final class CatchUpReader implements Runnable {
    /** Most bytes one catch-up read asks for. */
    static final int MAX_READ_LENGTH = 1 << 20;

    private final StressRun run;
    private final int id;
    private final SplittableRandom random;

    CatchUpReader(final StressRun run, final int id) {
        this.run = run;
        this.id = id;
        this.random = new SplittableRandom(run.config.seed * 17 + id);
    }

    @Override
    public void run() {
        final String reader = "catchup-" + id;
        try {
            while (!run.stopping()) {
                final StressRun.SegmentState segment = run.segments[random.nextInt(run.segments.length)];
                final long end = run.store.info(segment.name).length();
                if (end == 0) {
                    Thread.sleep(10);
                    continue;
                }
                long position = 0;
                while (position < end && !run.stopping()) {
                    final int wanted = (int) Math.min(MAX_READ_LENGTH, end - position);
                    try (ReadResult result = run.fetch(segment, position, wanted, run.metrics.catchupRead)) {
                        if (result.length() == 0) {
                            break;
                        }
                        if (!run.verify(segment, result, reader)) {
                            return;
                        }
                        position = result.nextOffset();
                    }
                }
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
