package io.streamcache.core.cache;

import io.streamcache.core.CacheConfigurationException;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * A {@link BlockCache}'s {@link BlockCacheMXBean}: registers it in the platform MBean server as
 * {@code io.streamcache:type=BlockCache,name=<cache name>} and reads every attribute off the
 * cache's accessors and a fresh {@link CacheStats} snapshot.
 *
 * <p><b>Threading:</b> registration and unregistration run on the thread that builds or closes
 * the cache; the attributes are read from JMX threads, through the cache's thread-safe reads.
 */
final class BlockCacheJmx implements BlockCacheMXBean {
    private final BlockCache cache;
    private final BlockAllocator allocator;

    private BlockCacheJmx(final BlockCache cache, final BlockAllocator allocator) {
        this.cache = cache;
        this.allocator = allocator;
    }

    /**
     * @return the name the MBean was registered under.
     * @throws CacheConfigurationException if it could not be registered (a name used twice).
     */
    static ObjectName register(final BlockCache cache, final BlockAllocator allocator) {
        try {
            final ObjectName objectName = new ObjectName("io.streamcache:type=BlockCache,name=" + ObjectName.quote(cache.name()));
            ManagementFactory.getPlatformMBeanServer().registerMBean(new BlockCacheJmx(cache, allocator), objectName);
            return objectName;
        } catch (final JMException e) {
            throw new CacheConfigurationException("could not register the cache's MBean (name=" + cache.name()
                + "): choose a unique name or disable registerMBean", e);
        }
    }

    /**
     * Unregisters the MBean named {@code objectName}.
     *
     * @throws JMException if it could not be (the caller logs it: closing goes on).
     */
    static void unregister(final ObjectName objectName) throws JMException {
        ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
    }

    @Override
    public String getName() {
        return cache.name();
    }

    @Override
    public String getRegion() {
        return cache.regionDescription();
    }

    @Override
    public long getCapacity() {
        return cache.capacity();
    }

    @Override
    public int getBufferCount() {
        return (int)(cache.capacity() / cache.bufferLength());
    }

    @Override
    public int getBlockLength() {
        return cache.blockLength();
    }

    @Override
    public long getBlockCount() {
        return allocator.totalBlocks();
    }

    @Override
    public long getUsedBlockCount() {
        return cache.stats().usedBlockCount();
    }

    @Override
    public long getFreeBlockCount() {
        return cache.stats().freeBlockCount();
    }

    @Override
    public long getUsedBytes() {
        return cache.stats().usedBytes();
    }

    @Override
    public long getStoredBytes() {
        return cache.stats().storedBytes();
    }

    @Override
    public long getEntryCount() {
        return cache.stats().entryCount();
    }

    @Override
    public double getUtilization() {
        return cache.stats().utilization();
    }

    @Override
    public long getFullHandlerCalls() {
        return allocator.fullHandlerCalls();
    }

    @Override
    public long getFullFailures() {
        return allocator.fullFailures();
    }

    @Override
    public String[] getTierNames() {
        final String[] names = new String[cache.tierCount()];
        for (int t = 0; t < names.length; t++) {
            names[t] = cache.tierName(t);
        }
        return names;
    }

    @Override
    public long[] getTierCapacities() {
        return tierValues(TierStats::capacity);
    }

    @Override
    public long[] getTierUsedBlockCounts() {
        return tierValues(TierStats::usedBlockCount);
    }

    @Override
    public long[] getTierStoredBytes() {
        return tierValues(TierStats::storedBytes);
    }

    @Override
    public long[] getTierMaxCapacities() {
        return tierValues(TierStats::maxCapacity);
    }

    @Override
    public long resizeTier(final int tier, final long capacity) {
        return cache.resize(tier, capacity);
    }

    @Override
    public long[] getTierEntryCounts() {
        return tierValues(TierStats::entryCount);
    }

    @Override
    public long[] getTierHits() {
        return tierValues(TierStats::hits);
    }

    @Override
    public long[] getTierDemotions() {
        return tierValues(TierStats::demotions);
    }

    @Override
    public long[] getTierPromotions() {
        return tierValues(TierStats::promotions);
    }

    private long[] tierValues(final ToLongFunction<TierStats> field) {
        final List<TierStats> stats = cache.stats().tiers();
        final long[] values = new long[stats.size()];
        for (int t = 0; t < values.length; t++) {
            values[t] = field.applyAsLong(stats.get(t));
        }
        return values;
    }
}
