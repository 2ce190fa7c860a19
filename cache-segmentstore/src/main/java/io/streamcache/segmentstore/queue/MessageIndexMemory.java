package io.streamcache.segmentstore.queue;

import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The direct memory the message indexes of one {@link MessageQueueStore} keep their ends in: slabs
 * of {@value #SLAB_BYTES} bytes from which the queues take chunks, never given back while the
 * store lives. Thread-safe: a chunk is taken with one compare-and-set on the cursor; a new slab
 * is made under the instance's monitor, once per slab (no lock otherwise).
 *
 * <pre>
 *  cursor (AtomicLong):  | slab index (32 bits) | byte offset in the slab (32 bits) |
 *
 *  slab 0: | q7 chunk 1 | q9 chunk 1 | q7 chunk 2 | q9 chunk 2 | q7 chunk 3 | ... | unused tail |
 *  slab 1: | ...                                  ^ cursor
 *  a chunk that does not fit in the rest of the slab goes to a new slab (the tail, less than a
 *  chunk of 4 KiB, is left unused)
 * </pre>
 *
 * <p><b>Why off the heap</b>: a queue's index grows by 8 bytes a message for as long as
 * the queue lives (the facade never drops messages); on the heap every message was 8 bytes of
 * allocation. Here the heap holds one buffer object per slab (one per 131,072 message ends).
 *
 * <p><b>Memory:</b> outside the cache's capacity, like the log's location index; {@link #bytes()}
 * says how much is held (the slabs made so far). The slabs are direct buffers: the memory goes
 * back to the system when the store that owns this instance is garbage collected, never while a
 * reader can still reach a chunk (the store keeps its instance reachable through its calls).
 */
final class MessageIndexMemory {
    /** Bytes of one slab. */
    static final int SLAB_BYTES = 1 << 20;
    private static final int OFFSET_BITS = 32;
    private static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;
    /** The most bytes taken from a slab at once; more get a block of their own. */
    static final int LARGE = 4096;

    /** Where the next chunk goes: {@link #pack}(slab, offset). */
    private final AtomicLong cursor;
    /** The slabs (their buffers keep the memory alive) and their addresses; replaced under the monitor before the cursor moves to a new slab. */
    private volatile ByteBuffer[] slabs = new ByteBuffer[0];
    private volatile long[] addresses = new long[0];
    /** Blocks larger than {@link #LARGE}; under the monitor. */
    private ByteBuffer[] large = new ByteBuffer[0];
    private long largeBytes;

    MessageIndexMemory() {
        // The first slab is made by the first take: a store without messages holds none.
        cursor = new AtomicLong(pack(-1, SLAB_BYTES));
    }

    /**
     * @return the address of {@code bytes} bytes (a positive multiple of 8), zeroed and 8-byte
     *         aligned, that only the caller uses; valid while this instance is reachable. Up to
     *         {@value #LARGE} bytes come from the slabs, more (the chunk directory of a queue past
     *         ~260,000 messages) from a direct buffer of their own.
     */
    long take(final int bytes) {
        if (bytes <= 0 || (bytes & 7) != 0) {
            throw new IllegalArgumentException("bytes=" + bytes + " must be a positive multiple of 8");
        }
        if (bytes > LARGE) {
            return takeLarge(bytes);
        }
        while (true) {
            final long at = cursor.get();
            final int slab = slab(at);
            final int offset = offset(at);
            if (offset + bytes <= SLAB_BYTES) {
                if (cursor.compareAndSet(at, pack(slab, offset + bytes))) {
                    // The slab's address was published before the cursor moved into it (volatile).
                    return addresses[slab] + offset;
                }
            } else {
                newSlab(slab);
            }
        }
    }

    /** A block of its own, kept with the slabs (counted in {@link #bytes()}). */
    private synchronized long takeLarge(final int bytes) {
        final ByteBuffer block = ByteBuffer.allocateDirect(bytes);
        large = Arrays.copyOf(large, large.length + 1);
        large[large.length - 1] = block;
        largeBytes += bytes;
        return BufferUtil.address(block);
    }

    /** Makes slab {@code full + 1} and moves the cursor to it, unless another thread did. */
    private synchronized void newSlab(final int full) {
        if (slab(cursor.get()) != full) {
            return;
        }
        final int next = full + 1;
        final ByteBuffer slab = ByteBuffer.allocateDirect(SLAB_BYTES);
        final ByteBuffer[] grownSlabs = Arrays.copyOf(slabs, next + 1);
        final long[] grownAddresses = Arrays.copyOf(addresses, next + 1);
        grownSlabs[next] = slab;
        grownAddresses[next] = BufferUtil.address(slab);
        slabs = grownSlabs;
        addresses = grownAddresses;
        cursor.set(pack(next, 0));
    }

    /** @return bytes of direct memory held: the slabs made so far and the large blocks. */
    long bytes() {
        final long slabBytes = (long)slabs.length * SLAB_BYTES;
        synchronized (this) {
            return slabBytes + largeBytes;
        }
    }

    private static long pack(final int slab, final int offset) {
        return ((long)slab << OFFSET_BITS) | (offset & OFFSET_MASK);
    }

    private static int slab(final long packed) {
        return (int)(packed >> OFFSET_BITS);
    }

    private static int offset(final long packed) {
        return (int)(packed & OFFSET_MASK);
    }
}
