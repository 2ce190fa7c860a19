package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.CacheStats;
import io.streamcache.core.cache.TierStats;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogDirectoryStats;
import io.streamcache.segmentstore.eviction.CacheManager;

import java.io.IOException;
import java.nio.file.Files;

/**
 * The start-up report: one line with the sizes a store derived (cache, budgets, files,
 * threads) and the limits they were checked against, so that an operator sees at start
 * what a default turned into on this machine (as {@code DbLedgerStorage} logs its cache
 * sizes against the direct-memory limit). Stateless; the builder logs the line at INFO once the
 * store is built.
 */
final class StartupReport {
    private StartupReport() {
    }

    /**
     * @param store                  the store just built.
     * @param log                    its log's settings, or null without a log.
     * @param readBudgetSet          whether the read budget was set rather than derived from the cache.
     * @param readThroughThreads     the read-through threads set.
     * @param readThroughRangeLength the read-through range length set.
     * @param compaction             whether compaction was set.
     */
    static String line(final SegmentStore store, final LogConfig log, final boolean readBudgetSet, final int readThroughThreads,
                       final int readThroughRangeLength, final boolean compaction) {
        final BlockCache cache = store.cache();
        final CacheManager manager = store.cacheManager();
        final CacheStats stats = cache.stats();
        final StringBuilder line = new StringBuilder(256).append("store ").append(store.name()).append(" built: cache ")
            .append(cache.name()).append(" capacity=").append(stats.capacity()).append(" bytes in ").append(stats.bufferCount())
            .append(" buffers of ").append(stats.bufferLength()).append(" (blocks of ").append(stats.blockLength())
            .append(", metadata=").append(stats.metadataBytes()).append("), tiers=[");
        for (final TierStats tier : stats.tiers()) {
            line.append(tier.index() > 0 ? ", " : "").append(tier.name()).append(' ').append(tier.capacity()).append('/')
                .append(tier.maxCapacity()).append(' ').append(tier.region());
        }
        final ReadBudget budget = store.readBudget();
        line.append("], maxEntryLength=").append(cache.maxEntryLength()).append(", maxIndexEntryLength=")
            .append(store.maxIndexEntryLength()).append(", readBudget=").append(budget.limit())
            .append(readBudgetSet ? "" : " (" + SegmentStore.Builder.READ_BUDGET_FRACTION_DEFAULT + " of the cache)")
            .append(budget.isFailFast() ? " fail-fast" : " waiting").append(", manager=").append(manager.name())
            .append(store.ownsManager() ? " (owned)" : " (shared)")
            .append(" policy=").append(manager.policy().getClass().getSimpleName())
            .append(" target=").append(manager.targetUtilization());
        long usable = -1;
        if (log != null) {
            try {
                usable = Files.getFileStore(log.directory()).getUsableSpace();
            } catch (final IOException | RuntimeException e) {
                usable = -1;
            }
            final LogDirectoryStats files = store.log().orElseThrow().directoryStats();
            line.append("; log ").append(log.directory()).append(" fileLength=").append(log.fileLength()).append(" files=")
                .append(files.files()).append(" prepared=").append(files.preparedFiles()).append(" onDisk=").append(files.bytes())
                .append(" batchLength=").append(log.batchLength()).append(" queueCapacity=").append(log.queueCapacity())
                .append(" maxAppendLength=").append(log.maxAppendLength()).append(" durability=").append(log.durability())
                .append(" directIo=").append(log.directIo()).append("; threads: writer 1, forces in flight ")
                .append(log.forcesInFlight()).append(", read-through ").append(readThroughThreads).append(" (range ")
                .append(readThroughRangeLength).append(')').append(compaction ? ", compaction 1" : "");
        }
        line.append("; limits: directMemoryLimit=").append(DirectMemoryRegion.directMemoryLimit())
            .append(" (MaxDirectMemorySize=").append(DirectMemoryRegion.maxDirectMemory())
            .append(", used now=").append(DirectMemoryRegion.usedDirectMemory()).append(')');
        if (log != null) {
            line.append(", log disk usable=").append(usable).append(" reserve=").append(store.diskReserve());
        }
        return line.toString();
    }
}
