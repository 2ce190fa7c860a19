package io.streamcache.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.StoreLog;
import io.streamcache.segmentstore.compaction.Compaction;

import java.util.Objects;

/**
 * Micrometer meters over a durable store's log ({@link SegmentStore#log()}): the aggregating
 * writer (requests by outcome, batches, bytes written, payload and padding, forces as a timer,
 * queue depth), the directory (files, bytes on disk, file lifecycle), the failure state, and the
 * store's compaction when it has one; every meter tagged {@code store=<name>}. A store without a
 * log binds nothing. Thread-safe: bind it from any thread; meters read fresh snapshots when scraped.
 */
public final class LogMetrics implements MeterBinder {
    private final SegmentStore store;
    private final Tags tags;

    /**
     * @param store the store whose log to report.
     * @param tags  extra tags for every meter.
     */
    public LogMetrics(final SegmentStore store, final Iterable<Tag> tags) {
        this.store = Objects.requireNonNull(store, "store");
        this.tags = Tags.of(tags).and("store", store.name());
    }

    /** @param store the store whose log to report, with no extra tags. */
    public LogMetrics(final SegmentStore store) {
        this(store, Tags.empty());
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final StoreLog log = store.log().orElse(null);
        if (log == null) {
            return;
        }
        final Meters meters = new Meters(registry, tags);
        meters.with("outcome", "success").counter("log.requests", "requests", "log requests (appends, creates, seals, ...) completed",
            log, l -> l.writerStats().requests());
        meters.with("outcome", "failure").counter("log.requests", "requests", "log requests (appends, creates, seals, ...) completed",
            log, l -> l.writerStats().failedRequests());
        meters.counter("log.batches", "batches", "batch writes (one positional write each)", log, l -> l.writerStats().batches());
        meters.counter("log.written", Meters.BYTES, "bytes written: records, padding and carried tails", log,
            l -> l.writerStats().bytesWritten());
        meters.counter("log.payload", Meters.BYTES, "payload bytes of the records written", log, l -> l.writerStats().payloadBytes());
        meters.counter("log.padding", Meters.BYTES, "bytes of padding records", log, l -> l.writerStats().paddingBytes());
        meters.timer("log.forces", "forces (fdatasync) of the log and the time spent in them", log, l -> l.writerStats().forces(),
            l -> l.writerStats().forceNanos());
        meters.gauge("log.queue.depth", "requests", "requests waiting in the writer's queue now", log, l -> l.writerStats().queueDepth());
        meters.gauge("log.buffered", Meters.BYTES, "bytes in the batch buffer now", log, l -> l.writerStats().bufferedBytes());
        meters.gauge("log.failed", null, "1 while the writer is failed (appends refused), else 0", log, l -> l.isFailed() ? 1 : 0);
        meters.counter("log.recoveries", "recoveries", "times the writer recovered by itself after a disk error", log,
            StoreLog::automaticRecoveries);
        meters.gauge("log.files", "files", "log files holding records (not spares)", log, l -> l.directoryStats().files());
        meters.gauge("log.files.prepared", "files", "spare files ready for the next roll", log, l -> l.directoryStats().preparedFiles());
        meters.gauge("log.disk.used", Meters.BYTES, "bytes the log's files and spares take on disk", log, l -> l.directoryStats().bytes());
        meters.counter("log.files.rolled", "files", "files the writer moved to after filling one", log, l -> l.writerStats().filesRolled());
        meters.counter("log.files.retired", "files", "dead files handed over for deletion or recycling", log,
            l -> l.writerStats().filesRetired());
        meters.counter("log.files.created", "files", "files created since open", log, l -> l.directoryStats().filesCreated());
        meters.counter("log.files.recycled", "files", "files recycled into spares since open", log, l -> l.directoryStats().filesRecycled());
        meters.counter("log.files.deleted", "files", "files deleted since open", log, l -> l.directoryStats().filesDeleted());
        meters.counter("log.prewritten", Meters.BYTES, "zero bytes written to pre-write new files", log,
            l -> l.directoryStats().bytesPreWritten());
        final Compaction compaction = store.compaction().orElse(null);
        if (compaction != null) {
            meters.counter("compaction.passes", "passes", "compaction passes run", compaction, c -> c.stats().passes());
            meters.counter("compaction.files", "files", "files whose live records were copied out and which were retired", compaction,
                c -> c.stats().filesCompacted());
            meters.counter("compaction.records", "records", "records copied to the log's tail", compaction, c -> c.stats().recordsCopied());
            meters.counter("compaction.copied", Meters.BYTES, "payload bytes copied", compaction, c -> c.stats().bytesCopied());
            meters.counter("compaction.truncations", "truncations", "truncations made by retention policies", compaction,
                c -> c.stats().retentionTruncations());
            meters.counter("compaction.failures", "passes", "passes that failed", compaction, c -> c.stats().failures());
        }
    }
}
