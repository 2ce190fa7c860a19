package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * Direct memory for a tier that changes size: each online buffer is one allocation of its own
 * (a buffer plus a page for alignment), freed when the buffer goes offline. Opened by
 * {@link DirectMemoryRegion#factory()} for a tier whose maximum capacity exceeds its capacity.
 *
 * <pre>
 *   slot:     0          1          2          3  ...  maxBufferCount - 1
 *          +----------+----------+----------+- - - - - -+
 *          | malloc'd | malloc'd |    0     |    0      |   allocation address per slot (0: offline)
 *          +----------+----------+----------+- - - - - -+
 *            [pad|buffer (page-aligned)]      one malloc of bufferLength + 4 KB each
 * </pre>
 *
 * <p><b>What goes back to the system.</b> {@link DirectMemoryRegion.Commit#LAZY} allocates with
 * {@code Unsafe.allocateMemory} (malloc). glibc serves a 2 MB request with its own {@code mmap}
 * and a free with {@code munmap}, until the first such free raises its dynamic mmap threshold
 * to that size: after that, buffers come from malloc's heap, whose freed pages go back only
 * when they end the heap. Setting the environment variable {@code MALLOC_MMAP_THRESHOLD_}
 * (e.g. {@code 1048576}) fixes the threshold, so every buffer stays its own mapping and every
 * offline buffer goes back at once (measured in {@code docs/resize.md}). The direct-memory
 * count ({@link DirectMemoryRegion#usedDirectMemory()}) drops at once either way.
 * {@link DirectMemoryRegion.Commit#EAGER} uses {@link ByteBuffer#allocateDirect}, which the
 * JDK counts and frees the same way.
 *
 * <p><b>Threading:</b> see {@link ResizableRegion}.
 */
final class ResizableDirectRegion extends ResizableBufferArrayRegion {
    private static final Logger LOG = LoggerFactory.getLogger(ResizableDirectRegion.class);

    private final DirectMemoryRegion.Commit commit;
    /** LAZY: malloc'd address per slot, 0 when offline. */
    private final long[] allocations;
    /** EAGER: the JDK's buffer per slot, null when offline. */
    private final ByteBuffer[] owned;

    ResizableDirectRegion(final int onlineCount, final int maxBufferCount, final int bufferLength,
                          final DirectMemoryRegion.Commit commit) {
        super(maxBufferCount, bufferLength);
        this.commit = commit;
        this.allocations = new long[maxBufferCount];
        this.owned = new ByteBuffer[maxBufferCount];
        final long needed = (long)onlineCount * (bufferLength + Regions.ALIGNMENT);
        if (commit == DirectMemoryRegion.Commit.LAZY) {
            // The container check covers what is online at build; growing checks the JVM's limit.
            DirectMemoryRegion.reserve(needed, true);
            DirectMemoryRegion.unreserve(needed);
        }
        try {
            for (int i = 0; i < onlineCount; i++) {
                online(i);
            }
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
        LOG.info("resizable direct memory region: {} of at most {} buffers x {} bytes online, commit={}", onlineCount,
            maxBufferCount, bufferLength, commit);
    }

    @Override
    ByteBuffer attach(final int index) {
        final int length = bufferLength() + Regions.ALIGNMENT;
        final ByteBuffer aligned;
        try {
            if (commit == DirectMemoryRegion.Commit.LAZY) {
                DirectMemoryRegion.reserve(length, false);
                final long address;
                try {
                    address = UNSAFE.allocateMemory(length);
                } catch (final OutOfMemoryError e) {
                    DirectMemoryRegion.unreserve(length);
                    throw e;
                }
                allocations[index] = address;
                final long skip = (Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1);
                aligned = Regions.wrap(address + skip, bufferLength());
            } else {
                final ByteBuffer chunk = ByteBuffer.allocateDirect(length);
                owned[index] = chunk;
                final long address = BufferUtil.address(chunk);
                final int skip = (int)((Regions.ALIGNMENT - (address & (Regions.ALIGNMENT - 1))) & (Regions.ALIGNMENT - 1));
                aligned = chunk.duplicate().position(skip).limit(skip + bufferLength()).slice();
            }
        } catch (final OutOfMemoryError e) {
            throw new CacheConfigurationException("direct memory for buffer " + index + " (" + length + " bytes) could not be "
                + "allocated (" + e.getMessage() + "): raise -XX:MaxDirectMemorySize or grow the cache less", e);
        }
        return aligned;
    }

    @Override
    void release(final int index) {
        if (allocations[index] != 0) {
            UNSAFE.freeMemory(allocations[index]);
            allocations[index] = 0;
            DirectMemoryRegion.unreserve(bufferLength() + Regions.ALIGNMENT);
        }
        if (owned[index] != null) {
            BufferUtil.free(owned[index]);
            owned[index] = null;
        }
    }

    @Override
    public boolean releasesFromTheEnd() {
        return false;
    }

    @Override
    public String description() {
        return "resizable direct memory (" + commit.name().toLowerCase(java.util.Locale.ROOT) + " commit), " + onlineCount() + " of "
            + bufferCount() + " x " + bufferLength() + " bytes online";
    }
}
