package io.streamcache.core.memory;

import java.nio.ByteBuffer;

/**
 * The bookkeeping every {@link ResizableRegion} shares: one slot per buffer the region may hold,
 * each either online (a buffer over memory of its own) or offline (no memory), and the checks
 * of going online, going offline and closing. A subclass says only how a slot gets its memory
 * ({@link #attach}) and gives it back ({@link #release}), in the manner of
 * {@link BufferArrayRegion} for regions of fixed size.
 *
 * <pre>
 *   slot:      0         1         2         3   ...   maxBufferCount - 1
 *          +---------+---------+---------+---------+- - - -+
 *          | buffer  | buffer  |  null   | buffer  |  null |    online: attach(i) gave memory
 *          +---------+---------+---------+---------+- - - -+    offline: released, null
 * </pre>
 *
 * <p><b>Threading:</b> see {@link ResizableRegion}: {@link #online}, {@link #offline} and
 * {@link #close} are serialized on this object's monitor (and so are {@link #attach} and
 * {@link #release}, which only they call); {@link #buffer}, {@link #isOnline} and the getters may
 * be called from any thread.
 */
abstract class ResizableBufferArrayRegion implements ResizableRegion {
    private final int bufferLength;
    /** The buffer per slot, null when offline; written under the monitor, read by any thread. */
    private final ByteBuffer[] buffers;
    private volatile int online;
    private boolean closed;

    ResizableBufferArrayRegion(final int maxBufferCount, final int bufferLength) {
        this.bufferLength = bufferLength;
        this.buffers = new ByteBuffer[maxBufferCount];
    }

    /**
     * Gives slot {@code index} its memory; called under the monitor for an offline slot of an
     * open region. Must leave nothing allocated when it throws.
     *
     * @return a buffer of at least {@link #bufferLength()} bytes over the slot's memory.
     */
    abstract ByteBuffer attach(int index);

    /**
     * Gives slot {@code index}'s memory back; called under the monitor once the slot is offline
     * (at {@link #offline} or {@link #close}).
     */
    abstract void release(int index);

    /** After {@link #offline}: what the region does once a slot went (a file truncated). Nothing by default. */
    void afterOffline() {
    }

    /** At the end of {@link #close}, every slot released: closes what the region holds besides. Nothing by default. */
    void closeResources() {
    }

    /** @return the highest online slot, or -1; under the monitor. */
    final int highestOnline() {
        int highest = buffers.length - 1;
        while (highest >= 0 && buffers[highest] == null) {
            highest--;
        }
        return highest;
    }

    @Override
    public final int bufferCount() {
        return buffers.length;
    }

    @Override
    public final int bufferLength() {
        return bufferLength;
    }

    @Override
    public final ByteBuffer buffer(final int index) {
        Regions.checkIndex(index, buffers.length);
        final ByteBuffer buffer = buffers[index];
        if (buffer == null) {
            throw new IllegalStateException("buffer " + index + " is offline");
        }
        return buffer;
    }

    @Override
    public final int onlineCount() {
        return online;
    }

    @Override
    public final boolean isOnline(final int index) {
        Regions.checkIndex(index, buffers.length);
        return buffers[index] != null;
    }

    @Override
    public final synchronized ByteBuffer online(final int index) {
        Regions.checkIndex(index, buffers.length);
        if (closed) {
            throw new IllegalStateException("region is closed");
        }
        if (buffers[index] != null) {
            throw new IllegalStateException("buffer " + index + " is online already");
        }
        buffers[index] = Regions.slice(attach(index), 0, bufferLength);
        online++;
        return buffers[index];
    }

    @Override
    public final synchronized void offline(final int index) {
        Regions.checkIndex(index, buffers.length);
        if (buffers[index] == null) {
            throw new IllegalStateException("buffer " + index + " is offline already");
        }
        buffers[index] = null;
        online--;
        release(index);
        afterOffline();
    }

    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                buffers[i] = null;
                release(i);
            }
        }
        online = 0;
        closeResources();
    }
}
