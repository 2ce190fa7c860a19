package io.streamcache.pulsar;

import org.HdrHistogram.Histogram;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageRoutingMode;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

/**
 * Pulsar on bookies on {@code StreamcacheLedgerStorage} against the same cluster on
 * {@code DbLedgerStorage}, in alternating rounds, each run on a fresh cluster (ZooKeeper, 3
 * bookies, a broker; ensemble 3, write quorum 3, ack quorum 2), driven by Pulsar's own client in
 * this JVM. A run: a fixed-rate phase (publish latency, end-to-end latency of a tailing
 * consumer), an unthrottled phase (publish rate), then a consumer drains the backlog both phases
 * left while the fixed-rate producer goes on (drain MB/s, publish latency during the drain).
 * Behind {@code -Dstreamcache.pulsar.bench=true} (about 3 minutes a run here); the figures
 * and the command are in docs/pulsar.md. With {@code -Dstreamcache.pulsar.jfr=profile} the bookies
 * run a flight recording, and each run writes it ({@code target/jfr/<run>-bookie-<i>.jfr}) and
 * where the bookies' CPU, allocation and monitor waits went over the measured phases
 * ({@code target/jfr/<run>-top.txt}, {@link JfrTopFrames}). Single-threaded driver; the client's threads call back.
 */
@EnabledIfSystemProperty(named = "streamcache.pulsar.bench", matches = "true")
class PulsarStorageBenchmark {

    private static final Logger LOG = LoggerFactory.getLogger(PulsarStorageBenchmark.class);
    private static final int ROUNDS = Integer.getInteger("streamcache.pulsar.rounds", 3);
    private static final int MESSAGE = 1024;
    private static final int RATE = Integer.getInteger("streamcache.pulsar.rate", 2_000);
    private static final int WARMUP_SECONDS = 5;
    private static final int FIXED_SECONDS = Integer.getInteger("streamcache.pulsar.fixedSeconds", 15);
    private static final int MAX_SECONDS = Integer.getInteger("streamcache.pulsar.maxSeconds", 10);
    private static final String TOPIC = "persistent://public/default/bench";

    @TempDir
    Path directory;

    /** One run's figures. */
    record Result(String storage, double publishRate, double p50, double p99, double p999, double e2e50, double e2e99,
                  double drainMBps, double drainP50, double drainP99, double drainP999, double bookieCpuSeconds,
                  double bookieWrittenMB, double brokerCpuSeconds, long published, String load) {

        /** Bookies' CPU milliseconds per MB published (each MB lands on all three bookies). */
        double bookieCpuMsPerMB() {
            return bookieCpuSeconds * 1000 / (published * (double) MESSAGE / (1 << 20));
        }

        /** Bookies' bytes written to storage per byte published (journal and ledger storage, all three). */
        double writeAmplification() {
            return bookieWrittenMB / (published * (double) MESSAGE / (1 << 20));
        }
    }

    /** Latencies of acknowledged sends, microseconds; written by the client's callback threads. */
    private static final class Latencies {
        private final Histogram histogram = new Histogram(60_000_000L, 3);

        synchronized void record(final long micros) {
            histogram.recordValue(Math.min(Math.max(micros, 1), 60_000_000L));
        }

        synchronized double percentile(final double p) {
            return histogram.getValueAtPercentile(p) / 1000.0;
        }

        synchronized void reset() {
            histogram.reset();
        }
    }

    @Test
    void streamcacheAgainstDbLedgerStorageInAlternatingRounds() throws Exception {
        final List<Result> results = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            final List<String> order = round % 2 == 0 ? List.of("streamcache", "db") : List.of("db", "streamcache");
            for (final String storage : order) {
                final Result r = run(directory.resolve("round-" + round + "-" + storage), storage);
                LOG.info("round {} {}", round, r);
                results.add(r);
            }
        }
        final String table = table(results);
        LOG.info("\n{}", table);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "pulsar-benchmark.txt"), table);
    }

    private static Result run(final Path root, final String storage) throws Exception {
        final String loadBefore = loadAverage();
        try (PulsarCluster cluster = new PulsarCluster(root, storage, 3, 64);
             PulsarClient client = cluster.client()) {
            final Latencies publish = new Latencies();
            final Latencies endToEnd = new Latencies();
            final AtomicLong acked = new AtomicLong();
            // The drain subscription's cursor holds everything from the first message on.
            client.newConsumer(Schema.BYTES).topic(TOPIC).subscriptionName("drain").subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe().close();
            final Consumer<byte[]> tail = client.newConsumer(Schema.BYTES).topic(TOPIC).subscriptionName("tail")
                .subscriptionType(SubscriptionType.Exclusive).receiverQueueSize(1000)
                .messageListener((consumer, message) -> {
                    endToEnd.record((System.nanoTime() - Messages.sentNanos(message.getValue())) / 1000);
                    consumer.acknowledgeAsync(message);
                }).subscribe();
            final Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(TOPIC)
                .messageRoutingMode(MessageRoutingMode.CustomPartition).messageRouter(new Messages.BySequence())
                .sendTimeout(0, TimeUnit.SECONDS).blockIfQueueFull(true).maxPendingMessages(1000)
                .enableBatching(true).batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS).create();
            final long[] seq = {0};
            final List<Long> pids = cluster.pids();
            final long[][] before = usage(pids);
            final java.time.Instant profileFrom = java.time.Instant.now();
            // Fixed rate: warm-up, then measured.
            publishAtRate(producer, seq, WARMUP_SECONDS, publish, acked);
            publish.reset();
            endToEnd.reset();
            publishAtRate(producer, seq, FIXED_SECONDS, publish, acked);
            final double p50 = publish.percentile(50);
            final double p99 = publish.percentile(99);
            final double p999 = publish.percentile(99.9);
            final double e2e50 = endToEnd.percentile(50);
            final double e2e99 = endToEnd.percentile(99);
            // Unthrottled: as fast as 1000 pending sends allow.
            final Semaphore pending = new Semaphore(1000);
            final long maxStart = System.nanoTime();
            final long maxEnd = maxStart + TimeUnit.SECONDS.toNanos(MAX_SECONDS);
            final long ackedBefore = acked.get();
            while (System.nanoTime() < maxEnd) {
                pending.acquire();
                send(producer, seq[0]++, null, acked).whenComplete((id, t) -> pending.release());
            }
            pending.acquire(1000);
            pending.release(1000);
            final double publishRate = (acked.get() - ackedBefore) / ((System.nanoTime() - maxStart) / 1e9);
            // Drain the backlog while the fixed-rate producer goes on.
            final long backlog = seq[0];
            publish.reset();
            final BitSet drained = new BitSet((int) backlog);
            final long[] drainedCount = {0};
            final long drainStart = System.nanoTime();
            final long[] drainEnd = {0};
            final Consumer<byte[]> drain = client.newConsumer(Schema.BYTES).topic(TOPIC).subscriptionName("drain")
                .subscriptionType(SubscriptionType.Exclusive).receiverQueueSize(1000)
                .messageListener((consumer, message) -> {
                    final long s = Messages.sequence(message.getValue());
                    synchronized (drained) {
                        if (s < backlog && !drained.get((int) s)) {
                            drained.set((int) s);
                            if (++drainedCount[0] == backlog) {
                                drainEnd[0] = System.nanoTime();
                                drained.notifyAll();
                            }
                        }
                    }
                    consumer.acknowledgeAsync(message);
                }).subscribe();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(600);
            while (true) {
                synchronized (drained) {
                    if (drainEnd[0] != 0) {
                        break;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(storage + ": drained " + drainedCount[0] + " of " + backlog + " in 600 s");
                }
                publishAtRate(producer, seq, 1, publish, acked);
            }
            final double drainMBps = backlog * (double) MESSAGE / ((drainEnd[0] - drainStart) / 1e9) / (1 << 20);
            final long[][] after = usage(pids);
            final java.time.Instant profileTo = java.time.Instant.now();
            final String name = root.getFileName().toString();
            final List<Path> recordings = cluster.dumpBookieRecordings(Path.of("target", "jfr"), name);
            if (!recordings.isEmpty()) {
                final String profile = JfrTopFrames.summarize(recordings, profileFrom, profileTo);
                Files.writeString(Path.of("target", "jfr", name + "-top.txt"), profile);
                LOG.info("{} bookies' profile over the measured phases:\n{}", storage, profile);
            }
            double bookieCpu = 0;
            double bookieWritten = 0;
            for (int i = 1; i < pids.size(); i++) {
                bookieCpu += (after[i][0] - before[i][0]) / 100.0;
                bookieWritten += (after[i][1] - before[i][1]) / (double) (1 << 20);
            }
            final double brokerCpu = (after[0][0] - before[0][0]) / 100.0;
            final Result result = new Result(storage, publishRate, p50, p99, p999, e2e50, e2e99, drainMBps,
                publish.percentile(50), publish.percentile(99), publish.percentile(99.9), bookieCpu, bookieWritten, brokerCpu, seq[0],
                loadBefore + " -> " + loadAverage());
            producer.close();
            tail.close();
            drain.close();
            return result;
        }
    }

    private static java.util.concurrent.CompletableFuture<?> send(final Producer<byte[]> producer, final long seq, final Latencies latencies,
                                                                   final AtomicLong acked) {
        final long start = System.nanoTime();
        return producer.newMessage().property(Messages.SEQUENCE, Long.toString(seq))
            .value(Messages.encode(0, seq, MESSAGE - Messages.HEADER)).sendAsync()
            .whenComplete((id, t) -> {
                if (t == null) {
                    acked.incrementAndGet();
                    if (latencies != null) {
                        latencies.record((System.nanoTime() - start) / 1000);
                    }
                }
            });
    }

    private static void publishAtRate(final Producer<byte[]> producer, final long[] seq, final int seconds, final Latencies latencies,
                                      final AtomicLong acked) throws Exception {
        final long start = System.nanoTime();
        final long count = (long) RATE * seconds;
        for (long i = 0; i < count; i++) {
            final long due = start + i * 1_000_000_000L / RATE;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.sleep(Math.min(wait, 5_000_000L));
            }
            send(producer, seq[0]++, latencies, acked);
        }
        producer.flush();
    }

    /**
     * Per process: CPU time in clock ticks (user + system, {@code /proc/<pid>/stat}; 100 a second
     * on Linux) and bytes written to storage ({@code write_bytes} of {@code /proc/<pid>/io}).
     */
    private static long[][] usage(final List<Long> pids) throws IOException {
        final long[][] usage = new long[pids.size()][2];
        for (int i = 0; i < pids.size(); i++) {
            final String stat = Files.readString(Path.of("/proc", pids.get(i).toString(), "stat"));
            final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            usage[i][0] = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            for (final String line : Files.readAllLines(Path.of("/proc", pids.get(i).toString(), "io"))) {
                if (line.startsWith("write_bytes:")) {
                    usage[i][1] = Long.parseLong(line.substring("write_bytes:".length()).trim());
                }
            }
        }
        return usage;
    }

    static String loadAverage() {
        try {
            final String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + "/" + fields[1] + "/" + fields[2];
        } catch (final IOException e) {
            return "n/a";
        }
    }

    private static String table(final List<Result> results) {
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%-12s %10s %8s %8s %8s %8s %8s %9s %8s %8s %8s %8s %8s %8s %9s  %s%n", "storage", "pub msg/s", "p50 ms",
            "p99 ms", "p99.9 ms", "e2e p50", "e2e p99", "drain MB/s", "drain p50", "drain p99", "dr p99.9", "bk cpu s", "bk wr MB", "br cpu s", "published",
            "load 1/5/15 before -> after"));
        for (final Result r : results) {
            out.append(String.format(Locale.ROOT, "%-12s %10.0f %8.2f %8.2f %8.2f %8.2f %8.2f %9.1f %8.2f %8.2f %8.2f %8.1f %8.0f %8.1f %9d  %s%n",
                r.storage(), r.publishRate(), r.p50(), r.p99(), r.p999(), r.e2e50(), r.e2e99(), r.drainMBps(), r.drainP50(), r.drainP99(),
                r.drainP999(), r.bookieCpuSeconds(), r.bookieWrittenMB(), r.brokerCpuSeconds(), r.published(), r.load()));
        }
        out.append("ratio streamcache / DbLedgerStorage per round: median [min, max]\n");
        row(out, results, "publish rate (higher is better)", Result::publishRate);
        row(out, results, "publish p50 (lower is better)", Result::p50);
        row(out, results, "publish p99", Result::p99);
        row(out, results, "publish p99.9", Result::p999);
        row(out, results, "end-to-end p50", Result::e2e50);
        row(out, results, "end-to-end p99", Result::e2e99);
        row(out, results, "drain MB/s (higher is better)", Result::drainMBps);
        row(out, results, "publish p50 during drain", Result::drainP50);
        row(out, results, "publish p99 during drain", Result::drainP99);
        row(out, results, "publish p99.9 during drain", Result::drainP999);
        row(out, results, "bookies' CPU ms per MB published", Result::bookieCpuMsPerMB);
        row(out, results, "bookies' bytes written per byte", Result::writeAmplification);
        return out.toString();
    }

    private static void row(final StringBuilder out, final List<Result> results, final String name, final ToDoubleFunction<Result> value) {
        final List<Double> ratios = new ArrayList<>();
        for (int i = 0; i + 1 < results.size(); i += 2) {
            final Result a = results.get(i);
            final Result b = results.get(i + 1);
            final Result ours = a.storage().equals("streamcache") ? a : b;
            final Result theirs = ours == a ? b : a;
            ratios.add(value.applyAsDouble(ours) / value.applyAsDouble(theirs));
        }
        final double[] sorted = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (sorted.length == 0) {
            return;
        }
        final double median = sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        out.append(String.format(Locale.ROOT, "  %-32s %6.2f [%.2f, %.2f]  rounds: %s%n", name, median, sorted[0], sorted[sorted.length - 1],
            Arrays.toString(ratios.stream().map(d -> String.format(Locale.ROOT, "%.2f", d)).toArray())));
    }

}
