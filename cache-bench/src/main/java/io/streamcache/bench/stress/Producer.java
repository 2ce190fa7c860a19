package io.streamcache.bench.stress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One producer thread: keeps up to {@code parallelism} durable appends in flight, to segments
 * picked at random, each carrying the segment's deterministic bytes at the offset it will land
 * at. Runs on its own thread; its completions run on the log's completion thread.
 *
 * <p>Each append owns one buffer of a pool of {@code parallelism} buffers from the moment it is
 * filled until its future completes (the store reads the producer's buffer until then), so
 * taking a buffer from the pool is what bounds the appends in flight. A segment's offset is
 * reserved, its bytes written and the append submitted under the segment's monitor, so the
 * offsets the store assigns are the ones the bytes were made for; the harness checks that too.
 * Appends started during a prefill ({@link StressRun#measuring} false) are neither recorded nor
 * counted against {@code --ops}.
 */
final class Producer implements Runnable {
    /** Longest the producer waits, once stopping, for its appends in flight. */
    private static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final StressRun run;
    private final int id;
    private final ArrayBlockingQueue<ByteBuf> pool;
    private final SplittableRandom random;

    Producer(final StressRun run, final int id) {
        this.run = run;
        this.id = id;
        final int parallelism = run.config.parallelism;
        this.pool = new ArrayBlockingQueue<>(parallelism);
        for (int i = 0; i < parallelism; i++) {
            pool.add(Unpooled.buffer(run.config.maxWriteSize, run.config.maxWriteSize));
        }
        this.random = new SplittableRandom(run.config.seed * 31 + id);
    }

    @Override
    public void run() {
        final StressConfig config = run.config;
        try {
            while (!run.stopping()) {
                final ByteBuf buffer = pool.poll(100, TimeUnit.MILLISECONDS);
                if (buffer == null) {
                    continue;
                }
                final boolean measured = run.measuring;
                if (measured && run.remainingOps.getAndDecrement() <= 0) {
                    pool.add(buffer);
                    break;
                }
                final StressRun.SegmentState segment = run.segments[random.nextInt(run.segments.length)];
                final int length = config.minWriteSize == config.maxWriteSize ? config.minWriteSize
                    : config.minWriteSize + random.nextInt(config.maxWriteSize - config.minWriteSize + 1);
                buffer.clear();
                final long offset;
                final long start;
                final CompletableFuture<Long> future;
                synchronized (segment) {
                    offset = segment.nextOffset;
                    ContentChecker.fill(buffer, SegmentContent.SPLITMIX, segment.seed, offset, length);
                    start = System.nanoTime();
                    try {
                        future = run.store.appendAsync(segment.name, buffer);
                    } catch (final RuntimeException e) {
                        pool.add(buffer);
                        throw e;
                    }
                    if (measured) {
                        run.metrics.appendCall.record(System.nanoTime() - start, 0);
                    }
                    segment.nextOffset = offset + length;
                }
                future.whenComplete((landed, error) -> {
                    if (error != null) {
                        run.fail("append to " + segment.name + " at offset=" + offset, error);
                    } else if (landed != offset) {
                        run.mismatch("append to segment=" + segment.name + " landed at offset=" + landed + ", expected offset=" + offset);
                    } else {
                        if (measured) {
                            run.metrics.append.record(System.nanoTime() - start, length);
                            run.metrics.producerBytes[id].add(length);
                        } else {
                            run.metrics.prefillBytes.add(length);
                        }
                        segment.acknowledged(offset + length);
                    }
                    pool.add(buffer);
                });
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final RuntimeException e) {
            run.fail("producer " + id, e);
        }
        drain();
    }

    /** Waits until every append of this producer completed (all buffers are back in the pool). */
    private void drain() {
        final long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        while (pool.remainingCapacity() > 0) {
            if (System.nanoTime() > deadline) {
                run.fail("producer " + id, new IllegalStateException("inFlight=" + pool.remainingCapacity()
                    + " appends did not complete within " + TimeUnit.NANOSECONDS.toSeconds(DRAIN_TIMEOUT_NANOS) + "s"));
                return;
            }
            try {
                Thread.sleep(1);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
