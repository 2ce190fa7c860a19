package io.streamcache.segmentstore;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The hand-off of a read whose segment's lock another thread holds ({@code readAsync},
 * {@code readOrWait} and {@code readThrough} hand such a read to the store's read-timeouts
 * thread rather than wait for the lock): one read handed off and its future joined, the read
 * itself a result at once, so that {@code -prof gc} gives what the hand-off alone allocates.
 * In the segment store's package (the hand-off is internal), on the classpath of this jar.
 */
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Benchmark)
public class ReadHandOffBenchmark {
    private static final String SEGMENT = "segment-0";

    private ScheduledThreadPoolExecutor thread;
    private HandedOffReads handedOff;
    private CompletableFuture<ReadResult> done;
    private long offset;

    @Setup(Level.Trial)
    public void open() {
        thread = new ScheduledThreadPoolExecutor(1);
        handedOff = new HandedOffReads("bench", new IsolationCounters(), thread);
        done = CompletableFuture.completedFuture(ReadResult.empty(SEGMENT, 0, ReadStatus.END_OF_DATA));
    }

    @TearDown(Level.Trial)
    public void close() {
        thread.shutdownNow();
    }

    /** What the hand-off issues, made once as the store makes its issuers. */
    private final HandedOffReads.Issuer read = (name, segment, at, maxLength, timeoutNanos, budget) ->
        at < 0 || maxLength < 0 || name == null ? null : done;

    /** One read handed off, as the store's read calls hand theirs, and joined. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int handOff() {
        return handedOff.handOff(read, SEGMENT, null, offset++, 4096, 0L, null).join().length();
    }
}
