package io.streamcache.bench.scale;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * How long a durable store takes to open after its writer was killed (SIGKILL), and after a
 * clean close, against the log's size and number of segments; and how long after {@code build()}
 * returns the first append is acknowledged.
 *
 * <pre>
 *   java -cp streamcache-bench.jar io.streamcache.bench.scale.OpenTime --dir /var/tmp/open \
 *        [--bytes 1g] [--segments 10000] [--append 4k] [--threads 8] [--cache 512m] [--repeats 3] \
 *        [--save /var/tmp/killed-1g | --from /var/tmp/killed-1g] [--checkpoint N] [--writer-heap 1g]
 * </pre>
 * A child JVM creates the segments, appends {@code --bytes} round-robin over them from
 * {@code --threads} threads (every append acknowledged, i.e. forced), prints how far it got,
 * and is killed with SIGKILL while it goes on appending. This JVM then builds a cache of
 * {@code --cache} bytes and opens the store on the directory (the crash recovery), appends once,
 * closes it cleanly, and opens it {@code --repeats} times more (the clean path). Prints each
 * time, and the CPU time of the process during each open (every thread, GC included); the
 * directory is emptied first and at the end.
 *
 * <p>{@code --save DIR} copies the killed writer's log to {@code DIR} before the first open;
 * {@code --from DIR} skips the writer and copies {@code DIR} instead, so that two builds can be
 * measured on the same killed log (writing gigabytes with a force per batch takes minutes).
 *
 * <p>{@code --checkpoint N} sets {@link LogConfig.Builder#checkpointFiles} in the writer and in
 * every open (0: no recovery checkpoint, every file scanned at open); without it both use the
 * default, {@link LogConfig#CHECKPOINT_FILES_DEFAULT}, and the output says which. With N &gt; 0
 * the writer writes checkpoints in the background as it goes, and is killed whatever it is doing
 * then; the opens start from the newest checkpoint the kill left. The output says how many
 * checkpoint files the killed log holds ({@code checkpoint=} bytes of {@code CHECKPOINT}, 0 if none).
 * {@code --writer-heap} is the writer JVM's {@code -Xmx} (1g): a store of 1,000,000 segments with
 * checkpoints needs more (the checkpoint thread holds a second copy of the table while it runs).
 */
public final class OpenTime {
    /** {@code --checkpoint}, for the opens. */
    private static final int[] CONFIG_CHECKPOINT = {0};

    private OpenTime() {
    }

    public static void main(final String[] args) throws Exception {
        Path dir = null;
        long bytes = 1L << 30;
        int segments = 10_000;
        int append = 4096;
        int threads = 8;
        long cache = 512L << 20;
        int repeats = 3;
        Path save = null;
        Path from = null;
        int checkpoint = -1;
        String writerHeap = "1g";
        for (int i = 0; i + 1 < args.length; i += 2) {
            final String v = args[i + 1];
            switch (args[i]) {
                case "--dir" -> dir = Path.of(v);
                case "--bytes" -> bytes = size(v);
                case "--segments" -> segments = Integer.parseInt(v);
                case "--append" -> append = (int) size(v);
                case "--threads" -> threads = Integer.parseInt(v);
                case "--cache" -> cache = size(v);
                case "--repeats" -> repeats = Integer.parseInt(v);
                case "--save" -> save = Path.of(v);
                case "--from" -> from = Path.of(v);
                case "--checkpoint" -> checkpoint = Integer.parseInt(v);
                case "--writer-heap" -> writerHeap = v;
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        if (dir == null) {
            throw new IllegalArgumentException("--dir is required (it is emptied)");
        }
        clean(dir);
        final Path log = dir.resolve("log");
        final long written;
        if (from != null) {
            copy(from, log);
            written = -1;
        } else {
            written = writeAndKill(log, bytes, segments, append, threads, checkpoint, writerHeap);
            if (save != null) {
                clean(save);
                copy(log, save);
            }
        }
        final long onDisk = du(log);
        final Path checkpointFile = log.resolve("CHECKPOINT");
        System.out.printf(Locale.ROOT, "log: %,d segments, %,d bytes acknowledged before the kill, %,d bytes on disk, checkpoint=%d"
            + " bytes; the opens' checkpointFiles=%d%n", segments, written, onDisk,
            Files.exists(checkpointFile) ? Files.size(checkpointFile) : 0, config(log, checkpoint).checkpointFiles());
        CONFIG_CHECKPOINT[0] = checkpoint;

        final long buildStart = System.nanoTime();
        try (BlockCache c = BlockCache.builder().capacity(cache).registerMBean(false).build()) {
            final double build = (System.nanoTime() - buildStart) / 1e9;
            final double[] crash = open(c, log, segments);
            System.out.printf(Locale.ROOT, "cache build %.3f s; after SIGKILL: open %.3f s, first append acknowledged %.3f s later%n",
                build, crash[0], crash[1]);
            final double[] clean = new double[repeats];
            final double[] cleanCpu = new double[repeats];
            final double[] close = new double[repeats + 1];
            close[repeats] = crash[3];
            for (int r = 0; r < repeats; r++) {
                final double[] one = open(c, log, segments);
                clean[r] = one[0];
                cleanCpu[r] = one[2];
                close[r] = one[3];
            }
            Arrays.sort(clean);
            Arrays.sort(cleanCpu);
            Arrays.sort(close);
            if (repeats > 0) {
                System.out.printf(Locale.ROOT, "after a clean close: open median %.3f s [%.3f, %.3f] over %d%n", clean[repeats / 2],
                    clean[0], clean[repeats - 1], repeats);
            }
            System.out.printf(Locale.ROOT, "close of the opened store: median %.3f s [%.3f, %.3f] over %d%n", close[(repeats + 1) / 2],
                close[0], close[repeats], repeats + 1);
            System.out.printf(Locale.ROOT, "{\"segments\":%d,\"bytes\":%d,\"crash_open_s\":%.3f,\"first_append_s\":%.3f,"
                + "\"clean_open_s\":%.3f,\"cache_build_s\":%.3f,\"crash_open_cpu_s\":%.3f,\"clean_open_cpu_s\":%.3f,\"close_s\":%.3f}%n",
                segments, onDisk, crash[0], crash[1], repeats > 0 ? clean[repeats / 2] : Double.NaN, build, crash[2],
                repeats > 0 ? cleanCpu[repeats / 2] : Double.NaN, close[(repeats + 1) / 2]);
        }
        clean(dir);
    }

    /** The log's settings: the defaults, but for {@code checkpointFiles} if {@code checkpoint >= 0}. */
    static LogConfig config(final Path log, final int checkpoint) {
        final LogConfig.Builder builder = LogConfig.builder(log);
        return (checkpoint >= 0 ? builder.checkpointFiles(checkpoint) : builder).build();
    }

    /** Opens the store, appends once, closes it; returns {open seconds, first-append seconds, open CPU seconds, close seconds}. */
    private static double[] open(final BlockCache cache, final Path log, final int segments) {
        final long cpuStart = processCpuNanos();
        final long start = System.nanoTime();
        final SegmentStore store = SegmentStore.builder(cache).log(config(log, CONFIG_CHECKPOINT[0])).build();
        final double[] result;
        try {
            final long opened = System.nanoTime();
            final long cpu = processCpuNanos() - cpuStart;
            if (store.segmentCount() != segments) {
                throw new IllegalStateException("recovered " + store.segmentCount() + " segments, expected " + segments);
            }
            store.append("s-0", Unpooled.wrappedBuffer(new byte[100]));
            final long appended = System.nanoTime();
            result = new double[] {(opened - start) / 1e9, (appended - opened) / 1e9, cpu / 1e9, Double.NaN};
        } catch (final RuntimeException e) {
            store.close();
            throw e;
        }
        final long closeStart = System.nanoTime();
        store.close();
        result[3] = (System.nanoTime() - closeStart) / 1e9;
        return result;
    }

    /**
     * CPU time of this process (every thread, GC included): on a machine shared with other work
     * the wall time of an open swings with the load, the work it takes much less.
     */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    private static long writeAndKill(final Path log, final long bytes, final int segments, final int append, final int threads,
                                     final int checkpoint, final String writerHeap) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx" + writerHeap, "-XX:MaxDirectMemorySize=1g", "-cp", System.getProperty("java.class.path"), Writer.class.getName(),
            log.toString(), Long.toString(bytes), Integer.toString(segments), Integer.toString(append), Integer.toString(threads),
            Integer.toString(checkpoint)));
        final long start = System.nanoTime();
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        long written = -1;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("WRITTEN ")) {
                    written = Long.parseLong(line.substring(8).trim());
                    // From the child's start: JVM start and the creates included, the same for every setting.
                    System.out.printf(Locale.ROOT, "writer: %,d bytes acknowledged in %.2f s (checkpointFiles=%d)%n", written,
                        (System.nanoTime() - start) / 1e9, config(log, checkpoint).checkpointFiles());
                    break;
                }
                System.out.println("child: " + line);
            }
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
        if (written < 0) {
            throw new IllegalStateException("the writer exited before writing; exit status " + child.exitValue());
        }
        return written;
    }

    /** The child: writes, says how much, and keeps appending until it is killed. */
    public static final class Writer {
        private Writer() {
        }

        public static void main(final String[] args) throws Exception {
            final Path log = Path.of(args[0]);
            final long bytes = Long.parseLong(args[1]);
            final int segments = Integer.parseInt(args[2]);
            final int append = Integer.parseInt(args[3]);
            final int threads = Integer.parseInt(args[4]);
            final int checkpoint = args.length > 5 ? Integer.parseInt(args[5]) : -1;
            final BlockCache cache = BlockCache.builder().capacity(256L << 20).registerMBean(false).build();
            final SegmentStore store = SegmentStore.builder(cache).log(config(log, checkpoint)).build();
            final long perThread = bytes / threads;
            final Thread[] workers = new Thread[threads];
            final Thread[] tails = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                final int first = t;
                workers[t] = new Thread(() -> {
                    for (int s = first; s < segments; s += threads) {
                        store.create("s-" + s);
                    }
                    final ByteBuf data = Unpooled.directBuffer(append).writeZero(append);
                    long done = 0;
                    for (int s = first; done < perThread; s = s + threads < segments ? s + threads : first) {
                        store.append("s-" + s, data.duplicate());
                        done += append;
                    }
                });
                tails[t] = new Thread(() -> {
                    final ByteBuf data = Unpooled.directBuffer(append).writeZero(append);
                    for (int s = first; ; s = s + threads < segments ? s + threads : first) {
                        store.append("s-" + s, data.duplicate());
                    }
                });
                tails[t].setDaemon(true);
                workers[t].start();
            }
            for (final Thread w : workers) {
                w.join();
            }
            System.out.println("WRITTEN " + perThread / append * append * threads);
            System.out.flush();
            for (final Thread t : tails) {
                t.start();
            }
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /**
     * Copies the files of {@code from} into {@code to} and forces them: the open timed next must
     * not compete with the copy's write-back (gigabytes of dirty pages), which made the crash
     * open's wall time depend on how fast the copy had drained, not on the recovery.
     */
    private static void copy(final Path from, final Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (final Path p : files.filter(Files::isRegularFile).toList()) {
                final Path target = to.resolve(p.getFileName());
                Files.copy(p, target);
                try (FileChannel channel = FileChannel.open(target, StandardOpenOption.WRITE)) {
                    channel.force(true);
                }
            }
        }
        try (FileChannel directory = FileChannel.open(to, StandardOpenOption.READ)) {
            directory.force(true);
        }
    }

    private static long du(final Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
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

    static long size(final String v) {
        final String s = v.trim().toLowerCase(Locale.ROOT);
        final char unit = s.charAt(s.length() - 1);
        final long m = unit == 'k' ? 1L << 10 : unit == 'm' ? 1L << 20 : unit == 'g' ? 1L << 30 : 1;
        return Long.parseLong(m == 1 ? s : s.substring(0, s.length() - 1)) * m;
    }
}
