package io.streamcache.bookkeeper;

import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.LogConfig;
import org.apache.bookkeeper.conf.ServerConfiguration;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The storage's settings, read from the bookie's {@link ServerConfiguration} (keys prefixed
 * {@code streamcache}, listed in docs/bookkeeper.md): immutable, thread-safe.
 *
 * @param cacheBytes         direct memory of the block cache (entries, written and read).
 * @param logFileBytes       length of one log file.
 * @param batchBytes         the aggregating writer's batch length.
 * @param maxDelay           the longest an append waits for its batch to fill.
 * @param compaction         whether the log compacts in the background (reclaims deleted ledgers).
 * @param durableAdds        whether {@code addEntry} returns only once its entry is forced; on by
 *                           itself when the journal does not write data ({@code journalWriteData=false}).
 *                           Without it the log runs under {@link DurabilityPolicy#NEVER} and the
 *                           storage forces it at each flush and checkpoint ({@link #forceAtCheckpoints()}).
 * @param gcInterval         how often the bookie's garbage collection compares ledgers with the metadata.
 * @param zeroCopyReads      whether {@code getEntry} returns a read-only view of the cache (pinned
 *                           until the caller releases it) instead of a copy the caller owns.
 */
record StreamcacheStorageSettings(long cacheBytes, long logFileBytes, int batchBytes, Duration maxDelay,
                                  boolean compaction, boolean durableAdds, Duration gcInterval,
                                  boolean zeroCopyReads) {

    static final String CACHE_BYTES = "streamcacheCacheBytes";
    static final String LOG_FILE_BYTES = "streamcacheLogFileBytes";
    static final String BATCH_BYTES = "streamcacheBatchBytes";
    static final String MAX_DELAY_MICROS = "streamcacheMaxDelayMicros";
    static final String COMPACTION = "streamcacheCompaction";
    static final String DURABLE_ADDS = "streamcacheDurableAdds";
    /**
     * Off by default: BookKeeper's read path treats the buffer {@code getEntry} returns as its own
     * (DbLedgerStorage returns a copy out of its caches, and BookKeeper's tests write into it), so
     * a read-only view is for embedders that never write into read buffers.
     */
    static final String ZERO_COPY_READS = "streamcacheZeroCopyReads";
    /** The directory under the first ledger directory that holds the log. */
    static final String DIRECTORY = "streamcache";

    /**
     * DbLedgerStorage's sizes of its write cache and read-ahead cache, in MiB. This storage's one
     * cache does the work of both, so without {@link #CACHE_BYTES} it takes their sum: a bookie
     * moved from DbLedgerStorage keeps its memory budget, and a bookie in BookKeeper's own test
     * harness (which sets both to 4) gets 8 MiB, as DbLedgerStorage gets there.
     */
    static final String DB_WRITE_CACHE_MB = "dbStorage_writeCacheMaxSizeMb";
    static final String DB_READ_AHEAD_CACHE_MB = "dbStorage_readAheadCacheMaxSizeMb";
    /** The smallest default: one buffer of the block cache's default layout. */
    static final long MIN_DEFAULT_CACHE_BYTES = 2L << 20;

    StreamcacheStorageSettings {
        if (cacheBytes <= 0) {
            throw new IllegalArgumentException(CACHE_BYTES + "=" + cacheBytes + " must be positive");
        }
        if (logFileBytes <= 0) {
            throw new IllegalArgumentException(LOG_FILE_BYTES + "=" + logFileBytes + " must be positive");
        }
        if (batchBytes <= 0) {
            throw new IllegalArgumentException(BATCH_BYTES + "=" + batchBytes + " must be positive");
        }
    }

    /**
     * The batch delay when adds do not wait for the log: the journal acknowledges them, so the
     * storage's forces only need to keep up, and fewer of them leave the disk to the journal's.
     */
    static final long MAX_DELAY_MICROS_WITH_JOURNAL = 10_000;

    static StreamcacheStorageSettings from(final ServerConfiguration conf) {
        final boolean durableAdds = conf.getBoolean(DURABLE_ADDS, !conf.getJournalWriteData());
        final long maxDelayMicros = conf.getLong(MAX_DELAY_MICROS,
            durableAdds ? LogConfig.MAX_DELAY_DEFAULT.toNanos() / 1000 : MAX_DELAY_MICROS_WITH_JOURNAL);
        return new StreamcacheStorageSettings(
            conf.containsKey(CACHE_BYTES) ? conf.getLong(CACHE_BYTES) : defaultCacheBytes(conf, DirectMemoryRegion.directMemoryLimit()),
            conf.getLong(LOG_FILE_BYTES, LogConfig.FILE_LENGTH_DEFAULT),
            conf.getInt(BATCH_BYTES, LogConfig.BATCH_LENGTH_DEFAULT),
            Duration.ofNanos(1000L * maxDelayMicros),
            conf.getBoolean(COMPACTION, true),
            durableAdds,
            Duration.ofMillis(conf.getGcWaitTime()),
            conf.getBoolean(ZERO_COPY_READS, false));
    }

    /**
     * The cache's size when {@link #CACHE_BYTES} is not set: what DbLedgerStorage would take for
     * its two caches under the same configuration. Each of {@link #DB_WRITE_CACHE_MB} and
     * {@link #DB_READ_AHEAD_CACHE_MB} that is set counts as set; each that is not counts as
     * DbLedgerStorage's default, a quarter of the direct-memory limit. So half of the limit when
     * neither is set (512 MiB under {@code -Xmx1G}, which sets the limit to 1 GiB), leaving the
     * other half to Netty and the journal as DbLedgerStorage does; rounded down to whole 2 MiB
     * buffers, at least one.
     *
     * @param directMemoryLimit the process's direct-memory limit ({@link DirectMemoryRegion#directMemoryLimit()}).
     */
    static long defaultCacheBytes(final ServerConfiguration conf, final long directMemoryLimit) {
        final long quarter = directMemoryLimit / 4;
        final long write = conf.containsKey(DB_WRITE_CACHE_MB) ? conf.getLong(DB_WRITE_CACHE_MB) << 20 : quarter;
        final long readAhead = conf.containsKey(DB_READ_AHEAD_CACHE_MB) ? conf.getLong(DB_READ_AHEAD_CACHE_MB) << 20 : quarter;
        final long bytes = (write + readAhead) / MIN_DEFAULT_CACHE_BYTES * MIN_DEFAULT_CACHE_BYTES;
        return Math.max(MIN_DEFAULT_CACHE_BYTES, bytes);
    }

    /**
     * @return whether the log is forced only on demand, at flushes and checkpoints (and for the
     *         calls that must be durable when they return): when the journal writes data, which
     *         makes every acknowledged add durable by itself, so forcing each batch of the log
     *         too would force every byte twice.
     */
    boolean forceAtCheckpoints() {
        return !durableAdds;
    }

    /**
     * @return the log's durability: every batch forced with durable adds, else never by itself
     *         ({@link #forceAtCheckpoints()}).
     */
    DurabilityPolicy durability() {
        return durableAdds ? DurabilityPolicy.EVERY_BATCH : DurabilityPolicy.NEVER;
    }

    /**
     * @return the log's config. Files are pre-written with zeros only under EVERY_BATCH: there it
     *         makes each batch's fdatasync cheaper (no file-size metadata to force); forced only at
     *         checkpoints, it would write every byte of the log twice (zeros, then data), which a
     *         profile of the 64 KB add cell showed as the log's main disk traffic. Forced only at
     *         checkpoints, the writer also fills its batches ({@link LogConfig#fillBatches()}):
     *         nobody waits for an add's append (the journal acknowledged it; reads of it are served
     *         from the record in flight), so each write carries up to {@link #maxDelay()} of adds
     *         instead of the one or two that came since the last write.
     */
    LogConfig logConfig(final Path directory) {
        return LogConfig.builder(directory).fileLength(logFileBytes).batchLength(batchBytes).maxDelay(maxDelay)
            .durability(durability()).fillBatches(forceAtCheckpoints()).preWrite(!forceAtCheckpoints()).name("bookie").build();
    }
}
