package io.streamcache.pravega.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pravega.common.util.BufferView;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;
import io.pravega.shared.protocol.netty.ByteBufWrapper;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.pravega.StreamcacheCacheStorage;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
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
 * The seed's cache test through Pravega's {@link CacheStorage} interface: Pravega's
 * {@code DirectMemoryCache} ({@code pravega}), streamcache behind the adapter
 * ({@code streamcache}) and streamcache's block cache through its own API ({@code blockcache},
 * the adapter's floor). Each invocation is one operation of the row; run with {@code -prof gc}
 * for bytes per operation ({@code gc.alloc.rate.norm}).
 *
 * <ul>
 *   <li>{@code insertCopyDelete}: insert an entry, copy it out whole into a direct buffer,
 *       delete it (the seed's sequential phases, one entry at a time).</li>
 *   <li>{@code random}: from a live set of at most {@link #LIVE_BYTES} bytes, 60% insert / 40%
 *       delete of a random live entry, each followed by a copying read of a random live entry.</li>
 *   <li>{@code append100}: a 100-byte append to the current entry; when its last block has no
 *       room, the entry is deleted and a new empty one started (as Pravega's read index starts
 *       a new entry; through our own API the entry simply grows, up to 1 MB).</li>
 * </ul>
 * Sources are Netty direct buffers wrapped as Pravega wraps appends from the wire
 * ({@link ByteBufWrapper}); the view's own {@code collect}/{@code copyTo} allocation is counted
 * for both Pravega implementations alike. The warm-up is long on purpose: Pravega's
 * {@code ByteBufWrapper.collect} costs ~1.5 us until C2 compiles it (~26 ns after), which takes
 * a few million calls. The heap is pre-touched: without it, the rows that allocate spend their
 * first seconds faulting in fresh young-generation pages, which on a loaded machine made them
 * 5-20x slower and erratic while the rows that allocate nothing were not affected.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=2g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class CacheStorageBenchmark {
    /** Bound of the random row's live set. */
    public static final long LIVE_BYTES = 128L << 20;
    private static final long CAPACITY = 384L << 20;

    @Param({"streamcache", "pravega", "blockcache"})
    public String impl;

    @Param({"10240", "102400"})
    public int entryLength;

    private CacheStorage storage;
    private BlockCache cache;
    private ByteBuf source;
    private BufferView sourceView;
    private BufferView appendView;
    private ByteBuf appendSource;
    private ByteBuffer destination;
    private int[] live;
    private int liveCount;
    private SplittableRandom random;
    private int appendAddress;
    private int appendLength;

    @Setup(Level.Trial)
    public void open() {
        if ("blockcache".equals(impl)) {
            cache = BlockCache.builder().capacity(CAPACITY).region(DirectMemoryRegion.factory()).registerMBean(false).build();
        } else if ("streamcache".equals(impl)) {
            storage = StreamcacheCacheStorage.create(CAPACITY);
        } else if ("pravega".equals(impl)) {
            storage = new DirectMemoryCache(CAPACITY);
        } else {
            throw new IllegalArgumentException("impl=" + impl);
        }
        final byte[] bytes = new byte[entryLength];
        new SplittableRandom(42).nextBytes(bytes);
        source = Unpooled.directBuffer(entryLength, entryLength).writeBytes(bytes);
        sourceView = new ByteBufWrapper(source);
        appendSource = Unpooled.directBuffer(100, 100).writeBytes(bytes, 0, 100);
        appendView = new ByteBufWrapper(appendSource);
        destination = ByteBuffer.allocateDirect(entryLength);
        live = new int[(int)(LIVE_BYTES / entryLength)];
        random = new SplittableRandom(7);
        appendAddress = insert();
        appendLength = 0;
        delete(appendAddress);
        appendAddress = "blockcache".equals(impl) ? cache.insert(Unpooled.EMPTY_BUFFER) : storage.insert(BufferView.empty());
    }

    @TearDown(Level.Trial)
    public void close() {
        if (cache != null) {
            cache.close();
        } else {
            storage.close();
        }
        source.release();
        appendSource.release();
    }

    private int insert() {
        return cache != null ? cache.insert(source) : storage.insert(sourceView);
    }

    private void copy(final int address) {
        destination.clear();
        if (cache != null) {
            cache.copyTo(address, 0, destination);
        } else {
            storage.get(address).copyTo(destination);
        }
    }

    private void delete(final int address) {
        if (cache != null) {
            cache.delete(address);
        } else {
            storage.delete(address);
        }
    }

    @Benchmark
    public ByteBuffer insertCopyDelete() {
        final int address = insert();
        copy(address);
        delete(address);
        return destination;
    }

    @Benchmark
    public ByteBuffer random() {
        final boolean insert = liveCount == 0 || (liveCount < live.length && random.nextInt(10) < 6);
        if (insert) {
            live[liveCount++] = insert();
        } else {
            final int index = random.nextInt(liveCount);
            delete(live[index]);
            live[index] = live[--liveCount];
        }
        if (liveCount > 0) {
            copy(live[random.nextInt(liveCount)]);
        }
        return destination;
    }

    @Benchmark
    public int append100() {
        if (cache != null) {
            if (appendLength >= 1 << 20) {
                cache.delete(appendAddress);
                appendAddress = cache.insert(Unpooled.EMPTY_BUFFER);
                appendLength = 0;
            }
            appendAddress = cache.append(appendAddress, appendSource);
        } else {
            if (storage.getAppendableLength(appendLength) < 100) {
                storage.delete(appendAddress);
                appendAddress = storage.insert(BufferView.empty());
                appendLength = 0;
            }
            storage.append(appendAddress, appendLength, appendView);
        }
        appendLength += 100;
        return appendAddress;
    }
}
