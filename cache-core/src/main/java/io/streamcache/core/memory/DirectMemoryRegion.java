package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * A region in native memory counted as JVM direct memory, the default; opened and closed by
 * one thread, its buffers and getters usable from any thread in between.
 *
 * <p><b>Threading:</b> see {@link MemoryRegion}: opened and closed by one thread.
 *
 * <p>By default ({@link Commit#ON_DEMAND}) the factory opens an {@link OnDemandRegion}
 * instead: no memory at open, each buffer allocated by the JDK when the cache first needs it,
 * counted in the JDK's direct memory. What follows is about the other commits, which take the
 * whole region when it opens.
 *
 * <p>The region's memory counts against {@code -XX:MaxDirectMemorySize}: it checks that limit
 * before allocating and fails with a {@link CacheConfigurationException} that names it, instead of
 * letting an {@link OutOfMemoryError} surface later. Memory is allocated in chunks of at most
 * 1 GiB, each page-aligned (one extra page per chunk for the alignment; that page holds neither
 * data nor metadata).
 *
 * <h2>Commit</h2>
 * {@link ByteBuffer#allocateDirect} zeroes what it allocates, which touches every page: on a
 * virtual machine whose first touch of a page costs a fault into the hypervisor, building a 4 GiB
 * cache took 15-18 s, all of it page faults. So by default ({@link Commit#LAZY}) the chunks are
 * taken with {@code Unsafe.allocateMemory} (malloc: the kernel maps pages on first write, zeroed)
 * and wrapped as direct buffers; opening a region of any size then takes milliseconds and each
 * page is committed when the cache first writes into it. That memory is not in the JDK's direct
 * buffer pool, so the region keeps its own count ({@link #usedDirectMemory()} adds it) and the
 * limit check covers both. {@link Commit#EAGER} keeps the JDK allocation: every page committed
 * (and counted by the JDK) when the region opens, so an overcommitted machine fails at the build
 * rather than at a later first write. {@link Commit#BACKGROUND} allocates like {@code LAZY} and
 * opens as fast, then commits every page on a thread of its own ({@code BackgroundCommit}, role
 * {@link StreamcacheThreads.Role#MEMORY_COMMIT}), ahead of the cache's first writes, without
 * changing a byte the cache may already have written:
 *
 * <pre>
 *  commit      open (4 GiB)     first write into a page            resident after open
 *  LAZY        milliseconds     page fault on the writing thread   only the pages written
 *  BACKGROUND  milliseconds     none once the committer passed it  all, within ~0.35 s/GiB here
 *  EAGER       seconds          none                               all
 * </pre>
 *
 * <p>A store with a log writes into the cache on its one completion thread, which every durable
 * append waits for: with {@code LAZY}, a new store's first pass over the cache pays one page
 * fault per page there. {@code BACKGROUND} moves them to a thread no append waits for.
 */
public final class DirectMemoryRegion extends BufferArrayRegion {
    private static final Logger LOG = LoggerFactory.getLogger(DirectMemoryRegion.class);

    /** Bytes of every open lazily committed region in this JVM (not in the JDK's direct buffer pool). */
    private static final AtomicLong RESERVED = new AtomicLong();
    /** Serializes the limit check and the reservation of lazily committed regions being opened. */
    private static final Object RESERVATION_LOCK = new Object();

    /**
     * When the region's pages are committed.
     */
    public enum Commit {
        /**
         * Each buffer allocated with {@link ByteBuffer#allocateDirect} when the cache first needs
         * it, lowest first ({@link OnDemandRegion}): the region opens in microseconds with
         * no memory, the JDK counts every buffer in its direct memory, so
         * {@code -XX:MaxDirectMemorySize} bounds the cache together with the process's other
         * direct buffers, and a cache holds only the buffers it has filled. The default. A
         * resizable tier gets {@link #EAGER}'s per-buffer allocation (counted by the JDK too).
         */
        ON_DEMAND,
        /**
         * On the cache's first write into each page; the region opens in milliseconds. The memory
         * is taken with {@code Unsafe.allocateMemory}, outside the JDK's direct-memory count: the
         * region keeps its own count ({@link #usedDirectMemory()}) and checks it at open, but the
         * JDK does not see it, so the process's direct memory may reach the cache's capacity plus
         * {@code MaxDirectMemorySize}.
         */
        LAZY,
        /** All when the region opens ({@link ByteBuffer#allocateDirect}, which zeroes every page). */
        EAGER,
        /**
         * All, on a thread of the region's own after it opens (which takes milliseconds, as with
         * {@link #LAZY}); the thread ends once every page is committed, and {@code close} stops
         * it before the memory is freed. Fixed-size regions only: a resizable tier refuses it.
         */
        BACKGROUND
    }

    private final Commit commit;
    /** EAGER: the JDK's buffers, one per chunk. */
    private final ByteBuffer[] chunks;
    /** LAZY: the addresses {@code Unsafe.allocateMemory} returned, one per chunk (0: none or freed). */
    private final long[] allocations;
    /** LAZY, BACKGROUND: bytes added to {@link #RESERVED}, taken back once by {@link #release()}. */
    private long reserved;
    /** BACKGROUND: the committing thread's task, null otherwise or if it could not start. */
    private BackgroundCommit background;

    private DirectMemoryRegion(final int bufferCount, final int bufferLength, final Commit commit,
                               final StreamcacheThreads threads) {
        super(bufferCount, bufferLength);
        this.commit = commit;
        final int perChunk = Regions.buffersPerChunk(bufferCount, bufferLength);
        final int chunkCount = (bufferCount + perChunk - 1) / perChunk;
        final long needed = (long)bufferCount * bufferLength + (long)chunkCount * Regions.ALIGNMENT;
        this.chunks = new ByteBuffer[commit == Commit.EAGER ? chunkCount : 0];
        this.allocations = new long[commit != Commit.EAGER ? chunkCount : 0];
        final long[] ranges = new long[commit == Commit.BACKGROUND ? 2 * chunkCount : 0];
        if (commit != Commit.EAGER) {
            synchronized (RESERVATION_LOCK) {
                checkDirectMemoryLimit(needed);
                RESERVED.addAndGet(needed);
                reserved = needed;
            }
        } else {
            checkDirectMemoryLimit(needed);
        }
        try {
            for (int c = 0; c < chunkCount; c++) {
                final int inChunk = Math.min(perChunk, bufferCount - c * perChunk);
                final long chunkLength = (long)inChunk * bufferLength + Regions.ALIGNMENT;
                final ByteBuffer aligned;
                if (commit == Commit.EAGER) {
                    chunks[c] = ByteBuffer.allocateDirect((int)chunkLength);
                    final long address = BufferUtil.address(chunks[c]);
                    final int skip = (int)((Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1));
                    aligned = chunks[c].duplicate().position(skip).limit(skip + inChunk * bufferLength).slice();
                } else {
                    allocations[c] = allocate(chunkLength, needed);
                    final long address = allocations[c];
                    final long skip = (Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1);
                    aligned = Regions.wrap(address + skip, inChunk * bufferLength);
                    if (ranges.length > 0) {
                        ranges[2 * c] = address + skip;
                        ranges[2 * c + 1] = (long)inChunk * bufferLength;
                    }
                }
                for (int i = 0; i < inChunk; i++) {
                    buffers[c * perChunk + i] = Regions.slice(aligned, i, bufferLength);
                }
            }
            if (ranges.length > 0) {
                background = new BackgroundCommit(threads, "direct-" + bufferCount + "x" + bufferLength, ranges);
                background.start();
            }
        } catch (final OutOfMemoryError e) {
            release();
            throw new CacheConfigurationException("direct memory region of " + needed + " bytes could not be allocated ("
                + e.getMessage() + "): raise -XX:MaxDirectMemorySize, lower the cache capacity, or use a mapped-file region", e);
        } catch (final RuntimeException e) {
            release();
            throw e;
        }
        LOG.info("direct memory region: {} buffers x {} bytes in {} chunks, commit={}", bufferCount, bufferLength, chunkCount, commit);
    }

    private static long allocate(final long length, final long needed) {
        try {
            return UNSAFE.allocateMemory(length);
        } catch (final OutOfMemoryError e) {
            throw new CacheConfigurationException("direct memory region of " + needed + " bytes could not be allocated: "
                + "the operating system refused a chunk of " + length + " bytes (" + e.getMessage() + "): lower the cache "
                + "capacity or use a mapped-file region", e);
        }
    }

    /**
     * @return a factory of direct memory regions whose buffers are allocated as the cache first
     *         needs them, counted by the JDK ({@link Commit#ON_DEMAND}).
     */
    public static MemoryRegionFactory factory() {
        return factory(Commit.ON_DEMAND);
    }

    /**
     * @param commit when the pages are committed.
     * @return a factory of direct memory regions.
     */
    public static MemoryRegionFactory factory(final Commit commit) {
        return factory(commit, StreamcacheThreads.defaults());
    }

    /**
     * @param commit  when the pages are committed.
     * @param threads creates the committing thread of a {@link Commit#BACKGROUND} region (role
     *                {@link StreamcacheThreads.Role#MEMORY_COMMIT}, owner {@code direct-<buffers>x<length>}).
     * @return a factory of direct memory regions.
     */
    public static MemoryRegionFactory factory(final Commit commit, final StreamcacheThreads threads) {
        Objects.requireNonNull(commit, "commit");
        Objects.requireNonNull(threads, "threads");
        return new Factory(commit, threads);
    }

    /** Opens fixed regions, or {@link ResizableDirectRegion}s for a tier with a maximum capacity. */
    private record Factory(Commit commit, StreamcacheThreads threads) implements MemoryRegionFactory {
        @Override
        public MemoryRegion open(final int bufferCount, final int bufferLength) {
            if (commit == Commit.ON_DEMAND) {
                return new OnDemandDirectRegion(bufferCount, bufferLength);
            }
            return new DirectMemoryRegion(bufferCount, bufferLength, commit, threads);
        }

        @Override
        public ResizableRegion openResizable(final int onlineCount, final int maxBufferCount, final int bufferLength) {
            if (commit == Commit.BACKGROUND) {
                throw new CacheConfigurationException("commit=BACKGROUND is for a tier of fixed size: a resizable tier's "
                    + "buffers come and go while the cache runs; use LAZY or EAGER, or leave the tier's maxCapacity unset");
            }
            return new ResizableDirectRegion(onlineCount, maxBufferCount, bufferLength,
                commit == Commit.ON_DEMAND ? Commit.EAGER : commit);
        }
    }

    /**
     * Counts {@code bytes} of lazily committed memory as direct memory in use, after checking
     * them against {@code -XX:MaxDirectMemorySize} (and, with {@code checkContainer}, the
     * container's limit).
     *
     * @throws CacheConfigurationException if they do not fit; nothing is counted.
     */
    static void reserve(final long bytes, final boolean checkContainer) {
        synchronized (RESERVATION_LOCK) {
            if (checkContainer) {
                checkDirectMemoryLimit(bytes);
            } else {
                final long max = maxDirectMemory();
                final long available = max - usedDirectMemory();
                if (bytes > available) {
                    throw new CacheConfigurationException("direct memory region needs " + bytes + " more bytes but only "
                        + available + " of MaxDirectMemorySize=" + max + " are available: raise -XX:MaxDirectMemorySize "
                        + "or grow the cache less");
                }
            }
            RESERVED.addAndGet(bytes);
        }
    }

    /** Takes back what {@link #reserve} counted. */
    static void unreserve(final long bytes) {
        RESERVED.addAndGet(-bytes);
    }

    /**
     * @return the JVM's direct memory limit in bytes ({@code -XX:MaxDirectMemorySize}, or the
     *         maximum heap when the flag is not set, as the JDK does).
     */
    public static long maxDirectMemory() {
        return Limits.MAX;
    }

    /**
     * The JVM's direct-memory limit (fixed for the JVM's life) and its direct buffer pool, looked
     * up once: an on-demand region checks them for every buffer it allocates, on the allocating
     * thread, and the platform MXBean lookups allocate.
     */
    private static final class Limits {
        static final long MAX = readMaxDirectMemory();
        static final BufferPoolMXBean DIRECT = directPool();

        private static BufferPoolMXBean directPool() {
            for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                if ("direct".equals(pool.getName())) {
                    return pool;
                }
            }
            return null;
        }
    }

    private static long readMaxDirectMemory() {
        try {
            final com.sun.management.HotSpotDiagnosticMXBean hotspot =
                ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            final long value = Long.parseLong(hotspot.getVMOption("MaxDirectMemorySize").getValue());
            return value > 0 ? value : Runtime.getRuntime().maxMemory();
        } catch (final RuntimeException e) {
            return Runtime.getRuntime().maxMemory();
        }
    }

    /**
     * The direct memory this process can give caches: the JVM's limit ({@link #maxDirectMemory()}),
     * lowered to what the container (cgroup) or the machine leaves after the heap's maximum and
     * the JVM overhead the build-time check assumes (about 384 MB) when that is less. Integrations derive their default
     * capacities from it (a fraction each), as BookKeeper's {@code DbLedgerStorage} sizes its
     * write and read-ahead caches from the direct-memory limit; {@code docs/tuning.md} lists them.
     *
     * @return the limit in bytes, at least 0.
     */
    public static long directMemoryLimit() {
        long limit = maxDirectMemory();
        final java.util.OptionalLong usable = ContainerMemory.system().usableMemory();
        if (usable.isPresent()) {
            final long room = usable.getAsLong() - Runtime.getRuntime().maxMemory() - ContainerMemory.JVM_OVERHEAD;
            limit = Math.min(limit, Math.max(0, room));
        }
        return limit;
    }

    /**
     * @return direct memory in use by the JVM now, in bytes: the JDK's direct buffer pool plus the
     *         lazily committed regions open now (whose pages may not all be committed yet).
     */
    public static long usedDirectMemory() {
        final BufferPoolMXBean pool = Limits.DIRECT;
        return RESERVED.get() + (pool == null ? 0 : pool.getMemoryUsed());
    }

    private static void checkDirectMemoryLimit(final long needed) {
        final long max = maxDirectMemory();
        final long available = max - usedDirectMemory();
        if (needed > available) {
            throw new CacheConfigurationException("direct memory region needs " + needed + " bytes but only "
                + available + " of MaxDirectMemorySize=" + max + " are available: raise -XX:MaxDirectMemorySize, "
                + "lower the cache capacity, or use a mapped-file region");
        }
        // Within the JVM's limit but beyond the container's, the kernel would kill the process
        // while the pages are first written, with no message: refuse now and say what to set.
        final long used = usedDirectMemory();
        final String refusal = ContainerMemory.system().check(needed + used, "a direct memory region of " + needed
            + " bytes (with " + used + " bytes of direct memory already in use)");
        if (refusal != null) {
            throw new CacheConfigurationException(refusal);
        }
    }

    @Override
    public String description() {
        return "direct memory (" + commit.name().toLowerCase(java.util.Locale.ROOT) + " commit), " + bufferCount + " x "
            + bufferLength + " bytes";
    }

    /**
     * @return bytes of the region committed by its background thread so far ({@link Commit#BACKGROUND});
     *         for the other commits, -1 (not tracked).
     */
    long backgroundCommittedBytes() {
        final BackgroundCommit b = background;
        return b == null ? -1 : b.committedBytes();
    }

    /** For tests: the background commit, null unless {@link Commit#BACKGROUND}. */
    BackgroundCommit backgroundCommit() {
        return background;
    }

    @Override
    void release() {
        // The committing thread touches the memory: it stops before any of it is freed.
        if (background != null) {
            background.stop();
        }
        for (int c = 0; c < chunks.length; c++) {
            if (chunks[c] != null) {
                BufferUtil.free(chunks[c]);
                chunks[c] = null;
            }
        }
        for (int c = 0; c < allocations.length; c++) {
            if (allocations[c] != 0) {
                UNSAFE.freeMemory(allocations[c]);
                allocations[c] = 0;
            }
        }
        if (reserved != 0) {
            RESERVED.addAndGet(-reserved);
            reserved = 0;
        }
    }
}
