package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentTruncatedException;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The slow consumer of {@code --scenario slow-consumer}: a client that pipelines fetches and
 * does not read its socket, so the broker holds every result it fetched for it. It reads the
 * segments from their start in turn with {@code readAsync} (so through the log, into the cache),
 * verifies each result and keeps it unreleased until it holds {@code --slow-hold} bytes, then
 * holds them until {@code stop} says so and releases them all. A read that fails or does not
 * complete within {@link #READ_WAIT} while it holds results is counted as a refusal (a budget
 * that refuses it, or, without one, a stall) and retried after a pause; a refusal never fails
 * the run, a mismatch does. Runs on its own thread.
 */
final class SlowConsumer implements Runnable {
    /** Bytes one fetch asks for: a consumer's fetch size. */
    static final int READ_LENGTH = 64 << 10;
    /** Longest the consumer waits for one read before it counts a refusal. */
    static final long READ_WAIT_MILLIS = 1000;
    private static final Duration READ_WAIT = Duration.ofMillis(READ_WAIT_MILLIS);
    private static final long PAUSE_MILLIS = 20;

    private final StressRun run;
    private final BooleanSupplier stop;
    private final ArrayDeque<ReadResult> held = new ArrayDeque<>();
    private long heldBytes;
    /** The class of the first refusal's exception, for the report; written by the consumer, read after it ended. */
    volatile String firstRefusal;

    SlowConsumer(final StressRun run, final BooleanSupplier stop) {
        this.run = run;
        this.stop = stop;
    }

    private boolean stopping() {
        return stop.getAsBoolean() || run.stopping();
    }

    @Override
    public void run() {
        final StressMetrics m = run.metrics;
        try {
            int pass = 0;
            while (!stopping()) {
                final StressRun.SegmentState segment = run.segments[pass++ % run.segments.length];
                final long end = segment.appendedEnd;
                long position = segment.truncatedTo;
                while (position < end && !stopping()) {
                    if (heldBytes >= run.config.slowHold) {
                        Thread.sleep(PAUSE_MILLIS);
                        continue;
                    }
                    final int wanted = (int) Math.min(Math.min(READ_LENGTH, end - position), run.config.slowHold - heldBytes);
                    final long start = System.nanoTime();
                    final ReadResult result;
                    try {
                        final CompletableFuture<ReadResult> future = run.store.readAsync(segment.name, position, Math.max(1, wanted),
                            READ_WAIT);
                        m.readCall.record(System.nanoTime() - start, 0);
                        result = awaitBriefly(future);
                    } catch (final ExecutionException | TimeoutException | RuntimeException e) {
                        final SegmentTruncatedException truncated = StressRun.truncation(e);
                        if (truncated != null) {
                            position = Math.max(position, truncated.startOffset());
                            m.truncatedSkips.increment();
                            continue;
                        }
                        refused(e);
                        continue;
                    }
                    if (result.length() == 0) {
                        result.close();
                        break;
                    }
                    if (!run.verify(segment, result, "slow-consumer")) {
                        result.close();
                        return;
                    }
                    held.add(result);
                    heldBytes += result.length();
                    m.slowHeldBytes.set(heldBytes);
                    position = result.nextOffset();
                }
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final RuntimeException e) {
            if (!run.stopping()) {
                run.fail("slow consumer", e);
            }
        } finally {
            releaseAll();
        }
    }

    private void refused(final Exception e) throws InterruptedException {
        run.metrics.slowRefusals.increment();
        if (firstRefusal == null) {
            final Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            firstRefusal = cause.getClass().getSimpleName();
        }
        Thread.sleep(PAUSE_MILLIS);
    }

    /** Waits up to {@link #READ_WAIT_MILLIS}; a result that comes later is closed when it comes. */
    private static ReadResult awaitBriefly(final CompletableFuture<ReadResult> future) throws InterruptedException, ExecutionException,
        TimeoutException {
        try {
            return future.get(READ_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (final TimeoutException | InterruptedException e) {
            future.thenAccept(ReadResult::close);
            throw e;
        }
    }

    private void releaseAll() {
        ReadResult result;
        while ((result = held.poll()) != null) {
            result.close();
        }
        heldBytes = 0;
        run.metrics.slowHeldBytes.set(0);
    }
}
