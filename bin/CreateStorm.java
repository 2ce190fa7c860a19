import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * Phase 1's queue creation on its own: THREADS threads create SEGMENTS segments named
 * as the message-queue facade names its queues ({@code mq/<queueId>/topic<n>}, 2,500 queues a
 * topic), into a store with a log in DIR ({@code createAsync}, as the facade's first append: the
 * CREATE records are waited for once, at the end) or, with DIR {@code -}, a store without a log.
 * Each round is a fresh store; prints per round the seconds and the process's CPU seconds of the
 * creations (store construction and close excluded), then the median and range.
 *
 * <pre>
 *   java -Xmx2g -XX:MaxDirectMemorySize=1g -cp &lt;streamcache-bench.jar&gt; bin/CreateStorm.java DIR [THREADS SEGMENTS ROUNDS]
 *   java -cp cache-bench/target/streamcache-bench.jar bin/CreateStorm.java &lt;dir&gt; 40 250000 5
 * </pre>
 * Run two jars alternately, in JVMs of their own, to compare them; DIR is emptied and removed.
 * Uses only the public store API, so any jar of the project runs it.
 */
public final class CreateStorm {
    public static void main(final String[] args) throws Exception {
        final Path dir = "-".equals(args[0]) ? null : Path.of(args[0]);
        final int threads = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        final int segments = args.length > 2 ? Integer.parseInt(args[2]) : 250_000;
        final int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        final List<Double> seconds = new ArrayList<>();
        final List<Double> cpu = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            delete(dir);
            try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build()) {
                final SegmentStore.Builder builder = SegmentStore.builder(cache);
                if (dir != null) {
                    builder.log(LogConfig.builder(dir).build());
                }
                try (SegmentStore store = builder.build()) {
                    final CountDownLatch start = new CountDownLatch(1);
                    final List<Thread> workers = new ArrayList<>();
                    final Throwable[] failure = new Throwable[1];
                    for (int t = 0; t < threads; t++) {
                        final int thread = t;
                        final Thread worker = new Thread(() -> {
                            try {
                                start.await();
                                CompletableFuture<Void> last = null;
                                for (int q = thread; q < segments; q += threads) {
                                    final String name = "mq/" + (q % 2500) + "/topic" + (q / 2500);
                                    last = store.createAsync(name);
                                }
                                if (last != null) {
                                    last.join();
                                }
                            } catch (final Throwable e) {
                                synchronized (failure) {
                                    failure[0] = e;
                                }
                            }
                        }, "storm-" + t);
                        workers.add(worker);
                        worker.start();
                    }
                    final long cpu0 = cpuNanos();
                    final long t0 = System.nanoTime();
                    start.countDown();
                    for (final Thread worker : workers) {
                        worker.join();
                    }
                    final double s = (System.nanoTime() - t0) / 1e9;
                    final double c = (cpuNanos() - cpu0) / 1e9;
                    if (failure[0] != null) {
                        throw new IllegalStateException("a creating thread failed", failure[0]);
                    }
                    if (store.segmentCount() != segments) {
                        throw new IllegalStateException("segments=" + store.segmentCount() + ", expected " + segments);
                    }
                    seconds.add(s);
                    cpu.add(c);
                    System.out.printf(Locale.ROOT, "round %d: %,d segments by %d threads: %.3f s, %.3f CPU-s%n", round, segments,
                        threads, s, c);
                }
            }
        }
        delete(dir);
        System.out.printf(Locale.ROOT, "median %.3f s [%.3f, %.3f], %.3f CPU-s [%.3f, %.3f]%n", median(seconds),
            min(seconds), max(seconds), median(cpu), min(cpu), max(cpu));
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void delete(final Path dir) throws Exception {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (final Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static double median(final List<Double> values) {
        final List<Double> sorted = values.stream().sorted().toList();
        final int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static double min(final List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private static double max(final List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }
}
