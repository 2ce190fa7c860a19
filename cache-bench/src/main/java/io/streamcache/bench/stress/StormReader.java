package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentTruncatedException;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * One reader of a catch-up storm ({@code --scenario catchup-storm}): consumers that attach
 * mid-run and read whole segments from their start (their truncation point) with the store's
 * one read call, {@code readAsync}, so that most bytes come through the log. Reader {@code id}
 * of {@code n} reads segments {@code id, id + n, ...} in turn, each up to where its tail was
 * when the pass began, so the storm spreads over many segments at once; every byte is verified.
 * With {@code --storm-rate} each reader holds itself to its share of that rate. Runs on its own
 * thread until {@code stop} says so; reads that complete after that are not
 * counted (they belong to no phase of the storm).
 */
final class StormReader implements Runnable {
    /** Timeout handed to {@code readAsync}: the reads are behind the tail, so it applies only at a tail. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private final StressRun run;
    private final int id;
    private final int readers;
    private final BooleanSupplier stop;

    StormReader(final StressRun run, final int id, final int readers, final BooleanSupplier stop) {
        this.run = run;
        this.id = id;
        this.readers = readers;
        this.stop = stop;
    }

    /**
     * With {@code --storm-rate}: sleeps while this reader is ahead of its share of the rate
     * ({@code read} bytes since {@code begin}).
     */
    private void pace(final long begin, final long read) throws InterruptedException {
        final double rate = run.config.stormRate;
        if (rate <= 0) {
            return;
        }
        final long due = begin + (long) (read / (rate * 1e6 / readers) * 1e9);
        final long ahead = due - System.nanoTime();
        if (ahead > 0 && !stopping()) {
            Thread.sleep(Math.max(1, ahead / 1_000_000));
        }
    }

    private boolean stopping() {
        return stop.getAsBoolean() || run.stopping();
    }

    @Override
    public void run() {
        final String reader = "storm-" + id;
        final StressMetrics m = run.metrics;
        final long begin = System.nanoTime();
        long read = 0;
        try {
            for (int pass = 0; !stopping(); pass++) {
                final StressRun.SegmentState segment = run.segments[(id + pass * readers) % run.segments.length];
                final long end = segment.appendedEnd;
                long position = segment.truncatedTo;
                while (position < end && !stopping()) {
                    final int wanted = (int) Math.min(run.config.stormReadSize, end - position);
                    final long[] before = CallDiagnostics.ENABLED ? CallDiagnostics.begin() : null;
                    final long start = System.nanoTime();
                    try {
                        final CompletableFuture<ReadResult> future = run.store.readAsync(segment.name, position, wanted, TIMEOUT);
                        final long took = System.nanoTime() - start;
                        m.readCall.record(took, 0);
                        if (before != null) {
                            CallDiagnostics.end(reader, before, start, took, future.isDone());
                        }
                        try (ReadResult result = StressRun.await(future)) {
                            if (result.length() == 0) {
                                break;
                            }
                            if (!run.verify(segment, result, reader)) {
                                return;
                            }
                            if (!stopping()) {
                                m.stormRead.record(System.nanoTime() - start, result.length());
                                m.stormRead.reads.increment();
                            }
                            position = result.nextOffset();
                            read += result.length();
                        }
                        pace(begin, read);
                    } catch (final Exception e) {
                        final SegmentTruncatedException truncated = StressRun.truncation(e);
                        if (truncated == null) {
                            throw e;
                        }
                        position = Math.max(position, truncated.startOffset());
                        m.truncatedSkips.increment();
                    }
                }
                if (end == 0) {
                    Thread.sleep(10);
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final Exception e) {
            if (!run.stopping()) {
                run.fail("storm reader " + id, e);
            }
        }
    }
}
