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

import java.util.concurrent.TimeUnit;

/**
 * The seed's random 100 KB test at a broker's scale of live data. {@link BlockCacheBenchmark}'s
 * random test keeps at most ~1 GB live in a 3 GB heap, where a {@code HashMap<Integer, byte[]>}
 * collects cheaply and the comparison is copy against copy. Pravega's run inserted 60 GB through
 * a live set that grew to ~20 GB: the HashMap's cost there was its garbage collector, copying
 * survivors that live until a random delete. This benchmark recreates that ratio on this
 * machine: one batch of {@link #OPERATIONS} operations from an empty store (60% insert / 40%
 * delete, each operation also copying out a random live entry) grows the live set to ~4 GB,
 * half the HashMap's 8 GB heap, as a broker's heap would be sized.
 *
 * <pre>
 *   live set (entries x 100 KB) over one batch:
 *   4 GB |                                   ____----
 *        |                     ____----''''
 *        |       ____----''''
 *      0 |--''''                                    (heap: 8 GB; block cache: 5 GB direct)
 *        +-----------------------------------------> 200,000 operations
 * </pre>
 *
 * <p>Single-shot batches, 2 forks x 4 measured batches: each batch takes seconds. One benchmark
 * thread; the stores are not shared.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms8g", "-Xmx8g", "-XX:MaxDirectMemorySize=6g"})
@Warmup(iterations = 1, batchSize = LargeLiveSetBenchmark.OPERATIONS)
@Measurement(iterations = 4, batchSize = LargeLiveSetBenchmark.OPERATIONS)
public class LargeLiveSetBenchmark {
    /** Operations per batch: about 40,000 entries (4 GB at 100 KB) are live at its end. */
    public static final int OPERATIONS = 200_000;
    /** Block cache capacity: the largest live set of a batch plus room for its drift. */
    static final long CACHE_CAPACITY = 5L << 30;

    /**
     * The store and the test's live keys ({@link RandomOps}).
     */
    @State(Scope.Benchmark)
    public static class Live {
        @Param({"blockcache", "hashmap", "memcpy"})
        public String store;

        @Param({"102400"})
        public int entryLength;

        ByteStore bytes;
        ByteBuf source;
        ByteBuf destination;
        final RandomOps ops = new RandomOps(0, OPERATIONS, 0);

        @Setup(Level.Trial)
        public void open() {
            if ("blockcache".equals(store)) {
                bytes = new BlockCacheStore(OPERATIONS, CACHE_CAPACITY);
            } else {
                // The memcpy limit cycles over a 400 MB working set, as in BlockCacheBenchmark.
                bytes = ByteStore.create(store, OPERATIONS, entryLength, (int)((400L << 20) / entryLength));
            }
            source = BlockCacheBenchmark.sourceOf(entryLength, 11);
            destination = Unpooled.directBuffer(entryLength, entryLength);
        }

        /** Every batch starts from an empty store, as the seed's test did. */
        @Setup(Level.Iteration)
        public void empty() {
            ops.empty(bytes);
        }

        @TearDown(Level.Trial)
        public void close() {
            empty();
            bytes.close();
            source.release();
            destination.release();
        }

    }

    @Benchmark
    public int random(final Live l) {
        return l.ops.step(l.bytes, l.source, l.destination);
    }
}
