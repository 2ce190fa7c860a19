package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

import java.util.concurrent.TimeUnit;

import static io.streamcache.bench.jmh.BlockCacheBenchmark.RANDOM_COUNT;
import static io.streamcache.bench.jmh.BlockCacheBenchmark.SEQUENTIAL_COUNT;

/**
 * The workloads of {@link BlockCacheBenchmark} run by two threads at once on one shared store:
 * each thread owns a slice of the keys ({@code [i * n, (i + 1) * n)} for thread {@code i}) and
 * its own source and destination buffers, and runs the single-threaded workload on its slice.
 * The thread-safe stores (block cache, Caffeine, OHC, RocksDB) are shared as they are; the
 * seed's {@code HashMap} is not thread-safe, so the 2-thread baseline is the same code over a
 * {@code ConcurrentHashMap} ({@code concurrenthashmap}); memcpy, the physical limit, gets one
 * working set per thread (it shares nothing).
 *
 * <p>Each thread times one batch of {@link BlockCacheBenchmark#SEQUENTIAL_COUNT} (or
 * {@link BlockCacheBenchmark#RANDOM_COUNT}) operations; JMH reports the mean of the two threads'
 * batch times, so the store's throughput is {@code 2 * batch / score}. Allocation per operation
 * is best read from {@link BlockCacheBenchmark#insertCopyDelete}, the single-threaded steady state.
 *
 * <p>All state is benchmark-scoped and indexed by {@link ThreadParams#getThreadIndex()}, so that
 * setup and tear-down (run by one thread between iterations, under JMH's barriers) see every
 * thread's keys. The thread count is read from the run ({@code -t} works too).
 *
 * <p>JVM flags: those of {@link BlockCacheBenchmark} but {@code -XX:+AlwaysPreTouch}. Touching
 * 3 GB of heap costs each fork 1-5 s on this machine, and the CI smoke run forks once per
 * benchmark and store; the warm-up batches touch the heap the maps use before any measured
 * batch, and the off-heap stores do not use it.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Threads(2)
@Fork(value = 3, jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:MaxDirectMemorySize=2g"})
@Warmup(iterations = 10, batchSize = SEQUENTIAL_COUNT)
@Measurement(iterations = 15, batchSize = SEQUENTIAL_COUNT)
public class BlockCacheBenchmarkTwoThreads {
    /**
     * Which store runs the workload.
     */
    @State(Scope.Benchmark)
    public static class Kind {
        @Param({"blockcache", "concurrenthashmap", "memcpy", "caffeine", "ohc", "rocksdb"})
        public String store;
    }

    /**
     * One thread's share of a workload: its store (shared or its own), its keys and buffers.
     */
    static final class Lane {
        final ByteStore bytes;
        final int firstKey;
        final ByteBuf source;
        final ByteBuf destination;
        /** Sequential: the next key, relative to {@link #firstKey}. */
        int next;
        /** Random: the test's live keys, from {@link #firstKey}. */
        final RandomOps random;

        Lane(final ByteStore bytes, final int firstKey, final int entryLength, final int liveCapacity, final long seed) {
            this.bytes = bytes;
            this.firstKey = firstKey;
            this.source = BlockCacheBenchmark.sourceOf(entryLength, seed);
            this.destination = Unpooled.directBuffer(entryLength, entryLength);
            this.random = new RandomOps(firstKey, liveCapacity, seed);
        }


        void release() {
            source.release();
            destination.release();
        }
    }

    /**
     * Opens one shared store (or one per thread for a store that is not thread-safe by design:
     * memcpy) and a lane per thread.
     *
     * @param keysPerThread keys in each thread's slice.
     * @param slotsPerThread for memcpy: entry-sized slots in each thread's working set.
     */
    static Lane[] open(final String kind, final int threads, final int keysPerThread, final int entryLength,
                       final int slotsPerThread) {
        final boolean perThread = "memcpy".equals(kind);
        if (!perThread && !ByteStore.isThreadSafe(kind)) {
            throw new IllegalArgumentException(kind + " is not thread-safe: use concurrenthashmap for the map baseline");
        }
        final ByteStore shared = perThread ? null
            : ByteStore.create(kind, threads * keysPerThread, entryLength, slotsPerThread);
        final Lane[] lanes = new Lane[threads];
        for (int i = 0; i < threads; i++) {
            final ByteStore bytes = perThread ? ByteStore.create(kind, keysPerThread, entryLength, slotsPerThread) : shared;
            // memcpy's lanes each have their own store and key range starting at 0.
            lanes[i] = new Lane(bytes, perThread ? 0 : i * keysPerThread, entryLength, keysPerThread, 42 + i);
        }
        return lanes;
    }

    static void close(final Lane[] lanes) {
        ByteStore closed = null;
        for (final Lane lane : lanes) {
            if (lane.bytes != closed) {
                lane.bytes.close();
                closed = lane.bytes;
            }
            lane.release();
        }
    }

    /**
     * Store and lanes of the sequential benchmarks.
     */
    @State(Scope.Benchmark)
    public static class Store {
        @Param({"10240"})
        public int entryLength;

        Lane[] lanes;

        @Setup(Level.Trial)
        public void open(final Kind kind, final BenchmarkParams params) {
            lanes = BlockCacheBenchmarkTwoThreads.open(kind.store, params.getThreads(), SEQUENTIAL_COUNT, entryLength,
                SEQUENTIAL_COUNT);
        }

        @TearDown(Level.Trial)
        public void close() {
            BlockCacheBenchmarkTwoThreads.close(lanes);
        }
    }

    /**
     * Sequential insert: each batch starts from an empty store.
     */
    @State(Scope.Benchmark)
    public static class Empty {
        @Setup(Level.Iteration)
        public void empty(final Store s) {
            clear(s);
        }

        @TearDown(Level.Iteration)
        public void clearAfter(final Store s) {
            clear(s);
        }

        private static void clear(final Store s) {
            for (final Lane lane : s.lanes) {
                for (int key = 0; key < lane.next; key++) {
                    lane.bytes.remove(lane.firstKey + key);
                }
                lane.next = 0;
            }
        }
    }

    /**
     * Sequential get and delete: each batch starts from a store holding every thread's keys.
     */
    @State(Scope.Benchmark)
    public static class Full {
        boolean filled;

        @Setup(Level.Iteration)
        public void fill(final Store s, final BenchmarkParams params) {
            if (!filled) {
                final int count = BlockCacheBenchmark.keysPerBatch(params, SEQUENTIAL_COUNT);
                for (final Lane lane : s.lanes) {
                    for (int key = 0; key < count; key++) {
                        lane.bytes.put(lane.firstKey + key, lane.source);
                    }
                }
                filled = true;
            }
            for (final Lane lane : s.lanes) {
                lane.next = 0;
            }
        }
    }

    /**
     * Sequential delete: puts back, after each batch, the keys the batch deleted.
     */
    @State(Scope.Benchmark)
    public static class Refill {
        @TearDown(Level.Iteration)
        public void refill(final Store s) {
            for (final Lane lane : s.lanes) {
                for (int key = 0; key < lane.next; key++) {
                    lane.bytes.put(lane.firstKey + key, lane.source);
                }
                lane.next = 0;
            }
        }
    }

    /**
     * Random workload: each batch starts from an empty store.
     */
    @State(Scope.Benchmark)
    public static class Random {
        @Param({"10240", "102400"})
        public int randomEntryLength;

        Lane[] lanes;

        @Setup(Level.Trial)
        public void open(final Kind kind, final BenchmarkParams params) {
            // memcpy's working set per thread is as in the single-threaded test: at most 400 MB.
            lanes = BlockCacheBenchmarkTwoThreads.open(kind.store, params.getThreads(), RANDOM_COUNT, randomEntryLength,
                (int)Math.min(RANDOM_COUNT, (400L << 20) / randomEntryLength));
        }

        @Setup(Level.Iteration)
        public void reset() {
            for (final Lane lane : lanes) {
                lane.random.empty(lane.bytes);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            reset();
            BlockCacheBenchmarkTwoThreads.close(lanes);
        }
    }

    @Benchmark
    public int sequentialInsert(final Store s, final Empty empty, final ThreadParams thread) {
        final Lane lane = s.lanes[thread.getThreadIndex()];
        final int key = lane.firstKey + lane.next++;
        lane.bytes.put(key, lane.source);
        return key;
    }

    @Benchmark
    public int sequentialGet(final Store s, final Full full, final ThreadParams thread) {
        final Lane lane = s.lanes[thread.getThreadIndex()];
        return lane.bytes.get(lane.firstKey + lane.next++, lane.destination);
    }

    @Benchmark
    public int sequentialDelete(final Store s, final Full full, final Refill refill, final ThreadParams thread) {
        final Lane lane = s.lanes[thread.getThreadIndex()];
        final int key = lane.firstKey + lane.next++;
        lane.bytes.remove(key);
        return key;
    }

    @Benchmark
    @Warmup(iterations = 10, batchSize = RANDOM_COUNT)
    @Measurement(iterations = 15, batchSize = RANDOM_COUNT)
    public int random(final Random r, final ThreadParams thread) {
        final Lane lane = r.lanes[thread.getThreadIndex()];
        return lane.random.step(lane.bytes, lane.source, lane.destination);
    }
}
