package io.streamcache.bench.jmh;

import io.streamcache.bench.mq.MqMessages;
import io.streamcache.log.LogConfig;
import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The message-queue facade in JMH form (the CLI form, {@code mq}, runs the whole contest
 * workload): 8 threads append messages of 100 B to 17 KB to random queues of their own, each
 * append durable before it returns; and 8 threads read the last {@code fetch} messages of one
 * of 64 queues with {@code getRange}. Throughput in operations per second; {@code -prof gc}
 * shows the allocation per message.
 *
 * <p><b>Steady state</b> ({@code append}): every one of the {@code queues} queues exists before
 * the first iteration (the trial's set-up appends one message to each), so an appended message
 * never creates a queue, its segment or its rows; the queues' message indexes and the log's
 * tables keep growing with the messages, as they do in a running broker. The first append to a
 * queue (which creates it: a CREATE record, a segment, a queue slot, the log's rows) is measured
 * on its own by {@code appendNewQueue}: every operation appends to a queue never used before.
 * The cache ({@code cacheMiB}, 1 GiB by default) fills up during warm-up only at the rates of an
 * idle machine (~170 MB/s); a smaller one ({@code -p cacheMiB=128}) makes every measured
 * iteration run on a full cache at any rate, where each new index entry is matched by one the
 * eviction passes coalesce away (the steady state the entry pool serves).
 *
 * <pre>
 *   java -jar streamcache-bench.jar jmh MessageQueueBenchmark -prof gc
 * </pre>
 * The log lives under {@code java.io.tmpdir} (set {@code -Djava.io.tmpdir} to the disk to measure).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:MaxDirectMemorySize=2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class MessageQueueBenchmark {
    private static final int THREADS = 8;
    private static final int MIN = 100;
    private static final int MAX = 17 * 1024;

    @Param({"10000"})
    public int queues;

    @Param({"30"})
    public int fetch;

    /** The cache's capacity in MiB. */
    @Param({"1024"})
    public int cacheMiB;

    private Path directory;
    private MessageQueueStore mq;
    private final AtomicInteger threadIds = new AtomicInteger();

    /** One thread's queues (global queue g belongs to thread g % THREADS) and message buffer. */
    @State(Scope.Thread)
    public static class Producer {
        int thread;
        long[] counts;
        SplittableRandom random;
        ByteBuffer message;

        /** {@code appendNewQueue}: the next queue id this thread appends to (each one new). */
        int nextNew;

        @Setup(Level.Trial)
        public void setUp(final MessageQueueBenchmark b) {
            thread = b.threadIds.getAndIncrement() % THREADS;
            counts = new long[(b.queues - thread + THREADS - 1) / THREADS];
            for (int local = 0; local < counts.length; local++) {
                final int queue = thread + local * THREADS;
                counts[local] = b.mq.messageCount(topic(queue), queue);
            }
            random = new SplittableRandom(thread);
            message = ByteBuffer.allocateDirect(MAX);
            nextNew = b.queues + thread;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        directory = Files.createTempDirectory("mq-bench");
        mq = MessageQueueStore.open(LogConfig.builder(directory.resolve("log")).build(), (long) cacheMiB << 20);
        // The readers' queues: the first 64 hold fetch messages each; every other queue one,
        // so that append measures the steady state (no queue created). Written by 8 threads,
        // so that the forces overlap.
        final Thread[] writers = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int first = t;
            writers[t] = new Thread(() -> {
                final ByteBuffer m = ByteBuffer.allocateDirect(MAX);
                for (int q = first; q < queues; q += THREADS) {
                    for (int i = 0; i < (q < 64 ? fetch : 1); i++) {
                        m.clear();
                        MqMessages.fill(m, q, i, MqMessages.length(q, i, MIN, MAX));
                        m.flip();
                        mq.append(topic(q), q, m);
                    }
                }
            });
            writers[t].start();
        }
        for (final Thread w : writers) {
            try {
                w.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        mq.close();
        try (Stream<Path> paths = Files.walk(directory)) {
            for (final Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** One durable append of a 100 B - 17 KB message to a random queue of this thread's. */
    @Benchmark
    @Threads(THREADS)
    public long append(final Producer p) {
        final int local = p.random.nextInt(p.counts.length);
        final int queue = p.thread + local * THREADS;
        final long index = p.counts[local];
        p.message.clear();
        MqMessages.fill(p.message, queue, index, MqMessages.length(queue, index, MIN, MAX));
        p.message.flip();
        final long got = mq.append(topic(queue), queue, p.message);
        p.counts[local] = got + 1;
        return got;
    }

    /**
     * The first append to a queue: each operation appends one message to a queue never used
     * before (ids from {@code queues} up, each thread its own), which creates the queue.
     */
    @Benchmark
    @Threads(THREADS)
    public long appendNewQueue(final Producer p) {
        final int queue = p.nextNew;
        p.nextNew += THREADS;
        p.message.clear();
        MqMessages.fill(p.message, queue, 0, MqMessages.length(queue, 0, MIN, MAX));
        p.message.flip();
        return mq.append(topic(queue), queue, p.message);
    }

    /** getRange of the last {@code fetch} messages of one of the first 64 queues. */
    @Benchmark
    @Threads(THREADS)
    public void getRangeTail(final Producer p, final Blackhole bh) {
        final int queue = p.random.nextInt(Math.min(queues, 64));
        final long count = mq.messageCount(topic(queue), queue);
        final Map<Integer, ByteBuffer> got = mq.getRange(topic(queue), queue, Math.max(0, count - fetch), fetch);
        bh.consume(got);
    }

    /** The topics' names, made once: building one per call would count in the facade's B/op. */
    private static final String[] TOPICS = new String[100];

    static {
        for (int i = 0; i < TOPICS.length; i++) {
            TOPICS[i] = "topic" + i;
        }
    }

    private static String topic(final int queue) {
        return TOPICS[queue % TOPICS.length];
    }
}
