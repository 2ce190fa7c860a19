package io.streamcache.bench.mq;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

/**
 * The disk's limit for several forces in flight: N threads, each writing batches of one size
 * into a pre-written region and forcing ({@code fdatasync}) after each, all into one file or
 * each into its own. One thread is the shape of today's log writer (one force at a time); more
 * threads show what several forces in flight (log stripes, parallel commit groups) could gain on
 * this disk before any of it is built.
 *
 * <pre>
 *   forces --dir DIR [--bytes 768m] [--batch 64k] [--threads 1,2,4] [--repeats 3]
 *          [--files same|own|both]
 * </pre>
 * The region is written with zeros and forced before the timed loop, as the log's pre-written
 * files are. Prints per case the median MB/s over the repeats, its range, and the mean time per
 * force seen by one thread. Not thread-safe; a command-line tool.
 */
public final class ParallelForces {
    private ParallelForces() {
    }

    public static int run(final String[] args, final PrintStream out) throws Exception {
        Path dir = null;
        long bytes = 768L << 20;
        int batch = 64 << 10;
        int[] threads = {1, 2, 4};
        int repeats = 3;
        String files = "both";
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            final String v = args[i + 1];
            switch (args[i]) {
                case "--dir" -> dir = Path.of(v);
                case "--bytes" -> bytes = MqBench.size(v);
                case "--batch" -> batch = Math.toIntExact(MqBench.size(v));
                case "--threads" -> threads = Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray();
                case "--repeats" -> repeats = Integer.parseInt(v);
                case "--files" -> files = v;
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                    + "; usage: forces --dir DIR [--bytes 768m] [--batch 64k] [--threads 1,2,4] [--repeats 3] [--files same|own|both]");
            }
        }
        if (dir == null) {
            throw new IllegalArgumentException("--dir is required");
        }
        if (batch <= 0 || bytes < batch || repeats < 1 || !List.of("same", "own", "both").contains(files)) {
            throw new IllegalArgumentException("need batch > 0, bytes >= batch, repeats >= 1, files same|own|both");
        }
        Files.createDirectories(dir);
        final List<Boolean> kinds = files.equals("both") ? List.of(true, false) : List.of(files.equals("same"));
        for (final int n : threads) {
            for (final boolean same : kinds) {
                if (n == 1 && !same && kinds.size() == 2) {
                    continue; // one thread: one file either way
                }
                final double[] mbps = new double[repeats];
                final double[] forceMicros = new double[repeats];
                for (int r = 0; r < repeats; r++) {
                    final double seconds = once(dir, bytes, batch, n, same);
                    mbps[r] = bytes / 1e6 / seconds;
                    forceMicros[r] = seconds * 1e6 / (bytes / n / batch);
                }
                final double[] sorted = mbps.clone();
                Arrays.sort(sorted);
                final double[] us = forceMicros.clone();
                Arrays.sort(us);
                out.printf(Locale.ROOT, "threads %d, %s, batches of %d KB: %.1f MB/s [%.1f, %.1f], %.0f us per write+force per thread%n",
                    n, same ? "one file" : "a file each", batch >> 10, sorted[repeats / 2], sorted[0], sorted[repeats - 1], us[repeats / 2]);
            }
        }
        return 0;
    }

    private static double once(final Path dir, final long bytes, final int batch, final int threads, final boolean same)
        throws Exception {
        final long perThread = bytes / threads / batch * batch;
        final List<FileChannel> channels = new ArrayList<>();
        final List<Path> paths = new ArrayList<>();
        try {
            for (int t = 0; t < (same ? 1 : threads); t++) {
                final Path path = dir.resolve("forces-" + t);
                paths.add(path);
                Files.deleteIfExists(path);
                final FileChannel channel = FileChannel.open(path, CREATE, READ, WRITE);
                channels.add(channel);
                preWrite(channel, same ? perThread * threads : perThread);
            }
            final ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                final List<Future<?>> done = new ArrayList<>();
                final long start = System.nanoTime();
                for (int t = 0; t < threads; t++) {
                    final FileChannel channel = channels.get(same ? 0 : t);
                    final long base = same ? t * perThread : 0;
                    done.add(pool.submit(() -> {
                        final ByteBuffer buffer = ByteBuffer.allocateDirect(batch);
                        while (buffer.hasRemaining()) {
                            buffer.put((byte) 0x5A);
                        }
                        for (long position = 0; position < perThread; position += batch) {
                            buffer.clear();
                            while (buffer.hasRemaining()) {
                                channel.write(buffer, base + position + buffer.position());
                            }
                            channel.force(false);
                        }
                        return null;
                    }));
                }
                for (final Future<?> f : done) {
                    f.get();
                }
                return (System.nanoTime() - start) / 1e9;
            } finally {
                pool.shutdown();
            }
        } finally {
            for (final FileChannel channel : channels) {
                channel.close();
            }
            for (final Path path : paths) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static void preWrite(final FileChannel channel, final long length) throws IOException {
        final ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long position = 0; position < length; position += zeros.capacity()) {
            zeros.clear();
            zeros.limit((int) Math.min(zeros.capacity(), length - position));
            while (zeros.hasRemaining()) {
                channel.write(zeros, position + zeros.position());
            }
        }
        channel.force(true);
    }
}
