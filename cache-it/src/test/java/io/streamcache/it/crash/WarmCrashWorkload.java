package io.streamcache.it.crash;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MappedFileRegion;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.log.LogConfig;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The child process of {@link WarmCrashIT}: appends to many segments of a durable store whose
 * cache lives in a persistent mapped-file region with a warm catalog, small enough that the cache
 * manager evicts and blocks are reused between checkpoints, and checkpoints often, until it is
 * killed.
 * <pre>
 *  java ... WarmCrashWorkload &lt;root&gt; &lt;segments&gt; &lt;seed&gt; &lt;maxSeconds&gt; [options]
 *   options: interval=&lt;ms&gt; (checkpoint interval, 100), capacity=&lt;bytes&gt; (16 MiB),
 *            maxCapacity=&lt;bytes&gt; (none: a resizable tier up to it), resize (a thread shrinks and
 *            grows the tier through the cache manager all the while), limit=&lt;bytes&gt; (the
 *            producers stop once they have appended that many bytes, and the process waits to be
 *            killed: what the cache holds then was written only once, so what a checkpoint saw is
 *            still there however fast this machine appends)
 *   open the store (warm from the region and catalog under root, recovering root/log)
 *   "warm &lt;restored entries&gt; &lt;discarded&gt;"; create the missing segments
 *   two producers: append [next, next + n) of a segment (byte o of segment k is byteAt(k, o)),
 *   at most WINDOW in flight; each acknowledged append: "ack &lt;name&gt; &lt;offset&gt; &lt;length&gt;";
 *   with resize, each resize done: "resize &lt;capacity before&gt; &lt;capacity reached&gt;"
 *   with limit, once every append is acknowledged: "idle" (the resizer, if any, goes on)
 * </pre>
 * Lines are written to stdout with one {@code write} each after the append's future completed,
 * so a line is an acknowledged (durable) append. Anything unexpected halts with exit status 2.
 */
public final class WarmCrashWorkload {
    /** Cache: 16 MiB of 256 KiB buffers, so eviction runs within a second of appends. */
    static final long CACHE_CAPACITY = 16L << 20;
    static final int BUFFER_LENGTH = 256 << 10;
    static final int WINDOW = 16;
    static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(100);

    private static final FileOutputStream STDOUT = new FileOutputStream(FileDescriptor.out);

    private WarmCrashWorkload() {
    }

    static LogConfig logConfig(final Path root) {
        return LogConfig.builder(root.resolve("log")).fileLength(4L << 20).batchLength(256 << 10).registerMBeans(false).build();
    }

    /** The cache the workload and the test's checks both open over the region under {@code root}. */
    static BlockCache cache(final Path root, final String name) {
        return cache(root, name, CACHE_CAPACITY, 0);
    }

    /**
     * @param maxCapacity 0 for a tier of fixed size, else a resizable tier up to it.
     */
    static BlockCache cache(final Path root, final String name, final long capacity, final long maxCapacity) {
        final BlockCache.Builder builder = BlockCache.builder().capacity(capacity).bufferLength(BUFFER_LENGTH).name(name)
            .registerMBean(false).region(MappedFileRegion.persistent(root.resolve("region")))
            .warmRestart(root.resolve("log").resolve("warm-catalog"));
        if (maxCapacity > 0) {
            builder.maxCapacity(maxCapacity);
        }
        return builder.build();
    }

    static SegmentStore store(final BlockCache cache, final Path root, final String name) {
        return store(cache, root, name, CHECKPOINT_INTERVAL);
    }

    static SegmentStore store(final BlockCache cache, final Path root, final String name, final Duration interval) {
        return SegmentStore.builder(cache).name(name).log(logConfig(root)).warmCheckpointInterval(interval).build();
    }

    /** The test's check: a manager that evicts only a full cache, so what came back warm stays to be read. */
    static SegmentStore checkStore(final BlockCache cache, final Path root, final String name) {
        return SegmentStore.builder(cache).name(name).log(logConfig(root)).warmCheckpointInterval(CHECKPOINT_INTERVAL)
            .cacheManager(CacheManager.builder(cache).targetUtilization(1.0).registerMBean(false)).build();
    }

    static String segmentName(final int index) {
        return "warm-" + index;
    }

    static int segmentIndex(final String name) {
        return Integer.parseInt(name.substring("warm-".length()));
    }

    /** Byte {@code offset} of segment {@code segment}. */
    static byte byteAt(final int segment, final long offset) {
        long z = (segment + 1) * 0x9E37_79B9_7F4A_7C15L + offset;
        z = (z ^ (z >>> 31)) * 0xBF58_476D_1CE4_E5B9L;
        return (byte) (z ^ (z >>> 29));
    }

    public static void main(final String[] args) throws Exception {
        final Path root = Paths.get(args[0]);
        final int segments = Integer.parseInt(args[1]);
        final long seed = Long.parseLong(args[2]);
        final long maxSeconds = Long.parseLong(args[3]);
        final Thread guard = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(maxSeconds);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            System.err.println("WarmCrashWorkload: not killed within maxSeconds=" + maxSeconds);
            Runtime.getRuntime().halt(3);
        }, "warm-workload-guard");
        guard.setDaemon(true);
        guard.start();

        Duration interval = CHECKPOINT_INTERVAL;
        long capacity = CACHE_CAPACITY;
        long maxCapacity = 0;
        boolean resize = false;
        long limit = Long.MAX_VALUE;
        for (int i = 4; i < args.length; i++) {
            final String option = args[i];
            if (option.startsWith("interval=")) {
                interval = Duration.ofMillis(Long.parseLong(option.substring("interval=".length())));
            } else if (option.startsWith("capacity=")) {
                capacity = Long.parseLong(option.substring("capacity=".length()));
            } else if (option.startsWith("maxCapacity=")) {
                maxCapacity = Long.parseLong(option.substring("maxCapacity=".length()));
            } else if (option.equals("resize")) {
                resize = true;
            } else if (option.startsWith("limit=")) {
                limit = Long.parseLong(option.substring("limit=".length()));
            } else {
                fail("unknown option " + option, null);
            }
        }
        final BlockCache cache = cache(root, "warm-workload", capacity, maxCapacity);
        final SegmentStore store = store(cache, root, "warm-workload", interval);
        line("warm " + store.warmRestore().restoredEntries() + ' ' + store.warmRestore().discardedTotal());
        final long[] next = new long[segments];
        for (int i = 0; i < segments; i++) {
            final String name = segmentName(i);
            if (store.exists(name)) {
                next[i] = store.info(name).length();
            } else {
                store.create(name);
            }
        }
        final int producers = 2;
        final long appendLimit = limit;
        final java.util.concurrent.atomic.AtomicLong appended = new java.util.concurrent.atomic.AtomicLong();
        final Thread[] threads = new Thread[producers];
        for (int p = 0; p < producers; p++) {
            final int producer = p;
            final SplittableRandom random = new SplittableRandom(seed * 31 + p);
            threads[p] = new Thread(() -> produce(store, producer, producers, segments, next, random, appended, appendLimit), "warm-producer-" + p);
            threads[p].start();
        }
        if (resize) {
            final long low = Math.max(BUFFER_LENGTH, capacity / 2);
            final long high = maxCapacity;
            final SplittableRandom random = new SplittableRandom(seed * 17);
            final Thread resizer = new Thread(() -> {
                while (true) {
                    final long target = random.nextLong(low, high + 1) / BUFFER_LENGTH * BUFFER_LENGTH;
                    try {
                        final long before = cache.tierCapacity(0);
                        final long reached = store.cacheManager().resizeTier(0, target, Duration.ofSeconds(2));
                        line("resize " + before + ' ' + reached);
                    } catch (final RuntimeException e) {
                        fail("resize to " + target + " failed", e);
                    }
                }
            }, "warm-resizer");
            resizer.setDaemon(true);
            resizer.start();
        }
        for (final Thread thread : threads) {
            thread.join();
        }
        if (appendLimit != Long.MAX_VALUE) {
            // Every append is acknowledged: say so, and wait here for the SIGKILL (the guard halts otherwise).
            line("idle");
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    private static void produce(final SegmentStore store, final int producer, final int producers, final int segments,
                                final long[] next, final SplittableRandom random, final java.util.concurrent.atomic.AtomicLong appended,
                                final long limit) {
        final int owned = (segments - producer + producers - 1) / producers;
        final ArrayDeque<Object[]> pending = new ArrayDeque<>();
        try {
            while (appended.get() < limit) {
                final int segment = producer + producers * random.nextInt(owned);
                final int length = random.nextInt(1, 20_000);
                appended.addAndGet(length);
                final long offset = next[segment];
                final ByteBuf data = Unpooled.buffer(length, length);
                for (int i = 0; i < length; i++) {
                    data.writeByte(byteAt(segment, offset + i));
                }
                pending.addLast(new Object[] {segmentName(segment), offset, length,
                    store.appendAsync(segmentName(segment), data)});
                next[segment] = offset + length;
                if (pending.size() >= WINDOW) {
                    acknowledge(pending.removeFirst());
                }
            }
            while (!pending.isEmpty()) {
                acknowledge(pending.removeFirst());
            }
        } catch (final RuntimeException | Error e) {
            fail("producer " + producer + " failed", e);
        }
    }

    /** Waits for an append ({name, offset, length, future}) and writes its "ack" line. */
    private static void acknowledge(final Object[] append) {
        @SuppressWarnings("unchecked")
        final long landed = ((CompletableFuture<Long>) append[3]).join();
        if (landed != (long) append[1]) {
            fail("append " + append[0] + " landed at " + landed + ", expected " + append[1], null);
        }
        line("ack " + append[0] + ' ' + append[1] + ' ' + append[2]);
    }

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
        System.err.println("WarmCrashWorkload: " + message);
        if (cause != null) {
            cause.printStackTrace(System.err);
        }
        System.err.flush();
        Runtime.getRuntime().halt(2);
    }
}
