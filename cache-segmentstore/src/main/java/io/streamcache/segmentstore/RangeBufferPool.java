package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import io.streamcache.log.internal.history.RangeBuffers;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The direct buffers a store's historical reader reads ranges into, reused from range to range
 * and bounded: thread-safe, lock-free. A catch-up read of the log at hundreds of MB/s into a
 * fresh heap array per range allocates as much heap, and its young collections pause every
 * thread of the process, producers included (measured in the stress harness's catch-up storm:
 * 70 collections and 274 ms of pauses in 9 s, against 2 without the storm).
 *
 * <p>Buffers come in power-of-two sizes from the reader's range length up; a freed buffer goes
 * back to the free list of its size. The pool holds at most {@link #limitBytes()} of direct
 * memory, in use and free together (the store's read budget by default: the loads a store runs
 * are held to half of it, so two fit); past it, a request first drops free buffers of other
 * sizes, then gets none ({@link #allocate} returns null) and the reader falls back to a heap
 * array for that range ({@link #heapFallbacks()}). A range's buffer stays in use while a result
 * served from it (a range the cache could not take) is unreleased; those results are charged to
 * the read budgets like any other. Memory is counted by the JDK as direct memory
 * ({@code -XX:MaxDirectMemorySize}); free buffers are given back when the store closes, and
 * buffers in use then when their last result is released.
 */
final class RangeBufferPool implements RangeBuffers {
    private static final int CLASSES = 31;
    private final int minLength;
    private final long limitBytes;
    /** Free buffers by size class ({@code minLength << i}). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private final ConcurrentLinkedQueue<ByteBuffer>[] free = new ConcurrentLinkedQueue[CLASSES];
    /** Direct bytes the pool holds, in use and free. */
    private final AtomicLong heldBytes = new AtomicLong();
    private final LongAdder heapFallbacks = new LongAdder();
    private volatile boolean closed;

    /**
     * @param minLength  the smallest buffer (the reader's range length), >= 1.
     * @param limitBytes the most direct memory the pool holds, >= 0.
     */
    RangeBufferPool(final int minLength, final long limitBytes) {
        if (minLength < 1 || limitBytes < 0) {
            throw new IllegalArgumentException("minLength=" + minLength + " must be >= 1, limitBytes=" + limitBytes + " >= 0");
        }
        this.minLength = minLength;
        this.limitBytes = limitBytes;
        for (int i = 0; i < CLASSES; i++) {
            free[i] = new ConcurrentLinkedQueue<>();
        }
    }

    @Override
    public ByteBuf allocate(final int length) {
        if (length < 1) {
            throw new IllegalArgumentException("length=" + length + " must be >= 1");
        }
        final int sizeClass = sizeClass(length);
        if (closed || sizeClass < 0) {
            heapFallbacks.increment();
            return null;
        }
        final int capacity = minLength << sizeClass;
        ByteBuffer memory = free[sizeClass].poll();
        if (memory == null && reserve(capacity)) {
            try {
                memory = ByteBuffer.allocateDirect(capacity);
            } catch (final OutOfMemoryError e) {
                // The JVM's direct-memory limit: this range goes to the heap.
                heldBytes.addAndGet(-capacity);
            }
        }
        if (memory == null) {
            heapFallbacks.increment();
            return null;
        }
        memory.clear();
        final ByteBuf buf = PlatformDependent.hasUnsafe() ? new UnsafeRangeBuf(this, memory) : new RangeBuf(this, memory);
        // Netty's wrapping constructor starts with the whole buffer written.
        return buf.clear();
    }

    /** @return the size class holding {@code length} bytes, or -1 if it is beyond the largest. */
    private int sizeClass(final int length) {
        int i = 0;
        while (i < CLASSES && ((long) minLength << i) < length) {
            i++;
        }
        return i < CLASSES && ((long) minLength << i) <= Integer.MAX_VALUE ? i : -1;
    }

    /** Counts {@code capacity} more bytes held if the limit allows, dropping free buffers of other sizes to make it. */
    private boolean reserve(final int capacity) {
        while (true) {
            final long held = heldBytes.get();
            if (held + capacity <= limitBytes) {
                if (heldBytes.compareAndSet(held, held + capacity)) {
                    return true;
                }
                continue;
            }
            if (!dropOneFree()) {
                return false;
            }
        }
    }

    private boolean dropOneFree() {
        for (int i = CLASSES - 1; i >= 0; i--) {
            final ByteBuffer dropped = free[i].poll();
            if (dropped != null) {
                heldBytes.addAndGet(-dropped.capacity());
                PlatformDependent.freeDirectBuffer(dropped);
                return true;
            }
        }
        return false;
    }

    /** A range buffer's last release: its memory goes back to the free list, or is freed after close. */
    private void giveBack(final ByteBuffer memory) {
        final int sizeClass = Integer.numberOfTrailingZeros(memory.capacity() / minLength);
        free[sizeClass].offer(memory);
        if (closed) {
            drain();
        }
    }

    private void drain() {
        while (dropOneFree()) {
            // Frees every free buffer.
        }
    }

    /** @return direct bytes the pool holds now, in use and free. */
    long heldBytes() {
        return heldBytes.get();
    }

    /** @return ranges read into a heap buffer because the pool was at its limit. */
    long heapFallbacks() {
        return heapFallbacks.sum();
    }

    long limitBytes() {
        return limitBytes;
    }

    /** Frees the free buffers; buffers in use are freed at their last release. Idempotent. */
    void close() {
        closed = true;
        drain();
    }

    /** A range buffer over pooled memory (without {@code sun.misc.Unsafe}). */
    private static final class RangeBuf extends UnpooledDirectByteBuf {
        private final RangeBufferPool pool;
        private final ByteBuffer memory;

        RangeBuf(final RangeBufferPool pool, final ByteBuffer memory) {
            super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
            this.pool = pool;
            this.memory = memory;
        }

        @Override
        protected void deallocate() {
            // The wrapped buffer is not freed by Netty (it was given, not allocated); it is reused.
            super.deallocate();
            pool.giveBack(memory);
        }
    }

    /** A range buffer over pooled memory, with Netty's direct memory access. */
    private static final class UnsafeRangeBuf extends UnpooledUnsafeDirectByteBuf {
        private final RangeBufferPool pool;
        private final ByteBuffer memory;

        UnsafeRangeBuf(final RangeBufferPool pool, final ByteBuffer memory) {
            super(UnpooledByteBufAllocator.DEFAULT, memory, memory.capacity());
            this.pool = pool;
            this.memory = memory;
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            pool.giveBack(memory);
        }
    }
}
