package io.streamcache.bench.mq;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManagerStats;
import io.streamcache.segmentstore.eviction.EntryPoolStats;
import io.streamcache.log.DirectIoMode;
import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;
import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The contest-shaped message-queue workload on {@link MessageQueueStore}, through its public API
 * only, with the disk's limit measured beside it in the same run.
 *
 * <pre>
 *   phase 1: --threads producers append --phase1 bytes in all, each to its own queues
 *            (global queue g belongs to thread g % threads; topic = g / queuesPerTopic)
 *   phase 2: the same threads append --phase2 bytes more, each append followed by one
 *            getRange(topic, queue, offset, --fetch) on one of its queues: from the tail
 *            (the last --fetch messages) with probability --tail, else from offset 0
 *   open:    the store is closed and opened again; every queue's message count is checked
 *   writer:  phase 1's message stream (same threads, queues, lengths, bytes) written by the
 *            store's AggregatingWriter alone, same log settings, into a directory of its own:
 *            no segments, queues, cache or indexes ({@link WriterBaseline}); phase 1 is
 *            reported as a ratio of it
 *            (--writer-only true: only this, in a JVM of its own; a fairer baseline, since
 *            in the same JVM after the facade the writer runs on code phase 1 compiled)
 *   raw:     a plain loop writes --phase1 bytes in --batch writes, forcing each (the disk's limit)
 * </pre>
 *
 * Every message's length and bytes follow from its queue and index ({@link MqMessages}):
 * every append's returned index and every message read are checked, and a single difference
 * fails the run (exit status 1). Message lengths are uniform in [--min, --max].
 *
 * <pre>
 *   java -jar streamcache-bench.jar mq --dir /var/tmp/mq [--threads 40] [--topics 100]
 *        [--queues 250000] [--min 100] [--max 17408] [--phase1 3g] [--phase2 2g] [--fetch 30]
 *        [--tail 0.9] [--cache 2g] [--batch 1m] [--raw true] [--reopen true] [--writer true] [--prewrite BOOL]
 *        [--writer-only false] [--file-length SIZE] [--prepared-files N] [--checkpoint N]
 * </pre>
 * The directory is emptied first. Needs direct memory for the cache plus Netty's buffers.
 */
public final class MqBench {
    private MqBench() {
    }

    public static void main(final String[] args) throws Exception {
        System.exit(run(args, System.out));
    }

    /** The run's settings. */
    static final class Config {
        Path dir;
        int threads = 40;
        int topics = 100;
        int queues = 250_000;
        int min = 100;
        int max = 17 * 1024;
        long phase1 = 3L << 30;
        long phase2 = 2L << 30;
        int fetch = 30;
        double tail = 0.9;
        long cache = 2L << 30;
        int batch = 1 << 20;
        boolean raw = true;
        boolean reopen = true;
        boolean writer = true;
        /** Only the writer-alone baseline, in this JVM, nothing of the facade (see the class comment). */
        boolean writerOnly;
        long seed = 42;
        /** null: the log's default. */
        Boolean preWrite;
        /** Null: the facade's own {@code MessageQueueStore.open} (its default cache). */
        DirectMemoryRegion.Commit commit;
        /** 0: the cache's default block length; otherwise a cache built here with this one. */
        int blockLength;
        /** LogConfig.forcesInFlight; 0: the log's default. */
        int forces;
        long fileLength;
        int preparedFiles;
        /** LogConfig.checkpointFiles; negative: the log's default. */
        int checkpointFiles = -1;
        /** LogConfig.directIo; null: the log's default. */
        DirectIoMode directIo;

        /** The topic names by topic number, made once: a producer passes the same strings every time. */
        private String[] topicNames;

        int queuesPerTopic() {
            return (queues + topics - 1) / topics;
        }

        /**
         * The topic names by number ("topic&lt;n&gt;"), one string per topic for the whole run, as a
         * producer with fixed topics would hold them (the writer-alone baseline builds no topic
         * string per message either; a new string per append also made the facade hash it anew).
         * Made on first call; a worker takes the array when it is built.
         */
        synchronized String[] topicNames() {
            if (topicNames == null) {
                topicNames = new String[topics];
                for (int t = 0; t < topics; t++) {
                    topicNames[t] = topic(this, t * queuesPerTopic());
                }
            }
            return topicNames;
        }
    }

    /** What a run measured. */
    record Result(double phase1Seconds, double phase1CpuSeconds, long phase1Bytes, long phase1Messages, double phase2Seconds, long phase2Bytes,
                  long phase2Messages, long reads, long messagesRead, Histogram readLatency, Histogram appendLatency,
                  double openSeconds, double rawSeconds, long heapPerQueue, WriterBaseline.Result writer) {
        double phase1MBps() {
            return phase1Bytes / 1e6 / phase1Seconds;
        }
    }

    /**
     * @return the exit status: 0, or 1 if any check failed, 2 on bad arguments.
     */
    public static int run(final String[] args, final PrintStream out) throws Exception {
        final Config config;
        try {
            config = parse(args);
        } catch (final IllegalArgumentException e) {
            out.println("mq: " + e.getMessage());
            return 2;
        }
        if (config == null) {
            out.println(usage());
            return 0;
        }
        try {
            if (config.writerOnly) {
                writerOnly(config, out);
                return 0;
            }
            final Result r = run(config, out);
            report(config, r, out);
            return 0;
        } catch (final VerificationException e) {
            out.println("FAILED: " + e.getMessage());
            return 1;
        }
    }

    /** A message read or an index returned that is not what was written. */
    static final class VerificationException extends Exception {
        private static final long serialVersionUID = 1L;

        VerificationException(final String message) {
            super(message);
        }
    }

    /**
     * The writer-alone baseline in a JVM of its own, so that neither side runs on code the other
     * compiled: run in the same JVM after the facade, the writer reuses the JIT's work of phase 1
     * (the facade's phase 1 spends ~14% of its samples compiling).
     */
    static WriterBaseline.Result writerOnly(final Config config, final PrintStream out) throws Exception {
        clean(config.dir);
        Files.createDirectories(config.dir);
        final WriterBaseline.Result writer = WriterBaseline.run(config, logConfig(config, config.dir.resolve("writer")), config.phase1);
        out.printf(Locale.ROOT, "writer alone (own JVM), phase 1's stream: %.2f s (%.2f s of CPU), %.1f MB/s, %,.0f messages/s; %,d forces, "
                + "%,d batches%n", writer.seconds(), writer.cpuSeconds(), writer.mbps(), writer.messages() / writer.seconds(),
            writer.forces(), writer.batches());
        out.printf(Locale.ROOT, "{\"writer_MBps\":%.1f,\"writer_s\":%.3f,\"writer_cpu_s\":%.2f}%n", writer.mbps(), writer.seconds(),
            writer.cpuSeconds());
        clean(config.dir);
        return writer;
    }

    static Result run(final Config config, final PrintStream out) throws Exception {
        clean(config.dir);
        Files.createDirectories(config.dir);
        final LogConfig log = logConfig(config, config.dir.resolve("log"));
        final long[][] counts = new long[config.threads][];
        for (int t = 0; t < config.threads; t++) {
            counts[t] = new long[queuesOfThread(config, t)];
        }
        final long heapBefore = usedHeapAfterGc();
        final Histogram readLatency = new Histogram(3_600_000_000_000L, 2);
        final Histogram appendLatency = new Histogram(3_600_000_000_000L, 2);
        final long[] phase1 = new long[2];
        final long[] phase2 = new long[4];
        final double phase1Seconds;
        final double phase1CpuSeconds;
        final double phase2Seconds;
        long heapPerQueue;
        try (Facade opened = Facade.open(config, log)) {
            final MessageQueueStore mq = opened.mq;
            out.printf(Locale.ROOT, "mq: %d threads, %d topics, %,d queues, messages %d-%d B, phase 1 %s, phase 2 %s, fetch %d%n",
                config.threads, config.topics, config.queues, config.min, config.max, bytes(config.phase1), bytes(config.phase2),
                config.fetch);
            long start = System.nanoTime();
            final long cpuStart = processCpuNanos();
            runPhase(config, mq, counts, config.phase1, false, phase1, null, appendLatency);
            phase1Seconds = (System.nanoTime() - start) / 1e9;
            phase1CpuSeconds = (processCpuNanos() - cpuStart) / 1e9;
            final WriterStats writer = mq.segmentStore().log().orElseThrow().writerStats();
            out.printf(Locale.ROOT, "phase 1: %.2f s, %.1f MB/s, %,.0f messages/s; log: %,d forces (%.2f per message), %,d batches "
                    + "of %.0f KB mean%n", phase1Seconds, phase1[0] / 1e6 / phase1Seconds, phase1[1] / phase1Seconds, writer.forces(),
                (double) writer.forces() / Math.max(1, phase1[1]), writer.batches(), writer.meanBatchLength() / 1024);
            printManager(out, "phase 1", mq);
            heapPerQueue = (usedHeapAfterGc() - heapBefore) / Math.max(1, mq.queueCount());
            final long locationBytes = mq.segmentStore().locationMemoryBytes();
            out.printf(Locale.ROOT, "location index: %.1f MB of direct memory after phase 1 (%,d B/queue; the log's metadata,"
                + " outside the cache's bound)%n", locationBytes / 1e6, locationBytes / Math.max(1, mq.queueCount()));
            out.printf(Locale.ROOT, "message index: %.1f MB of direct memory after phase 1 (the facade's ends, outside the cache's bound)%n",
                mq.messageIndexBytes() / 1e6);
            start = System.nanoTime();
            runPhase(config, mq, counts, config.phase2, true, phase2, readLatency, appendLatency);
            phase2Seconds = (System.nanoTime() - start) / 1e9;
            out.printf(Locale.ROOT, "phase 2: %.2f s, %.1f MB/s written, %,.0f reads/s, getRange p50 %.1f us p99 %.1f us%n",
                phase2Seconds, phase2[0] / 1e6 / phase2Seconds, phase2[2] / phase2Seconds,
                readLatency.getValueAtPercentile(50) / 1e3, readLatency.getValueAtPercentile(99) / 1e3);
            printManager(out, "phase 2", mq);
        }
        double openSeconds = Double.NaN;
        if (config.reopen) {
            final long start = System.nanoTime();
            try (Facade opened = Facade.open(config, log)) {
                openSeconds = (System.nanoTime() - start) / 1e9;
                checkCounts(config, opened.mq, counts);
            }
            out.printf(Locale.ROOT, "open: %.2f s, every queue's count checked%n", openSeconds);
        }
        WriterBaseline.Result writer = null;
        if (config.writer) {
            writer = WriterBaseline.run(config, logConfig(config, config.dir.resolve("writer")), config.phase1);
            out.printf(Locale.ROOT, "writer alone, phase 1's stream: %.2f s (%.2f s of CPU), %.1f MB/s, %,.0f messages/s; %,d forces, "
                    + "%,d batches%n", writer.seconds(), writer.cpuSeconds(), writer.mbps(), writer.messages() / writer.seconds(),
                writer.forces(), writer.batches());
        }
        double rawSeconds = Double.NaN;
        if (config.raw) {
            rawSeconds = rawWrite(config.dir.resolve("raw"), config.phase1, config.batch);
            out.printf(Locale.ROOT, "raw write+force: %.2f s, %.1f MB/s%n", rawSeconds, config.phase1 / 1e6 / rawSeconds);
        }
        clean(config.dir);
        return new Result(phase1Seconds, phase1CpuSeconds, phase1[0], phase1[1], phase2Seconds, phase2[0], phase2[1], phase2[2], phase2[3],
            readLatency, appendLatency, openSeconds, rawSeconds, heapPerQueue, writer);
    }

    /**
     * Runs one phase on every thread; {@code totals} gets bytes, messages, reads, messages read.
     */
    private static void runPhase(final Config config, final MessageQueueStore mq, final long[][] counts, final long bytes,
                                 final boolean read, final long[] totals, final Histogram readLatency,
                                 final Histogram appendLatency) throws Exception {
        final AtomicLong budget = new AtomicLong(bytes);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(config.threads);
        final List<Worker> workers = new ArrayList<>();
        for (int t = 0; t < config.threads; t++) {
            final Worker w = new Worker(config, mq, t, counts[t], budget, read, failure, done);
            workers.add(w);
            final Thread thread = new Thread(w, "mq-" + (read ? "phase2-" : "phase1-") + t);
            thread.setDaemon(true);
            thread.start();
        }
        done.await();
        final Throwable f = failure.get();
        if (f instanceof VerificationException) {
            throw (VerificationException) f;
        }
        if (f != null) {
            throw new IllegalStateException("a worker failed", f);
        }
        for (final Worker w : workers) {
            totals[0] += w.bytes;
            totals[1] += w.messages;
            if (totals.length > 2) {
                totals[2] += w.reads;
                totals[3] += w.messagesRead;
            }
            appendLatency.add(w.appendLatency);
            if (readLatency != null) {
                readLatency.add(w.readLatency);
            }
        }
    }

    /** One producer (and, in phase 2, reader) thread. */
    private static final class Worker implements Runnable {
        private final Config config;
        private final MessageQueueStore mq;
        private final int thread;
        private final long[] counts;
        private final AtomicLong budget;
        private final boolean read;
        private final AtomicReference<Throwable> failure;
        private final CountDownLatch done;
        private final SplittableRandom random;
        private final ByteBuffer message;
        private final String[] topicNames;
        final Histogram readLatency = new Histogram(3_600_000_000_000L, 2);
        final Histogram appendLatency = new Histogram(3_600_000_000_000L, 2);
        long bytes;
        long messages;
        long reads;
        long messagesRead;

        Worker(final Config config, final MessageQueueStore mq, final int thread, final long[] counts, final AtomicLong budget,
               final boolean read, final AtomicReference<Throwable> failure, final CountDownLatch done) {
            this.config = config;
            this.mq = mq;
            this.thread = thread;
            this.counts = counts;
            this.budget = budget;
            this.read = read;
            this.failure = failure;
            this.done = done;
            this.random = workerRandom(config, thread, read);
            this.message = ByteBuffer.allocateDirect(config.max);
            this.topicNames = config.topicNames();
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
                    if (read) {
                        readOne();
                    }
                }
            } catch (final Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                done.countDown();
            }
        }

        private int appendOne() throws VerificationException {
            final int local = random.nextInt(counts.length);
            final int queue = thread + local * config.threads;
            final long index = counts[local];
            final int length = MqMessages.length(queue, index, config.min, config.max);
            message.clear();
            MqMessages.fill(message, queue, index, length);
            message.flip();
            final long start = System.nanoTime();
            final long got = mq.append(topic(queue), queueId(queue), message);
            appendLatency.recordValue(System.nanoTime() - start);
            if (got != index) {
                throw new VerificationException("queue=" + queue + ": append returned index " + got + ", expected " + index);
            }
            counts[local] = index + 1;
            bytes += length;
            messages++;
            return length;
        }

        private void readOne() throws VerificationException {
            int local = random.nextInt(counts.length);
            if (counts[local] == 0) {
                return;
            }
            final int queue = thread + local * config.threads;
            final long count = counts[local];
            final long offset = random.nextDouble() < config.tail ? Math.max(0, count - config.fetch) : 0;
            final long start = System.nanoTime();
            final Map<Integer, ByteBuffer> got = mq.getRange(topic(queue), queueId(queue), offset, config.fetch);
            readLatency.recordValue(System.nanoTime() - start);
            final int expected = (int) Math.min(config.fetch, count - offset);
            if (got.size() != expected) {
                throw new VerificationException("queue=" + queue + " offset=" + offset + ": getRange returned " + got.size()
                    + " messages, expected " + expected);
            }
            for (int i = 0; i < expected; i++) {
                final ByteBuffer m = got.get(i);
                if (m == null) {
                    throw new VerificationException("queue=" + queue + " offset=" + offset + ": no message under key " + i);
                }
                final long index = offset + i;
                final String wrong = MqMessages.check(m, queue, index, MqMessages.length(queue, index, config.min, config.max));
                if (wrong != null) {
                    throw new VerificationException(wrong);
                }
            }
            reads++;
            messagesRead += expected;
        }

        private String topic(final int queue) {
            return topicNames[queue / config.queuesPerTopic()];
        }

        private int queueId(final int queue) {
            return MqBench.queueId(config, queue);
        }
    }

    /** The random stream of thread {@code thread}'s worker in phase 1 ({@code read} false) or 2. */
    static SplittableRandom workerRandom(final Config config, final int thread, final boolean read) {
        return new SplittableRandom(config.seed * 31 + thread * 7919L + (read ? 1 : 0));
    }

    /** How many queues thread {@code thread} owns (global queue g belongs to thread g % threads). */

    /** Bytes a writing thread takes from a phase's shared budget at a time. */
    private static final int CHUNK = 256 << 10;

    /**
     * Takes the next share of a phase's bytes for one writing thread (the store's workers and the
     * writer-alone baseline share the rule, so both write the same stream).
     *
     * @return up to {@link #CHUNK} bytes to write, or 0 once the budget is spent.
     */
    static long takeBytes(final AtomicLong budget) {
        final long left = budget.getAndAdd(-CHUNK);
        return left <= 0 ? 0 : Math.min(CHUNK, left);
    }
    static int queuesOfThread(final Config config, final int thread) {
        return (config.queues - thread + config.threads - 1) / config.threads;
    }

    static String topic(final Config config, final int queue) {
        return "topic" + queue / config.queuesPerTopic();
    }

    static int queueId(final Config config, final int queue) {
        return queue % config.queuesPerTopic();
    }

    /** The segment the facade keeps global queue {@code queue} in. */
    static String segmentName(final Config config, final int queue) {
        return MessageQueueStore.segmentName(topic(config, queue), queueId(config, queue));
    }

    /** The log settings of the run, over {@code directory}. */
    /**
     * The facade and what it runs on: {@code MessageQueueStore.open} (a cache whose pages a thread
     * of their own commits once it is built), or with {@code --commit lazy|eager|background} a
     * cache built here with that commit: lazy, each page committed on the cache's first write into
     * it (on the log's completion thread); eager, all when it is built.
     */
    private static final class Facade implements AutoCloseable {
        final MessageQueueStore mq;
        private final SegmentStore store;
        private final BlockCache cache;

        private Facade(final MessageQueueStore mq, final SegmentStore store, final BlockCache cache) {
            this.mq = mq;
            this.store = store;
            this.cache = cache;
        }

        static Facade open(final Config config, final LogConfig log) {
            if (config.commit == null && config.blockLength == 0) {
                return new Facade(MessageQueueStore.open(log, config.cache), null, null);
            }
            final BlockCache.Builder builder = BlockCache.builder().capacity(config.cache).registerMBean(false)
                .region(DirectMemoryRegion.factory(config.commit == null ? DirectMemoryRegion.Commit.BACKGROUND : config.commit));
            if (config.blockLength != 0) {
                builder.blockLength(config.blockLength);
            }
            final BlockCache cache = builder.build();
            SegmentStore store = null;
            try {
                store = SegmentStore.builder(cache).log(log).build();
                return new Facade(new MessageQueueStore(store), store, cache);
            } catch (final RuntimeException | Error e) {
                if (store != null) {
                    store.close();
                }
                cache.close();
                throw e;
            }
        }

        @Override
        public void close() {
            mq.close();
            if (store != null) {
                store.close();
                cache.close();
            }
        }
    }

    static LogConfig logConfig(final Config config, final Path directory) {
        final LogConfig.Builder builder = LogConfig.builder(directory);
        if (config.preWrite != null) {
            builder.preWrite(config.preWrite);
        }
        if (config.fileLength > 0) {
            builder.fileLength(config.fileLength);
        }
        if (config.forces > 0) {
            builder.forcesInFlight(config.forces);
        }
        if (config.checkpointFiles >= 0) {
            builder.checkpointFiles(config.checkpointFiles);
        }
        if (config.directIo != null) {
            builder.directIo(config.directIo);
        }
        if (config.preparedFiles > 0) {
            builder.preparedFiles(config.preparedFiles);
        }
        return builder.build();
    }

    private static void checkCounts(final Config config, final MessageQueueStore mq, final long[][] counts)
        throws VerificationException {
        final int perTopic = config.queuesPerTopic();
        for (int t = 0; t < config.threads; t++) {
            for (int local = 0; local < counts[t].length; local++) {
                final int queue = t + local * config.threads;
                final long got = mq.messageCount("topic" + queue / perTopic, queue % perTopic);
                if (got != counts[t][local]) {
                    throw new VerificationException("after reopening, queue=" + queue + " has " + got + " messages, expected "
                        + counts[t][local]);
                }
            }
        }
    }

    /** Writes {@code bytes} in {@code batch}-byte writes, forcing each; returns the seconds taken. */
    static double rawWrite(final Path file, final long bytes, final int batch) throws IOException {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(batch);
        for (int i = 0; i + 8 <= batch; i += 8) {
            buffer.putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        final long start = System.nanoTime();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            long position = 0;
            while (position < bytes) {
                buffer.clear();
                while (buffer.hasRemaining()) {
                    position += channel.write(buffer, position);
                }
                channel.force(false);
            }
        }
        final double seconds = (System.nanoTime() - start) / 1e9;
        Files.deleteIfExists(file);
        return seconds;
    }

    private static void report(final Config config, final Result r, final PrintStream out) {
        out.printf(Locale.ROOT, "%nphase 1      %8.2f s  %8.1f MB/s  %,12.0f messages/s%n", r.phase1Seconds(), r.phase1MBps(),
            r.phase1Messages() / r.phase1Seconds());
        out.printf(Locale.ROOT, "phase 2      %8.2f s  %8.1f MB/s  %,12.0f reads/s (%,d messages read, all checked)%n",
            r.phase2Seconds(), r.phase2Bytes() / 1e6 / r.phase2Seconds(), r.reads() / r.phase2Seconds(), r.messagesRead());
        out.printf(Locale.ROOT, "total        %8.2f s%n", r.phase1Seconds() + r.phase2Seconds());
        out.printf(Locale.ROOT, "getRange     p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us%n",
            r.readLatency().getValueAtPercentile(50) / 1e3, r.readLatency().getValueAtPercentile(99) / 1e3,
            r.readLatency().getValueAtPercentile(99.9) / 1e3, r.readLatency().getMaxValue() / 1e3);
        out.printf(Locale.ROOT, "append       p50 %.1f us  p99 %.1f us  p99.9 %.1f us%n",
            r.appendLatency().getValueAtPercentile(50) / 1e3, r.appendLatency().getValueAtPercentile(99) / 1e3,
            r.appendLatency().getValueAtPercentile(99.9) / 1e3);
        if (!Double.isNaN(r.openSeconds())) {
            out.printf(Locale.ROOT, "open         %8.2f s (clean close)%n", r.openSeconds());
        }
        if (r.writer() != null) {
            out.printf(Locale.ROOT, "writer alone %8.1f MB/s (the AggregatingWriter on phase 1's stream, %.2f s); phase 1 at %.2fx of it%n",
                r.writer().mbps(), r.writer().seconds(), r.phase1MBps() / r.writer().mbps());
            out.printf(Locale.ROOT, "CPU          phase 1 %.2f s for %.2f GB, writer alone %.2f s for %.2f GB: %.2fx the CPU per byte%n",
                r.phase1CpuSeconds(), r.phase1Bytes() / 1e9, r.writer().cpuSeconds(), r.writer().bytes() / 1e9,
                (r.phase1CpuSeconds() / r.phase1Bytes()) / (r.writer().cpuSeconds() / r.writer().bytes()));
        }
        if (!Double.isNaN(r.rawSeconds())) {
            final double rawMBps = config.phase1 / 1e6 / r.rawSeconds();
            out.printf(Locale.ROOT, "raw limit    %8.1f MB/s (write+force of %s batches); phase 1 at %.2fx of it%n", rawMBps,
                bytes(config.batch), r.phase1MBps() / rawMBps);
        }
        out.printf(Locale.ROOT, "heap/queue   %,d B (heap growth over phase 1 / queues, after GC)%n", r.heapPerQueue());
        out.printf(Locale.ROOT, "{\"phase1_s\":%.3f,\"phase1_MBps\":%.1f,\"phase2_s\":%.3f,\"total_s\":%.3f,\"getrange_p50_us\":%.1f,"
                + "\"getrange_p99_us\":%.1f,\"getrange_p999_us\":%.1f,\"open_s\":%.3f,\"raw_MBps\":%.1f,\"writer_MBps\":%.1f,"
                + "\"phase1_vs_writer\":%.3f,\"phase1_cpu_s\":%.2f,\"writer_cpu_s\":%.2f,\"heap_per_queue\":%d}%n",
            r.phase1Seconds(), r.phase1MBps(), r.phase2Seconds(), r.phase1Seconds() + r.phase2Seconds(),
            r.readLatency().getValueAtPercentile(50) / 1e3, r.readLatency().getValueAtPercentile(99) / 1e3,
            r.readLatency().getValueAtPercentile(99.9) / 1e3, r.openSeconds(),
            Double.isNaN(r.rawSeconds()) ? Double.NaN : config.phase1 / 1e6 / r.rawSeconds(),
            r.writer() == null ? Double.NaN : r.writer().mbps(), r.writer() == null ? Double.NaN : r.phase1MBps() / r.writer().mbps(),
            r.phase1CpuSeconds(), r.writer() == null ? Double.NaN : r.writer().cpuSeconds(), r.heapPerQueue());
    }

    /** The cache manager's counters so far: how often its passes ran and what they evicted. */
    private static void printManager(final PrintStream out, final String phase, final MessageQueueStore mq) {
        final CacheManagerStats stats = mq.segmentStore().cacheManager().stats();
        out.printf(Locale.ROOT, "%s: cache manager: %,d passes (%,d from a full cache), %,d entries evicted (%,d MB), "
                + "%,d busy segments skipped, utilization %.2f%n", phase, stats.runs(), stats.fullHandlerCalls(), stats.evictions(),
            stats.evictedBytes() / 1_000_000, stats.busySkips(), stats.utilization());
        final EntryPoolStats pool = stats.entryPool();
        out.printf(Locale.ROOT, "%s: index entries since the open: %,d reused from the pool, %,d made new, %,d given back, %,d dropped (pool full)%n",
            phase, pool.taken(), pool.made(), pool.recycled(), pool.dropped());
    }

    /** @return the CPU time of the whole process so far (every thread, the GC's included). */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void clean(final Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (final Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.delete(p);
            }
        }
    }

    static Config parse(final String[] args) {
        final Config c = new Config();
        for (int i = 0; i < args.length; i++) {
            final String flag = args[i];
            if (flag.equals("--help") || flag.equals("-h")) {
                return null;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("flag " + flag + " needs a value");
            }
            final String v = args[++i];
            switch (flag) {
                case "--dir" -> c.dir = Path.of(v);
                case "--threads" -> c.threads = positive(flag, Integer.parseInt(v));
                case "--topics" -> c.topics = positive(flag, Integer.parseInt(v));
                case "--queues" -> c.queues = positive(flag, Integer.parseInt(v));
                case "--min" -> c.min = positive(flag, (int) size(v));
                case "--max" -> c.max = positive(flag, (int) size(v));
                case "--phase1" -> c.phase1 = size(v);
                case "--phase2" -> c.phase2 = size(v);
                case "--fetch" -> c.fetch = positive(flag, Integer.parseInt(v));
                case "--tail" -> c.tail = Double.parseDouble(v);
                case "--cache" -> c.cache = size(v);
                case "--batch" -> c.batch = positive(flag, (int) size(v));
                case "--raw" -> c.raw = Boolean.parseBoolean(v);
                case "--reopen" -> c.reopen = Boolean.parseBoolean(v);
                case "--writer" -> c.writer = Boolean.parseBoolean(v);
                case "--writer-only" -> c.writerOnly = Boolean.parseBoolean(v);
                case "--seed" -> c.seed = Long.parseLong(v);
                case "--prewrite" -> c.preWrite = Boolean.parseBoolean(v);
                case "--block-length" -> c.blockLength = positive(flag, (int) size(v));
                case "--commit" -> c.commit = DirectMemoryRegion.Commit.valueOf(v.toUpperCase(java.util.Locale.ROOT));
                case "--forces" -> c.forces = positive(flag, Integer.parseInt(v));
                case "--file-length" -> c.fileLength = size(v);
                case "--prepared-files" -> c.preparedFiles = Integer.parseInt(v);
                case "--checkpoint" -> c.checkpointFiles = Integer.parseInt(v);
                case "--direct-io" -> c.directIo = DirectIoMode.valueOf(v.toUpperCase(java.util.Locale.ROOT));
                default -> throw new IllegalArgumentException("unknown flag " + flag + " (--help lists them)");
            }
        }
        if (c.dir == null) {
            throw new IllegalArgumentException("--dir is required (a directory on the disk to measure; it is emptied)");
        }
        if (c.min < MqMessages.HEADER || c.max < c.min) {
            throw new IllegalArgumentException("need " + MqMessages.HEADER + " <= --min <= --max: min=" + c.min + " max=" + c.max);
        }
        if (c.threads > c.queues) {
            throw new IllegalArgumentException("threads=" + c.threads + " must be <= queues=" + c.queues);
        }
        if (c.tail < 0 || c.tail > 1) {
            throw new IllegalArgumentException("tail=" + c.tail + " must be in [0, 1]");
        }
        return c;
    }

    private static int positive(final String flag, final int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(flag + "=" + value + " must be > 0");
        }
        return value;
    }

    static long size(final String v) {
        final String s = v.trim().toLowerCase(Locale.ROOT);
        final char unit = s.charAt(s.length() - 1);
        final long multiplier = switch (unit) {
            case 'k' -> 1L << 10;
            case 'm' -> 1L << 20;
            case 'g' -> 1L << 30;
            default -> 1;
        };
        return Long.parseLong(multiplier == 1 ? s : s.substring(0, s.length() - 1)) * multiplier;
    }

    private static String bytes(final long n) {
        return n >= 1L << 30 && n % (1L << 30) == 0 ? n / (1L << 30) + " GiB"
            : n >= 1L << 20 && n % (1L << 20) == 0 ? n / (1L << 20) + " MiB" : n + " B";
    }

    static String usage() {
        return "mq --dir DIR [--threads 40] [--topics 100] [--queues 250000] [--min 100] [--max 17408] [--phase1 3g]\n"
            + "   [--phase2 2g] [--fetch 30] [--tail 0.9] [--cache 2g] [--batch 1m] [--raw true] [--reopen true] [--writer true] [--writer-only false]\n"
            + "   [--seed 42] [--prewrite true|false (the log's default)] [--file-length (the log's default)]\n"
            + "   [--commit lazy|eager|background (the cache's pages committed on first write, all when it is built, or all by a thread of their own after\n"
            + "    it is built; default: MessageQueueStore.open's cache, background)]\n"
            + "   [--block-length SIZE (the cache's block length; default: the cache's default, 4k)]\n"
            + "   [--forces N (LogConfig.forcesInFlight: batches being forced while the next are written; the log's default)]\n"
            + "   [--prepared-files N (LogConfig.preparedFiles: files made before the first append; 0)]\n"
            + "   [--direct-io off|preferred|required (LogConfig.directIo: O_DIRECT log files; the log's default)]\n"
            + "   [--checkpoint N (LogConfig.checkpointFiles: a recovery checkpoint every N files, 0 none; the log's default)]\n"
            + "The contest-shaped message-queue workload on MessageQueueStore; every byte read is checked.";
    }
}
