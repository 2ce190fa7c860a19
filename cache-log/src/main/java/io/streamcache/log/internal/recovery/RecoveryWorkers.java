package io.streamcache.log.internal.recovery;

import io.streamcache.core.internal.concurrent.Waits;
import io.streamcache.core.StreamcacheThreads;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs loops of recovery over {@code [0, count)} in contiguous chunks on a bounded number of
 * threads, the calling thread one of them: the files applied in lanes, the per-segment and
 * per-file work after the replay. Used by one thread at a time (the recovery's). The helper
 * threads (role {@link StreamcacheThreads.Role#RECOVERY_SCAN}, at most {@code parallelism - 1})
 * are made on the first loop that needs them and kept until {@link #close()}, which stops and
 * joins them: a log of 71 files runs 71 loops of lanes, and a thread made and joined per loop
 * cost a scheduling delay per loop on a busy machine.
 *
 * <p><b>Waiting.</b> {@link #run} returns when every chunk is done, not when the helpers are
 * idle: a helper the machine has not scheduled yet claims nothing, and the caller does its
 * share (chunks are claimed from a counter by whoever is free). Everything a chunk wrote is
 * visible to the caller afterwards (the chunks count down a latch the caller awaits).
 *
 * <p><b>Deterministic result.</b> Each chunk writes only its own items and its own slot of
 * per-chunk results, which the caller merges in chunk order; a chunk that throws stops at its
 * first failing item, and {@link #run} rethrows the failure of the lowest chunk, i.e. the first
 * failing item in loop order, whatever the timing: the error a sequential loop would have thrown.
 */
final class RecoveryWorkers implements AutoCloseable {
    /** Threads at most (the caller included), whatever the machine. */
    static final int MAX_PARALLELISM = 4;
    /** Items per chunk at least, by default: below this a loop runs on the caller alone. */
    static final int MIN_CHUNK_DEFAULT = 4096;

    /** One chunk of a loop. */
    @FunctionalInterface
    interface Chunk {
        /**
         * @param chunk the chunk's index, for per-chunk results.
         * @param from  first item.
         * @param to    end of the items, exclusive.
         */
        void run(int chunk, int from, int to);
    }

    private final StreamcacheThreads threads;
    private final String owner;
    private final int parallelism;
    /** The helpers, made on first use; null before, and always with a parallelism of 1. */
    private ThreadPoolExecutor helpers;

    /**
     * @param parallelism threads at most, the caller included (1: everything on the caller, no thread made).
     */
    RecoveryWorkers(final StreamcacheThreads threads, final String owner, final int parallelism) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism=" + parallelism + " must be >= 1");
        }
        this.threads = threads;
        this.owner = owner;
        this.parallelism = parallelism;
    }

    /** @return the default parallelism: the processors, at most {@link #MAX_PARALLELISM}. */
    static int defaultParallelism() {
        return Math.max(1, Math.min(MAX_PARALLELISM, Runtime.getRuntime().availableProcessors()));
    }

    /** @return threads at most, the caller included. */
    int parallelism() {
        return parallelism;
    }

    /**
     * @return how many chunks {@link #run} cuts {@code count} items into with chunks of at least
     *         {@code minChunk} (size per-chunk results with it): four per thread when there are
     *         enough items, so that a thread slowed by others on the machine leaves its share to the rest.
     */
    int chunks(final int count, final int minChunk) {
        if (parallelism == 1 || count <= minChunk) {
            return count == 0 ? 0 : 1;
        }
        return (int) Math.max(1, Math.min(4L * parallelism, count / (long) Math.max(1, minChunk)));
    }

    /**
     * Runs {@code task} over {@code [0, count)} in {@link #chunks(int, int)} chunks and waits for all.
     *
     * @throws RuntimeException the first failure in item order (an {@code Error} is rethrown as such).
     */
    void run(final int count, final int minChunk, final Chunk task) {
        final int chunks = chunks(count, minChunk);
        if (chunks <= 1) {
            if (count > 0) {
                task.run(0, 0, count);
            }
            return;
        }
        final Throwable[] failures = new Throwable[chunks];
        final AtomicInteger next = new AtomicInteger();
        final CountDownLatch done = new CountDownLatch(chunks);
        final Runnable worker = () -> {
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                try {
                    task.run(c, (int) ((long) count * c / chunks), (int) ((long) count * (c + 1) / chunks));
                } catch (final RuntimeException | Error e) {
                    failures[c] = e;
                } finally {
                    done.countDown();
                }
            }
        };
        final int wanted = Math.min(parallelism, chunks) - 1;
        for (int i = 0; i < wanted; i++) {
            try {
                helpers().execute(worker);
            } catch (final RejectedExecutionException | OutOfMemoryError e) {
                // No helper: the caller takes the chunks (a queued worker finds none left).
                break;
            }
        }
        worker.run();
        Waits.awaitUninterruptibly(done);
        for (final Throwable failure : failures) {
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
        }
    }

    private ThreadPoolExecutor helpers() {
        if (helpers == null) {
            helpers = new ThreadPoolExecutor(parallelism - 1, parallelism - 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                threads.factory(StreamcacheThreads.Role.RECOVERY_SCAN, owner));
        }
        return helpers;
    }

    /** Stops the helpers and waits for them (they are idle: every loop has ended). Idempotent. */
    @Override
    public void close() {
        if (helpers == null) {
            return;
        }
        helpers.shutdownNow();
        boolean interrupted = false;
        while (true) {
            try {
                if (helpers.awaitTermination(1, TimeUnit.SECONDS)) {
                    break;
                }
            } catch (final InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
