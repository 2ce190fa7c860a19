package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * What every region shares: a fixed array of equal buffers handed out by index, and a close that
 * releases the memory once. A subclass allocates its memory in its constructor, fills
 * {@link #buffers}, and gives the memory back in {@link #release()}.
 *
 * <p><b>Threading:</b> see {@link MemoryRegion}: opened and closed by one thread; {@link #buffer}
 * may be called from any thread between the two.
 */
abstract class BufferArrayRegion implements MemoryRegion {
    final int bufferCount;
    final int bufferLength;
    /** Filled by the subclass's constructor. */
    final ByteBuffer[] buffers;
    private boolean closed;

    BufferArrayRegion(final int bufferCount, final int bufferLength) {
        this.bufferCount = bufferCount;
        this.bufferLength = bufferLength;
        this.buffers = new ByteBuffer[bufferCount];
    }

    @Override
    public final int bufferCount() {
        return bufferCount;
    }

    @Override
    public final int bufferLength() {
        return bufferLength;
    }

    @Override
    public final ByteBuffer buffer(final int index) {
        Regions.checkIndex(index, bufferCount);
        return buffers[index];
    }

    @Override
    public final synchronized void close() {
        if (!closed) {
            closed = true;
            release();
        }
    }

    /**
     * Gives the region's memory back (called once, by {@link #close()}).
     */
    abstract void release();
}
