package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import org.agrona.BufferUtil;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

import static org.agrona.UnsafeAccess.UNSAFE;

/**
 * One buffer of a {@link BlockCache}: its native memory, its metadata words and its free list.
 *
 * <p><b>Concurrency:</b> the free list (the header word and the words of free blocks) and
 * {@link #inQueue} are guarded by this buffer's lock ({@link #lock()}). The word of a used block is written by
 * the thread that owns its entry (the cache's callers serialize operations per entry) and read
 * under the happens-before edge that handed the entry's address over. The header is written with
 * release semantics under the lock, and its free count mirrored on the heap
 * ({@link #freeCountVolatile()}), so that a thread without the lock never reads the buffer's
 * memory: a buffer of a resizable tier may go offline and its memory be released
 * ({@link TierResizer}).
 *
 * <p><b>Resizing:</b> {@link #draining} (volatile, set under the lock) means no block is
 * ever taken from the buffer again; {@link #offline} (under the lock) means its memory is
 * gone and nothing may read it. Every path that reads the memory of a buffer it did not get
 * through a live entry checks {@link #draining} under the lock first.
 */
final class CacheBuffer {
    private static final VarHandle FREE;
    private static final VarHandle ENTRIES;
    private static final VarHandle STORED;
    private static final VarHandle LOCK;
    /** Tries of a contended {@link #lock()} that spin before each further try yields. */
    private static final int SPINS = 100;

    static {
        try {
            FREE = MethodHandles.lookup().findVarHandle(CacheBuffer.class, "freeCount", int.class);
            ENTRIES = MethodHandles.lookup().findVarHandle(CacheBuffer.class, "entries", long.class);
            STORED = MethodHandles.lookup().findVarHandle(CacheBuffer.class, "storedBytes", long.class);
            LOCK = MethodHandles.lookup().findVarHandle(CacheBuffer.class, "locked", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int index;
    /** Index of the tier owning this buffer. */
    final int tier;
    /** Native address of the buffer; its block 0 holds the metadata words. */
    final long address;
    /** Netty view over the whole buffer: the route for copies from and to any {@link ByteBuf}, and the parent of read views. */
    final ByteBuf memory;
    /** Blocks in the buffer, block 0 (the metadata) included. */
    final int blocksPerBuffer;
    /**
     * Whether the free list links its blocks in ascending order, each to the next (guarded by the
     * lock): true after {@link #resetFreeList()}; taking blocks from the head keeps it; giving
     * a block back keeps it only if the block goes right before the head. A wholly free buffer
     * whose list is not ascending is reset.
     */
    boolean freeListAscending;
    /** Whether this buffer is in its tier's stack of buffers with free blocks, or about to be put back by the thread that took it. */
    boolean inQueue;
    /** Set under the lock when a shrink takes the buffer out of service: no block is taken from it again. */
    volatile boolean draining;
    /** Set under the lock when the buffer's memory is released; implies {@link #draining}. */
    boolean offline;
    /** The header's free count, mirrored for readers without the lock (release / acquire). */
    @SuppressWarnings("unused") // accessed through FREE
    private int freeCount;
    /**
     * Entries inserted with their last block in this buffer minus entries deleted whose last
     * block is here, and their bytes (guarded by the lock; read racily by stats). Inserts and
     * deletes count here, under the lock their allocation or free takes anyway, instead of in
     * an atomic counter of their own; an entry that moves (append past its buffer, replace,
     * relocation, warm adoption) is counted in its tier's adders instead, so a single buffer's
     * values may be off, even negative, but a tier's sum over its buffers plus its adders is
     * exact (see {@link TierTable#stats()}). Folded into the tier's adders when the buffer goes
     * offline ({@link TierResizer}).
     */
    @SuppressWarnings("unused") // accessed through ENTRIES
    private long entries;
    /** 1 while a thread holds the buffer's lock ({@link #lock()}). */
    @SuppressWarnings("unused") // accessed through LOCK
    private int locked;
    @SuppressWarnings("unused") // accessed through STORED
    private long storedBytes;

    CacheBuffer(final int index, final int tier, final ByteBuffer buffer, final int blocksPerBuffer) {
        this(index, tier, buffer, blocksPerBuffer, false);
    }

    /**
     * @param keepMetadata whether to leave block 0 as the memory holds it (a warm restart's
     *                     reopened region, whose free list {@code RegionAdopter} rebuilds before
     *                     the cache is used) instead of linking every block into the free list.
     */
    CacheBuffer(final int index, final int tier, final ByteBuffer buffer, final int blocksPerBuffer, final boolean keepMetadata) {
        this.index = index;
        this.tier = tier;
        this.address = BufferUtil.address(buffer);
        this.memory = Unpooled.wrappedBuffer(buffer);
        this.blocksPerBuffer = blocksPerBuffer;
        if (!keepMetadata) {
            resetFreeList();
        }
        inQueue = true;
    }

    /**
     * Links every block into the free list in ascending order (block 1 first), the order that
     * lets consecutive allocations form runs of adjacent blocks, which copies and views treat as
     * one range. Called by the constructor, and under the lock when the last used block of
     * the buffer is freed: a LIFO free list would otherwise hand the blocks of a bulk-emptied
     * buffer out in the reverse order of their freeing (entry by entry downwards), breaking the
     * sequential streams that the hardware prefetcher follows.
     */
    void resetFreeList() {
        for (int block = 1; block < blocksPerBuffer; block++) {
            word(block, BlockMetadataDescriptor.freeWord(block + 1 < blocksPerBuffer ? block + 1 : 0));
        }
        UNSAFE.putLongVolatile(null, address, BlockMetadataDescriptor.headerWord(blocksPerBuffer - 1, 1));
        FREE.setRelease(this, blocksPerBuffer - 1);
        freeListAscending = true;
    }

    long word(final int blockIndex) {
        return UNSAFE.getLong(address + ((long)blockIndex << 3));
    }

    void word(final int blockIndex, final long word) {
        UNSAFE.putLong(address + ((long)blockIndex << 3), word);
    }

    /**
     * Called under the lock; pairs with {@link #freeCountVolatile()}.
     */
    long header() {
        return UNSAFE.getLong(address);
    }

    /**
     * Called under the lock; a release store that pairs with {@link #freeCountVolatile()}.
     */
    void headerRelease(final long header) {
        UNSAFE.putOrderedLong(null, address, header);
        FREE.setRelease(this, BlockMetadataDescriptor.freeCount(header));
    }

    /**
     * Takes the buffer's lock, which guards its free list and the fields that say so. Not
     * reentrant. A compare-and-set to take it and a release store to give it back
     * ({@link #unlock()}): one locked instruction per critical section where a Java monitor
     * takes two (its exit is a compare-and-set too). The sections are a few dozen instructions
     * (a wholly freed buffer's reset, 511 words, is the longest), so a contended lock spins
     * briefly, then yields between tries.
     */
    void lock() {
        if (!LOCK.compareAndSet(this, 0, 1)) {
            lockContended();
        }
    }

    private void lockContended() {
        for (int tries = 0; ; tries++) {
            if ((int)LOCK.getVolatile(this) == 0 && LOCK.compareAndSet(this, 0, 1)) {
                return;
            }
            if (tries < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * Gives the lock back (a release store: what the section wrote is seen by the next thread
     * that takes it).
     */
    void unlock() {
        LOCK.setRelease(this, 0);
    }

    /**
     * Adds to the buffer's entry and byte counts; called under the lock. Plain increments
     * published opaquely for {@link #entries()} and {@link #storedBytes()}.
     */
    void count(final int entryDelta, final long bytesDelta) {
        ENTRIES.setOpaque(this, (long)ENTRIES.get(this) + entryDelta);
        STORED.setOpaque(this, (long)STORED.get(this) + bytesDelta);
    }

    /** @return the buffer's entry count (racy read: a statistic). */
    long entries() {
        return (long)ENTRIES.getOpaque(this);
    }

    /** @return the buffer's stored-bytes count (racy read: a statistic). */
    long storedBytes() {
        return (long)STORED.getOpaque(this);
    }

    /**
     * @return free blocks, read without the lock from the heap mirror (acquire; pairs with
     *         {@link #headerRelease(long)}); never touches the buffer's memory. 0 once offline.
     */
    int freeCountVolatile() {
        return (int)FREE.getAcquire(this);
    }

    /**
     * Marks the buffer offline, under the lock: its free count reads 0 and its Netty view is
     * released, so that views still held over it fail with Netty's
     * {@code IllegalReferenceCountException} instead of reading released memory.
     */
    void markOffline() {
        offline = true;
        FREE.setRelease(this, 0);
        memory.release();
    }
}
