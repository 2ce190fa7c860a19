package io.streamcache.core.cache;

import io.streamcache.core.memory.ResizeTarget;

/**
 * One resizable tier of a {@link BlockCache} as a {@link ResizeTarget}
 * ({@link BlockCache#resizeTarget}): resizes through {@link BlockCache#resize}, so a shrink
 * releases only the buffers that are free.
 *
 * <p><b>Threading:</b> immutable; callable from any thread, as the cache's methods it calls.
 */
final class TierResizeTarget implements ResizeTarget {
    private final BlockCache cache;
    private final int tier;
    private final String name;

    TierResizeTarget(final BlockCache cache, final int tier, final String name) {
        this.cache = cache;
        this.tier = tier;
        this.name = name;
    }

    @Override
    public long capacity() {
        return cache.tierCapacity(tier);
    }

    @Override
    public long maxCapacity() {
        return cache.tierMaxCapacity(tier);
    }

    @Override
    public long granularity() {
        return cache.bufferLength();
    }

    @Override
    public long resize(final long capacity) {
        return cache.resize(tier, capacity);
    }

    @Override
    public String name() {
        return name;
    }
}
