package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.compaction.Compaction;
import io.streamcache.segmentstore.compaction.RetentionPolicy;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The child process of {@link CompactionCrashIT}: appends to a store whose compactor runs all
 * the time, until it is killed.
 *
 * <pre>
 *  java ... CompactionCrashWorkload &lt;logDirectory&gt; &lt;seed&gt; &lt;maxSeconds&gt; [&lt;checkpointFiles&gt;]
 *
 *  segments   idle: 1000 bytes once (first run), never again, never truncated
 *             slow: a 50..300-byte append every 20th round, never truncated (touches every file)
 *             busy-0..5: 200..8000-byte appends, retention keeps their last 64 KiB
 *  compactor  every 5 ms, slack one file, 16 MiB/s: the idle and slow segments' bytes are copied
 *             out of old files again and again while the busy ones kill the rest
 *  checkpoint LogConfig.checkpointFiles (0, none, unless given): with 1, a recovery checkpoint
 *             after every roll, so kills land while one is written
 * </pre>
 * Byte {@code o} of segment {@code k} is {@link #byteAt(int, long)}, so the test can check every
 * byte it reads. Every append's future is joined, then "ack &lt;name&gt; &lt;offset&gt; &lt;length&gt;" is
 * written to stdout with one write call.
 */
public final class CompactionCrashWorkload {
    static final int BUSY = 6;
    static final long FILE_LENGTH = 256 << 10;
    static final long KEEP = 64 << 10;
    static final int IDLE_LENGTH = 1000;

    private static final FileOutputStream STDOUT = new FileOutputStream(FileDescriptor.out);

    private CompactionCrashWorkload() {
    }

    static LogConfig logConfig(final Path directory) {
        return logConfig(directory, 0);
    }

    static LogConfig logConfig(final Path directory, final int checkpointFiles) {
        return LogConfig.builder(directory).fileLength(FILE_LENGTH).batchLength(64 << 10).spareFiles(1)
            .checkpointFiles(checkpointFiles).build();
    }

    /** Segment index of a name: idle 0, slow 1, busy-i 2 + i. */
    static int index(final String name) {
        if (name.equals("idle")) {
            return 0;
        }
        if (name.equals("slow")) {
            return 1;
        }
        return 2 + Integer.parseInt(name.substring("busy-".length()));
    }

    static byte byteAt(final int segment, final long offset) {
        return (byte) (offset * 31 + segment * 7 + (offset >>> 8) + (offset >>> 16) * 3);
    }

    static ByteBuf data(final int segment, final long offset, final int length) {
        final ByteBuf buffer = Unpooled.buffer(length, length);
        for (int i = 0; i < length; i++) {
            buffer.writeByte(byteAt(segment, offset + i));
        }
        return buffer;
    }

    public static void main(final String[] args) throws Exception {
        final Path directory = Paths.get(args[0]);
        final long seed = Long.parseLong(args[1]);
        final long maxSeconds = Long.parseLong(args[2]);
        final int checkpointFiles = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        final Thread guard = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(maxSeconds);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Runtime.getRuntime().halt(CrashWorkload.EXIT_TIMED_OUT);
        }, "compaction-crash-guard");
        guard.setDaemon(true);
        guard.start();
        try {
            run(directory, new SplittableRandom(seed), checkpointFiles);
        } catch (final RuntimeException | Error e) {
            System.err.println("CompactionCrashWorkload failed");
            e.printStackTrace(System.err);
            System.err.flush();
            Runtime.getRuntime().halt(CrashWorkload.EXIT_FAILED);
        }
    }

    private static void run(final Path directory, final SplittableRandom random, final int checkpointFiles) {
        final BlockCache cache = BlockCache.builder().capacity(32L << 20).name("compaction-crash").registerMBean(false).build();
        final SegmentStore store = SegmentStore.builder(cache).name("compaction-crash").log(logConfig(directory, checkpointFiles))
            .compaction(CompactionConfig.builder().interval(Duration.ofMillis(5)).slackLength(FILE_LENGTH)
                .bytesPerSecond(16L << 20).build())
            .build();
        final Compaction compactor = store.compaction().orElseThrow();
        if (!store.exists("idle")) {
            store.create("idle");
            store.append("idle", data(0, 0, IDLE_LENGTH));
            line("ack idle 0 " + IDLE_LENGTH);
        }
        if (!store.exists("slow")) {
            store.create("slow");
        }
        final String[] busy = new String[BUSY];
        for (int i = 0; i < BUSY; i++) {
            busy[i] = "busy-" + i;
            if (!store.exists(busy[i])) {
                store.create(busy[i]);
            }
            compactor.retention(busy[i], RetentionPolicy.ofLength(KEEP));
        }
        for (long round = 0; ; round++) {
            if (round % 20 == 0) {
                append(store, "slow", 50 + random.nextInt(251));
            }
            append(store, busy[(int) (round % BUSY)], 200 + random.nextInt(7801));
        }
    }

    private static void append(final SegmentStore store, final String name, final int length) {
        final long offset = store.info(name).length();
        final long at = store.append(name, data(index(name), offset, length));
        if (at != offset) {
            throw new IllegalStateException("append to " + name + " landed at offset=" + at + ", expected " + offset);
        }
        line("ack " + name + ' ' + offset + ' ' + length);
    }

    private static void line(final String line) {
        final byte[] bytes = (line + '\n').getBytes(StandardCharsets.US_ASCII);
        synchronized (STDOUT) {
            try {
                STDOUT.write(bytes);
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
