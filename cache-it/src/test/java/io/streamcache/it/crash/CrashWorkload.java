package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The child process of {@link CrashRecoveryIT}: a single-process program (its producer threads
 * share one store) that appends to a durable segment store as fast as the log takes it, until it
 * is killed.
 *
 * <pre>
 *  java ... CrashWorkload &lt;logDirectory&gt; &lt;segments&gt; &lt;producers&gt; &lt;seed&gt; &lt;bytesPerSecond&gt; &lt;maxSeconds&gt;
 *
 *  main                              producer p (owns the segments i with i % producers == p)
 *   | open the store (recovering      | loop: pick an owned segment, a record length
 *   |   an existing directory)        |   record = CrashRecordDescriptor.encode(segment, next, length)
 *   | create the missing segments     |   future = appendAsync(segment, record); next += length
 *   |   "segment &lt;name&gt; &lt;length&gt;"     |   more than WINDOW futures pending: join the oldest,
 *   | start the producers             |     check its offset, write "ack &lt;name&gt; &lt;offset&gt; &lt;length&gt;"
 *   |                                 |   ahead of bytesPerSecond / producers: park
 *   v halt after maxSeconds (a guard: the test kills it long before)
 * </pre>
 * Every line goes to stdout with one {@code write} call, after the append's future completed:
 * a line in the output is an append the store acknowledged as durable. The test redirects stdout
 * to a file, so the lines written before a SIGKILL are in the page cache and survive it.
 * Anything unexpected (a failed append, an offset other than the one reserved) is written to
 * stderr and the process halts with {@link #EXIT_FAILED}.
 *
 * <p>One producer per segment, so a producer knows the offset of its next append before making
 * the record (the record holds its own offset); the producers still share the store, the log
 * and the writer's batches. The rate cap keeps the data a test verifies (every round re-reads
 * everything) bounded on a fast disk; 0 means no cap.
 */
public final class CrashWorkload {
    /** Exit status after an unexpected failure. */
    public static final int EXIT_FAILED = 2;
    /** Exit status when maxSeconds passed without a kill. */
    public static final int EXIT_TIMED_OUT = 3;
    /** Cache capacity: 64 MiB. */
    static final long CACHE_CAPACITY = 64L << 20;
    /** Log files of 4 MiB, so a run of a second rolls several of them. */
    static final long LOG_FILE_LENGTH = 4L << 20;
    /** Batches of at most 256 KiB. */
    static final int LOG_BATCH_LENGTH = 256 << 10;
    /** Appends a producer keeps in flight. */
    static final int WINDOW = 32;
    /** System property of the child: {@link LogConfig.Builder#forcesInFlight} of its log (the default if not set). */
    static final String FORCES_PROPERTY = "streamcache.crash.forcesInFlight";
    /** Segment names: {@code SEGMENT_PREFIX + index}. */
    static final String SEGMENT_PREFIX = "crash-";

    private static final FileOutputStream STDOUT = new FileOutputStream(FileDescriptor.out);

    private CrashWorkload() {
    }

    /**
     * @return the log settings the workload and the test both use for {@code directory}.
     */
    static LogConfig logConfig(final Path directory) {
        return LogConfig.builder(directory)
            .fileLength(LOG_FILE_LENGTH)
            .batchLength(LOG_BATCH_LENGTH)
            .forcesInFlight(Integer.getInteger(FORCES_PROPERTY, LogConfig.FORCES_IN_FLIGHT_DEFAULT))
            .build();
    }

    static String segmentName(final int index) {
        return SEGMENT_PREFIX + index;
    }

    /**
     * @return the index of a segment name, or -1 if the workload never uses that name.
     */
    static int segmentIndex(final String name) {
        if (!name.startsWith(SEGMENT_PREFIX)) {
            return -1;
        }
        try {
            return Integer.parseInt(name.substring(SEGMENT_PREFIX.length()));
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    /**
     * @return a record length: mostly 100 B to 17 KB (the message sizes), sometimes a
     *         short one or one up to the maximum.
     */
    static int recordLength(final SplittableRandom random) {
        final int kind = random.nextInt(16);
        if (kind == 0) {
            return random.nextInt(CrashRecordDescriptor.MIN_RECORD_LENGTH, 100);
        }
        if (kind == 1) {
            return random.nextInt(17_000, CrashRecordDescriptor.MAX_RECORD_LENGTH + 1);
        }
        return random.nextInt(100, 17_001);
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: CrashWorkload <logDirectory> <segments> <producers> <seed> <bytesPerSecond> <maxSeconds>");
            Runtime.getRuntime().halt(EXIT_FAILED);
        }
        final Path directory = Paths.get(args[0]);
        final int segments = Integer.parseInt(args[1]);
        final int producers = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        final long bytesPerSecond = Long.parseLong(args[4]);
        final long maxSeconds = Long.parseLong(args[5]);

        final Thread guard = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(maxSeconds);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            System.err.println("CrashWorkload: not killed within maxSeconds=" + maxSeconds);
            Runtime.getRuntime().halt(EXIT_TIMED_OUT);
        }, "crash-workload-guard");
        guard.setDaemon(true);
        guard.start();

        final BlockCache cache = BlockCache.builder().capacity(CACHE_CAPACITY).name("crash-workload").registerMBean(false).build();
        final SegmentStore store = SegmentStore.builder(cache).name("crash-workload").log(logConfig(directory)).build();
        final long[] next = new long[segments];
        for (int i = 0; i < segments; i++) {
            final String name = segmentName(i);
            if (store.exists(name)) {
                next[i] = store.info(name).length();
            } else {
                store.create(name);
            }
            line("segment " + name + ' ' + next[i]);
        }
        final Thread[] threads = new Thread[producers];
        for (int p = 0; p < producers; p++) {
            final int producer = p;
            final SplittableRandom random = new SplittableRandom(seed * 31 + p);
            threads[p] = new Thread(() -> produce(store, producer, producers, segments, next, random, bytesPerSecond / producers),
                "crash-producer-" + p);
            threads[p].start();
        }
        for (final Thread thread : threads) {
            thread.join();
        }
    }

    private static void produce(final SegmentStore store, final int producer, final int producers, final int segments,
                                final long[] next, final SplittableRandom random, final long bytesPerSecond) {
        final int owned = (segments - producer + producers - 1) / producers;
        if (owned == 0) {
            return;
        }
        final ArrayDeque<Pending> pending = new ArrayDeque<>();
        final long start = System.nanoTime();
        long bytes = 0;
        try {
            while (true) {
                final int segment = producer + producers * random.nextInt(owned);
                final String name = segmentName(segment);
                final int length = recordLength(random);
                final long offset = next[segment];
                final ByteBuf record = Unpooled.buffer(length, length);
                CrashRecordDescriptor.encode(segment, offset, length, record);
                pending.addLast(new Pending(name, offset, length, store.appendAsync(name, record)));
                next[segment] = offset + length;
                bytes += length;
                if (pending.size() >= WINDOW) {
                    acknowledge(pending.removeFirst());
                }
                if (bytesPerSecond > 0) {
                    final long ahead = (long) (bytes * 1e9 / bytesPerSecond) - (System.nanoTime() - start);
                    if (ahead > 0) {
                        LockSupport.parkNanos(ahead);
                    }
                }
            }
        } catch (final RuntimeException | Error e) {
            fail("producer=" + producer + " failed", e);
        }
    }

    private static void acknowledge(final Pending append) {
        final long offset;
        try {
            offset = append.future.join();
        } catch (final RuntimeException e) {
            fail("append segment=" + append.segment + " offset=" + append.offset + " length=" + append.length + " failed", e);
            return;
        }
        if (offset != append.offset) {
            fail("append segment=" + append.segment + " length=" + append.length + " landed at offset=" + offset
                + ", expected offset=" + append.offset, null);
        }
        line("ack " + append.segment + ' ' + append.offset + ' ' + append.length);
    }

    /**
     * Writes one line to stdout with one write call (so a kill leaves whole lines, or a last
     * line without its newline, which the reader drops).
     */
    private static void line(final String line) {
        final byte[] bytes = (line + '\n').getBytes(StandardCharsets.US_ASCII);
        synchronized (STDOUT) {
            try {
                STDOUT.write(bytes);
            } catch (final IOException e) {
                fail("could not write to stdout", e);
            }
        }
    }

    private static void fail(final String message, final Throwable cause) {
        System.err.println("CrashWorkload: " + message);
        if (cause != null) {
            cause.printStackTrace(System.err);
        }
        System.err.flush();
        Runtime.getRuntime().halt(EXIT_FAILED);
    }

    private static final class Pending {
        final String segment;
        final long offset;
        final int length;
        final CompletableFuture<Long> future;

        Pending(final String segment, final long offset, final int length, final CompletableFuture<Long> future) {
            this.segment = segment;
            this.offset = offset;
            this.length = length;
            this.future = future;
        }
    }
}
