package io.streamcache.segmentstore.eviction;

import io.streamcache.core.CacheConfigurationException;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

/**
 * A {@link CacheManager} as a {@link CacheManagerMXBean}, registered in the platform MBean
 * server as {@code io.streamcache:type=CacheManager,name=<manager name>}. Thread-safe: every
 * getter reads the manager's counters (volatile fields and adders) from the JMX thread that
 * calls it; the operations run on that thread as the manager's public methods do.
 */
final class ManagerMXBean implements CacheManagerMXBean {
    private final CacheManager manager;
    private final EvictionPasses passes;
    private final Promotions promotions;
    private final TierCounters tiers;
    private final ManagerFullHandler fullHandler;

    ManagerMXBean(final CacheManager manager, final EvictionPasses passes, final Promotions promotions,
                  final TierCounters tiers, final ManagerFullHandler fullHandler) {
        this.manager = manager;
        this.passes = passes;
        this.promotions = promotions;
        this.tiers = tiers;
        this.fullHandler = fullHandler;
    }

    /**
     * Registers the bean under the manager's name.
     *
     * @return the name registered, for {@link #unregister}.
     * @throws CacheConfigurationException if the name is taken.
     */
    ObjectName register() {
        final String name = manager.name();
        try {
            final ObjectName objectName = new ObjectName("io.streamcache:type=CacheManager,name=" + ObjectName.quote(name));
            ManagementFactory.getPlatformMBeanServer().registerMBean(this, objectName);
            return objectName;
        } catch (final JMException e) {
            throw new CacheConfigurationException("could not register the cache manager's MBean (name=" + name
                + "): choose a unique name or disable registerMBean", e);
        }
    }

    /**
     * @param objectName the name {@link #register} returned.
     * @throws IllegalStateException if the server refuses.
     */
    static void unregister(final ObjectName objectName) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
        } catch (final JMException e) {
            throw new IllegalStateException("could not unregister " + objectName, e);
        }
    }

    @Override
    public String getName() {
        return manager.name();
    }

    @Override
    public String getPolicy() {
        return manager.policy().getClass().getName();
    }

    @Override
    public int getGeneration() {
        return manager.generation();
    }

    @Override
    public long getRuns() {
        return passes.runs();
    }

    @Override
    public long getEvictions() {
        return passes.evictions();
    }

    @Override
    public long getEvictedBytes() {
        return passes.evictedBytes();
    }

    @Override
    public double getUtilization() {
        return manager.stats().utilization();
    }

    @Override
    public double getTargetUtilization() {
        return manager.targetUtilization();
    }

    @Override
    public long getFullHandlerCalls() {
        return fullHandler.calls();
    }

    @Override
    public long getBusySkips() {
        return passes.busySkips();
    }

    @Override
    public long getEvictionsToTarget() {
        return manager.evictionReasons().toTarget();
    }

    @Override
    public long getEvictionsCacheFull() {
        return manager.evictionReasons().cacheFull();
    }

    @Override
    public long getEvictionsDemoted() {
        return manager.evictionReasons().demoted();
    }

    @Override
    public long getEvictionsResized() {
        return manager.evictionReasons().resized();
    }

    @Override
    public long getEvictionsTruncatedOrDeleted() {
        return manager.evictionReasons().truncatedOrDeleted();
    }

    @Override
    public int getSourceCount() {
        return passes.sourceCount();
    }

    @Override
    public double[] getTierTargetUtilizations() {
        final double[] targets = new double[tiers.tierCount()];
        for (int t = 0; t < targets.length; t++) {
            targets[t] = manager.tierTargetUtilization(t);
        }
        return targets;
    }

    @Override
    public long[] getTierDemotions() {
        return TierCounters.sums(tiers.demotions);
    }

    @Override
    public long[] getTierPromotions() {
        return TierCounters.sums(tiers.promotions);
    }

    @Override
    public long[] getTierEvictions() {
        return TierCounters.sums(tiers.evictions);
    }

    @Override
    public long[] getTierAdmissionRejections() {
        return TierCounters.sums(tiers.rejections);
    }

    @Override
    public int getAdmissionThreshold() {
        return passes.admissionThreshold();
    }

    @Override
    public long getPromotionRequests() {
        return promotions.requests();
    }

    @Override
    public long getPromotionDrops() {
        return promotions.drops();
    }

    @Override
    public long getPromotionSkips() {
        return promotions.skips();
    }

    @Override
    public long getPinnedResults() {
        return manager.readPins().pinnedResults();
    }

    @Override
    public long getEntryPins() {
        return manager.readPins().entryPins();
    }

    @Override
    public long getLeakedResults() {
        return manager.readPins().leakedResults();
    }

    @Override
    public long getEntryPoolTaken() {
        return manager.entryPoolStats().taken();
    }

    @Override
    public long getEntryPoolMade() {
        return manager.entryPoolStats().made();
    }

    @Override
    public long getEntryPoolRecycled() {
        return manager.entryPoolStats().recycled();
    }

    @Override
    public long getEntryPoolDropped() {
        return manager.entryPoolStats().dropped();
    }

    @Override
    public int getEntryPoolSize() {
        return manager.entryPoolStats().pooled();
    }

    @Override
    public int advanceGeneration() {
        return manager.advanceGeneration();
    }

    @Override
    public long evictNow() {
        return manager.evictNow();
    }

    @Override
    public long[] getTierCapacities() {
        final long[] capacities = new long[manager.cache().tierCount()];
        for (int t = 0; t < capacities.length; t++) {
            capacities[t] = manager.cache().tierCapacity(t);
        }
        return capacities;
    }

    @Override
    public long[] getTierMaxCapacities() {
        final long[] capacities = new long[manager.cache().tierCount()];
        for (int t = 0; t < capacities.length; t++) {
            capacities[t] = manager.cache().tierMaxCapacity(t);
        }
        return capacities;
    }

    @Override
    public long getResizeGrows() {
        return manager.resizeStats().grows();
    }

    @Override
    public long getResizeShrinks() {
        return manager.resizeStats().shrinks();
    }

    @Override
    public long getResizePartialShrinks() {
        return manager.resizeStats().partialShrinks();
    }

    @Override
    public long getResizeRelocatedEntries() {
        return manager.resizeStats().relocatedEntries();
    }

    @Override
    public long getResizeEvictedEntries() {
        return manager.resizeStats().evictedEntries();
    }

    @Override
    public long resizeTier(final int tier, final long capacity) {
        return manager.resizeTier(tier, capacity);
    }
}
