package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.GenerationPolicy;

import java.time.Duration;
import java.util.function.LongUnaryOperator;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * The operations of a few JMH rows as plain loops, for {@code bin/InProcessCompare.java}, which
 * loads two or more benchmark jars into one JVM (one class loader each, this class defined in
 * each from the same bytes) and alternates between them in short slices, so that a shared,
 * noisy machine falls on every jar alike. {@code create(name).applyAsLong(n)} runs {@code n}
 * operations and returns a checksum. Uses only what every jar of the day has (the public cache
 * and store API, {@link ByteStore}, {@link SequentialFixture}), so a jar built before this class
 * existed runs it too.
 *
 * <p>Workloads: {@code copyRead} ({@link SegmentStoreBenchmark#copyRead()}); {@code append}
 * ({@link SegmentStoreBenchmark#append()}); {@code copyRead-<N>k[-<M>k]} and
 * {@code append-<N>k[-<M>k]}: the same on a cache of N KiB blocks (buffers as
 * {@code blockcache-<N>k}'s, or of M KiB); {@code steady-KIND}
 * ({@link HotBlockCacheBenchmark#steadyInsertCopyDelete}); {@code get-KIND} (one copy per
 * operation, sweeping 1,000 entries of 10 KB in key order, as
 * {@link HotBlockCacheBenchmark#sequentialGet}), KIND one of {@link ByteStore}'s kinds;
 * {@code raw-STRIDE}: no cache at all, 10 KB copied out of slots {@code STRIDE} bytes apart
 * (4 KB-aligned), sweeping 1,000 of them: the memory side of a get with the block cache's layout
 * (12288: a 10 KB entry in three 4 KB blocks) or memcpy's and 2 KB blocks' (10240); {@code insert-KIND}
 * ({@link HotBlockCacheBenchmark#sequentialInsert}: 1,000 inserts of 10 KB into an empty store,
 * then the 1,000 deletes that empty it again, untimed only in JMH: here both count, as 2,000
 * operations); {@code random10K-KIND} and {@code random100K-KIND}
 * ({@link HotBlockCacheBenchmark#random10K}, {@link HotBlockCacheBenchmark#random100K}: the
 * seed's random test in batches of 2,500 and 250 operations, each batch followed by the deletes
 * that empty the store, which here are timed with it); {@code randomLarge10K-KIND} and
 * {@code randomLarge100K-KIND} ({@link BlockCacheBenchmark#random}: batches of 20,000 on the large
 * working set, memcpy over 200 and 400 MB, the emptying deletes timed as above).
 *
 * <p>Not thread-safe: one thread runs a workload.
 */
public final class InProcessWorkloads {
    private static final int ENTRY_LENGTH = 10_240;
    private static final int HOT_COUNT = HotBlockCacheBenchmark.HOT_COUNT;

    private InProcessWorkloads() {
    }

    /**
     * @param name a workload (see the class comment).
     * @return its loop.
     * @throws IllegalArgumentException if there is no such workload.
     */
    public static LongUnaryOperator create(final String name) {
        if ("copyRead".equals(name)) {
            return new CopyRead(null);
        }
        if ("append".equals(name)) {
            return new Append(null);
        }
        if (name.startsWith("copyRead-")) {
            return new CopyRead(geometry(name.substring("copyRead-".length())));
        }
        if (name.startsWith("append-")) {
            return new Append(geometry(name.substring("append-".length())));
        }
        if (name.startsWith("insert-")) {
            return new Insert(name.substring("insert-".length()));
        }
        if (name.startsWith("random10K-")) {
            return new Random(name.substring("random10K-".length()), HotBlockCacheBenchmark.RANDOM_COUNT, ENTRY_LENGTH, HOT_COUNT);
        }
        if (name.startsWith("random100K-")) {
            return new Random(name.substring("random100K-".length()), HotBlockCacheBenchmark.RANDOM_COUNT_100K, 102_400, 100);
        }
        if (name.startsWith("randomLarge10K-")) {
            return new Random(name.substring("randomLarge10K-".length()), BlockCacheBenchmark.RANDOM_COUNT, ENTRY_LENGTH,
                BlockCacheBenchmark.RANDOM_COUNT);
        }
        if (name.startsWith("randomLarge100K-")) {
            return new Random(name.substring("randomLarge100K-".length()), BlockCacheBenchmark.RANDOM_COUNT, 102_400,
                (int)((400L << 20) / 102_400));
        }
        if (name.startsWith("steady-")) {
            return new Steady(name.substring("steady-".length()));
        }
        if (name.startsWith("get-")) {
            return new Get(name.substring("get-".length()));
        }
        if (name.startsWith("raw-")) {
            return new Raw(Integer.parseInt(name.substring("raw-".length())));
        }
        throw new IllegalArgumentException("workload=" + name + " is not copyRead[-<N>k[-<M>k]], append[-<N>k[-<M>k]], steady-KIND, get-KIND, "
            + "raw-STRIDE, insert-KIND, random10K-KIND, random100K-KIND, randomLarge10K-KIND or randomLarge100K-KIND");
    }

    /** @return the block and buffer lengths of {@code <N>k} or {@code <N>k-<M>k}, as {@link BlockCacheStore#geometryOf} reads them. */
    private static int[] geometry(final String suffix) {
        final int[] geometry = BlockCacheStore.geometryOf("blockcache-" + suffix);
        if (geometry == null) {
            throw new IllegalArgumentException("geometry=" + suffix + " is not <N>k or <N>k-<M>k with N and M powers of two");
        }
        return geometry;
    }

    /**
     * The store the copyRead and append workloads run on: a 256 MiB cache committed up front, the
     * generation policy, no MBeans; {@code geometry} the block and buffer lengths, or null for the
     * cache's defaults.
     */
    private static SegmentStore newStore(final int[] geometry) {
        final BlockCache.Builder builder = BlockCache.builder().capacity(256L << 20).registerMBean(false)
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER));
        if (geometry != null) {
            builder.blockLength(geometry[0]).bufferLength(geometry[1]);
        }
        final BlockCache cache = builder.build();
        return SegmentStore.builder(cache)
            .cacheManager(CacheManager.builder(cache).registerMBean(false).generationPeriod(Duration.ZERO)
                .policy(new GenerationPolicy()))
            .build();
    }

    /** {@link SegmentStoreBenchmark#copyRead()}: the last 100 bytes of a segment, copied into a reused buffer. */
    private static final class CopyRead implements LongUnaryOperator {
        private static final String SEGMENT = "segment-0";
        private final SegmentStore store;
        private final ByteBuf destination = Unpooled.directBuffer(4096, 4096);
        private final long length;

        CopyRead(final int[] geometry) {
            store = newStore(geometry);
            store.create(SEGMENT);
            final ByteBuf event = Unpooled.directBuffer(100, 100).writeZero(100);
            length = store.append(SEGMENT, event) + 100;
            event.release();
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                destination.clear();
                final ReadStatus status = store.read(SEGMENT, length - 100, destination);
                sum += destination.writerIndex() + status.ordinal();
            }
            return sum;
        }
    }

    /**
     * {@link SegmentStoreBenchmark#append()}: 100-byte appends to one segment, truncated every
     * 64 MiB (so that the 256 MiB cache never fills); a new index entry every 1 MiB.
     */
    private static final class Append implements LongUnaryOperator {
        private static final String SEGMENT = "segment-0";
        private static final long TRUNCATE_EVERY = 64L << 20;
        private final SegmentStore store;
        private final ByteBuf event = Unpooled.directBuffer(100, 100).writeZero(100);
        private long truncatedAt;

        Append(final int[] geometry) {
            store = newStore(geometry);
            store.create(SEGMENT);
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                final long length = store.append(SEGMENT, event) + 100;
                if (length - truncatedAt >= TRUNCATE_EVERY) {
                    store.truncate(SEGMENT, length);
                    truncatedAt = length;
                }
                sum += length;
            }
            return sum;
        }
    }

    /** {@link HotBlockCacheBenchmark#steadyInsertCopyDelete}: delete, insert, copy out another. */
    private static final class Steady implements LongUnaryOperator {
        private final ByteStore bytes;
        private final ByteBuf source = BlockCacheBenchmark.sourceOf(ENTRY_LENGTH, 11);
        private final ByteBuf destination = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH);
        private int next;

        Steady(final String kind) {
            bytes = ByteStore.create(kind, HOT_COUNT, ENTRY_LENGTH, HOT_COUNT);
            for (int key = 0; key < HOT_COUNT; key++) {
                bytes.put(key, source);
            }
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                final int key = next;
                next = key + 1 == HOT_COUNT ? 0 : key + 1;
                bytes.remove(key);
                bytes.put(key, source);
                sum += bytes.get(key < HOT_COUNT / 2 ? key + HOT_COUNT / 2 : key - HOT_COUNT / 2, destination);
            }
            return sum;
        }
    }

    /** {@link HotBlockCacheBenchmark#sequentialGet}: copies in key order over 1,000 entries of 10 KB. */
    private static final class Get implements LongUnaryOperator {
        private final SequentialFixture fixture = new SequentialFixture();

        Get(final String kind) {
            fixture.open(kind, HOT_COUNT, ENTRY_LENGTH);
            fixture.fill(HOT_COUNT);
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                sum += fixture.getNext();
            }
            return sum;
        }
    }

    /** {@link HotBlockCacheBenchmark#sequentialInsert}: 1,000 inserts into an empty store, then the deletes that empty it. */
    private static final class Insert implements LongUnaryOperator {
        private final SequentialFixture fixture = new SequentialFixture();
        private boolean deleting;

        Insert(final String kind) {
            fixture.open(kind, HOT_COUNT, ENTRY_LENGTH);
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                if (!deleting) {
                    sum += fixture.insertNext();
                    if (fixture.next == HOT_COUNT) {
                        deleting = true;
                        fixture.next = 0;
                    }
                } else {
                    sum += fixture.deleteNext();
                    if (fixture.next == HOT_COUNT) {
                        deleting = false;
                        fixture.next = 0;
                    }
                }
            }
            return sum;
        }
    }

    /** The seed's random test in batches of {@code batch} operations, each followed by the deletes that empty the store. */
    private static final class Random implements LongUnaryOperator {
        private final RandomFixture fixture;
        private final int batch;
        private int done;

        Random(final String kind, final int batch, final int entryLength, final int slotCount) {
            this.batch = batch;
            fixture = new RandomFixture(batch);
            fixture.open(kind, batch, entryLength, slotCount);
        }

        @Override
        public long applyAsLong(final long n) {
            long sum = 0;
            for (long i = 0; i < n; i++) {
                sum += fixture.step();
                if (++done == batch) {
                    fixture.reset();
                    done = 0;
                }
            }
            return sum;
        }
    }

    /** 10 KB copied out of 1,000 slots {@code stride} bytes apart, in order: no cache, only its layout. */
    private static final class Raw implements LongUnaryOperator {
        private final long base;
        private final int stride;
        private final ByteBuf destination = Unpooled.directBuffer(ENTRY_LENGTH, ENTRY_LENGTH);
        private int next;

        Raw(final int stride) {
            if (stride < ENTRY_LENGTH) {
                throw new IllegalArgumentException("stride=" + stride + " is less than the entry length " + ENTRY_LENGTH);
            }
            this.stride = stride;
            // Never freed: one per workload and JVM. Page-aligned, as the cache's blocks are.
            final long raw = UNSAFE.allocateMemory((long)HOT_COUNT * stride + 4096);
            base = (raw + 4095) & ~4095L;
            UNSAFE.setMemory(base, (long)HOT_COUNT * stride, (byte)7);
        }

        @Override
        public long applyAsLong(final long n) {
            final long to = destination.memoryAddress();
            long sum = 0;
            for (long i = 0; i < n; i++) {
                final int key = next;
                next = key + 1 == HOT_COUNT ? 0 : key + 1;
                UNSAFE.copyMemory(base + (long)key * stride, to, ENTRY_LENGTH);
                sum += key;
            }
            return sum;
        }
    }
}
