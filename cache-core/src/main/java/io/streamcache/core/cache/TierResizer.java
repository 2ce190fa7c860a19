package io.streamcache.core.cache;

import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.ResizableRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;

import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.entryLength;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isLast;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.isUsed;
import static io.streamcache.core.internal.layout.BlockMetadataDescriptor.previousAddress;

/**
 * Changes the size of a {@link BlockCache}'s resizable tiers by whole buffers while the cache
 * runs: brings buffers online (grow) and takes them through draining to offline (shrink).
 *
 * <pre>
 *                 grow: region.online(i), metadata words reset, pushed on the tier's stack
 *    +---------+ ----------------------------------------------------------> +--------+
 *    | offline |                                                             | online |
 *    +---------+ <------------ +----------+ <------------------------------- +--------+
 *         release, when every     | draining |   shrink: marked under the buffer's lock,
 *         block is free again     +----------+   dropped from the stack, never allocated from
 *         (views released,             |         again; its live entries are moved or deleted
 *         region.offline(i))           |         by their owner
 *                                      '-----> cancel: back online (pushed if it has free blocks)
 * </pre>
 *
 * <p><b>Why a draining state.</b> The cache does not know who owns an entry, so it cannot move
 * one itself: an entry is changed only by its owner, under the owner's serialization (a
 * segment's lock). A shrink therefore first stops allocation from the buffers it will release,
 * then lets the owner move or delete their entries ({@link TierShrink#forEachEntry} lists the
 * candidates), and releases a buffer only once it is wholly free. The memory bound holds at
 * every moment: a buffer counts in its tier's capacity until its memory is released.
 *
 * <p><b>Which buffers.</b> Those with the fewest used blocks (the least to move), or, for a
 * region that gives memory back only from its end (a truncated file), the highest ones.
 *
 * <p><b>Threading:</b> one resize at a time in a cache, under {@link #lock} (held from the
 * start of a shrink to its {@link TierShrink#close()}, on the resizing thread): resizes are rare
 * and never on the data path. Appends, inserts, reads and frees on other threads go on
 * meanwhile; the allocator checks {@link CacheBuffer#draining} under each buffer's lock.
 */
final class TierResizer {
    private static final Logger LOG = LoggerFactory.getLogger(TierResizer.class);

    private final String cacheName;
    private final BlockTable table;
    private final TierTable tiers;
    private final BlockAllocator allocator;
    private final int bufferLength;
    private final ReentrantLock lock = new ReentrantLock();

    TierResizer(final String cacheName, final BlockTable table, final TierTable tiers, final BlockAllocator allocator,
                final int bufferLength) {
        this.cacheName = cacheName;
        this.table = table;
        this.tiers = tiers;
        this.allocator = allocator;
        this.bufferLength = bufferLength;
    }

    /**
     * @return whole buffers of {@code capacity} bytes, checked against the tier's bounds.
     * @throws IllegalArgumentException if it holds no buffer or exceeds the tier's maximum.
     * @throws UnsupportedOperationException if the tier cannot change size.
     */
    int targetBuffers(final Tier tier, final long capacity) {
        if (tier.resizable == null) {
            throw new UnsupportedOperationException("tier " + tier.name + " of cache " + cacheName + " cannot change size: "
                + "build it with a maxCapacity (BlockCache.Builder.maxCapacity or tier(name, capacity, maxCapacity, region))");
        }
        final long buffers = capacity / bufferLength;
        if (buffers < 1 || buffers > tier.bufferCount) {
            throw new IllegalArgumentException("capacity=" + capacity + " for tier " + tier.name + " of cache " + cacheName
                + " must hold at least one buffer of " + bufferLength + " bytes and at most its maxCapacity="
                + (long)tier.bufferCount * bufferLength);
        }
        return (int)buffers;
    }

    /**
     * Brings offline buffers of {@code tier} online, lowest first, until it has {@code target}:
     * all of them or none (if the region cannot give them all memory, those it gave are taken
     * back and the exception thrown).
     */
    void grow(final Tier tier, final int target) {
        lock.lock();
        try {
            final ResizableRegion region = tier.resizable;
            final int wanted = target - tier.online;
            if (wanted <= 0) {
                return;
            }
            final int[] slots = new int[wanted];
            final ByteBuffer[] memory = new ByteBuffer[wanted];
            int n = 0;
            try {
                for (int i = 0; i < tier.bufferCount && n < wanted; i++) {
                    if (table.buffers[tier.firstBuffer + i] == null) {
                        memory[n] = region.online(i);
                        slots[n++] = i;
                    }
                }
            } catch (final RuntimeException e) {
                for (int k = 0; k < n; k++) {
                    region.offline(slots[k]);
                }
                throw e;
            }
            final int blocksPerBuffer = table.blocksPerBuffer;
            for (int k = n - 1; k >= 0; k--) {
                final int index = tier.firstBuffer + slots[k];
                final CacheBuffer buffer = new CacheBuffer(index, tier.index, memory[k], blocksPerBuffer);
                // Published to allocating threads by the stack's compare-and-set; an address in
                // it reaches other threads only after an allocation from it.
                table.buffers[index] = buffer;
                tier.online = tier.online + 1;
                tier.available.push(buffer);
            }
            allocator.onlineChanged();
            LOG.info("cache {}: tier {} grown to {} buffers ({} bytes)", cacheName, tier.name, tier.online,
                (long)tier.online * bufferLength);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Starts a shrink of {@code tier} to {@code target} buffers: marks the buffers above it
     * draining and drops them from the stack. The caller holds nothing; the returned shrink
     * holds the resize lock until it is closed, on this thread.
     */
    TierShrink startShrink(final Tier tier, final int target) {
        lock.lock();
        try {
            // The free counts change under load: sort on a snapshot of them, taken once (a
            // comparator reading them live breaks the sort's contract).
            final List<long[]> candidates = new ArrayList<>();
            for (int i = tier.firstBuffer; i < tier.firstBuffer + tier.bufferCount; i++) {
                final CacheBuffer buffer = table.buffers[i];
                if (buffer != null) {
                    candidates.add(new long[] {i, buffer.freeCountVolatile()});
                }
            }
            if (tier.resizable.releasesFromTheEnd()) {
                candidates.sort(Comparator.comparingLong((long[] c) -> c[0]).reversed());
            } else {
                // Fewest used blocks first (most free), the highest first among equals.
                candidates.sort(Comparator.comparingLong((long[] c) -> c[1]).reversed()
                    .thenComparing(Comparator.comparingLong((long[] c) -> c[0]).reversed()));
            }
            final int count = Math.max(0, tier.online - target);
            final CacheBuffer[] draining = new CacheBuffer[count];
            for (int k = 0; k < count; k++) {
                draining[k] = table.buffers[(int)candidates.get(k)[0]];
            }
            for (final CacheBuffer buffer : draining) {
                buffer.lock();
                try {
                    buffer.draining = true;
                } finally {
                    buffer.unlock();
                }
            }
            dropDraining(tier);
            return new TierShrink(this, tier, target, draining, bufferLength);
        } catch (final RuntimeException | Error e) {
            lock.unlock();
            throw e;
        }
    }

    /**
     * Takes the draining buffers off the tier's stack: pops every buffer, drops the draining
     * ones (under their lock, as an allocating thread that pops one does) and pushes the
     * others back in their order. Allocating threads that find the stack empty meanwhile fall
     * through to another tier or retry (they see free blocks, so the full handler is not called;
     * a cache built with a zero {@code fullRetryTimeout} may fail such an allocation with
     * {@code CacheFullException}: the window is a few pops and pushes, at the start of a shrink
     * and when a buffer was being pushed back as it was marked).
     */
    private void dropDraining(final Tier tier) {
        final List<CacheBuffer> kept = new ArrayList<>();
        for (CacheBuffer buffer = tier.available.pop(); buffer != null; buffer = tier.available.pop()) {
            buffer.lock();
            try {
                if (buffer.draining) {
                    buffer.inQueue = false;
                    continue;
                }
            } finally {
                buffer.unlock();
            }
            kept.add(buffer);
        }
        for (int i = kept.size() - 1; i >= 0; i--) {
            tier.available.push(kept.get(i));
        }
        for (int slot = 0; slot < tier.hints.length; slot++) {
            final CacheBuffer hint = tier.hints[slot];
            if (hint != null && hint.draining) {
                tier.hints[slot] = null;
            }
            final CacheBuffer freed = tier.freed[slot];
            if (freed != null && freed.draining) {
                tier.freed[slot] = null;
            }
        }
    }

    /**
     * Reports the address of every entry with a block in a draining buffer of {@code shrink}:
     * walks the words of every online buffer for last blocks, and each one's chain. The words
     * are read without the owners' serialization, so the list is a snapshot that may name an
     * entry changed since (the owner checks under its lock) and may miss an entry being
     * inserted (its last word is written after its blocks are taken): the caller repeats until
     * the draining buffers are free. Never throws on a chain changed underneath: a walk stops at
     * a word that does not continue the chain.
     */
    void forEachEntry(final TierShrink shrink, final IntConsumer action) {
        final CacheBuffer[] buffers = table.buffers;
        final int blocksPerBuffer = table.blocksPerBuffer;
        for (final CacheBuffer buffer : buffers) {
            if (buffer == null) {
                continue;
            }
            for (int block = 1; block < blocksPerBuffer; block++) {
                final long word = buffer.word(block);
                if (!isUsed(word) || !isLast(word)) {
                    continue;
                }
                final int address = BlockAddressDescriptor.pack(buffer.index, block, table.blockIndexBits);
                if (touchesDraining(address, word)) {
                    action.accept(address);
                }
            }
        }
    }

    /**
     * @return whether the chain ending at {@code address} (whose last word is {@code word}) has a
     *         block in a draining buffer, read without locks and bounded by the entry's length.
     */
    private boolean touchesDraining(final int address, final long word) {
        final CacheBuffer[] buffers = table.buffers;
        int remaining = table.blockCount(entryLength(word));
        int current = address;
        long currentWord = word;
        while (true) {
            final CacheBuffer buffer = buffers[current >>> table.blockIndexBits];
            if (buffer == null) {
                return false;
            }
            if (buffer.draining) {
                return true;
            }
            if (--remaining == 0) {
                return false;
            }
            current = previousAddress(currentWord);
            if (current == BlockAddressDescriptor.NULL_ADDRESS || (current >>> table.blockIndexBits) >= buffers.length
                || (current & table.blockIndexMask) == BlockAddressDescriptor.METADATA_BLOCK_INDEX) {
                return false;
            }
            final CacheBuffer previous = buffers[current >>> table.blockIndexBits];
            if (previous == null) {
                return false;
            }
            currentWord = previous.word(current & table.blockIndexMask);
            if (!isUsed(currentWord) || isLast(currentWord)) {
                return false;
            }
        }
    }

    /**
     * @return whether the live entry at {@code address} has a block in a draining buffer; the
     *         caller owns the entry (checked through its metadata).
     */
    boolean touchesDraining(final int address) {
        final long word = table.lastWordOf(address);
        int current = address;
        for (int i = table.blockCount(entryLength(word)); ; ) {
            if (table.bufferOf(current).draining) {
                return true;
            }
            if (--i == 0) {
                return false;
            }
            current = table.step(current);
        }
    }

    /**
     * Releases every draining buffer of {@code shrink} that is wholly free: marks it offline
     * under its lock (its free count reads 0, its views fail), empties its slot and gives its
     * memory back to the region.
     *
     * @return buffers released by this call.
     */
    int release(final TierShrink shrink) {
        final Tier tier = shrink.tier;
        final int full = table.blocksPerBuffer - 1;
        int released = 0;
        // A thread that took a buffer off the stack before it was marked may have pushed it back
        // since: drop it again, so that no released buffer is left in the stack (its slot is
        // reused when the tier grows, and a buffer must be in the stack at most once).
        boolean inStack = false;
        for (final CacheBuffer buffer : shrink.draining) {
            buffer.lock();
            try {
                inStack |= !buffer.offline && buffer.inQueue;
            } finally {
                buffer.unlock();
            }
        }
        if (inStack) {
            dropDraining(tier);
        }
        for (final CacheBuffer buffer : shrink.draining) {
            buffer.lock();
            try {
                if (buffer.offline || buffer.inQueue || BlockMetadataDescriptor.freeCount(buffer.header()) != full) {
                    // In use, or being pushed back by the thread that popped it: a later call releases it.
                    continue;
                }
                // Its counts (entries that were inserted here and have moved since) go to the tier.
                tier.entries.add(buffer.entries());
                tier.storedBytes.add(buffer.storedBytes());
                buffer.markOffline();
                table.buffers[buffer.index] = null;
                tier.resizable.offline(buffer.index - tier.firstBuffer);
                tier.online = tier.online - 1;
                released++;
            } finally {
                buffer.unlock();
            }
        }
        if (released > 0) {
            allocator.onlineChanged();
            LOG.info("cache {}: tier {} shrunk to {} buffers ({} bytes)", cacheName, tier.name, tier.online,
                (long)tier.online * bufferLength);
        }
        return released;
    }

    /**
     * Ends a shrink: the draining buffers not released go back into service (pushed on the
     * stack if they have free blocks), and the resize lock is released.
     *
     * @return buffers put back into service.
     */
    int finish(final TierShrink shrink) {
        try {
            int restored = 0;
            for (final CacheBuffer buffer : shrink.draining) {
                boolean push = false;
                buffer.lock();
                try {
                    if (buffer.offline) {
                        continue;
                    }
                    buffer.draining = false;
                    restored++;
                    if (!buffer.inQueue && buffer.freeCountVolatile() > 0) {
                        buffer.inQueue = true;
                        push = true;
                    }
                } finally {
                    buffer.unlock();
                }
                if (push) {
                    shrink.tier.available.push(buffer);
                }
            }
            if (restored > 0) {
                LOG.info("cache {}: shrink of tier {} ended with {} buffers still holding entries: back in service ({} buffers, "
                    + "{} bytes)", cacheName, shrink.tier.name, restored, shrink.tier.online, (long)shrink.tier.online * bufferLength);
            }
            return restored;
        } finally {
            lock.unlock();
        }
    }
}
