package io.streamcache.core.cache;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheCorruptedException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.usedWord;

/**
 * Takes blocks for a {@link BlockCache}'s entries and gives them back: chains of blocks linked
 * backwards through their metadata words, taken from the free lists of the buffers of one tier
 * or another, with the calling thread's hint buffer first, and the full handler's retry loop
 * when no block is free.
 *
 * <h2>Allocation</h2>
 * Free blocks of a buffer form a list through their metadata words (O(1) allocation). Buffers
 * with free blocks wait in their tier's {@link BufferStack}; an allocating thread takes one off,
 * pops blocks under its lock and puts it back on top if it still has free blocks; a full
 * buffer that frees a block goes back on top. The stack is last in first out on purpose: the
 * buffer that gained free blocks last is the one whose memory is warm in the CPU caches (the
 * seed's design keeps a first-in first-out queue, which sends a hot working set through all of a
 * large cache's cold memory; see {@link BufferStack}). A thread keeps allocating from the buffer
 * it last took (a hint, one of {@link #HINT_SLOTS} per tier), which keeps its entries together
 * in memory. A thread that frees a chain remembers the buffer of the chain's last block; when
 * that buffer holds the whole of a request, the thread switches to it unless the next free
 * blocks of its current buffer are one run for the whole request. The blocks at the head of the
 * freed buffer's list are the ones it just freed, warm in the CPU caches and in the order that
 * makes one run again, so in a churn of deletes and inserts of one size each insert takes one
 * delete's blocks back as one run (without it, a 1,000-entry working set of 10 KB entries
 * churned by delete + insert ended with half its entries in two or three runs, each copy split
 * in as many calls; see {@code docs/benchmarks.md}). The current buffer goes first because that is the order of
 * Pravega's {@code DirectMemoryCache}, which inserts into its current buffer until it is full
 * while buffers that gain free blocks queue behind it; code written against it depends on the
 * order (Pravega's own read-index eviction test maps addresses to entries and expects an
 * address freed while the current buffer has room not to come back at the next insert). A
 * chain's blocks come from a preferred tier first, then from the other tiers fastest first.
 * When no block is free in any tier, the {@link CacheFullHandler} is called with no lock held
 * and the allocation retried, waiting between tries on a condition that frees signal
 * ({@link FreeBlockSignal}: never a {@code Thread.yield} spin) until the full-retry timeout; then
 * the operation fails with {@link CacheFullException} and no block taken. A tier over an
 * on-demand region gives its next buffer memory when its stack is empty, with no lock held
 * ({@link Tier#allocateNext()}): threads that find it empty at once each give memory to a buffer
 * of their own, and one that finds every buffer claimed while another thread is still allocating
 * waits for that buffer (its publication signals the same condition) instead of calling the
 * full handler, so a cache that is not full never refuses an allocation for that race. An allocation that
 * may not wait (a fill from the log, a commit on the log's completion thread, which must never
 * wait for memory while they hold a segment's lock) takes only the blocks free at once, or
 * none.
 *
 * <h2>Free-list order</h2>
 * A buffer hands its blocks out ascending when fresh, so that entries inserted one after another
 * lie forwards in memory, each one run of adjacent blocks (which copies and views treat as one
 * range); freed blocks go back to the head (LIFO: the blocks freed last are the warmest), and a
 * buffer wholly free again whose list is out of order is reset to ascending
 * ({@link CacheBuffer#resetFreeList()}).
 *
 * <p><b>Threading:</b> any thread may allocate and free at once. There is no global lock: a
 * thread takes one buffer at a time off a lock-free stack and locks only that buffer; freeing
 * locks the buffers of the freed blocks, one at a time. The full handler is read volatile and may
 * be replaced from any thread. Words of blocks being taken are written under the buffer's
 * lock and published to other threads with the entry's address.
 */
final class BlockAllocator {
    /** Hint slots per tier: threads are hashed to them by id. */
    static final int HINT_SLOTS = 64;

    private final String name;
    /** Data blocks of the online buffers; written by {@link TierResizer} after a resize. */
    private volatile long totalBlocks;
    private final int blockLength;
    private final int blocksPerBuffer;
    private final int blockIndexBits;
    private final int blockIndexMask;
    private final long fullRetryNanos;
    private final CacheBuffer[] buffers;
    private final Tier[] tiers;
    private final LongAdder fullHandlerCalls = new LongAdder();
    private final LongAdder fullFailures = new LongAdder();
    private volatile CacheFullHandler fullHandler;
    /** Where allocations on a full cache wait for a free (see {@link FreeBlockSignal}). */
    private final FreeBlockSignal freeSignal = new FreeBlockSignal();

    BlockAllocator(final String name, final BlockTable table, final Tier[] tiers, final CacheFullHandler fullHandler,
                   final Duration fullRetryTimeout) {
        this.name = name;
        this.buffers = table.buffers;
        this.tiers = tiers;
        this.blockLength = table.blockLength;
        this.blocksPerBuffer = table.blocksPerBuffer;
        this.blockIndexBits = table.blockIndexBits;
        this.blockIndexMask = table.blockIndexMask;
        onlineChanged();
        for (final Tier tier : tiers) {
            tier.onGrown(freeSignal::signal);
        }
        this.fullRetryNanos = fullRetryTimeout.toNanos();
        this.fullHandler = Objects.requireNonNull(fullHandler, "fullHandler");
    }

    void fullHandler(final CacheFullHandler handler) {
        this.fullHandler = Objects.requireNonNull(handler, "handler");
    }

    CacheFullHandler fullHandler() {
        return fullHandler;
    }

    /**
     * @return data blocks of the cache's online buffers (block 0 of each buffer excluded).
     */
    long totalBlocks() {
        return totalBlocks;
    }

    /** Recounts {@link #totalBlocks()} after tiers changed size (called by {@link TierResizer}). */
    void onlineChanged() {
        long blocks = 0;
        for (final Tier tier : tiers) {
            blocks += tier.blockCount();
        }
        totalBlocks = blocks;
        // A grown tier has new free blocks.
        freeSignal.signal();
    }

    private long capacity() {
        return totalBlocks / (blocksPerBuffer - 1) * blocksPerBuffer * blockLength;
    }

    long fullHandlerCalls() {
        return fullHandlerCalls.sum();
    }

    long fullFailures() {
        return fullFailures.sum();
    }

    /**
     * Takes {@code count} blocks, linked backwards from {@code previous}, and returns the last.
     * Their words say "used, not last"; the caller writes the last one. Blocks come from
     * {@code preferredTier} first, then from the other tiers fastest first (a full tier falls
     * through to the next one with room); the full handler is called only when no tier has a
     * free block. On failure, gives back whatever it took and throws.
     */
    int allocateChain(final int count, final int previous, final int preferredTier) {
        return allocateChain(count, previous, preferredTier, -1);
    }

    /**
     * As {@link #allocateChain(int, int, int)}, and when {@code newEntryLength >= 0} counts a new
     * entry of that length in the buffer of the chain's last block ({@link CacheBuffer#entries}),
     * under the lock already held to take that block: an insert pays no atomic counter of
     * its own. A caller that then fails frees the chain with {@link #freeChain(int, int, int)}
     * and the same length, which takes the count back.
     */
    int allocateChain(final int count, final int previous, final int preferredTier, final int newEntryLength) {
        return allocateChain(count, previous, preferredTier, newEntryLength, true);
    }

    /**
     * As {@link #allocateChain(int, int, int, int)}; with {@code mayWait} false it takes only
     * blocks that are free now: it never calls the full handler and never waits, and returns
     * {@link BlockAddressDescriptor#NULL_ADDRESS} (never a data block's address: block 0 of every
     * buffer holds metadata) when there are not {@code count} free blocks, with no block taken.
     *
     * <p>With {@code mayWait}, a full cache calls the full handler on this thread, then waits on
     * {@link FreeBlockSignal} (a condition signalled by frees, at most
     * {@link FreeBlockSignal#WAIT_SLICE_NANOS} at a time) until blocks are free or the
     * full-retry timeout has passed; it never spins.
     */
    int allocateChain(final int count, final int previous, final int preferredTier, final int newEntryLength, final boolean mayWait) {
        if (count > totalBlocks) {
            if (!mayWait) {
                return BlockAddressDescriptor.NULL_ADDRESS;
            }
            fullFailures.increment();
            throw new CacheFullException("cache " + name + " cannot hold " + count + " blocks: it has " + totalBlocks
                + " in all (capacity=" + capacity() + ")", count);
        }
        int last = previous;
        int remaining = count;
        long deadline = 0L;
        final int hintSlot = (int)Thread.currentThread().getId() & (HINT_SLOTS - 1);
        while (remaining > 0) {
            final int grownBefore = grown();
            long taken = takeFrom(tiers[preferredTier], remaining, last, hintSlot, newEntryLength);
            for (int t = 0; (taken >>> Integer.SIZE) == 0 && t < tiers.length; t++) {
                if (t != preferredTier) {
                    taken = takeFrom(tiers[t], remaining, last, hintSlot, newEntryLength);
                }
            }
            if (taken >>> Integer.SIZE == 0) {
                // The stacks are empty, but a buffer another thread popped a moment ago may still
                // have free blocks: take them from it directly instead of waiting for its owner.
                taken = takeFromAny(remaining, last, newEntryLength);
            }
            if (taken >>> Integer.SIZE != 0) {
                remaining -= (int)(taken >>> Integer.SIZE);
                last = (int)taken;
                continue;
            }
            // Whether a thread is giving a tier memory, read before whether one gained some: a
            // call that ended after this pass began counted its buffer before it stopped growing.
            final boolean growing = growing();
            if (grown() != grownBefore) {
                // A tier gained a buffer while this pass looked elsewhere: look again (at most
                // once per buffer gained, so this ends).
                continue;
            }
            // Give back a partial chain so that the handler and other threads can use those blocks.
            if (last != previous) {
                freeChain(last, previous);
                last = previous;
                remaining = count;
            }
            if (!mayWait) {
                return BlockAddressDescriptor.NULL_ADDRESS;
            }
            final long now = System.nanoTime();
            if (deadline == 0L) {
                deadline = now + fullRetryNanos;
            } else if (now - deadline >= 0) {
                fullFailures.increment();
                throw full(count, "no block could be had within fullRetryTimeout=" + Duration.ofNanos(fullRetryNanos));
            }
            if (growing) {
                // Another thread is giving a tier its last buffers' memory: the cache is not full,
                // so wait for that buffer (its publication signals) rather than evict or fail.
                freeSignal.await(this::anyFreeBlock, Math.min(FreeBlockSignal.WAIT_SLICE_NANOS, deadline - now));
                continue;
            }
            fullHandlerCalls.increment();
            if (!fullHandler.onCacheFull(count)) {
                fullFailures.increment();
                throw full(count, "the full handler freed nothing");
            }
            // What the handler freed is retried at once; if it freed nothing yet (its pass skipped
            // busy segments, or another thread's pass runs), wait for a free, not a spin.
            freeSignal.await(this::anyFreeBlock, Math.min(FreeBlockSignal.WAIT_SLICE_NANOS, deadline - System.nanoTime()));
        }
        return last;
    }

    /**
     * Runs the full handler once on the calling thread, which must hold no lock an eviction pass
     * could want, then waits up to {@code timeoutNanos} for {@code count} blocks to be free
     * (calling the handler again between waits).
     *
     * @return {@link BlockCache#ROOM_FREE} if {@code count} blocks were free when it returned (a
     *         hint: another thread may take them first), {@link BlockCache#ROOM_NONE} if the
     *         handler freed nothing and said nothing could be freed, else
     *         {@link BlockCache#ROOM_LATER} (the time ran out, or there was none to wait).
     */
    int makeRoom(final int count, final long timeoutNanos) {
        if (count > totalBlocks) {
            return BlockCache.ROOM_NONE;
        }
        if (freeBlocksAtLeast(count)) {
            return BlockCache.ROOM_FREE;
        }
        final long deadline = System.nanoTime() + Math.max(0L, timeoutNanos);
        while (true) {
            fullHandlerCalls.increment();
            final boolean retry = fullHandler.onCacheFull(count);
            if (freeBlocksAtLeast(count)) {
                return BlockCache.ROOM_FREE;
            }
            if (!retry) {
                return BlockCache.ROOM_NONE;
            }
            final long left = deadline - System.nanoTime();
            if (left <= 0) {
                return BlockCache.ROOM_LATER;
            }
            if (freeSignal.await(() -> freeBlocksAtLeast(count), Math.min(FreeBlockSignal.WAIT_SLICE_NANOS, left))) {
                return BlockCache.ROOM_FREE;
            }
        }
    }

    /** @return threads waiting for free blocks now. */
    int roomWaiters() {
        return freeSignal.waiters();
    }

    /** @return buffers the on-demand tiers published so far (a change: one gained memory). */
    private int grown() {
        int grown = 0;
        for (final Tier tier : tiers) {
            grown += tier.grown();
        }
        return grown;
    }

    /** @return whether a thread is giving an on-demand tier a buffer's memory now. */
    private boolean growing() {
        for (final Tier tier : tiers) {
            if (tier.growing()) {
                return true;
            }
        }
        return false;
    }

    private boolean anyFreeBlock() {
        return hasFreeBlocks(0, buffers.length);
    }

    /** @return whether the online buffers hold at least {@code count} free blocks (a racy sum). */
    private boolean freeBlocksAtLeast(final int count) {
        long free = 0;
        for (final CacheBuffer buffer : buffers) {
            if (buffer != null && !buffer.draining && !buffer.offline) {
                free += buffer.freeCountVolatile();
                if (free >= count) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Takes up to {@code want} blocks from the first buffer found with free blocks, in any tier,
     * whether or not it sits in its tier's stack (its owner may have popped it a moment ago).
     */
    private long takeFromAny(final int want, final int previous, final int newEntryLength) {
        for (final CacheBuffer buffer : buffers) {
            if (buffer != null && !buffer.draining && !buffer.offline && buffer.freeCountVolatile() > 0) {
                final long taken = takeBlocks(buffer, want, previous, false, newEntryLength, false);
                if (taken >>> Integer.SIZE != 0) {
                    return taken;
                }
            }
        }
        return previous & BlockMetadataDescriptor.LINK_MASK;
    }

    /**
     * Takes {@code count} blocks of one tier only, linked backwards from {@code previous}; never
     * calls the full handler and never falls through to another tier.
     *
     * @return the last block taken.
     * @throws CacheFullException if the tier has not that many free blocks; nothing is taken.
     */
    int allocateInTier(final Tier tier, final int count) {
        int last = BlockAddressDescriptor.NULL_ADDRESS;
        int remaining = count;
        final int hintSlot = (int)Thread.currentThread().getId() & (HINT_SLOTS - 1);
        while (remaining > 0) {
            final long taken = takeFrom(tier, remaining, last, hintSlot, -1);
            if (taken >>> Integer.SIZE != 0) {
                remaining -= (int)(taken >>> Integer.SIZE);
                last = (int)taken;
                continue;
            }
            final long direct = takeFromTierBuffers(tier, remaining, last);
            if (direct >>> Integer.SIZE != 0) {
                remaining -= (int)(direct >>> Integer.SIZE);
                last = (int)direct;
                continue;
            }
            // No buffer of the tier has a free block now: fail, never spin (relocation and
            // promotion try again on their next pass).
            if (last != BlockAddressDescriptor.NULL_ADDRESS) {
                freeChain(last, BlockAddressDescriptor.NULL_ADDRESS);
            }
            throw new CacheFullException("tier " + tier.name + " of cache " + name + " has not " + count
                + " free blocks", count);
        }
        return last;
    }

    /**
     * Takes up to {@code want} blocks from one tier: from the calling thread's hint buffer of
     * that tier if it has free blocks, else from the first buffer popped from the tier's stack that has any.
     *
     * @return the number taken in the high 32 bits (0 if none could be had at once), the new
     *         last address in the low 32 bits.
     */
    private long takeFrom(final Tier tier, final int want, final int previous, final int hintSlot, final int newEntryLength) {
        CacheBuffer hint = tier.hints[hintSlot];
        final CacheBuffer freed = tier.freed[hintSlot];
        if (freed != null && freed != hint && freed.freeCountVolatile() >= want) {
            // The buffer this thread freed into last holds the whole request, with the blocks it
            // freed on top of its list. The current buffer goes first if its next free blocks
            // are one run for all of it (see the class comment); else the freed buffer becomes
            // the current one.
            if (hint != null && hint.freeCountVolatile() >= want) {
                final long taken = takeBlocks(hint, want, previous, false, newEntryLength, true);
                if (taken >>> Integer.SIZE != 0) {
                    return taken;
                }
            }
            tier.hints[hintSlot] = freed;
            hint = freed;
        }
        if (hint != null && hint.freeCountVolatile() > 0) {
            final long taken = takeBlocks(hint, want, previous, false, newEntryLength, false);
            if (taken >>> Integer.SIZE != 0) {
                return taken;
            }
        }
        // A popped buffer that turns out full (a hint another thread filled while it sat in the
        // stack) is dropped from the stack by takeBlocks: pop the next one. Each such pop removes
        // a buffer, so this ends once a buffer gives blocks or the stack is empty.
        while (true) {
            final CacheBuffer buffer = tier.available.pop();
            if (buffer == null) {
                return previous & BlockMetadataDescriptor.LINK_MASK;
            }
            tier.hints[hintSlot] = buffer;
            final long taken = takeBlocks(buffer, want, previous, true, newEntryLength, false);
            if (taken >>> Integer.SIZE != 0) {
                return taken;
            }
        }
    }

    private CacheFullException full(final int count, final String why) {
        return new CacheFullException("cache " + name + " is full: " + count + " blocks of " + blockLength
            + " bytes needed, capacity=" + capacity() + ": " + why, count);
    }

    /**
     * Pops up to {@code want} blocks of {@code buffer}, linked backwards from {@code previous}.
     *
     * @param polled whether the caller took the buffer off the stack (and so must put it back
     *               if it still has free blocks); {@code false} for the calling thread's hint, which
     *               may sit in the stack meanwhile: a buffer that fills stays there until a popper
     *               finds it full and drops it.
     * @param newEntryLength if {@code >= 0} and this call takes the chain's last block (all
     *                       {@code want}), a new entry of that length is counted in this buffer.
     * @param onlyAsOneRun   take all {@code want} blocks only if the next {@code want} of the
     *                       free list are adjacent in memory, else none (only with {@code polled}
     *                       false).
     * @return the number taken in the high 32 bits, the new last address in the low 32 bits.
     */
    private long takeBlocks(final CacheBuffer buffer, final int want, final int previous, final boolean polled,
                            final int newEntryLength, final boolean onlyAsOneRun) {
        int last = previous;
        final int taken;
        boolean putBack = false;
        buffer.lock();
        try {
            if (buffer.draining || buffer.offline) {
                // Taken out of service by a shrink (its memory may be gone): never allocate from
                // it, and drop it from the stack if it was popped.
                if (polled) {
                    buffer.inQueue = false;
                }
                return previous & BlockMetadataDescriptor.LINK_MASK;
            }
            final long header = buffer.header();
            final int free = BlockMetadataDescriptor.freeCount(header);
            int head = BlockMetadataDescriptor.freeHeadIndex(header);
            if (onlyAsOneRun && !headIsRun(buffer, head, want, free)) {
                return previous & BlockMetadataDescriptor.LINK_MASK;
            }
            taken = Math.min(want, free);
            for (int i = 0; i < taken; i++) {
                final int block = head;
                head = BlockMetadataDescriptor.nextFreeIndex(buffer.word(block));
                buffer.word(block, usedWord(last));
                last = BlockAddressDescriptor.pack(buffer.index, block, blockIndexBits);
            }
            buffer.headerRelease(BlockMetadataDescriptor.headerWord(free - taken, head));
            if (newEntryLength >= 0 && taken == want) {
                buffer.count(1, newEntryLength);
            }
            if (polled) {
                putBack = free - taken > 0;
                buffer.inQueue = putBack;
            }
        } finally {
            buffer.unlock();
        }
        if (putBack) {
            tiers[buffer.tier].available.push(buffer);
        }
        return ((long)taken << Integer.SIZE) | (last & BlockMetadataDescriptor.LINK_MASK);
    }

    /**
     * @return whether the {@code want} free blocks from {@code head} on are adjacent in memory
     *         (called under the buffer's lock).
     */
    private static boolean headIsRun(final CacheBuffer buffer, final int head, final int want, final int free) {
        if (free < want) {
            return false;
        }
        int block = head;
        for (int i = 1; i < want; i++) {
            final int next = BlockMetadataDescriptor.nextFreeIndex(buffer.word(block));
            if (next != block + 1) {
                return false;
            }
            block = next;
        }
        return true;
    }

    /**
     * Frees the chain from {@code last} backwards, up to but excluding {@code stop} (or to its
     * first block), locking one buffer at a time.
     */
    void freeChain(final int last, final int stop) {
        freeChain(last, stop, -1);
    }

    /**
     * As {@link #freeChain(int, int)}, and when {@code entryLength >= 0} takes one entry of that
     * length off the counts of the buffer of {@code last} (a delete, or an insert undone), under
     * the lock taken to free that block. Either way the first buffer freed into that is not
     * draining (that of {@code last}, unless it drains) becomes the calling thread's hint in
     * its tier.
     */
    void freeChain(final int last, final int stop, final int entryLength) {
        int current = last;
        int uncount = entryLength;
        CacheBuffer warm = null;
        while (current != stop && current != BlockAddressDescriptor.NULL_ADDRESS) {
            final CacheBuffer buffer = buffers[current >>> blockIndexBits];
            final boolean putBack;
            buffer.lock();
            try {
                if (buffer.offline) {
                    // Only a close takes a buffer with used blocks offline, and its memory is
                    // then gone: a free that waited for the lock while the close held it must
                    // not read it (a delete racing a close: Pravega's read index closes its
                    // entries on an executor of its own).
                    throw new CacheClosedException("cache closed while freeing address=0x" + Integer.toHexString(current));
                }
                final long header = buffer.header();
                int free = BlockMetadataDescriptor.freeCount(header);
                int head = BlockMetadataDescriptor.freeHeadIndex(header);
                if (uncount >= 0) {
                    buffer.count(-1, -uncount);
                    uncount = -1;
                }
                do {
                    final int block = current & blockIndexMask;
                    final long word = buffer.word(block);
                    if (!isUsed(word)) {
                        buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, head));
                        throw new CacheCorruptedException("freeing address=0x" + Integer.toHexString(current) + " which is free");
                    }
                    buffer.word(block, BlockMetadataDescriptor.freeWord(head));
                    // The list stays ascending only if each block goes back right before the head.
                    buffer.freeListAscending &= head == 0 ? block == blocksPerBuffer - 1 : block + 1 == head;
                    head = block;
                    free++;
                    current = previousAddress(word);
                } while (current != stop && current != BlockAddressDescriptor.NULL_ADDRESS
                    && current >>> blockIndexBits == buffer.index);
                if (free == blocksPerBuffer - 1 && !buffer.freeListAscending) {
                    // Wholly free and out of order: back to ascending order, so that the next
                    // entries are laid out forwards. (Already ascending, as when the blocks taken
                    // last are given back first, it costs nothing.)
                    buffer.resetFreeList();
                } else {
                    buffer.headerRelease(BlockMetadataDescriptor.headerWord(free, head));
                }
                // A draining buffer never goes back on the stack: no block is taken from it again.
                putBack = !buffer.inQueue && !buffer.draining;
                buffer.inQueue |= putBack;
                if (warm == null && !buffer.draining) {
                    warm = buffer;
                }
            } finally {
                buffer.unlock();
            }
            if (putBack) {
                tiers[buffer.tier].available.push(buffer);
            }
        }
        freeSignal.signal();
        if (warm != null) {
            // The next allocation of this thread that its current buffer cannot hold takes the
            // blocks just freed (see the class comment). A racy write of a hint, as in takeFrom:
            // a buffer that starts draining meanwhile is refused under its lock by takeBlocks.
            final CacheBuffer[] freed = tiers[warm.tier].freed;
            final int slot = (int)Thread.currentThread().getId() & (HINT_SLOTS - 1);
            if (freed[slot] != warm) {
                freed[slot] = warm;
            }
        }
    }

    /** As {@link #takeFromAny}, within one tier's buffers. */
    private long takeFromTierBuffers(final Tier tier, final int want, final int previous) {
        for (int i = tier.firstBuffer; i < tier.firstBuffer + tier.bufferCount; i++) {
            final CacheBuffer buffer = buffers[i];
            if (buffer != null && !buffer.draining && !buffer.offline && buffer.freeCountVolatile() > 0) {
                final long taken = takeBlocks(buffer, want, previous, false, -1, false);
                if (taken >>> Integer.SIZE != 0) {
                    return taken;
                }
            }
        }
        return previous & BlockMetadataDescriptor.LINK_MASK;
    }

    private boolean hasFreeBlocks(final int fromBuffer, final int toBuffer) {
        for (int i = fromBuffer; i < toBuffer; i++) {
            final CacheBuffer buffer = buffers[i];
            if (buffer != null && !buffer.draining && buffer.freeCountVolatile() > 0) {
                return true;
            }
        }
        return false;
    }
}
