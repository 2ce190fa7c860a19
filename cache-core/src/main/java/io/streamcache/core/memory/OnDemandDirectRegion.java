package io.streamcache.core.memory;

import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * Direct memory allocated buffer by buffer as the cache first needs each
 * ({@link DirectMemoryRegion.Commit#ON_DEMAND}, the default): each buffer is one
 * {@link ByteBuffer#allocateDirect} of its length plus a page for alignment, so the JDK counts
 * it in its direct memory, and {@code -XX:MaxDirectMemorySize} bounds the cache together with
 * every other direct buffer of the process (Netty's, the JDK's I/O buffers).
 *
 * <pre>
 *   slot:    0            1            2         ...   bufferCount - 1
 *          +------------+------------+---------+- - - - - - -+
 *          | allocated  | allocated  |  none   |    none     |   allocatedCount = 2
 *          +------------+------------+---------+- - - - - - -+
 *            [pad|buffer (page-aligned)]   one allocateDirect of bufferLength + 4 KiB each
 * </pre>
 *
 * <p><b>Cost.</b> Opening takes no memory and no time beyond the arrays (a 4 GiB region opens
 * as fast as a 4 MiB one). {@code allocateDirect} zeroes the buffer, which commits its pages:
 * the first use of each buffer pays the page faults that a lazily committed region pays on its
 * first writes into it, once, on the allocating thread.
 *
 * <p><b>When the JVM's limit is reached</b> (other direct buffers took what the cache did not
 * yet allocate), {@link #allocate} returns {@code null} and the cache works with the buffers it
 * has, as a smaller cache would; the region checks the limit before asking the JDK, so the
 * JDK's own fallback (a {@code System.gc()} and waits before its {@link OutOfMemoryError}) is
 * seldom reached, and it logs that once.
 *
 * <p><b>Threading:</b> see {@link OnDemandRegion}; {@link #allocate} and {@link #close} are
 * serialized on this object's monitor, {@link #buffer} reads a buffer published by the
 * volatile {@link #allocated} count.
 */
final class OnDemandDirectRegion implements OnDemandRegion {
    private static final Logger LOG = LoggerFactory.getLogger(OnDemandDirectRegion.class);

    private final int bufferCount;
    private final int bufferLength;
    /** The JDK's buffer per allocated slot (with its alignment pad), to free at close. */
    private final ByteBuffer[] owned;
    /** The page-aligned buffer per allocated slot. */
    private final ByteBuffer[] buffers;
    /** Slots {@code [0, allocated)} have memory; written under the monitor, read by any thread. */
    private volatile int allocated;
    private boolean closed;
    private boolean refusalLogged;

    OnDemandDirectRegion(final int bufferCount, final int bufferLength) {
        this.bufferCount = bufferCount;
        this.bufferLength = bufferLength;
        this.owned = new ByteBuffer[bufferCount];
        this.buffers = new ByteBuffer[bufferCount];
        final long capacity = (long)bufferCount * bufferLength;
        final long limit = DirectMemoryRegion.directMemoryLimit();
        if (capacity > limit) {
            LOG.warn("direct memory region of {} bytes is larger than this process's direct-memory limit of {} bytes "
                + "(MaxDirectMemorySize, or what the container leaves): the cache will hold at most what that limit leaves "
                + "once other direct buffers took theirs", capacity, limit);
        }
    }

    @Override
    public synchronized ByteBuffer allocate(final int index) {
        if (closed) {
            return null;
        }
        if (index != allocated) {
            throw new IllegalStateException("buffer " + index + " asked for; the next to allocate is " + allocated);
        }
        final int length = bufferLength + Regions.ALIGNMENT;
        if (length > DirectMemoryRegion.maxDirectMemory() - DirectMemoryRegion.usedDirectMemory()) {
            logRefusal(index, "the direct-memory limit is reached");
            return null;
        }
        final ByteBuffer chunk;
        try {
            chunk = ByteBuffer.allocateDirect(length);
        } catch (final OutOfMemoryError e) {
            logRefusal(index, e.getMessage());
            return null;
        }
        final long address = BufferUtil.address(chunk);
        final int skip = (int)((Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1));
        owned[index] = chunk;
        buffers[index] = Regions.slice(chunk.duplicate().position(skip).limit(skip + bufferLength).slice(), 0, bufferLength);
        allocated = index + 1;
        return buffers[index];
    }

    private void logRefusal(final int index, final String why) {
        if (!refusalLogged) {
            refusalLogged = true;
            LOG.warn("direct memory region: buffer {} of {} not allocated ({}): the cache holds {} bytes of its {} until "
                + "direct memory is freed; raise -XX:MaxDirectMemorySize to give it all", index, bufferCount, why,
                (long)index * bufferLength, (long)bufferCount * bufferLength);
        }
    }

    @Override
    public int allocatedCount() {
        return allocated;
    }

    @Override
    public int bufferCount() {
        return bufferCount;
    }

    @Override
    public int bufferLength() {
        return bufferLength;
    }

    @Override
    public ByteBuffer buffer(final int index) {
        Regions.checkIndex(index, bufferCount);
        if (index >= allocated) {
            throw new IllegalStateException("buffer " + index + " has no memory yet (" + allocated + " allocated)");
        }
        return buffers[index];
    }

    @Override
    public String description() {
        return "direct memory (on-demand), " + allocated + " of " + bufferCount + " x " + bufferLength + " bytes allocated";
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < allocated; i++) {
            BufferUtil.free(owned[i]);
            owned[i] = null;
            buffers[i] = null;
        }
        allocated = 0;
    }
}
