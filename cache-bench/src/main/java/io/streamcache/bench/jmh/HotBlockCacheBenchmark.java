package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.concurrent.TimeUnit;

/**
 * The seed's raw test of {@link BlockCacheBenchmark} with a working set that stays inside the CPU
 * caches: 1,000 entries of 10 KB (10 MB, inside this machine's 32 MB L3) in the sequential rows,
 * and random batches whose live set stays at a few MB. Here a 10 KB memcpy runs at tens of GB/s,
 * so the per-operation bookkeeping (metadata words, free lists, locks, counters) is what the
 * ratio to memcpy shows; the large working set of {@link BlockCacheBenchmark} hides it behind
 * memory bandwidth. The same stores run the same code as there.
 *
 * <p>Each measurement is one batch timed as a whole ({@link Mode#SingleShotTime}); the score is
 * the time of one batch: ns per operation = {@code score x 10^6 / batch}. Batches are short, so
 * there are many iterations.
 *
 * <pre>
 *   thread: [ source (hot) ] --insert--> [ store: ~10 MB, in L3 ] --get--> [ destination (hot) ]
 * </pre>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:MaxDirectMemorySize=2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 200, batchSize = HotBlockCacheBenchmark.HOT_COUNT)
@Measurement(iterations = 100, batchSize = HotBlockCacheBenchmark.HOT_COUNT)
public class HotBlockCacheBenchmark {
    /** Entries per sequential phase: 1,000 x 10 KB = 10 MB. */
    public static final int HOT_COUNT = 1_000;
    /** Operations per random batch of 10 KB entries: about 500 live at its end (5 MB). */
    public static final int RANDOM_COUNT = 2_500;
    /** Operations per random batch of 100 KB entries: about 50 live at its end (5 MB). */
    public static final int RANDOM_COUNT_100K = 250;

    /**
     * Which store runs the workload. The block length is part of the kind, so that other block
     * lengths run beside the defaults and the baselines in one run without repeating the
     * baselines: {@code -p store=blockcache,blockcache-2k,memcpy,hashmap} ({@code blockcache}: the
     * cache's defaults; {@code blockcache-<N>k}: blocks of N KiB; {@code blockcache-<N>k-<M>k}: in
     * buffers of M KiB; see {@link ByteStore#create}).
     */
    @State(Scope.Benchmark)
    public static class Kind {
        @Param({"blockcache", "hashmap", "memcpy"})
        public String store;

        /**
         * Where the source and destination buffers start: {@code malloc} (as
         * {@code Unpooled.directBuffer} allocates them: 16-byte aligned, so each fork draws
         * one of four placements relative to the cache's 4 KB-aligned blocks) or a number of
         * bytes past a 64-byte boundary ({@code 0}: on a cache line, as Netty's pooled buffers
         * are with {@code -Dio.netty.allocator.directMemoryCacheAlignment=64}; {@code 16}: 16 past
         * one, as they are by default, their chunks coming from malloc). See
         * {@link BlockCacheBenchmark#bufferOf}.
         */
        @Param({BlockCacheBenchmark.ALIGNMENT_AS_ALLOCATED})
        public String alignment;
    }

    /**
     * Store and data of the sequential rows (benchmark scope: single-shot iterations may run on new threads).
     */
    @State(Scope.Benchmark)
    public static class Store {
        @Param({"10240"})
        public int entryLength;

        final SequentialFixture fixture = new SequentialFixture();

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            fixture.open(kind.store, HOT_COUNT, entryLength, kind.alignment);
        }

        @TearDown(Level.Trial)
        public void close() {
            fixture.close();
        }
    }

    /**
     * Sequential insert: each batch starts from an empty store.
     */
    @State(Scope.Benchmark)
    public static class Empty {
        @Setup(Level.Iteration)
        public void empty(final Store s) {
            s.fixture.clear();
        }

        @TearDown(Level.Iteration)
        public void clearAfter(final Store s) {
            s.fixture.clear();
        }
    }

    /**
     * Sequential get and delete: each batch starts from a store holding every key.
     */
    @State(Scope.Benchmark)
    public static class Full {
        boolean filled;

        @Setup(Level.Iteration)
        public void fill(final Store s, final BenchmarkParams params) {
            if (!filled) {
                s.fixture.fill(BlockCacheBenchmark.keysPerBatch(params, HOT_COUNT));
                filled = true;
            }
            s.fixture.next = 0;
        }
    }

    /**
     * Sequential delete: puts back, after each batch, the keys it deleted.
     */
    @State(Scope.Benchmark)
    public static class Refill {
        @TearDown(Level.Iteration)
        public void refill(final Store s) {
            s.fixture.refill();
        }
    }

    /**
     * Random workload of 10 KB entries (memcpy's working set: {@link #HOT_COUNT} slots, 10 MB).
     */
    @State(Scope.Benchmark)
    public static class Random {
        final RandomFixture fixture = new RandomFixture(RANDOM_COUNT);

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            fixture.open(kind.store, RANDOM_COUNT, 10_240, HOT_COUNT, kind.alignment);
        }

        @Setup(Level.Iteration)
        public void reset() {
            fixture.reset();
        }

        @TearDown(Level.Trial)
        public void close() {
            fixture.close();
        }
    }

    /**
     * Random workload of 100 KB entries (memcpy's working set: 100 slots, 10 MB).
     */
    @State(Scope.Benchmark)
    public static class Random100K {
        final RandomFixture fixture = new RandomFixture(RANDOM_COUNT_100K);

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            fixture.open(kind.store, RANDOM_COUNT_100K, 102_400, 100, kind.alignment);
        }

        @Setup(Level.Iteration)
        public void reset() {
            fixture.reset();
        }

        @TearDown(Level.Trial)
        public void close() {
            fixture.close();
        }
    }

    /**
     * A steady hot set: {@link #HOT_COUNT} live entries; each operation deletes one, inserts it
     * again and copies out another (half the set away), so every operation does one insert, one
     * copy and one delete on a working set that stays the same. Average time: ns per operation.
     */
    @State(Scope.Thread)
    public static class Steady {
        ByteStore bytes;
        ByteBuf source;
        ByteBuf destination;
        int next;

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            bytes = ByteStore.create(kind.store, HOT_COUNT, 10_240, HOT_COUNT);
            source = BlockCacheBenchmark.sourceOf(10_240, 11, kind.alignment);
            destination = BlockCacheBenchmark.bufferOf(10_240, kind.alignment);
            for (int key = 0; key < HOT_COUNT; key++) {
                bytes.put(key, source);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            for (int key = 0; key < HOT_COUNT; key++) {
                bytes.remove(key);
            }
            bytes.close();
            source.release();
            destination.release();
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Warmup(iterations = 5, time = 1, batchSize = 1)
    @Measurement(iterations = 5, time = 1, batchSize = 1)
    public int steadyInsertCopyDelete(final Steady s) {
        final int key = s.next;
        s.next = key + 1 == HOT_COUNT ? 0 : key + 1;
        s.bytes.remove(key);
        s.bytes.put(key, s.source);
        return s.bytes.get(key < HOT_COUNT / 2 ? key + HOT_COUNT / 2 : key - HOT_COUNT / 2, s.destination);
    }

    @Benchmark
    public int sequentialInsert(final Store s, final Empty empty) {
        return s.fixture.insertNext();
    }

    /**
     * One sweep of copies over the 1,000 entries per batch. With {@code -bs 10000 -wbs 10000} a
     * batch is ten sweeps back to back (the keys wrap), which separates the cost of a sweep that
     * follows the pause between batches (the benchmark thread parks while JMH sets up the next
     * iteration) from the cost of one that follows another sweep.
     */
    @Benchmark
    public int sequentialGet(final Store s, final Full full) {
        return s.fixture.getNext();
    }

    @Benchmark
    public int sequentialDelete(final Store s, final Full full, final Refill refill) {
        return s.fixture.deleteNext();
    }

    @Benchmark
    @Warmup(iterations = 200, batchSize = RANDOM_COUNT)
    @Measurement(iterations = 100, batchSize = RANDOM_COUNT)
    public int random10K(final Random r) {
        return r.fixture.step();
    }

    @Benchmark
    @Warmup(iterations = 200, batchSize = RANDOM_COUNT_100K)
    @Measurement(iterations = 100, batchSize = RANDOM_COUNT_100K)
    public int random100K(final Random100K r) {
        return r.fixture.step();
    }
}
