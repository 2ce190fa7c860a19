package io.streamcache.pravega.bench;

import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.contracts.AttributeUpdateCollection;
import io.pravega.segmentstore.contracts.ReadResult;
import io.pravega.segmentstore.contracts.ReadResultEntry;
import io.pravega.segmentstore.contracts.SegmentType;
import io.pravega.segmentstore.server.CachePolicy;
import io.pravega.segmentstore.server.SegmentContainer;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;
import io.streamcache.pravega.InProcessContainer;
import io.streamcache.pravega.StreamcacheCacheStorage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A whole Pravega segment container in-process ({@link InProcessContainer}) on Pravega's
 * {@code DirectMemoryCache} ({@code pravega}) and on ours ({@code streamcache}), end to end
 * through the container's API: 1 KB appends, {@link #APPEND_BATCH} in flight at a time
 * (appends per second), and 1 KB reads at random offsets of a cached 32 MB segment, copied out
 * (latency percentiles from {@link Mode#SampleTime}). Durability is Pravega's in-memory durable
 * data log, so the figures are the container's own costs, not a disk's.
 */
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@State(Scope.Benchmark)
public class SegmentContainerBenchmark {
    public static final int APPEND_BATCH = 100;
    private static final int LENGTH = 1024;
    private static final long CAPACITY = 256L << 20;
    private static final long READ_SEGMENT_BYTES = 32L << 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Param({"streamcache", "pravega"})
    public String impl;

    private InProcessContainer process;
    private SegmentContainer container;
    private BufferView data;
    private final String appended = "scope/stream/appended";
    private final String read = "scope/stream/read";
    private final CompletableFuture<?>[] inFlight = new CompletableFuture<?>[APPEND_BATCH];

    @Setup(Level.Trial)
    public void open() throws Exception {
        final CacheStorage cache = "streamcache".equals(impl) ? StreamcacheCacheStorage.create(CAPACITY) : new DirectMemoryCache(CAPACITY);
        // Appended data becomes evictable 2 s after it is flushed to tier-2: at ~100 MB/s of appends a
        // 60 s horizon fills the cache and Pravega's throttler then holds every append for 25 s.
        process = new InProcessContainer(cache, new CachePolicy(CAPACITY, 0.75, 0.9, Duration.ofSeconds(2), Duration.ofMillis(100)), 4);
        container = process.container();
        final byte[] bytes = new byte[LENGTH];
        new SplittableRandom(42).nextBytes(bytes);
        data = new ByteArraySegment(bytes);
        container.createStreamSegment(appended, SegmentType.STREAM_SEGMENT, Collections.emptyList(), TIMEOUT).join();
        container.createStreamSegment(read, SegmentType.STREAM_SEGMENT, Collections.emptyList(), TIMEOUT).join();
        final ByteArraySegment chunk = new ByteArraySegment(new byte[1 << 20]);
        for (long written = 0; written < READ_SEGMENT_BYTES; written += chunk.getLength()) {
            container.append(read, chunk, new AttributeUpdateCollection(), TIMEOUT).join();
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        process.close();
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(APPEND_BATCH)
    public void append() {
        for (int i = 0; i < APPEND_BATCH; i++) {
            inFlight[i] = container.append(appended, data, new AttributeUpdateCollection(), TIMEOUT);
        }
        CompletableFuture.allOf(inFlight).join();
    }

    /**
     * Per-thread read state: where to read and where to copy to.
     */
    @State(Scope.Thread)
    public static class Reader {
        final SplittableRandom random = new SplittableRandom(7);
        final ByteBuffer destination = ByteBuffer.allocateDirect(LENGTH);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public ByteBuffer read(final Reader reader) {
        final long offset = reader.random.nextLong(READ_SEGMENT_BYTES - LENGTH);
        reader.destination.clear();
        try (ReadResult result = container.read(read, offset, LENGTH, TIMEOUT).join()) {
            while (result.hasNext() && reader.destination.hasRemaining()) {
                final ReadResultEntry entry = result.next();
                entry.requestContent(TIMEOUT);
                entry.getContent().join().copyTo(reader.destination);
            }
        }
        return reader.destination;
    }
}
