package io.streamcache.bookkeeper;

import io.streamcache.segmentstore.log.DurabilityPolicy;
import io.streamcache.segmentstore.log.LogConfig;
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
 */
record StreamcacheStorageSettings(long cacheBytes, long logFileBytes, int batchBytes, Duration maxDelay,
                                  boolean compaction, boolean durableAdds, Duration gcInterval) {

    static final String CACHE_BYTES = "streamcacheCacheBytes";
    static final String LOG_FILE_BYTES = "streamcacheLogFileBytes";
    static final String BATCH_BYTES = "streamcacheBatchBytes";
    static final String MAX_DELAY_MICROS = "streamcacheMaxDelayMicros";
    static final String COMPACTION = "streamcacheCompaction";
    static final String DURABLE_ADDS = "streamcacheDurableAdds";
    /** The directory under the first ledger directory that holds the log. */
    static final String DIRECTORY = "streamcache";

    static final long CACHE_BYTES_DEFAULT = 256L << 20;

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
            conf.getLong(CACHE_BYTES, CACHE_BYTES_DEFAULT),
            conf.getLong(LOG_FILE_BYTES, LogConfig.FILE_LENGTH_DEFAULT),
            conf.getInt(BATCH_BYTES, LogConfig.BATCH_LENGTH_DEFAULT),
            Duration.ofNanos(1000L * maxDelayMicros),
            conf.getBoolean(COMPACTION, true),
            durableAdds,
            Duration.ofMillis(conf.getGcWaitTime()));
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
     *         profile of the 64 KB add cell showed as the log's main disk traffic.
     */
    LogConfig logConfig(final Path directory) {
        return LogConfig.builder(directory).fileLength(logFileBytes).batchLength(batchBytes).maxDelay(maxDelay)
            .durability(durability()).preWrite(!forceAtCheckpoints()).name("bookie").build();
    }
}
