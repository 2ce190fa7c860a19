package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.GenerationPolicy;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
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

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The segment layer's hot paths, single-threaded: 100-byte appends to one segment (the
 * latency workload of Pravega's streaming cache), and the tail read: a reader waiting at the end of the segment
 * woken by the append that brings its bytes, and the same with the copying read, which polls
 * into a reused buffer and allocates nothing. The baseline is the physical limit of an append: a
 * 100-byte memcpy into a ring of direct memory. The segment is truncated every 64 MB so the
 * cache never fills (truncation is part of the measured cost, amortized).
 */
@Fork(value = 3, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=1g"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@State(Scope.Benchmark)
public class SegmentStoreBenchmark {
    private static final int EVENT_LENGTH = 100;
    private static final long TRUNCATE_EVERY = 64L << 20;
    private static final long RING_LENGTH = 64L << 20;
    private static final String SEGMENT = "segment-0";
    /** Room of the reads: the view read's maxLength, the copying read's destination. */
    private static final int READ_ROOM = 4096;

    /** The manager's policy: with reader-aware every read also moves the reader the policy infers. */
    @Param({"generations"})
    public String policy;

    private BlockCache cache;
    private SegmentStore store;
    private ByteBuf event;
    /** The copying reads' destination, reused. */
    private ByteBuf destination;
    private long length;
    private long truncatedAt;
    private long ring;
    private long ringPosition;

    @Setup(Level.Trial)
    public void open() {
        cache = BlockCache.builder().capacity(256L << 20).registerMBean(false)
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER)).build(); // no first-touch faults measured
        store = SegmentStore.builder(cache)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO)
                .policy("reader-aware".equals(policy) ? new ReaderAwarePolicy() : new GenerationPolicy()))
            .build();
        store.create(SEGMENT);
        event = Unpooled.directBuffer(EVENT_LENGTH, EVENT_LENGTH).writeZero(EVENT_LENGTH);
        destination = Unpooled.directBuffer(READ_ROOM, READ_ROOM);
        // One event to start with, so that copyRead has bytes to read.
        length = store.append(SEGMENT, event) + EVENT_LENGTH;
        ring = UNSAFE.allocateMemory(RING_LENGTH);
        UNSAFE.setMemory(ring, RING_LENGTH, (byte)0);
    }

    @TearDown(Level.Trial)
    public void close() {
        store.close();
        cache.close();
        event.release();
        destination.release();
        UNSAFE.freeMemory(ring);
    }

    private void truncateNow() {
        if (length - truncatedAt >= TRUNCATE_EVERY) {
            store.truncate(SEGMENT, length);
            truncatedAt = length;
        }
    }

    /**
     * One 100-byte append; {@code -prof gc} shows its allocation per operation.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public long append() {
        final long offset = store.append(SEGMENT, event);
        length = offset + EVENT_LENGTH;
        truncateNow();
        return offset;
    }

    /**
     * The limit of an append: 100 bytes copied into direct memory.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public long memcpyBaseline() {
        final long position = ringPosition;
        UNSAFE.copyMemory(event.memoryAddress(), ring + position, EVENT_LENGTH);
        ringPosition = position + EVENT_LENGTH > RING_LENGTH - EVENT_LENGTH ? 0 : position + EVENT_LENGTH;
        return position;
    }

    /**
     * Tail read: a reader waits at the end of the segment, a 100-byte append wakes it with a
     * zero-copy view of the new bytes, the reader releases it. Sampled: p50 / p99 of the whole
     * round trip on one thread (the append completes the reader's future inline).
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int tailRead() {
        final CompletableFuture<ReadResult> waiting = store.readOrWait(SEGMENT, length, READ_ROOM, Duration.ofSeconds(10));
        length = store.append(SEGMENT, event) + EVENT_LENGTH;
        try (ReadResult result = waiting.join()) {
            truncateNow();
            return result.length();
        }
    }

    /**
     * Copying tail read: a 100-byte append, then a copying read of the new bytes from the
     * reader's offset into a reused direct buffer ({@code read(name, offset, ByteBuf)}: no
     * result, no view, no pin, nothing to release). Sampled like {@link #tailRead()}; the
     * reader polls instead of waiting on a future, which is the copying read's use: a reader
     * that owns its buffer. {@code -prof gc} shows it allocates nothing.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int copyTailRead() {
        final long offset = length;
        length = store.append(SEGMENT, event) + EVENT_LENGTH;
        destination.clear();
        final ReadStatus status = store.read(SEGMENT, offset, destination);
        truncateNow();
        return destination.writerIndex() + status.ordinal();
    }

    /**
     * The copying read alone: the last 100 bytes of the segment copied into a reused direct
     * buffer (END_OF_DATA); against {@link #memcpyBaseline()}, the cost of the lookup, the lock
     * and the bookkeeping around the copy.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int copyRead() {
        destination.clear();
        final ReadStatus status = store.read(SEGMENT, length - EVENT_LENGTH, destination);
        return destination.writerIndex() + status.ordinal();
    }

    /**
     * The view read alone, the counterpart of {@link #copyRead()}: the last 100 bytes as a
     * reference-counted zero-copy view, copied out of it into the same reused buffer, then the
     * result closed. Against {@link #copyRead()}: what the result, its pin and its leased buffer
     * cost; {@code -prof gc} gives the bytes a view read allocates.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int viewRead() {
        destination.clear();
        try (ReadResult result = store.read(SEGMENT, length - EVENT_LENGTH, READ_ROOM)) {
            destination.writeBytes(result.data(), 0, result.length());
            return destination.writerIndex() + result.status().ordinal();
        }
    }
}
