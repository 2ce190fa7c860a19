package io.streamcache.core.cache;

import io.streamcache.core.InvalidAddressException;

import java.util.function.IntConsumer;

/**
 * A shrink of one tier of a {@link BlockCache} in progress, confined to the thread that
 * started it (which holds the cache's resize lock until it closes the shrink), from {@link BlockCache#startShrink}:
 * the buffers to give back are <em>draining</em> (no block is taken from them again, reads and
 * frees go on); the entries' owner moves their entries out ({@link BlockCache#relocate}, into
 * the same tier or another) or deletes them, then {@link #release()} gives the memory of every
 * buffer that is wholly free back; {@link #close()} puts the buffers it could not release back
 * into service.
 *
 * <pre>
 * try (TierShrink shrink = cache.startShrink(0, 512L &lt;&lt; 20)) {
 *     while (!shrink.isComplete()) {
 *         shrink.forEachEntry(address -&gt; owner.moveOrDrop(address));   // under the owner's locks
 *         shrink.release();
 *     }
 * }
 * </pre>
 *
 * <p>The tier's capacity ({@link BlockCache#tierCapacity}) counts a draining buffer until its
 * memory is released: data plus metadata never exceed it at any moment.
 *
 * <p><b>Threading:</b> one thread: the one that started it, which must close it (it holds the
 * cache's resize lock meanwhile: other resizes of the cache wait). The entries' owners may move
 * entries from other threads; other threads go on reading, appending and inserting.
 */
public final class TierShrink implements AutoCloseable {
    private final TierResizer resizer;
    final Tier tier;
    final CacheBuffer[] draining;
    private final int targetBuffers;
    private final long bufferLength;
    private boolean closed;

    TierShrink(final TierResizer resizer, final Tier tier, final int targetBuffers, final CacheBuffer[] draining,
               final int bufferLength) {
        this.resizer = resizer;
        this.tier = tier;
        this.targetBuffers = targetBuffers;
        this.draining = draining;
        this.bufferLength = bufferLength;
    }

    /**
     * @return the tier being shrunk.
     */
    public int tier() {
        return tier.index;
    }

    /**
     * @return the capacity in bytes the tier has once every draining buffer is released.
     */
    public long targetCapacity() {
        return targetBuffers * bufferLength;
    }

    /**
     * @return draining buffers not released yet.
     */
    public int pendingBuffers() {
        int pending = 0;
        for (final CacheBuffer buffer : draining) {
            buffer.lock();
            try {
                pending += buffer.offline ? 0 : 1;
            } finally {
                buffer.unlock();
            }
        }
        return pending;
    }

    /**
     * @return whether every draining buffer has been released.
     */
    public boolean isComplete() {
        return pendingBuffers() == 0;
    }

    /**
     * Calls {@code action} with the address of every live entry that has a block in a draining
     * buffer (its owner must move or delete it). The words are read without the owners'
     * serialization: an address may be stale by the time the action runs (check it under the
     * owner's lock, e.g. with {@link #touches}), and an entry inserted meanwhile may be missed,
     * so repeat until {@link #isComplete()}. O(blocks of the cache): reads every metadata word.
     */
    public void forEachEntry(final IntConsumer action) {
        ensureOpen();
        resizer.forEachEntry(this, action);
    }

    /**
     * @param address of a live entry, owned by the calling thread.
     * @return whether one of its blocks is in a draining buffer: it must move for the shrink to complete.
     * @throws InvalidAddressException if it is not the address of a live entry.
     */
    public boolean touches(final int address) {
        ensureOpen();
        return resizer.touchesDraining(address);
    }

    /**
     * Releases every draining buffer that is wholly free now.
     *
     * @return buffers released by this call.
     */
    public int release() {
        ensureOpen();
        return resizer.release(this);
    }

    /**
     * Ends the shrink (idempotent): buffers not released go back into service, and other
     * resizes may run.
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            resizer.finish(this);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the shrink of tier " + tier.name + " has ended");
        }
    }

    @Override
    public String toString() {
        return "TierShrink{tier=" + tier.name + ", draining=" + draining.length + ", targetBuffers=" + targetBuffers + '}';
    }
}
