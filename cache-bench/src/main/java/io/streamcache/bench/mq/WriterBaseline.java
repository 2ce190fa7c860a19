package io.streamcache.bench.mq;

import io.netty.buffer.Unpooled;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRequest;
import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Phase 1's message stream written by the store's {@link AggregatingWriter} alone: the baseline
 * phase 1 of the message-queue workload is measured against ("the writer alone on the same message stream").
 *
 * <pre>
 *   the same --threads threads, each with the same random stream as in phase 1:
 *     pick one of its queues, build the message (same length, same bytes)
 *     first message of the queue: writer.create(id, "mq/&lt;queueId&gt;/&lt;topic&gt;")   not waited for,
 *                                                                         as the store's createAsync
 *     writer.append(id, offset, message).join()                           durable before the next
 *   until --phase1 bytes in all
 *
 *   what the store adds on top, and this leaves out: segments, queues, the cache and its
 *   eviction, the read index, the location index (the writer has no listener)
 * </pre>
 *
 * So the log receives the same records as in phase 1 (one CREATE per queue, one DATA record
 * per message, the SNAPSHOT of every created queue at the head of each file), written with the
 * same {@link LogConfig} into a directory of its own. Not thread-safe: one {@link #run} at a time.
 */
final class WriterBaseline {

    /** What the baseline measured. */
    record Result(double seconds, double cpuSeconds, long bytes, long messages, long forces, long batches) {
        double mbps() {
            return bytes / 1e6 / seconds;
        }
    }

    private WriterBaseline() {
    }

    /**
     * Writes {@code bytes} of phase 1's stream through a writer over {@code log}'s directory (which
     * must be empty or absent); returns once every append is durable and the writer is closed.
     */
    static Result run(final MqBench.Config config, final LogConfig log, final long bytes) throws Exception {
        try (LogDirectory directory = LogDirectory.open(log)) {
            final AggregatingWriter writer = AggregatingWriter.start(directory);
            try {
                final AtomicLong budget = new AtomicLong(bytes);
                final AtomicReference<Throwable> failure = new AtomicReference<>();
                final CountDownLatch done = new CountDownLatch(config.threads);
                final Producer[] producers = new Producer[config.threads];
                final long start = System.nanoTime();
                final long cpuStart = MqBench.processCpuNanos();
                for (int t = 0; t < config.threads; t++) {
                    producers[t] = new Producer(config, writer, t, budget, failure, done);
                    final Thread thread = new Thread(producers[t], "mq-writer-alone-" + t);
                    thread.setDaemon(true);
                    thread.start();
                }
                done.await();
                final double seconds = (System.nanoTime() - start) / 1e9;
                final double cpuSeconds = (MqBench.processCpuNanos() - cpuStart) / 1e9;
                if (failure.get() != null) {
                    throw new IllegalStateException("a writer-alone producer failed", failure.get());
                }
                long written = 0;
                long messages = 0;
                for (final Producer p : producers) {
                    written += p.bytes;
                    messages += p.messages;
                }
                final WriterStats stats = writer.stats();
                return new Result(seconds, cpuSeconds, written, messages, stats.forces(), stats.batches());
            } finally {
                writer.close();
            }
        }
    }

    /** One producer: phase 1's stream of one thread, straight into the writer. */
    private static final class Producer implements Runnable {
        private final MqBench.Config config;
        private final AggregatingWriter writer;
        private final int thread;
        private final AtomicLong budget;
        private final AtomicReference<Throwable> failure;
        private final CountDownLatch done;
        private final SplittableRandom random;
        private final ByteBuffer message;
        /** Per local queue: messages written, and the segment offset of the next. */
        private final long[] counts;
        private final long[] offsets;
        long bytes;
        long messages;

        Producer(final MqBench.Config config, final AggregatingWriter writer, final int thread, final AtomicLong budget,
                 final AtomicReference<Throwable> failure, final CountDownLatch done) {
            this.config = config;
            this.writer = writer;
            this.thread = thread;
            this.budget = budget;
            this.failure = failure;
            this.done = done;
            // The same seed as MqBench's phase-1 worker of this thread: the same queues, lengths, bytes.
            this.random = MqBench.workerRandom(config, thread, false);
            this.message = ByteBuffer.allocateDirect(config.max);
            final int queues = MqBench.queuesOfThread(config, thread);
            this.counts = new long[queues];
            this.offsets = new long[queues];
        }

        @Override
        public void run() {
            try {
                long granted = 0;
                while (failure.get() == null) {
                    if (granted <= 0 && (granted = MqBench.takeBytes(budget)) == 0) {
                        break;
                    }
                    granted -= appendOne();
                }
            } catch (final Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                done.countDown();
            }
        }

        private int appendOne() {
            final int local = random.nextInt(counts.length);
            final int queue = thread + local * config.threads;
            final long index = counts[local];
            final int length = MqMessages.length(queue, index, config.min, config.max);
            message.clear();
            MqMessages.fill(message, queue, index, length);
            message.flip();
            final int segmentId = queue + 1;
            final long epoch = writer.healthyEpoch();
            if (index == 0) {
                writer.create(epoch, segmentId, MqBench.segmentName(config, queue), null);
            }
            final LogRequest request = writer.append(epoch, segmentId, offsets[local], Unpooled.wrappedBuffer(message), null);
            final long offset = request.join();
            if (offset != offsets[local]) {
                throw new IllegalStateException("queue=" + queue + ": the writer completed offset " + offset + ", expected "
                    + offsets[local]);
            }
            offsets[local] += length;
            counts[local] = index + 1;
            bytes += length;
            messages++;
            return length;
        }
    }
}
