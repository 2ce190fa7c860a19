import io.streamcache.segmentstore.queue.MessageQueueStore;
import io.streamcache.log.LogConfig;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Heap per queue of the message-queue facade, by class: opens a facade in DIR (default
 * log settings, a cache of 2 GiB as the {@code mq} command's), takes a live class histogram
 * (the {@code GC.class_histogram} diagnostic command: a full GC first), appends one message of
 * BYTES bytes to each of QUEUES queues named as {@code mq} names them ({@code topic<n>}, 100
 * topics, queue ids 0..2,499 within a topic) from THREADS threads, takes the histogram again and
 * prints, per class, the instances and bytes added per queue, largest first, and their sum.
 * With BASELINE {@code jvm} the first histogram is taken before the facade is opened, as the
 * {@code mq} command's heap/queue does (the store's fixed heap then counts, divided by the
 * queues); with {@code open} (the default) after, so that only what grows with the queues counts.
 *
 * <pre>
 *   java -Xmx4g -XX:MaxDirectMemorySize=4g -cp &lt;streamcache-bench.jar&gt; bin/QueueHeap.java DIR [QUEUES THREADS BYTES BASELINE]
 *   java -Xmx4g -XX:MaxDirectMemorySize=4g -cp cache-bench/target/streamcache-bench.jar bin/QueueHeap.java &lt;dir&gt; 250000 40 100
 * </pre>
 * DIR must not exist or be empty; it is removed at the end. Uses only the public facade, so any
 * jar of the project runs it.
 */
public final class QueueHeap {
    private static final int TOPICS = 100;

    public static void main(final String[] args) throws Exception {
        final Path dir = Path.of(args[0]);
        final int queues = args.length > 1 ? Integer.parseInt(args[1]) : 250_000;
        final int threads = args.length > 2 ? Integer.parseInt(args[2]) : 40;
        final int bytes = args.length > 3 ? Integer.parseInt(args[3]) : 100;
        final boolean fromJvm = args.length > 4 && "jvm".equals(args[4]);
        final int perTopic = (queues + TOPICS - 1) / TOPICS;
        final String[] topics = new String[TOPICS];
        for (int t = 0; t < TOPICS; t++) {
            topics[t] = "topic" + t;
        }
        Files.createDirectories(dir);
        final Map<String, long[]> jvm = fromJvm ? histogram() : null;
        try (MessageQueueStore mq = MessageQueueStore.open(LogConfig.builder(dir.resolve("log")).build(), 2L << 30)) {
            final Map<String, long[]> before = fromJvm ? jvm : histogram();
            final List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                final int worker = w;
                workers.add(new Thread(() -> {
                    final ByteBuffer message = ByteBuffer.allocate(bytes);
                    for (int q = worker; q < queues; q += threads) {
                        mq.append(topics[q / perTopic], q % perTopic, message);
                    }
                }));
            }
            workers.forEach(Thread::start);
            for (final Thread worker : workers) {
                worker.join();
            }
            final Map<String, long[]> after = histogram();
            print(before, after, mq.queueCount());
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** @return instances and bytes by class name, of live objects (the command runs a full GC first). */
    private static Map<String, long[]> histogram() throws Exception {
        final String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
            new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
            new Object[] {new String[0]}, new String[] {String[].class.getName()});
        final Map<String, long[]> classes = new HashMap<>();
        for (final String line : text.split("\n")) {
            final String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                classes.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
            }
        }
        return classes;
    }

    private static void print(final Map<String, long[]> before, final Map<String, long[]> after, final int queues) {
        final List<Object[]> rows = new ArrayList<>();
        long total = 0;
        for (final Map.Entry<String, long[]> e : after.entrySet()) {
            final long[] b = before.getOrDefault(e.getKey(), new long[2]);
            final long instances = e.getValue()[0] - b[0];
            final long grown = e.getValue()[1] - b[1];
            total += grown;
            rows.add(new Object[] {e.getKey(), instances, grown});
        }
        rows.sort(Comparator.comparingLong((Object[] r) -> -Math.abs((long) r[2])));
        System.out.printf(Locale.ROOT, "queues %,d; live heap grown %,d B = %.1f B/queue%n", queues, total, (double) total / queues);
        System.out.printf(Locale.ROOT, "%12s %14s %10s %10s  %s%n", "instances", "bytes", "inst/queue", "B/queue", "class");
        for (final Object[] r : rows) {
            final double perQueue = (long) r[2] / (double) queues;
            if (Math.abs(perQueue) < 0.05) {
                continue;
            }
            System.out.printf(Locale.ROOT, "%,12d %,14d %10.3f %10.1f  %s%n", r[1], r[2], (long) r[1] / (double) queues, perQueue, r[0]);
        }
    }
}
