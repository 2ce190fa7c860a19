package io.streamcache.bench.compaction;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.compaction.Compaction;
import io.streamcache.segmentstore.compaction.RetentionPolicy;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Disk used by a log with one idle and one slow segment among many busy ones, with compaction
 * off (the writer alone: a file goes once all its data are dead) or on. Single run per process;
 * prints one line per second and a JSON summary.
 *
 * <pre>
 *   segments  idle:   1000 bytes once, then nothing (pins the file it is in)
 *             slow:   100 bytes every 100 ms, never truncated (a little live data in every file)
 *             busy-i: the rest, 4 KiB appends from --producers threads at --rate bytes/s in all,
 *                     each kept to its last --keep bytes (RetentionPolicy with compaction on;
 *                     the tool's own truncate every 200 ms with it off)
 *   java -cp streamcache-bench.jar io.streamcache.bench.compaction.CompactionDiskUse \
 *        --dir /tmp/cd --compaction on|off [--seconds 25] [--segments 64] [--file-length 8m]
 *        [--rate 16m] [--keep 256k] [--producers 2] [--slack 0 (the default: two files)]
 * </pre>
 * The directory is emptied first.
 */
public final class CompactionDiskUse {
    private static final int APPEND = 4096;

    private CompactionDiskUse() {
    }

    public static void main(final String[] args) throws Exception {
        System.exit(run(args, System.out));
    }

    /**
     * @return the exit status.
     */
    public static int run(final String[] args, final PrintStream out) throws Exception {
        Path dir = null;
        boolean compaction = true;
        int seconds = 25;
        int segments = 64;
        long fileLength = 8L << 20;
        long rate = 16L << 20;
        long keep = 256L << 10;
        int producers = 2;
        long slack = 0;
        for (int i = 0; i < args.length; i += 2) {
            final String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--dir" -> dir = Paths.get(value);
                case "--compaction" -> compaction = value.equals("on");
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--segments" -> segments = Integer.parseInt(value);
                case "--file-length" -> fileLength = bytes(value);
                case "--rate" -> rate = bytes(value);
                case "--keep" -> keep = bytes(value);
                case "--producers" -> producers = Integer.parseInt(value);
                case "--slack" -> slack = bytes(value);
                default -> {
                    out.println("unknown flag " + args[i] + "; see the class Javadoc");
                    return 2;
                }
            }
        }
        if (dir == null || segments < 3) {
            out.println("--dir is required and --segments must be >= 3");
            return 2;
        }
        clear(dir);
        final LogConfig log = LogConfig.builder(dir).fileLength(fileLength).build();
        final BlockCache cache = BlockCache.builder().capacity(256L << 20).name("compaction-disk-use").registerMBean(false).build();
        final SegmentStore.Builder builder = SegmentStore.builder(cache).name("compaction-disk-use").log(log);
        if (compaction) {
            builder.compaction(CompactionConfig.builder().slackLength(slack).build());
        }
        final SegmentStore store = builder.build();
        final Compaction compactor = store.compaction().orElse(null);
        store.create("idle");
        store.append("idle", Unpooled.wrappedBuffer(new byte[1000]));
        store.create("slow");
        final int busy = segments - 2;
        for (int i = 0; i < busy; i++) {
            store.create("busy-" + i);
            if (compactor != null) {
                compactor.retention("busy-" + i, RetentionPolicy.ofLength(keep));
            }
        }
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        final int producerCount = producers;
        final long perProducer = rate / producers;
        for (int p = 0; p < producers; p++) {
            final int producer = p;
            threads.add(new Thread(() -> produce(store, producer, producerCount, busy, perProducer, stop), "producer-" + p));
        }
        threads.add(new Thread(() -> {
            final ByteBuf data = Unpooled.directBuffer(100).writeZero(100);
            while (!stop.get()) {
                store.append("slow", data.duplicate());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        }, "slow"));
        if (compactor == null) {
            final long kept = keep;
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    for (int i = 0; i < busy; i++) {
                        final SegmentInfo info = store.info("busy-" + i);
                        if (info.length() - info.startOffset() > kept) {
                            store.truncate("busy-" + i, info.length() - kept);
                        }
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                }
            }, "truncator"));
        }
        threads.forEach(Thread::start);
        final long start = System.nanoTime();
        long maxBytes = 0;
        out.printf(Locale.ROOT, "compaction=%s segments=%d fileLength=%d rate=%d keep=%d slack=%d%n", compaction ? "on" : "off",
            segments, fileLength, rate, keep, compactor != null ? compactor.stats().slackLength() : 0);
        out.println("second  logMiB  files  liveMiB  appendedMiB");
        for (int second = 1; second <= seconds; second++) {
            LockSupport.parkNanos(start + TimeUnit.SECONDS.toNanos(second) - System.nanoTime());
            final long bytes = logBytes(dir);
            maxBytes = Math.max(maxBytes, bytes);
            out.printf(Locale.ROOT, "%6d  %6.1f  %5d  %7.2f  %11.1f%n", second, bytes / 1048576.0, store.log().orElseThrow().directoryStats().files(),
                live(store) / 1048576.0, appended(store) / 1048576.0);
        }
        stop.set(true);
        for (final Thread thread : threads) {
            thread.join();
        }
        final long endBytes = logBytes(dir);
        out.printf(Locale.ROOT, "{\"compaction\":\"%s\",\"seconds\":%d,\"segments\":%d,\"fileLength\":%d,\"appendedBytes\":%d,"
                + "\"liveBytes\":%d,\"logBytesEnd\":%d,\"logBytesMax\":%d,\"filesCompacted\":%d,\"bytesCopied\":%d}%n",
            compaction ? "on" : "off", seconds, segments, fileLength, appended(store), live(store), endBytes, maxBytes,
            compactor != null ? compactor.stats().filesCompacted() : 0, compactor != null ? compactor.stats().bytesCopied() : 0);
        store.close();
        cache.close();
        return 0;
    }

    private static void produce(final SegmentStore store, final int producer, final int producers, final int busy, final long rate,
                                final AtomicBoolean stop) {
        final ByteBuf data = Unpooled.directBuffer(APPEND).writeZero(APPEND);
        final long start = System.nanoTime();
        long bytes = 0;
        for (long i = producer; !stop.get(); i += producers) {
            store.append("busy-" + (i % busy), data.duplicate());
            bytes += APPEND;
            final long ahead = (long) (bytes * 1e9 / rate) - (System.nanoTime() - start);
            if (ahead > 0) {
                LockSupport.parkNanos(ahead);
            }
        }
    }

    private static long live(final SegmentStore store) {
        long live = 0;
        for (final String name : store.segmentNames()) {
            final SegmentInfo info = store.info(name);
            live += info.length() - info.startOffset();
        }
        return live;
    }

    private static long appended(final SegmentStore store) {
        long total = 0;
        for (final String name : store.segmentNames()) {
            total += store.info(name).length();
        }
        return total;
    }

    private static long logBytes(final Path dir) throws IOException {
        long total = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "log-*.log")) {
            for (final Path file : files) {
                try {
                    total += Files.size(file);
                } catch (final NoSuchFileException e) {
                    // Retired while listed.
                }
            }
        }
        return total;
    }

    private static long bytes(final String value) {
        final String lower = value.toLowerCase(Locale.ROOT);
        final char unit = lower.charAt(lower.length() - 1);
        final int shift = unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 0;
        return Long.parseLong(shift == 0 ? lower : lower.substring(0, lower.length() - 1)) << shift;
    }

    private static void clear(final Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (final Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    if (!path.equals(dir)) {
                        Files.delete(path);
                    }
                }
            }
        }
        Files.createDirectories(dir);
    }
}
