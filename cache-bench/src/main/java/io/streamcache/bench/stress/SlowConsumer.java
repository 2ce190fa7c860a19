package io.streamcache.bench.stress;

import io.streamcache.segmentstore.ReadBudget;
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
 * does not read its socket, so the broker holds every result it fetched for it. With
 * {@code --slow-from start} (the default) it reads the segments from their start in turn with
 * {@code readAsync} (so through the log, into the cache); with {@code --slow-from tail} it follows
 * every segment's tail from where it was (cached bytes: its results pin the newest blocks). It
 * verifies each result and keeps it unreleased until {@code stop} says the disturbance is over,
 * then releases them all. With {@code --slow-budget own} (the
 * default) every read passes the consumer's own {@link ReadBudget} of {@code --slow-hold} bytes,
 * as a broker would one per channel, and the consumer never stops fetching: the store makes its
 * reads wait (or, {@code fail-fast}, refuses them) once it holds its whole budget; the store's
 * own budget bounds it in any case. With {@code store} it passes none and stops at
 * {@code --slow-hold} bytes itself. A read that fails or does not
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

    /** The consumer's own read budget ({@code --slow-budget own|fail-fast}), or null (the store's alone). */
    private final ReadBudget budget;

    SlowConsumer(final StressRun run, final BooleanSupplier stop) {
        this.run = run;
        this.stop = stop;
        switch (run.config.slowBudget) {
            case OWN: budget = ReadBudget.waiting("slow-consumer", run.config.slowHold); break;
            case FAIL_FAST: budget = ReadBudget.failFast("slow-consumer", run.config.slowHold); break;
            default: budget = null;
        }
    }

    private boolean stopping() {
        return stop.getAsBoolean() || run.stopping();
    }

    @Override
    public void run() {
        try {
            if (run.config.slowFromTail) {
                followTails();
            } else {
                catchUp();
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

    /** {@code --slow-from start}: the segments in turn, each from its start to where its tail was (through the log). */
    private void catchUp() throws InterruptedException {
        for (int pass = 0; !stopping(); pass++) {
            final StressRun.SegmentState segment = run.segments[pass % run.segments.length];
            final long end = segment.appendedEnd;
            long position = segment.truncatedTo;
            while (position < end && !stopping()) {
                if (full()) {
                    Thread.sleep(PAUSE_MILLIS);
                    continue;
                }
                final long next = fetch(segment, position, end - position);
                if (next == MISMATCH) {
                    return;
                }
                if (next == EMPTY) {
                    break;
                }
                position = next;
            }
        }
    }

    /**
     * {@code --slow-from tail}: every segment from where its tail was when the disturbance
     * began, following it (the bytes are cached, so the results pin the cache's newest blocks).
     */
    private void followTails() throws InterruptedException {
        final long[] positions = new long[run.segments.length];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = run.segments[i].appendedEnd;
        }
        while (!stopping()) {
            boolean progressed = false;
            for (int i = 0; i < positions.length && !stopping() && !full(); i++) {
                final long available = run.segments[i].appendedEnd - positions[i];
                if (available <= 0) {
                    continue;
                }
                final long next = fetch(run.segments[i], positions[i], available);
                if (next == MISMATCH) {
                    return;
                }
                if (next > positions[i]) {
                    positions[i] = next;
                    progressed = true;
                }
            }
            if (!progressed) {
                Thread.sleep(PAUSE_MILLIS);
            }
        }
    }

    /**
     * @return whether the consumer stops fetching for now: with a budget of its own it never does
     *     (it keeps pipelining fetches, and the budget makes them wait or refuses them, as it
     *     would a broker's client); without one it stops at {@code --slow-hold} bytes.
     */
    private boolean full() {
        return budget == null && heldBytes >= run.config.slowHold;
    }

    /** {@link #fetch}: a read that returned no data. */
    private static final long EMPTY = -2;
    /** {@link #fetch}: a byte did not verify (the run is stopping). */
    private static final long MISMATCH = -1;

    /**
     * Reads up to {@code available} bytes at {@code position} and holds the result.
     *
     * @return the next position (the same one after a refusal, the segment's new start after a
     *     truncation), {@link #EMPTY} or {@link #MISMATCH}.
     */
    private long fetch(final StressRun.SegmentState segment, final long position, final long available) throws InterruptedException {
        final StressMetrics m = run.metrics;
        final long room = budget == null ? run.config.slowHold - heldBytes : READ_LENGTH;
        final int wanted = (int) Math.max(1, Math.min(Math.min(READ_LENGTH, available), room));
        final long start = System.nanoTime();
        final ReadResult result;
        try {
            final CompletableFuture<ReadResult> future = budget == null ? run.store.readAsync(segment.name, position, wanted, READ_WAIT)
                : run.store.readAsync(segment.name, position, wanted, READ_WAIT, budget);
            m.readCall.record(System.nanoTime() - start, 0);
            result = awaitBriefly(future);
        } catch (final ExecutionException | TimeoutException | RuntimeException e) {
            final SegmentTruncatedException truncated = StressRun.truncation(e);
            if (truncated != null) {
                m.truncatedSkips.increment();
                return Math.max(position, truncated.startOffset());
            }
            refused(e);
            return position;
        }
        if (result.length() == 0) {
            result.close();
            return EMPTY;
        }
        if (!run.verify(segment, result, "slow-consumer")) {
            result.close();
            return MISMATCH;
        }
        held.add(result);
        heldBytes += result.length();
        m.slowHeldBytes.set(heldBytes);
        m.slowHeldPeak.accumulateAndGet(heldBytes, Math::max);
        return result.nextOffset();
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
