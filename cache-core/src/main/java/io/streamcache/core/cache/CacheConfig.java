package io.streamcache.core.cache;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.internal.layout.BlockAddressDescriptor;
import io.streamcache.core.internal.layout.BlockMetadataDescriptor;
import io.streamcache.core.memory.MemoryRegionFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A {@link BlockCache}'s configuration as {@link BlockCache.Builder} collected it, checked for
 * consistency before any memory is allocated: the geometry (block and buffer lengths, and what
 * 32-bit addresses and one metadata block can cover), the tiers and the limits.
 *
 * <p><b>Threading:</b> immutable once constructed; built and read by the thread that builds the
 * cache.
 */
final class CacheConfig {
    final String name;
    final int blockLength;
    final int bufferLength;
    final int maxEntryLength;
    final CacheFullHandler fullHandler;
    final Duration fullRetryTimeout;
    final boolean registerMBean;
    /** The tiers to build, fastest first: those declared, or one tier named "default". */
    final List<TierSpec> tiers;
    /** The warm catalog's file for a warm restart ({@link WarmCatalog}), or null: the cache starts empty. */
    final Path warmCatalog;

    /**
     * A tier as configured: its name, capacity in bytes, the capacity it may grow to while the
     * cache runs ({@link #SAME}: its capacity, it cannot change size) and its region.
     */
    record TierSpec(String name, long capacity, long maxCapacity, MemoryRegionFactory region) {
        /** {@link #maxCapacity}: not set, the tier keeps its capacity. */
        static final long SAME = -1;

        /**
         * @return the bytes the tier may grow to: its maxCapacity, or its capacity if none was set.
         */
        long maximum() {
            return maxCapacity == SAME ? capacity : maxCapacity;
        }

        /**
         * @return whether a maxCapacity was set: the tier may then shrink and grow back up to it.
         */
        boolean resizable() {
            return maxCapacity != SAME;
        }

        /** A tier that keeps its capacity. */
        TierSpec(final String name, final long capacity, final MemoryRegionFactory region) {
            this(name, capacity, SAME, region);
        }
    }

    /**
     * Checks the builder's settings, in the order the builder documents them.
     *
     * @param declaredTiers the tiers given with {@code tier(...)}, or none for a one-tier cache of
     *                      {@code capacity} bytes in {@code region}.
     * @param regionSet     whether {@code region(...)} was called (it must not be with tiers).
     * @throws CacheConfigurationException if the configuration is inconsistent.
     */
    /** A cache whose tiers keep their capacity (see the full constructor). */
    CacheConfig(final String name, final long capacity, final int blockLength, final int bufferLength, final int maxEntryLength,
                final MemoryRegionFactory region, final boolean regionSet, final List<TierSpec> declaredTiers,
                final CacheFullHandler fullHandler, final Duration fullRetryTimeout, final boolean registerMBean) {
        this(name, capacity, TierSpec.SAME, blockLength, bufferLength, maxEntryLength, region, regionSet, declaredTiers, fullHandler,
            fullRetryTimeout, registerMBean, null);
    }

    /**
     * The full constructor: {@code maxCapacity} is what a one-tier cache may grow to
     * ({@link TierSpec#SAME}: it keeps its size), {@code warmCatalog} the warm catalog of a warm
     * restart ({@code null}: none).
     */
    CacheConfig(final String name, final long capacity, final long maxCapacity, final int blockLength, final int bufferLength, final int maxEntryLength,
                final MemoryRegionFactory region, final boolean regionSet, final List<TierSpec> declaredTiers,
                final CacheFullHandler fullHandler, final Duration fullRetryTimeout, final boolean registerMBean,
                final Path warmCatalog) {
        this.warmCatalog = warmCatalog;
        this.name = name;
        this.blockLength = blockLength;
        this.bufferLength = bufferLength;
        this.maxEntryLength = maxEntryLength;
        this.fullHandler = fullHandler;
        this.fullRetryTimeout = fullRetryTimeout;
        this.registerMBean = registerMBean;
        this.tiers = declaredTiers.isEmpty() ? List.of(new TierSpec("default", capacity, maxCapacity, region)) : List.copyOf(declaredTiers);
        if (blockLength < BlockCache.Builder.MIN_BLOCK_LENGTH || blockLength > BlockCache.Builder.MAX_BLOCK_LENGTH
            || Integer.bitCount(blockLength) != 1) {
            throw new CacheConfigurationException("blockLength=" + blockLength + " must be a power of two in ["
                + BlockCache.Builder.MIN_BLOCK_LENGTH + ", " + BlockCache.Builder.MAX_BLOCK_LENGTH + "]");
        }
        if (bufferLength > BlockCache.Builder.MAX_BUFFER_LENGTH || Integer.bitCount(bufferLength) != 1 || bufferLength < 2 * blockLength) {
            throw new CacheConfigurationException("bufferLength=" + bufferLength + " must be a power of two of at least two blocks"
                + " (blockLength=" + blockLength + ") and at most " + BlockCache.Builder.MAX_BUFFER_LENGTH);
        }
        final long blocksPerBuffer = bufferLength / blockLength;
        if (blocksPerBuffer * BlockMetadataDescriptor.WORD_LENGTH > blockLength) {
            throw new CacheConfigurationException("bufferLength=" + bufferLength + " has " + blocksPerBuffer
                + " blocks whose metadata does not fit in one block of blockLength=" + blockLength
                + ": use bufferLength <= " + ((long)blockLength * blockLength / BlockMetadataDescriptor.WORD_LENGTH));
        }
        if (!declaredTiers.isEmpty() && (capacity != -1 || regionSet || maxCapacity != TierSpec.SAME)) {
            throw new CacheConfigurationException("capacity=" + capacity + (regionSet ? " and region " : " ")
                + "set with tier(...): give every tier its capacity and region in tier(...) instead");
        }
        long bufferCount = 0;
        for (int t = 0; t < tiers.size(); t++) {
            final TierSpec spec = tiers.get(t);
            final String which = declaredTiers.isEmpty() ? "" : "tier " + spec.name + ": ";
            if (spec.capacity < bufferLength) {
                throw new CacheConfigurationException(which + "capacity=" + spec.capacity
                    + " must hold at least one buffer of bufferLength=" + bufferLength);
            }
            if (spec.name.isEmpty()) {
                throw new CacheConfigurationException("tier " + t + " has an empty name");
            }
            for (int u = 0; u < t; u++) {
                if (tiers.get(u).name.equals(spec.name)) {
                    throw new CacheConfigurationException("tier name " + spec.name + " is used twice (tiers " + u + " and " + t + ")");
                }
            }
            if (spec.maximum() / bufferLength < spec.capacity / bufferLength) {
                throw new CacheConfigurationException(which + "maxCapacity=" + spec.maxCapacity + " is below capacity="
                    + spec.capacity + ": set it at least to the capacity (or leave it unset: the tier then keeps its size)");
            }
            bufferCount += spec.maximum() / bufferLength;
        }
        final long total = bufferCount * bufferLength;
        final long maxBuffers = Math.min(Integer.MAX_VALUE - 8,
            BlockAddressDescriptor.maxBufferCount(BlockAddressDescriptor.blockIndexBits((int)blocksPerBuffer)));
        if (bufferCount > maxBuffers) {
            throw new CacheConfigurationException("capacity (maximum)=" + total + " needs " + bufferCount
                + " buffers, more than 32-bit addresses can name (" + maxBuffers + "): raise bufferLength or blockLength");
        }
        if (maxEntryLength < 0 || maxEntryLength > BlockMetadataDescriptor.MAX_ENTRY_LENGTH) {
            throw new CacheConfigurationException("maxEntryLength=" + maxEntryLength + " must be in [0, "
                + BlockMetadataDescriptor.MAX_ENTRY_LENGTH + "]");
        }
        if (fullRetryTimeout.isNegative()) {
            throw new CacheConfigurationException("fullRetryTimeout=" + fullRetryTimeout + " must not be negative");
        }
    }

    int blocksPerBuffer() {
        return bufferLength / blockLength;
    }
}
