package io.streamcache.core.cache;

import io.streamcache.core.memory.MemoryRegion;
import io.streamcache.core.memory.ResizableRegion;

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
    /** The tier's buffers with free blocks, the one that gained free blocks last on top. */
    final BufferStack available;
    /**
     * The buffer of this tier each thread (hashed by id) last took from the stack or last freed
     * a chain into: a thread keeps filling it until it is full, so an entry's blocks and
     * consecutive entries stay close in memory, blocks freed by a thread are the next it takes,
     * and threads mostly lock different buffers. Only a hint: racy plain reads and writes.
     */
    final CacheBuffer[] hints = new CacheBuffer[BlockAllocator.HINT_SLOTS];
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
        this.available = new BufferStack(buffers, firstBuffer, bufferCount);
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
