package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationList;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The location index as a historical read uses it: {@code locate} copies out the records of a
 * 1 MiB range of a segment (a read-through's range) from the index the log built, here of
 * {@code segments} segments of 256 appends of 4 KB each (written without forces), on 4 threads at once (readers of
 * different segments, and now and then of the same one). {@code locate} takes the index once
 * per segment at set-up; {@code lookUpAndLocate} looks it up by name first, as
 * {@code SegmentStore.locations} does (the read-through path looks it up by id per miss).
 * Uses only API both a build with index objects and one with index rows have, so that
 * {@code bin/JmhCompare.java} can run it on both.
 *
 * <pre>
 *   java -jar streamcache-bench.jar jmh LocationLookupBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(4)
@State(Scope.Benchmark)
public class LocationLookupBenchmark {
    private static final int APPENDS = 256;
    private static final int APPEND_LENGTH = 4096;
    private static final long RANGE = 1 << 20;

    @Param({"1000"})
    public int segments;

    private Path directory;
    private BlockCache cache;
    private SegmentStore store;
    private String[] names;
    private LocationIndex[] indexes;

    /** One reader's scratch. */
    @State(Scope.Thread)
    public static class Reader {
        final LocationList list = new LocationList();
        final SplittableRandom random = new SplittableRandom(Thread.currentThread().getId());
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        directory = Files.createTempDirectory("location-bench");
        cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
        // The index is what is measured, not the disk: appends complete once written.
        store = SegmentStore.builder(cache)
            .log(LogConfig.builder(directory.resolve("log")).durability(DurabilityPolicy.NEVER).build()).build();
        names = new String[segments];
        indexes = new LocationIndex[segments];
        for (int s = 0; s < segments; s++) {
            names[s] = "segment-" + s;
            store.create(names[s]);
        }
        // Written by 8 threads (segments s = t mod 8 each), so that the writes overlap.
        final Thread[] writers = new Thread[8];
        for (int t = 0; t < writers.length; t++) {
            final int first = t;
            writers[t] = new Thread(() -> {
                final ByteBuf data = Unpooled.directBuffer(APPEND_LENGTH, APPEND_LENGTH).writeZero(APPEND_LENGTH);
                try {
                    for (int i = 0; i < APPENDS; i++) {
                        for (int s = first; s < segments; s += writers.length) {
                            store.append(names[s], data.retainedDuplicate());
                        }
                    }
                } finally {
                    data.release();
                }
            });
            writers[t].start();
        }
        for (final Thread w : writers) {
            try {
                w.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        for (int s = 0; s < segments; s++) {
            indexes[s] = store.locations(names[s]);
            if (indexes[s] == null || indexes[s].count() != APPENDS) {
                throw new IllegalStateException("segment " + names[s] + " has index " + indexes[s]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        store.close();
        cache.close();
        try (Stream<Path> paths = Files.walk(directory)) {
            for (final Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static long from(final Reader r) {
        return RANGE * r.random.nextInt((int) ((long) APPENDS * APPEND_LENGTH / RANGE));
    }

    @Benchmark
    public int locate(final Reader r) {
        final LocationIndex index = indexes[r.random.nextInt(segments)];
        final long from = from(r);
        index.locate(from, from + RANGE, r.list);
        return r.list.count();
    }

    @Benchmark
    public int lookUpAndLocate(final Reader r) {
        final LocationIndex index = store.locations(names[r.random.nextInt(segments)]);
        final long from = from(r);
        index.locate(from, from + RANGE, r.list);
        return r.list.count();
    }
}
