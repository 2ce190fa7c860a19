package io.streamcache.core.memory;

import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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
 * yet allocate), {@link #allocate} returns {@code -1} and the cache works with the buffers it
 * has, as a smaller cache would; the region checks the limit before asking the JDK, so the
 * JDK's own fallback (a {@code System.gc()} and waits before its {@link OutOfMemoryError}) is
 * seldom reached, and it logs that once.
 *
 * <p><b>Threading:</b> see {@link OnDemandRegion}: lock-free. {@link #allocate} claims a slot by
 * a compare-and-set on {@link #claimed} (never more than {@link #bufferCount}), allocates with no
 * lock held, then takes the next index by {@link #assigned} and publishes the buffer into its
 * slot with release semantics; {@link #allocated} then moves past every contiguous published
 * slot, by whichever thread sees them first (a slot published above one still being allocated
 * is counted once the lower one is). Two calls near the JVM's limit may both pass the region's
 * check; the JDK's own reservation then decides, and the loser gets {@code -1} after the JDK's
 * fallback (a {@code System.gc()} and its waits) on its own thread, with no lock held: it slows
 * that caller only, never another allocating or reading thread. {@link #close} frees each slot
 * it takes by a get-and-set, as a call that publishes after the close does, so each chunk is
 * freed once.
 */
final class OnDemandDirectRegion implements OnDemandRegion {
    private static final Logger LOG = LoggerFactory.getLogger(OnDemandDirectRegion.class);
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(ByteBuffer[].class);

    private final int bufferCount;
    private final int bufferLength;
    /** The JDK's buffer per allocated slot (with its alignment pad), to free at close; through {@link #SLOT}. */
    private final ByteBuffer[] owned;
    /** The page-aligned buffer per allocated slot; written with release, read with acquire. */
    private final ByteBuffer[] buffers;
    /** Slots claimed by calls of {@link #allocate}, allocated or still allocating; at most {@link #bufferCount}. */
    private final AtomicInteger claimed = new AtomicInteger();
    /** Indices handed to calls whose memory was had: the next one is the lowest without memory. */
    private final AtomicInteger assigned = new AtomicInteger();
    /** Slots {@code [0, allocated)} have memory; advanced by compare-and-set, read by any thread. */
    private final AtomicInteger allocated = new AtomicInteger();
    private volatile boolean closed;
    private final AtomicBoolean refusalLogged = new AtomicBoolean();

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
    public int allocate() {
        if (closed) {
            return -1;
        }
        // Claim: the exact bound, with no lock.
        while (true) {
            final int c = claimed.get();
            if (c >= bufferCount) {
                return -1;
            }
            if (claimed.compareAndSet(c, c + 1)) {
                break;
            }
        }
        final ByteBuffer chunk = allocateChunk();
        if (chunk == null) {
            claimed.decrementAndGet();
            return -1;
        }
        // Every call that reaches here holds a claim, so fewer than bufferCount indices were
        // assigned before this one.
        final int index = assigned.getAndIncrement();
        final long address = BufferUtil.address(chunk);
        final int skip = (int)((Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1));
        SLOT.setVolatile(owned, index, chunk);
        if (closed) {
            // Closed meanwhile: the close either freed this chunk already or leaves it to us.
            final ByteBuffer mine = (ByteBuffer)SLOT.getAndSet(owned, index, (ByteBuffer)null);
            if (mine != null) {
                BufferUtil.free(mine);
            }
            return -1;
        }
        SLOT.setRelease(buffers, index, Regions.slice(chunk.duplicate().position(skip).limit(skip + bufferLength).slice(), 0, bufferLength));
        advanceAllocated();
        return index;
    }

    /** Moves {@link #allocated} past every contiguous slot with memory. */
    private void advanceAllocated() {
        while (true) {
            final int a = allocated.get();
            if (a >= bufferCount || SLOT.getAcquire(buffers, a) == null) {
                return;
            }
            allocated.compareAndSet(a, a + 1);
        }
    }

    /** @return one buffer's memory with its alignment pad, or null if the limit is reached. */
    private ByteBuffer allocateChunk() {
        final int length = bufferLength + Regions.ALIGNMENT;
        if (length > DirectMemoryRegion.maxDirectMemory() - DirectMemoryRegion.usedDirectMemory()) {
            logRefusal("the direct-memory limit is reached");
            return null;
        }
        try {
            return ByteBuffer.allocateDirect(length);
        } catch (final OutOfMemoryError e) {
            logRefusal(e.getMessage());
            return null;
        }
    }

    private void logRefusal(final String why) {
        if (refusalLogged.compareAndSet(false, true)) {
            final int has = allocated.get();
            LOG.warn("direct memory region: buffer {} of {} not allocated ({}): the cache holds {} bytes of its {} until "
                + "direct memory is freed; raise -XX:MaxDirectMemorySize to give it all", has, bufferCount, why,
                (long)has * bufferLength, (long)bufferCount * bufferLength);
        }
    }

    @Override
    public int allocatedCount() {
        return closed ? 0 : allocated.get();
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
        final ByteBuffer buffer = (ByteBuffer)SLOT.getAcquire(buffers, index);
        if (buffer == null) {
            throw new IllegalStateException("buffer " + index + " has no memory (" + allocatedCount() + " allocated)");
        }
        return buffer;
    }

    @Override
    public String description() {
        return "direct memory (on-demand), " + allocatedCount() + " of " + bufferCount + " x " + bufferLength + " bytes allocated";
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Every slot, not only the counted ones: a call may have published above a gap.
        for (int i = 0; i < bufferCount; i++) {
            final ByteBuffer chunk = (ByteBuffer)SLOT.getAndSet(owned, i, (ByteBuffer)null);
            if (chunk != null) {
                BufferUtil.free(chunk);
            }
            SLOT.setRelease(buffers, i, (ByteBuffer)null);
        }
    }
}
