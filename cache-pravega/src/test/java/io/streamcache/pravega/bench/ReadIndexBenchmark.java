package io.streamcache.pravega.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pravega.common.util.BufferView;
import io.pravega.segmentstore.contracts.ReadResult;
import io.pravega.segmentstore.contracts.ReadResultEntry;
import io.pravega.segmentstore.server.CacheManager;
import io.pravega.segmentstore.server.CachePolicy;
import io.pravega.segmentstore.server.ReadIndex;
import io.pravega.segmentstore.server.UpdateableContainerMetadata;
import io.pravega.segmentstore.server.UpdateableSegmentMetadata;
import io.pravega.segmentstore.server.containers.StreamSegmentContainerMetadata;
import io.pravega.segmentstore.server.reading.ContainerReadIndexFactory;
import io.pravega.segmentstore.server.reading.ReadIndexConfig;
import io.pravega.segmentstore.storage.Storage;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;
import io.pravega.segmentstore.storage.mocks.InMemoryStorageFactory;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import io.streamcache.pravega.StreamcacheCacheStorage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

/**
 * Pravega's own read index ({@code ContainerReadIndex} from its factory, over its
 * {@link CacheManager}) on Pravega's {@code DirectMemoryCache} ({@code pravega}) and on ours
 * ({@code streamcache}): an append of {@code length} bytes then a read of them back, and a tail
 * read issued before the append that completes it. Each read copies its data out into a direct
 * buffer. The segment is deleted and a new one started every {@link #SEGMENT_BYTES} so that the
 * cache holds a bounded amount.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class ReadIndexBenchmark {
    /** Bytes a segment takes before it is deleted and a new one started. */
    public static final long SEGMENT_BYTES = 64L << 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Param({"streamcache", "pravega"})
    public String impl;

    @Param({"1024", "102400"})
    public int length;

    private ScheduledExecutorService executor;
    private UpdateableContainerMetadata metadata;
    private Storage storage;
    private CacheManager cacheManager;
    private ReadIndex readIndex;
    private UpdateableSegmentMetadata segment;
    private long nextSegmentId;
    private ByteBuf source;
    private BufferView data;
    private ByteBuffer destination;

    @Setup(Level.Trial)
    public void open() {
        executor = Executors.newScheduledThreadPool(2);
        metadata = new StreamSegmentContainerMetadata(0, 1000);
        storage = InMemoryStorageFactory.newStorage(executor);
        storage.initialize(1);
        final CacheStorage cache = "streamcache".equals(impl) ? StreamcacheCacheStorage.create(512L << 20) : new DirectMemoryCache(512L << 20);
        cacheManager = new CacheManager(CachePolicy.INFINITE, cache, executor);
        readIndex = new ContainerReadIndexFactory(ReadIndexConfig.builder().build(), cacheManager, executor).createReadIndex(metadata, storage);
        final byte[] bytes = new byte[length];
        new SplittableRandom(42).nextBytes(bytes);
        source = Unpooled.directBuffer(length, length).writeBytes(bytes);
        data = new ByteBufWrapper(source);
        destination = ByteBuffer.allocateDirect(length);
        newSegment();
    }

    @TearDown(Level.Trial)
    public void close() {
        readIndex.close();
        cacheManager.close();
        storage.close();
        executor.shutdownNow();
        source.release();
    }

    private void newSegment() {
        if (segment != null) {
            segment.markDeleted();
            readIndex.cleanup(List.of(segment.getId()));
        }
        final long id = nextSegmentId++;
        segment = metadata.mapStreamSegmentId("scope/stream/segment-" + id, id);
        segment.setLength(0);
        segment.setStorageLength(0);
    }

    private long append() throws Exception {
        if (segment.getLength() >= SEGMENT_BYTES) {
            newSegment();
        }
        final long offset = segment.getLength();
        segment.setLength(offset + length);
        readIndex.append(segment.getId(), offset, data);
        return offset;
    }

    @Benchmark
    public ByteBuffer appendThenRead() throws Exception {
        final long offset = append();
        destination.clear();
        try (ReadResult result = readIndex.read(segment.getId(), offset, length, TIMEOUT)) {
            while (result.hasNext() && destination.hasRemaining()) {
                final ReadResultEntry entry = result.next();
                entry.requestContent(TIMEOUT);
                entry.getContent().join().copyTo(destination);
            }
        }
        return destination;
    }

    @Benchmark
    public ByteBuffer tailRead() throws Exception {
        if (segment.getLength() >= SEGMENT_BYTES) {
            newSegment();
        }
        final long offset = segment.getLength();
        destination.clear();
        try (ReadResult result = readIndex.read(segment.getId(), offset, length, TIMEOUT)) {
            final ReadResultEntry entry = result.next();
            entry.requestContent(TIMEOUT);
            final CompletableFuture<BufferView> content = entry.getContent();
            append();
            readIndex.triggerFutureReads(List.of(segment.getId()));
            content.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).copyTo(destination);
        }
        return destination;
    }
}
