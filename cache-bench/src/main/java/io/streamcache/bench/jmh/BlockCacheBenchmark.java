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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Pravega's raw cache test (from its streaming-cache design) as JMH benchmarks: sequential insert, get-with-copy and
 * delete of 10 KB entries, and the random test (from an empty store, 60% insert / 40% delete,
 * each operation also copying out a random live entry) at 10 KB and 100 KB. Each store kind runs
 * the same code: the block cache, the seed's {@code HashMap<Integer, byte[]>} baseline, a
 * plain memcpy over a working set of the same size (the physical limit), and the peers a broker
 * would otherwise use: Caffeine ({@code byte[]} values bounded by weight), OHC (off-heap) and
 * RocksDB (WAL off, as Pravega used it before its streaming cache). The same workloads on two
 * threads sharing one store are in {@link BlockCacheBenchmarkTwoThreads}.
 *
 * <p>Each measurement is one batch of {@link #SEQUENTIAL_COUNT} (or {@link #RANDOM_COUNT})
 * operations timed as a whole ({@link Mode#SingleShotTime}), from the state the seed's test
 * starts each phase in; the score is the time of one batch. Operations per second are
 * {@code batch / score}. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is bytes per
 * operation.
 *
 * <pre>
 *   thread: [ source (hot, direct) ] --insert--> [ store: 200-400 MB working set ] --get--> [ destination (hot, direct) ]
 * </pre>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 3, jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:MaxDirectMemorySize=2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 10, batchSize = BlockCacheBenchmark.SEQUENTIAL_COUNT)
@Measurement(iterations = 15, batchSize = BlockCacheBenchmark.SEQUENTIAL_COUNT)
public class BlockCacheBenchmark {
    /** Entries per sequential phase: 20,000 x 10 KB = 200 MB, well outside the CPU caches. */
    public static final int SEQUENTIAL_COUNT = 20_000;
    /** Operations per random batch. */
    public static final int RANDOM_COUNT = 20_000;

    /**
     * Which store runs the workload. The block length is part of the kind, so that other block
     * lengths run beside the defaults and the baselines in one run without repeating the
     * baselines: {@code -p store=blockcache,blockcache-2k,memcpy,hashmap} ({@code blockcache}: the
     * cache's defaults; {@code blockcache-<N>k}: blocks of N KiB; {@code blockcache-<N>k-<M>k}: in
     * buffers of M KiB; see {@link ByteStore#create}).
     */
    @State(Scope.Benchmark)
    public static class Kind {
        @Param({"blockcache", "hashmap", "memcpy", "caffeine", "ohc", "rocksdb"})
        public String store;

        /**
         * Where the source and destination buffers start: {@value BlockCacheBenchmark#ALIGNMENT_AS_ALLOCATED} (the
         * default: as {@code Unpooled.directBuffer} allocates them) or a number of bytes past a
         * 64-byte boundary; see {@link BlockCacheBenchmark#bufferOf}.
         */
        @Param({ALIGNMENT_AS_ALLOCATED})
        public String alignment;
    }

    /**
     * Store and data of the sequential benchmarks (single-threaded: benchmark scope, since single-shot iterations may run on new threads).
     */
    @State(Scope.Benchmark)
    public static class Store {
        @Param({"10240"})
        public int entryLength;

        final SequentialFixture fixture = new SequentialFixture();

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            fixture.open(kind.store, SEQUENTIAL_COUNT, entryLength, kind.alignment);
        }

        @TearDown(Level.Trial)
        public void close() {
            fixture.close();
        }
    }

    /**
     * How many keys a sequential batch touches: {@code count} at the default batch size; fewer
     * when a short run (the CI smoke run's {@code -bs 200}) asks for smaller batches, so that its
     * fill does not write {@code count} entries for nothing.
     */
    static int keysPerBatch(final BenchmarkParams params, final int count) {
        int batch = params.getMeasurement().getCount() > 0 ? params.getMeasurement().getBatchSize() : 0;
        if (params.getWarmup().getCount() > 0) {
            batch = Math.max(batch, params.getWarmup().getBatchSize());
        }
        return Math.min(count, batch);
    }

    static ByteBuf sourceOf(final int length, final long seed) {
        return sourceOf(length, seed, ALIGNMENT_AS_ALLOCATED);
    }

    /** {@link #bufferOf}'s alignment that keeps the address {@code Unpooled.directBuffer} gives (malloc's: 16-byte aligned). */
    static final String ALIGNMENT_AS_ALLOCATED = "malloc";

    /**
     * @param alignment where the source starts: see {@link #bufferOf}.
     * @return {@code length} random bytes from {@code seed}, readable, in direct memory.
     */
    static ByteBuf sourceOf(final int length, final long seed, final String alignment) {
        final ByteBuf source = bufferOf(length, alignment);
        final byte[] random = new byte[length];
        new SplittableRandom(seed).nextBytes(random);
        return source.writeBytes(random);
    }

    /**
     * A direct buffer of {@code length} bytes (empty: writer index 0) whose first byte is at a
     * chosen distance past a 64-byte boundary. A copy on the benchmark machine is fastest when
     * its source and destination both start on a 64-byte boundary (docs/performance/block-cache.md,
     * "Where the buffers start"), and the cache's blocks start on 4 KB
     * boundaries, so the rows that copy in or out say where their buffers start instead of
     * taking whatever malloc gives the fork. Release it as any buffer (a slice releases its parent).
     *
     * @param alignment {@value #ALIGNMENT_AS_ALLOCATED}: as {@code Unpooled.directBuffer}
     *                  allocates it; or a number {@code n} in [0, 64): its address is {@code n}
     *                  past a multiple of 64.
     */
    static ByteBuf bufferOf(final int length, final String alignment) {
        if (ALIGNMENT_AS_ALLOCATED.equals(alignment)) {
            return Unpooled.directBuffer(length, length);
        }
        final int past = Integer.parseInt(alignment);
        if (past < 0 || past >= 64) {
            throw new IllegalArgumentException("alignment=" + alignment + ": expected " + ALIGNMENT_AS_ALLOCATED
                + " or a number of bytes in [0, 64)");
        }
        final ByteBuf parent = Unpooled.directBuffer(length + 64, length + 64);
        final int skip = (int) ((past - parent.memoryAddress()) & 63);
        return parent.slice(skip, length).clear();
    }

    /**
     * Sequential insert: starts each batch from an empty store.
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
     * Sequential get and delete: start each batch from a store holding every key.
     */
    @State(Scope.Benchmark)
    public static class Full {
        boolean filled;

        @Setup(Level.Iteration)
        public void fill(final Store s, final BenchmarkParams params) {
            if (!filled) {
                s.fixture.fill(keysPerBatch(params, SEQUENTIAL_COUNT));
                filled = true;
            }
            s.fixture.next = 0;
        }
    }

    /**
     * Sequential delete: puts back, after each batch, the keys the batch deleted (all of them at
     * the default batch size), so the next batch starts from a full store again.
     */
    @State(Scope.Benchmark)
    public static class Refill {
        @TearDown(Level.Iteration)
        public void refill(final Store s) {
            s.fixture.refill();
        }
    }

    /**
     * Random workload state: the store and the test's live keys ({@link RandomOps}).
     */
    @State(Scope.Benchmark)
    public static class Random {
        @Param({"10240", "102400"})
        public int randomEntryLength;

        final RandomFixture fixture = new RandomFixture(RANDOM_COUNT);

        @Setup(Level.Trial)
        public void open(final Kind kind) {
            // 60% of RANDOM_COUNT operations insert; the memcpy limit cycles over a 400 MB working set.
            fixture.open(kind.store, RANDOM_COUNT, randomEntryLength, (int)Math.min(RANDOM_COUNT, (400L << 20) / randomEntryLength),
                kind.alignment);
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

    @Benchmark
    public int sequentialInsert(final Store s, final Empty empty) {
        return s.fixture.insertNext();
    }

    @Benchmark
    public int sequentialGet(final Store s, final Full full) {
        return s.fixture.getNext();
    }

    @Benchmark
    public int sequentialDelete(final Store s, final Full full, final Refill refill) {
        return s.fixture.deleteNext();
    }

    @Benchmark
    @Warmup(iterations = 10, batchSize = RANDOM_COUNT)
    @Measurement(iterations = 15, batchSize = RANDOM_COUNT)
    public int random(final Random r) {
        return r.fixture.step();
    }

    /**
     * Steady state for {@code -prof gc}: insert an entry, copy it out, delete it. In average-time
     * mode JMH normalizes allocation per operation exactly: the block cache must show 0 B/op.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Warmup(iterations = 5, time = 1, batchSize = 1)
    @Measurement(iterations = 5, time = 1, batchSize = 1)
    public int insertCopyDelete(final Store s) {
        final SequentialFixture f = s.fixture;
        f.bytes.put(0, f.source);
        final int length = f.bytes.get(0, f.destination);
        f.bytes.remove(0);
        return length;
    }
}
