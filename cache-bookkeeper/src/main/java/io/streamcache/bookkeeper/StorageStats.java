package io.streamcache.bookkeeper;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.StoreLog;
import org.apache.bookkeeper.stats.Counter;
import org.apache.bookkeeper.stats.Gauge;
import org.apache.bookkeeper.stats.OpStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * What {@link StreamcacheLedgerStorage} reports through the {@link StatsLogger} the bookie hands
 * it (scope {@code bookie}, so a Prometheus scrape shows {@code bookie_*}): thread-safe (the
 * bookie's loggers are). The names that mean what they mean for {@code DbLedgerStorage} are
 * DbLedgerStorage's own ({@code DbLedgerStorageStats}: {@code add-entry}, {@code read-entry},
 * {@code read-cache-hits}, {@code read-cache-misses}, {@code write-cache-hits},
 * {@code read-entrylog-time}, {@code flush}, {@code flush-size}, {@code read-cache-size},
 * {@code read-cache-count}), so a bookie's dashboards and alerts keep working when it changes
 * storage; what only this storage has is under the {@code streamcache} scope
 * ({@code bookie_streamcache_*}: the cache, the log, compaction, health). The label
 * {@code ledgerDir} is DbLedgerStorage's too. {@code docs/bookkeeper.md} lists every name.
 */
final class StorageStats {
    /** DbLedgerStorage's label of its per-directory stats. */
    static final String LEDGER_DIR_LABEL = "ledgerDir";

    final OpStatsLogger addEntry;
    final OpStatsLogger readEntry;
    /** Time a read that missed the cache spent reading the log (DbLedgerStorage: its entry log). */
    final OpStatsLogger readEntryLog;
    final Counter readCacheHits;
    final Counter readCacheMisses;
    /** Reads served from an entry still being appended (DbLedgerStorage: from its write cache). */
    final Counter writeCacheHits;
    final OpStatsLogger flush;
    final OpStatsLogger flushSize;

    private final StatsLogger scope;
    private final StatsLogger streamcache;
    private final List<Runnable> unregister = new ArrayList<>();

    StorageStats(final StatsLogger bookie, final String ledgerDir) {
        this.scope = bookie.scopeLabel(LEDGER_DIR_LABEL, ledgerDir);
        this.streamcache = scope.scope("streamcache");
        this.addEntry = scope.getOpStatsLogger("add-entry");
        this.readEntry = scope.getOpStatsLogger("read-entry");
        this.readEntryLog = scope.getOpStatsLogger("read-entrylog-time");
        this.readCacheHits = scope.getCounter("read-cache-hits");
        this.readCacheMisses = scope.getCounter("read-cache-misses");
        this.writeCacheHits = scope.getCounter("write-cache-hits");
        this.flush = scope.getOpStatsLogger("flush");
        this.flushSize = scope.getOpStatsLogger("flush-size");
    }

    /** Registers the gauges over the store's figures, once it is open. */
    void bind(final SegmentStore store, final StreamcacheLedgerStorage storage) {
        final BlockCache cache = store.cache();
        gauge(scope, "read-cache-size", cache, c -> c.stats().usedBytes());
        gauge(scope, "read-cache-count", cache, c -> c.stats().entryCount());
        gauge(streamcache, "cache-capacity", cache, BlockCache::capacity);
        gauge(streamcache, "cache-used", cache, c -> c.stats().usedBytes());
        gauge(streamcache, "cache-stored", cache, c -> c.stats().storedBytes());
        gauge(streamcache, "cache-evictions", store, s -> s.cacheManager().stats().evictions());
        gauge(streamcache, "cache-evictions-cache-full", store, s -> s.cacheManager().stats().evictionsByReason().cacheFull());
        gauge(streamcache, "cache-pinned-results", store, s -> s.cacheManager().stats().pinnedResults());
        final StoreLog log = store.log().orElseThrow();
        gauge(streamcache, "log-bytes-on-disk", log, l -> l.directoryStats().bytes());
        gauge(streamcache, "log-files", log, l -> l.directoryStats().files());
        gauge(streamcache, "log-bytes-written", log, l -> l.writerStats().bytesWritten());
        gauge(streamcache, "log-payload-bytes", log, l -> l.writerStats().payloadBytes());
        gauge(streamcache, "log-batches", log, l -> l.writerStats().batches());
        gauge(streamcache, "log-forces", log, l -> l.writerStats().forces());
        gauge(streamcache, "log-force-time-ms", log, l -> l.writerStats().forceNanos() / 1_000_000);
        gauge(streamcache, "log-queue-depth", log, l -> l.writerStats().queueDepth());
        gauge(streamcache, "log-failed", log, l -> l.isFailed() ? 1 : 0);
        gauge(streamcache, "log-read-bytes", log, l -> l.historicalReadStats().bytesRead());
        store.compaction().ifPresent(compaction -> {
            gauge(streamcache, "compaction-passes", compaction, c -> c.stats().passes());
            gauge(streamcache, "compaction-files", compaction, c -> c.stats().filesCompacted());
            gauge(streamcache, "compaction-bytes-copied", compaction, c -> c.stats().bytesCopied());
        });
        gauge(streamcache, "health", storage, s -> s.health().state().ordinal());
    }

    /** Unregisters the gauges (a bookie restarted in the same JVM registers its own). */
    void unbind() {
        unregister.forEach(Runnable::run);
        unregister.clear();
    }

    private <T> void gauge(final StatsLogger logger, final String name, final T source, final ToLongFunction<T> value) {
        final Gauge<Long> gauge = new Gauge<>() {
            @Override
            public Long getDefaultValue() {
                return 0L;
            }

            @Override
            public Long getSample() {
                return value.applyAsLong(source);
            }
        };
        logger.registerGauge(name, gauge);
        unregister.add(() -> logger.unregisterGauge(name, gauge));
    }
}
