package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.cache.WarmCatalog;
import io.streamcache.core.cache.WarmStart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.HashMap;
import java.util.Map;

/**
 * A warm restart's last step, run once while a store with a log is built, after the log's
 * recovery: takes the entries the cache adopted from its region ({@link WarmStart#adopted()})
 * and indexes each one in its segment where recovery says its bytes are durable bytes of a live
 * segment with the same id; deletes the rest from the cache, counting them by {@link Reason}.
 * <pre>
 *  cache.warmStart(): entries adopted by the cache (chains and digests checked against the region)
 *  claim them (one store per cache)
 *  catalog identity != this log's writer epoch - 1 -&gt; every entry IDENTITY (another log, or
 *                                                     another writer opened it since)
 *  for each entry (segment id, offset, address, length):
 *    no live segment with that id                  -&gt; SEGMENT_GONE   (ids are never reused)
 *    offset before the segment's start             -&gt; TRUNCATED
 *    not inside [start, durable length)            -&gt; NOT_DURABLE
 *    not inside one placeholder (overlaps another) -&gt; OVERLAP
 *    else indexed in place of the placeholder's bytes: a cached, durable entry, its generation
 *      the manager's current one less its AGE (its eviction order comes back with it)
 * </pre>
 * Why this is enough never to serve a wrong byte: the cache adopted only bytes equal to those
 * the checkpoint digested, the checkpoint digested only durable bytes of the segment at those
 * offsets, a segment's durable bytes never change and its id is never reused in a log
 * directory, and the writer epoch ties the catalog to this directory's history.
 *
 * <p><b>Threading:</b> confined to the thread building the store.
 */
final class WarmRestore {
    private static final Logger LOG = LoggerFactory.getLogger(WarmRestore.class);

    /** Why an adopted entry was not indexed. */
    enum Reason {
        /** The catalog was written for another log directory or writer epoch. */
        IDENTITY,
        /** No live segment has its id (deleted since). */
        SEGMENT_GONE,
        /** Its offset is before the segment's start (truncated since). */
        TRUNCATED,
        /** It is not inside the segment's durable bytes. */
        NOT_DURABLE,
        /** Its range is not inside one placeholder of the recovered index (it overlaps another entry). */
        OVERLAP
    }

    private WarmRestore() {
    }

    /**
     * @param epoch this store's log writer epoch.
     * @return the report, and the digests of the entries indexed (the first checkpoint's memo).
     */
    static Result attach(final String store, final BlockCache cache, final SegmentTable table, final long epoch) {
        final long started = System.nanoTime();
        final WarmStart start = cache.warmStart();
        final Map<Reason, Long> discarded = new EnumMap<>(Reason.class);
        final Map<WarmCheckpointer.Key, Long> digests = new HashMap<>();
        long restored = 0;
        long restoredBytes = 0;
        final boolean identityOk = start.identity() == epoch - 1;
        // Oldest first: a segment is listed for the manager's passes at the generation of its
        // first cached entry, which must be its oldest.
        final List<WarmCatalog.Entry> entries = new ArrayList<>(start.adopted());
        entries.sort(Comparator.comparingInt(WarmCatalog.Entry::age).reversed());
        for (final WarmCatalog.Entry entry : entries) {
            Reason reason = identityOk ? null : Reason.IDENTITY;
            if (reason == null) {
                final Segment segment = entry.owner() >= 0 && entry.owner() <= Integer.MAX_VALUE
                    ? table.segmentById((int) entry.owner()) : null;
                if (segment == null) {
                    reason = Reason.SEGMENT_GONE;
                } else {
                    segment.lock();
                    try {
                        reason = segment.adoptLocked(entry.position(), entry.length(), entry.address(), entry.age());
                    } finally {
                        segment.unlock();
                    }
                }
            }
            if (reason == null) {
                restored++;
                restoredBytes += entry.length();
                digests.put(new WarmCheckpointer.Key(entry.owner(), entry.position(), entry.address(), entry.length()),
                    entry.digest());
            } else {
                discarded.merge(reason, 1L, Long::sum);
                cache.delete(entry.address());
            }
        }
        final Map<String, Long> byReason = new java.util.TreeMap<>();
        for (final WarmStart.Discard reason : WarmStart.Discard.values()) {
            if (start.discarded(reason) > 0) {
                byReason.put(reason.name(), start.discarded(reason));
            }
        }
        discarded.forEach((reason, count) -> byReason.put(reason.name(), count));
        final WarmRestoreStats stats = new WarmRestoreStats(true, start.warm(), start.cold(), start.warm() ? null : start.coldReason(),
            start.cleanShutdown(), start.catalogEntries(), restored, restoredBytes, byReason, start.nanos() / 1_000_000,
            (System.nanoTime() - started) / 1_000_000);
        if (start.cold() == WarmStart.Cold.DAMAGED_CATALOG || start.cold() == WarmStart.Cold.UNREADABLE_CATALOG) {
            LOG.warn("store {}: warm restart: cold, {} ({})", store, start.cold(), start.coldReason());
        } else if (!start.warm()) {
            LOG.info("store {}: warm restart: cold, {} ({})", store, start.cold(), start.coldReason());
        } else if (stats.cleanShutdown() && stats.discardedTotal() > 0) {
            LOG.warn("store {}: warm restart after a clean close restored {} of {} entries ({} bytes); discarded {}", store,
                restored, start.catalogEntries(), restoredBytes, byReason);
        } else {
            LOG.info("store {}: warm restart{} restored {} of {} entries ({} bytes) in {} ms; discarded {}", store,
                stats.cleanShutdown() ? " after a clean close" : " after a crash", restored, start.catalogEntries(),
                restoredBytes, stats.cacheMillis() + stats.attachMillis(), byReason);
        }
        return new Result(stats, digests);
    }

    /** What {@link #attach} did. */
    record Result(WarmRestoreStats stats, Map<WarmCheckpointer.Key, Long> digests) {
    }
}
