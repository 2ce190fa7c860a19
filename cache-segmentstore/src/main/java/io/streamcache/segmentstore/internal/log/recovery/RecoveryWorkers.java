package io.streamcache.segmentstore.internal.log.recovery;

import io.streamcache.core.StreamcacheThreads;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one loop of recovery over {@code [0, count)} in contiguous chunks on a bounded number of
 * threads, the calling thread one of them: the per-segment and per-file work after the replay
 * ({@link LogReplay#finish}, the recovered files), which has no order between items. Used by
 * one thread at a time (the recovery's); each {@link #run} starts its helper threads (role
 * {@link StreamcacheThreads.Role#RECOVERY_SCAN}) and joins them before it returns, so nothing
 * outlives it and everything the chunks wrote is visible to the caller afterwards (join).
 *
 * <p><b>Deterministic result.</b> Chunks are claimed in any order by any thread, but each writes
 * only its own items and its own slot of per-chunk results, which the caller merges in chunk
 * order; a chunk that throws stops at its first failing item, and {@link #run} rethrows the
 * failure of the lowest chunk, i.e. the first failing item in loop order, whatever the timing:
 * the error a sequential loop would have thrown.
 */
final class RecoveryWorkers {
    /** Threads at most (the caller included), whatever the machine. */
    static final int MAX_PARALLELISM = 4;
    /** Items per chunk at least, by default: below this a loop runs on the caller alone. */
    static final int MIN_CHUNK_DEFAULT = 4096;

    /** One chunk of the loop. */
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
    private final int minChunk;

    /**
     * @param parallelism threads at most, the caller included (1: everything on the caller).
     * @param minChunk    items per chunk at least.
     */
    RecoveryWorkers(final StreamcacheThreads threads, final String owner, final int parallelism, final int minChunk) {
        if (parallelism < 1 || minChunk < 1) {
            throw new IllegalArgumentException("parallelism=" + parallelism + " minChunk=" + minChunk + " must be >= 1");
        }
        this.threads = threads;
        this.owner = owner;
        this.parallelism = parallelism;
        this.minChunk = minChunk;
    }

    /** @return threads at most, the caller included. */
    int parallelism() {
        return parallelism;
    }

    /** @return the default parallelism: the processors, at most {@link #MAX_PARALLELISM}. */
    static int defaultParallelism() {
        return Math.max(1, Math.min(MAX_PARALLELISM, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * @return how many chunks {@link #run} cuts {@code count} items into (size per-chunk results
     *         with it): four per thread when there are enough items, so that a thread slowed
     *         by others on the machine leaves its share to the rest.
     */
    int chunks(final int count) {
        if (parallelism == 1 || count <= minChunk) {
            return count == 0 ? 0 : 1;
        }
        return (int) Math.max(1, Math.min(4L * parallelism, count / (long) minChunk));
    }

    /**
     * Runs {@code task} over {@code [0, count)} in {@link #chunks(int)} chunks and waits for all.
     *
     * @throws RuntimeException the first failure in item order (an {@code Error} is rethrown as such).
     */
    void run(final int count, final Chunk task) {
        final int chunks = chunks(count);
        if (chunks <= 1) {
            if (count > 0) {
                task.run(0, 0, count);
            }
            return;
        }
        final Throwable[] failures = new Throwable[chunks];
        final AtomicInteger next = new AtomicInteger();
        final Runnable worker = () -> {
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                try {
                    task.run(c, (int) ((long) count * c / chunks), (int) ((long) count * (c + 1) / chunks));
                } catch (final RuntimeException | Error e) {
                    failures[c] = e;
                }
            }
        };
        final int helpers = Math.min(parallelism, chunks) - 1;
        final Thread[] started = new Thread[helpers];
        for (int i = 0; i < helpers; i++) {
            try {
                final Thread thread = threads.newThread(StreamcacheThreads.Role.RECOVERY_SCAN, owner, worker);
                thread.start();
                started[i] = thread;
            } catch (final RuntimeException | OutOfMemoryError e) {
                // No more threads: the ones started and the caller take the chunks left.
                break;
            }
        }
        worker.run();
        boolean interrupted = false;
        for (final Thread thread : started) {
            while (thread != null && thread.isAlive()) {
                try {
                    thread.join();
                } catch (final InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        for (final Throwable failure : failures) {
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
        }
    }
}
