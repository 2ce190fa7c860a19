package io.streamcache.core.cache;


import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.OnDemandRegion;
import io.streamcache.core.memory.ResizableRegion;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One tier of a {@link BlockCache}: a contiguous range of the cache's buffers, its region, its
 * stack of buffers with free blocks, its allocation hints and its counters.
 *
 * <p>The range is the tier's maximum ({@link #bufferCount} buffers); {@link #online} of them
 * have memory now. A tier built without a maximum capacity has them all online for good; a
 * resizable tier ({@link #resizable}) brings buffers online and takes them offline through
 * {@link TierResizer}, which alone writes {@link #online}.
 *
 * <p><b>Threading:</b> the identity fields are immutable; the stack is lock-free and shared by
 * every allocating and freeing thread ({@link BlockAllocator}); the hints are racy plain reads
 * and writes (only a hint); the counters are {@link LongAdder}s added to off the hot path
 * (appends, relocations), plus the per-buffer counts that inserts and deletes keep under the
 * buffer's lock ({@link CacheBuffer#count}), and the hits a {@link StripedCounter}; all are
 * summed by {@link TierTable#stats}.
 */
final class Tier {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(CacheBuffer[].class);
    private static final VarHandle ALLOCATED;

    static {
        try {
            ALLOCATED = MethodHandles.lookup().findVarHandle(Tier.class, "allocatedBuffers", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int index;
    final String name;
    final MemoryRegion region;
    final int firstBuffer;
    /** Buffers of the tier's range: its maximum. */
    final int bufferCount;
    /** Data blocks per buffer. */
    final int blocksPerBufferData;
    /** Buffers online now (holding memory, draining ones included); written by {@link TierResizer} only. */
    volatile int online;
    /** The region as a resizable one, or null if the tier cannot change size. */
    final ResizableRegion resizable;
    /**
     * The region as one that allocates its buffers as the tier first needs them, or null: then
     * the tier's buffers without memory have no {@link CacheBuffer} yet (null in the cache's
     * array) and are not in the stack; {@link #allocateNext()} gives the next one its memory
     * when the stack runs empty. Such a tier has all its buffers {@link #online} (its capacity
     * is all of them) but {@link #allocatedBuffers} of them hold memory.
     */
    final OnDemandRegion onDemand;
    /**
     * Buffers holding memory: {@link #online} but for an on-demand tier, whose lowest
     * {@code allocatedBuffers} have it (a higher one may have it already, while a lower one is
     * still being allocated). Advanced by compare-and-set past every buffer in the cache's
     * array, by whichever allocating thread sees it first; read by any thread (stats).
     */
    volatile int allocatedBuffers;
    /** Calls of {@link #allocateNext()} between their claim and their buffer's publication. */
    private final AtomicInteger growing = new AtomicInteger();
    /** Buffers {@link #allocateNext()} published so far: moves whenever a tier gains memory. */
    private final AtomicInteger grown = new AtomicInteger();
    /** Run after a buffer was published (the allocator's free signal), set once by it. */
    private volatile Runnable onGrown = () -> { };
    /** The cache's buffers, indexed by the buffer part of an address (shared with the table). */
    private final CacheBuffer[] buffers;
    /** The tier's buffers with free blocks, the one that gained free blocks last on top. */
    final BufferStack available;
    /**
     * The buffer of this tier each thread (hashed by id) allocates from: the one it last took
     * from the stack, or last switched to from {@link #freed}. A thread keeps filling it, so an
     * entry's blocks and consecutive entries stay close in memory and threads mostly lock
     * different buffers. Only a hint: racy plain reads and writes.
     */
    final CacheBuffer[] hints = new CacheBuffer[BlockAllocator.HINT_SLOTS];
    /**
     * The buffer of this tier each thread (hashed by id) last freed a chain into: where its
     * next allocation goes when this buffer holds the whole request and the next free blocks
     * of its {@link #hints hint} are not one run for it (see {@link BlockAllocator}). Only a
     * hint, as {@link #hints}.
     */
    final CacheBuffer[] freed = new CacheBuffer[BlockAllocator.HINT_SLOTS];
    final LongAdder storedBytes = new LongAdder();
    final LongAdder entries = new LongAdder();
    /** Reads of the tier's entries: no atomic on the read path, may undercount under contention ({@link StripedCounter}). */
    final StripedCounter hits = new StripedCounter();
    final LongAdder demotions = new LongAdder();
    final LongAdder promotions = new LongAdder();

    Tier(final int index, final String name, final MemoryRegion region, final CacheBuffer[] buffers, final int firstBuffer,
         final int bufferCount, final int onlineCount, final int blocksPerBuffer) {
        this.index = index;
        this.name = name;
        this.region = region;
        this.firstBuffer = firstBuffer;
        this.bufferCount = bufferCount;
        this.blocksPerBufferData = blocksPerBuffer - 1;
        this.online = onlineCount;
        this.resizable = region instanceof ResizableRegion r ? r : null;
        this.onDemand = region instanceof OnDemandRegion d ? d : null;
        this.buffers = buffers;
        this.allocatedBuffers = onDemand == null ? onlineCount : 0;
        this.available = new BufferStack(buffers, firstBuffer, bufferCount, onDemand == null ? null : this::allocateNext);
    }

    /**
     * For a tier over an {@link OnDemandRegion}, called when its stack is empty: gives the next
     * buffer without memory its memory and returns it, not in the stack (the caller holds it as
     * if it had popped it). No lock is held while the region allocates: any number of threads
     * may be here at once, each claiming a buffer of its own by the region's compare-and-set
     * (so at most {@link #bufferCount} ever get memory), and each publishes its buffer into the
     * cache's array with release semantics before it counts it in {@link #grown}.
     *
     * <p>A call that finds every buffer claimed returns null at once, even if others are still
     * allocating theirs ({@link #growing()} says so): the allocator then waits for those
     * (signalled by {@link #onGrown}) instead of calling the full handler, so an allocation
     * never fails because another thread was in the middle of giving the cache memory.
     *
     * @return the new buffer, or null if every buffer of the tier has memory or is being given
     *         it, the tier is not on demand, or the region cannot give memory now (the JVM's
     *         direct-memory limit).
     */
    CacheBuffer allocateNext() {
        if (onDemand == null || allocatedBuffers >= bufferCount) {
            return null;
        }
        growing.incrementAndGet();
        try {
            final int next = onDemand.allocate();
            if (next < 0) {
                return null;
            }
            final CacheBuffer buffer = new CacheBuffer(firstBuffer + next, index, onDemand.buffer(next), blocksPerBufferData + 1);
            // An address in it reaches other threads only after an allocation from it; scans of
            // the array (takeFromAny, stats) see it by this release.
            SLOT.setRelease(buffers, firstBuffer + next, buffer);
            while (true) {
                final int a = allocatedBuffers;
                if (a >= bufferCount || SLOT.getAcquire(buffers, firstBuffer + a) == null) {
                    break;
                }
                ALLOCATED.compareAndSet(this, a, a + 1);
            }
            grown.incrementAndGet();
            return buffer;
        } finally {
            // After the count above: a thread that sees no call growing sees what it published.
            growing.decrementAndGet();
            onGrown.run();
        }
    }

    /** @return whether some thread is giving this tier a buffer's memory now. */
    boolean growing() {
        return growing.get() > 0;
    }

    /** @return buffers published by {@link #allocateNext()} so far: a change says the tier gained memory. */
    int grown() {
        return grown.get();
    }

    /** Sets what runs after each buffer {@link #allocateNext()} publishes (the allocator's free signal). */
    void onGrown(final Runnable action) {
        this.onGrown = action;
    }

    /**
     * @return data blocks of the tier's online buffers now.
     */
    long blockCount() {
        return (long)online * blocksPerBufferData;
    }

    @Override
    public String toString() {
        return "Tier{index=" + index + ", name=" + name + ", buffers=[" + firstBuffer + ", " + (firstBuffer + bufferCount) + ")}";
    }
}
