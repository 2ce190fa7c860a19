package io.streamcache.bench.mq;

import io.streamcache.log.LogConfig;
import io.streamcache.log.WriterStats;
import io.streamcache.segmentstore.queue.MessageQueueStore;

import java.io.PrintStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A contest-style evaluator: runs the message-queue workload of the 2021 cloud-native
 * programming contest's problem statement against any store with its two methods,
 * {@code long append(String topic, int queueId, ByteBuffer data)} and
 * {@code Map<Integer, ByteBuffer> getRange(String topic, int queueId, long offset, int fetchNum)},
 * the way an evaluator outside the project calls them. Not thread-safe: one run per JVM.
 *
 * <pre>
 *   store:   --store streamcache         MessageQueueStore.open(--dir, --cache), the public facade
 *            --store-class NAME           any class with a public no-argument constructor and the two
 *            --class-path PATH            methods above, loaded by name from PATH (jars or class
 *                                         directories, separated by ':'); it picks its own files
 *   threads: --threads producers (40), the same threads in both phases (a store may bind state to
 *            its threads, as the published contest stores do); queue g belongs to thread
 *            g % threads, topic "topic" + g / queuesPerTopic, queueId g % queuesPerTopic
 *   phase 1: every thread appends the same number of messages (--phase1 bytes in all at the mean
 *            length), synchronously, each to a random queue of its own; every returned offset checked
 *   phase 2: every thread appends --phase2 bytes' worth more, each append followed by one getRange
 *            of --fetch messages on one of its queues: from the tail with probability --tail, else
 *            from offset 0; every byte of every message read is checked
 * </pre>
 *
 * A message is a heap buffer at position 0 (as the contest's evaluator hands it; some published
 * stores copy from {@code array()} at offset 0): with {@code --reuse false} (the default) a new
 * one per append, as a store sees from an evaluator that generates each message; with
 * {@code --reuse true} one per thread, cleared and refilled. Lengths uniform in [--min, --max],
 * contents from {@link MqMessages}. The constructor or {@code open} is untimed (a published store
 * pre-fills its files there). Any difference fails the run (exit status 1).
 *
 * <pre>
 *   java -jar streamcache-bench.jar contest --dir DIR (--store streamcache | --store-class NAME --class-path PATH)
 *        [--threads 40] [--topics 100] [--queues-per-topic 2500] [--min 100] [--max 17408]
 *        [--phase1 3g] [--phase2 2g] [--fetch 30] [--tail 0.9] [--cache 1g] [--reuse false] [--seed 42] [--forces N]
 *        [--distinct-ids false] [--raw true] [--raw-batch BYTES]
 * </pre>
 * {@code --raw true} (the default) runs a plain {@code pwrite + fdatasync} loop ({@link RawLoop})
 * over phase 1's bytes in {@code --dir} before the store is opened (batches of {@code --raw-batch},
 * else 144 KiB) and again after it is closed (batches of the facade's mean batch of phase 1, or
 * {@code --raw-batch}), and prints phase 1's ratio to the two together: the disk's limit in the
 * same run, bracketing it.
 * {@code --distinct-ids true} gives the producers thread ids distinct modulo {@code --threads}
 * (the store of the contest's published winner keys its per-thread state by {@code id % 40} and
 * its groups by {@code id % 4}).
 * {@code --forces N} opens the facade with {@code LogConfig.forcesInFlight(N)}, every other log
 * setting the default. Phase 1 reports the process's CPU time and the context switches per
 * message of each group of threads (from {@code /proc/self/task}, Linux only).
 */
public final class ContestEval {
    private ContestEval() {
    }

    /** The run's settings. */
    static final class Config {
        Path dir;
        String store = "streamcache";
        String storeClass;
        String classPath;
        int threads = 40;
        int topics = 100;
        int queuesPerTopic = 2500;
        int min = 100;
        int max = 17 * 1024;
        long phase1 = 3L << 30;
        long phase2 = 2L << 30;
        int fetch = 30;
        double tail = 0.9;
        long cache = 1L << 30;
        boolean reuse;
        long seed = 42;
        /**
         * The producers' thread ids distinct modulo {@link #threads}: a published contest store
         * binds a thread to per-thread state {@code id % 40} and to group {@code id % 4}, and
         * waits at every force for all of a group's threads; ids that collide make two threads
         * share state and a group wait out a timeout per append.
         */
        boolean distinctIds;
        /** LogConfig.forcesInFlight for the facade; 0: the log's default. */
        int forces;
        /** After the store's run, the raw pwrite + fdatasync loop over phase 1's bytes in the same directory. */
        boolean raw = true;
        /**
         * The batch of the raw loop run before the store (else 144 KiB, the facade's mean batch
         * measured here), and of the one after it (else the store's mean batch of phase 1);
         * rounded up to a page.
         */
        int rawBatch;

        int queues() {
            return topics * queuesPerTopic;
        }

        long messagesPerThread(final long bytes) {
            return Math.max(1, bytes / threads / ((min + max) / 2));
        }
    }

    /** The two contest methods of a store, and its end. */
    interface Store {
        long append(String topic, int queueId, ByteBuffer data) throws Throwable;

        Map<Integer, ByteBuffer> getRange(String topic, int queueId, long offset, int fetchNum) throws Throwable;

        /** Log counters after phase 1, or null. */
        default String phase1Note() {
            return null;
        }

        /** The log's mean batch length in bytes so far, or NaN if the store does not say. */
        default double meanBatchLength() {
            return Double.NaN;
        }

        void close() throws java.io.IOException;
    }

    public static int run(final String[] args, final PrintStream out) throws Exception {
        final Config config;
        try {
            config = parse(args);
        } catch (final IllegalArgumentException e) {
            out.println("contest: " + e.getMessage());
            return 2;
        }
        if (config == null) {
            out.println("usage: contest --dir DIR (--store streamcache | --store-class NAME --class-path PATH) [--threads 40] [--topics 100]"
                + " [--queues-per-topic 2500] [--min 100] [--max 17408] [--phase1 3g] [--phase2 2g] [--fetch 30] [--tail 0.9]"
                + " [--cache 1g] [--reuse false] [--seed 42] [--forces N] [--distinct-ids false] [--raw true] [--raw-batch BYTES]");
            return 0;
        }
        Files.createDirectories(config.dir);
        // The disk's limit before and after the store's run: on a shared disk it moves within
        // minutes, and the two loops bracket phase 1.
        final RawLoop.Result rawBefore = config.raw ? RawLoop.run(config.dir.resolve("raw"), config.messagesPerThread(config.phase1)
            * config.threads * ((config.min + config.max) / 2), RawLoop.pageBatch(config.rawBatch > 0 ? config.rawBatch : 144 << 10),
            LogConfig.FILE_LENGTH_DEFAULT) : null;
        if (rawBefore != null) {
            out.println("before:  " + rawBefore.line());
        }
        final long openStart = System.nanoTime();
        final Store store = open(config);
        final double openSeconds = (System.nanoTime() - openStart) / 1e9;
        final String name = config.storeClass != null ? config.storeClass : config.store;
        out.printf(Locale.ROOT, "contest: store %s, %d threads, %d topics x %d queues, messages %d-%d B, %,d + %,d messages per thread,"
                + " %s buffers; opened in %.2f s (untimed)%n", name, config.threads, config.topics, config.queuesPerTopic, config.min, config.max,
            config.messagesPerThread(config.phase1), config.messagesPerThread(config.phase2), config.reuse ? "reused" : "fresh", openSeconds);
        final Producer[] producers = new Producer[config.threads];
        final long[] marks = new long[3];
        final long[] cpu = new long[3];
        final String[] notes = new String[1];
        final long[] wall = new long[3];
        final double[] meanBatch = {Double.NaN};
        final List<Map<String, long[]>> switches = new ArrayList<>(List.of(Map.of(), Map.of(), Map.of()));
        final CyclicBarrier barrier = new CyclicBarrier(config.threads, new Runnable() {
            private int trips;

            @Override
            public void run() {
                marks[trips] = System.nanoTime();
                wall[trips] = System.currentTimeMillis();
                cpu[trips] = MqBench.processCpuNanos();
                switches.set(trips, ContextSwitches.byThreadGroup());
                if (trips == 1) {
                    notes[0] = store.phase1Note();
                    meanBatch[0] = store.meanBatchLength();
                }
                trips++;
            }
        });
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        final boolean[] taken = new boolean[config.threads];
        for (int t = 0; t < config.threads; t++) {
            producers[t] = new Producer(config, store, t, barrier, failure);
            Thread thread = new Thread(producers[t], "contest-" + t);
            // A thread whose id's residue is taken is dropped unstarted (another thread of the
            // JVM, a compiler thread, may have taken an id meanwhile).
            while (config.distinctIds && taken[(int) (thread.getId() % config.threads)]) {
                thread = new Thread(producers[t], "contest-" + t);
            }
            taken[(int) (thread.getId() % config.threads)] = true;
            threads.add(thread);
        }
        for (final Thread thread : threads) {
            thread.start();
        }
        for (final Thread thread : threads) {
            thread.join();
        }
        final double p1;
        final long bytes1;
        try {
            if (failure.get() instanceof MqBench.VerificationException) {
                out.println("FAILED: " + failure.get().getMessage());
                return 1;
            }
            if (failure.get() != null) {
                out.println("FAILED: " + failure.get());
                failure.get().printStackTrace(out);
                return 1;
            }
            long b1 = 0;
            long bytes2 = 0;
            long messages1 = 0;
            long reads = 0;
            long read = 0;
            for (final Producer p : producers) {
                b1 += p.bytes[0];
                bytes2 += p.bytes[1];
                messages1 += p.messages[0];
                reads += p.reads;
                read += p.messagesRead;
            }
            bytes1 = b1;
            p1 = (marks[1] - marks[0]) / 1e9;
            final double p2 = (marks[2] - marks[1]) / 1e9;
            out.printf(Locale.ROOT, "phase 1  %8.2f s  %8.1f MB/s  %,10.0f messages/s  %.2f CPU-s%n", p1, bytes1 / 1e6 / p1, messages1 / p1,
                (cpu[1] - cpu[0]) / 1e9);
            if (notes[0] != null) {
                out.println("         " + notes[0]);
            }
            out.println("         context switches per message (voluntary + involuntary): "
                + ContextSwitches.perMessage(switches.get(0), switches.get(1), messages1));
            out.printf(Locale.ROOT, "phase 2  %8.2f s  %8.1f MB/s written, %,d reads (%,d messages, every byte checked), %.2f CPU-s%n", p2,
                bytes2 / 1e6 / p2, reads, read, (cpu[2] - cpu[1]) / 1e9);
            out.printf(Locale.ROOT, "total    %8.2f s%n", p1 + p2);
            out.printf(Locale.ROOT, "         phase 1 from %s to %s (wall clock, to cut a profile to it)%n", Instant.ofEpochMilli(wall[0]),
                Instant.ofEpochMilli(wall[1]));
            out.printf(Locale.ROOT, "{\"store\":\"%s\",\"phase1_s\":%.3f,\"phase1_MBps\":%.1f,\"phase1_cpu_s\":%.2f,\"phase2_s\":%.3f,"
                + "\"total_s\":%.3f}%n", name, p1, bytes1 / 1e6 / p1, (cpu[1] - cpu[0]) / 1e9, p2, p1 + p2);
        } finally {
            store.close();
        }
        if (config.raw) {
            // After the store is closed, so the loop has the disk and both cores to itself; the
            // same directory (so the same file system), the same bytes as phase 1, the batches
            // the facade's writer wrote.
            final int batch = config.rawBatch > 0 ? RawLoop.pageBatch(config.rawBatch)
                : RawLoop.pageBatch(Double.isNaN(meanBatch[0]) ? 144 << 10 : meanBatch[0]);
            final RawLoop.Result raw = RawLoop.run(config.dir.resolve("raw"), bytes1, batch, LogConfig.FILE_LENGTH_DEFAULT);
            out.println("after:   " + raw.line());
            // Per byte: the loops may have written a little more than phase 1 (whole batches).
            final double rawMBps = (rawBefore.bytes() + raw.bytes()) / 1e6 / (rawBefore.seconds() + raw.seconds());
            final double rawCpuPerByte = (rawBefore.cpuSeconds() + raw.cpuSeconds()) / (rawBefore.bytes() + raw.bytes());
            out.printf(Locale.ROOT, "         phase 1 at %.2fx the raw loops (%.1f MB/s, both together), %.2fx their CPU per byte%n",
                bytes1 / 1e6 / p1 / rawMBps, rawMBps, (cpu[1] - cpu[0]) / 1e9 / bytes1 / rawCpuPerByte);
            out.printf(Locale.ROOT, "{\"raw_before_MBps\":%.1f,\"raw_after_MBps\":%.1f,\"raw_batch\":%d,\"raw_MBps\":%.1f,"
                + "\"phase1_over_raw\":%.3f}%n", rawBefore.mbps(), raw.mbps(), batch, rawMBps, bytes1 / 1e6 / p1 / rawMBps);
        }
        return 0;
    }

    private static Store open(final Config config) throws Exception {
        if (config.storeClass == null) {
            final Path dir = config.dir.resolve("streamcache");
            final MessageQueueStore mq = config.forces == 0 ? MessageQueueStore.open(dir, config.cache)
                : MessageQueueStore.open(LogConfig.builder(dir).forcesInFlight(config.forces).build(), config.cache);
            return new Store() {
                @Override
                public long append(final String topic, final int queueId, final ByteBuffer data) {
                    return mq.append(topic, queueId, data);
                }

                @Override
                public Map<Integer, ByteBuffer> getRange(final String topic, final int queueId, final long offset, final int fetchNum) {
                    return mq.getRange(topic, queueId, offset, fetchNum);
                }

                @Override
                public String phase1Note() {
                    final WriterStats s = mq.segmentStore().log().orElseThrow().writerStats();
                    return String.format(Locale.ROOT, "log: %,d forces, %,d batches of %.0f KB mean", s.forces(), s.batches(),
                        s.meanBatchLength() / 1024);
                }

                @Override
                public double meanBatchLength() {
                    return mq.segmentStore().log().orElseThrow().writerStats().meanBatchLength();
                }

                @Override
                public void close() {
                    mq.close();
                }
            };
        }
        final String[] parts = config.classPath.split(":");
        final URL[] urls = new URL[parts.length];
        for (int i = 0; i < parts.length; i++) {
            urls[i] = Path.of(parts[i]).toUri().toURL();
        }
        final URLClassLoader loader = new URLClassLoader(urls, ContestEval.class.getClassLoader());
        final Class<?> type = Class.forName(config.storeClass, true, loader);
        final Object instance = type.getConstructor().newInstance();
        final MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        final MethodHandle append = lookup.findVirtual(type, "append", MethodType.methodType(long.class, String.class, int.class,
            ByteBuffer.class)).bindTo(instance);
        final MethodHandle getRange = lookup.findVirtual(type, "getRange", MethodType.methodType(Map.class, String.class, int.class,
            long.class, int.class)).bindTo(instance);
        return new Store() {
            @Override
            public long append(final String topic, final int queueId, final ByteBuffer data) throws Throwable {
                return (long) append.invokeExact(topic, queueId, data);
            }

            @Override
            @SuppressWarnings("unchecked")
            public Map<Integer, ByteBuffer> getRange(final String topic, final int queueId, final long offset, final int fetchNum)
                throws Throwable {
                return (Map<Integer, ByteBuffer>) getRange.invokeExact(topic, queueId, offset, fetchNum);
            }

            @Override
            public void close() throws java.io.IOException {
                loader.close();
            }
        };
    }

    /** One producer thread, through both phases. */
    private static final class Producer implements Runnable {
        private final Config config;
        private final Store store;
        private final int thread;
        private final CyclicBarrier barrier;
        private final AtomicReference<Throwable> failure;
        private final long[] counts;
        private final String[] topics;
        private final ByteBuffer reused;
        final long[] bytes = new long[2];
        final long[] messages = new long[2];
        long reads;
        long messagesRead;

        Producer(final Config config, final Store store, final int thread, final CyclicBarrier barrier,
                 final AtomicReference<Throwable> failure) {
            this.config = config;
            this.store = store;
            this.thread = thread;
            this.barrier = barrier;
            this.failure = failure;
            this.counts = new long[(config.queues() - thread + config.threads - 1) / config.threads];
            this.topics = new String[config.topics];
            for (int t = 0; t < config.topics; t++) {
                topics[t] = "topic" + t;
            }
            this.reused = config.reuse ? ByteBuffer.allocate(config.max) : null;
        }

        @Override
        public void run() {
            final SplittableRandom random = new SplittableRandom(config.seed * 31 + thread * 7919L);
            try {
                barrier.await();
                phase(random, 0, config.messagesPerThread(config.phase1));
                barrier.await();
                phase(random, 1, config.messagesPerThread(config.phase2));
                barrier.await();
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
                barrier.reset();
            }
        }

        private void phase(final SplittableRandom random, final int phase, final long count) throws Throwable {
            for (long m = 0; m < count && failure.get() == null; m++) {
                final int local = random.nextInt(counts.length);
                final int queue = thread + local * config.threads;
                final long index = counts[local];
                final int length = MqMessages.length(queue, index, config.min, config.max);
                final ByteBuffer message = reused != null ? reused.clear() : ByteBuffer.allocate(length);
                MqMessages.fill(message, queue, index, length);
                message.flip();
                final long got = store.append(topic(queue), queue % config.queuesPerTopic, message);
                if (got != index) {
                    throw new MqBench.VerificationException("queue=" + queue + ": append returned " + got + ", expected " + index);
                }
                counts[local] = index + 1;
                bytes[phase] += length;
                messages[phase]++;
                if (phase == 1) {
                    read(random);
                }
            }
        }

        private void read(final SplittableRandom random) throws Throwable {
            final int local = random.nextInt(counts.length);
            final long count = counts[local];
            if (count == 0) {
                return;
            }
            final int queue = thread + local * config.threads;
            final long offset = random.nextDouble() < config.tail ? Math.max(0, count - config.fetch) : 0;
            final Map<Integer, ByteBuffer> got = store.getRange(topic(queue), queue % config.queuesPerTopic, offset, config.fetch);
            final int expected = (int) Math.min(config.fetch, count - offset);
            if (got == null || got.size() != expected) {
                throw new MqBench.VerificationException("queue=" + queue + " offset=" + offset + ": getRange returned "
                    + (got == null ? "null" : got.size() + " messages") + ", expected " + expected);
            }
            for (int i = 0; i < expected; i++) {
                final ByteBuffer m = got.get(i);
                if (m == null) {
                    throw new MqBench.VerificationException("queue=" + queue + " offset=" + offset + ": no message under key " + i);
                }
                final long index = offset + i;
                final String wrong = MqMessages.check(m, queue, index, MqMessages.length(queue, index, config.min, config.max));
                if (wrong != null) {
                    throw new MqBench.VerificationException(wrong);
                }
            }
            reads++;
            messagesRead += expected;
        }

        private String topic(final int queue) {
            return topics[queue / config.queuesPerTopic];
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
                throw new IllegalArgumentException(flag + " needs a value");
            }
            final String v = args[++i];
            switch (flag) {
                case "--dir" -> c.dir = Path.of(v);
                case "--store" -> c.store = v;
                case "--store-class" -> c.storeClass = v;
                case "--class-path" -> c.classPath = v;
                case "--threads" -> c.threads = positive(flag, Integer.parseInt(v));
                case "--topics" -> c.topics = positive(flag, Integer.parseInt(v));
                case "--queues-per-topic" -> c.queuesPerTopic = positive(flag, Integer.parseInt(v));
                case "--min" -> c.min = positive(flag, (int) MqBench.size(v));
                case "--max" -> c.max = positive(flag, (int) MqBench.size(v));
                case "--phase1" -> c.phase1 = MqBench.size(v);
                case "--phase2" -> c.phase2 = MqBench.size(v);
                case "--fetch" -> c.fetch = positive(flag, Integer.parseInt(v));
                case "--tail" -> c.tail = Double.parseDouble(v);
                case "--cache" -> c.cache = MqBench.size(v);
                case "--reuse" -> c.reuse = Boolean.parseBoolean(v);
                case "--seed" -> c.seed = Long.parseLong(v);
                case "--distinct-ids" -> c.distinctIds = Boolean.parseBoolean(v);
                case "--forces" -> c.forces = positive(flag, Integer.parseInt(v));
                case "--raw" -> c.raw = Boolean.parseBoolean(v);
                case "--raw-batch" -> c.rawBatch = positive(flag, (int) MqBench.size(v));
                default -> throw new IllegalArgumentException("unknown flag " + flag);
            }
        }
        if (c.dir == null) {
            throw new IllegalArgumentException("--dir is required");
        }
        if (c.storeClass != null && c.classPath == null) {
            throw new IllegalArgumentException("--store-class needs --class-path");
        }
        if (c.storeClass == null && !c.store.equals("streamcache")) {
            throw new IllegalArgumentException("--store must be streamcache (or give --store-class and --class-path)");
        }
        if (c.min < MqMessages.HEADER || c.max < c.min) {
            throw new IllegalArgumentException("--min must be at least " + MqMessages.HEADER + " and at most --max");
        }
        return c;
    }

    private static int positive(final String flag, final int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(flag + " must be positive");
        }
        return value;
    }
}
