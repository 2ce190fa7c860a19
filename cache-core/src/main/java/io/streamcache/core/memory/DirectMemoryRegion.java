package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A region in JVM direct memory ({@link ByteBuffer#allocateDirect}), the default.
 *
 * <p><b>Threading:</b> see {@link MemoryRegion}: opened and closed by one thread.
 *
 * <p>Direct memory counts against {@code -XX:MaxDirectMemorySize}. The region checks that limit
 * before allocating and fails with a {@link CacheConfigurationException} that names it, instead of
 * letting an {@link OutOfMemoryError} surface later. Memory is allocated in chunks of at most
 * 1 GiB, each page-aligned (one extra page per chunk for the alignment; that page holds neither
 * data nor metadata) and zeroed by the JVM, so it is committed when the region is opened.
 */
public final class DirectMemoryRegion extends BufferArrayRegion {
    private static final Logger LOG = LoggerFactory.getLogger(DirectMemoryRegion.class);

    private final ByteBuffer[] chunks;

    private DirectMemoryRegion(final int bufferCount, final int bufferLength) {
        super(bufferCount, bufferLength);
        final int perChunk = Regions.buffersPerChunk(bufferCount, bufferLength);
        final int chunkCount = (bufferCount + perChunk - 1) / perChunk;
        final long needed = (long)bufferCount * bufferLength + (long)chunkCount * Regions.ALIGNMENT;
        checkDirectMemoryLimit(needed);
        this.chunks = new ByteBuffer[chunkCount];
        try {
            for (int c = 0; c < chunkCount; c++) {
                final int inChunk = Math.min(perChunk, bufferCount - c * perChunk);
                chunks[c] = ByteBuffer.allocateDirect(inChunk * bufferLength + Regions.ALIGNMENT);
                final long address = BufferUtil.address(chunks[c]);
                final int skip = (int)((Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1));
                final ByteBuffer aligned = chunks[c].duplicate().position(skip).limit(skip + inChunk * bufferLength).slice();
                for (int i = 0; i < inChunk; i++) {
                    buffers[c * perChunk + i] = Regions.slice(aligned, i, bufferLength);
                }
            }
        } catch (final OutOfMemoryError e) {
            release();
            throw new CacheConfigurationException("direct memory region of " + needed + " bytes could not be allocated ("
                + e.getMessage() + "): raise -XX:MaxDirectMemorySize, lower the cache capacity, or use a mapped-file region", e);
        }
        LOG.info("direct memory region: {} buffers x {} bytes in {} chunks", bufferCount, bufferLength, chunkCount);
    }

    /**
     * @return a factory of direct memory regions.
     */
    public static MemoryRegionFactory factory() {
        return DirectMemoryRegion::new;
    }

    /**
     * @return the JVM's direct memory limit in bytes ({@code -XX:MaxDirectMemorySize}, or the
     *         maximum heap when the flag is not set, as the JDK does).
     */
    public static long maxDirectMemory() {
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
     * @return direct memory in use by the JVM now, in bytes.
     */
    public static long usedDirectMemory() {
        final List<BufferPoolMXBean> pools = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);
        for (final BufferPoolMXBean pool : pools) {
            if ("direct".equals(pool.getName())) {
                return pool.getMemoryUsed();
            }
        }
        return 0;
    }

    private static void checkDirectMemoryLimit(final long needed) {
        final long max = maxDirectMemory();
        final long available = max - usedDirectMemory();
        if (needed > available) {
            throw new CacheConfigurationException("direct memory region needs " + needed + " bytes but only "
                + available + " of MaxDirectMemorySize=" + max + " are available: raise -XX:MaxDirectMemorySize, "
                + "lower the cache capacity, or use a mapped-file region");
        }
    }

    @Override
    public String description() {
        return "direct memory, " + bufferCount + " x " + bufferLength + " bytes";
    }

    @Override
    void release() {
        for (int c = 0; c < chunks.length; c++) {
            if (chunks[c] != null) {
                BufferUtil.free(chunks[c]);
                chunks[c] = null;
            }
        }
    }
}
