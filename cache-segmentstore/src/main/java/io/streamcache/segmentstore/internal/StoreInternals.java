package io.streamcache.segmentstore.internal;

import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.log.internal.recovery.RecoveryHook;
import io.streamcache.segmentstore.internal.compaction.Compactor;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.internal.location.LocationIndex;

/**
 * The parts of a {@link SegmentStore} that are not its API: its log's writer and directory, the
 * location index of a segment, its compactor and historical reader, and two builder hooks
 * (a recovery of one's own, a listener on every durable record). The module does not export
 * this package: the library's own classes and tests reach the parts here, and the tools in
 * {@code cache-bench} and the fault tests in {@code cache-it} that run on the class path
 * (listed in {@code docs/api.md}, with why each needs it). A broker uses the store's API.
 *
 * <p><b>Threading:</b> each method is as thread-safe as what it returns; the builder hooks
 * are for the thread building the store.
 */
public final class StoreInternals {
    private static volatile Bridge bridge;

    private StoreInternals() {
    }

    /** What {@link SegmentStore}'s class initializer installs, once. */
    public interface Bridge {
        /** @return see {@link StoreInternals#logDirectory}. */
        LogDirectory logDirectory(SegmentStore store);

        /** @return see {@link StoreInternals#logWriter}. */
        AggregatingWriter logWriter(SegmentStore store);

        /** @return see {@link StoreInternals#locations}. */
        LocationIndex locations(SegmentStore store, String segment);

        /** @return see {@link StoreInternals#locationMemoryBytes}. */
        long locationMemoryBytes(SegmentStore store);

        /** @return see {@link StoreInternals#compactor}. */
        Compactor compactor(SegmentStore store);

        /** @return see {@link StoreInternals#historicalReader}. */
        HistoricalReader historicalReader(SegmentStore store);

        /** @return see {@link StoreInternals#logRecovery}. */
        SegmentStore.Builder logRecovery(SegmentStore.Builder builder, RecoveryHook hook);

        /** @return see {@link StoreInternals#logListener}. */
        SegmentStore.Builder logListener(SegmentStore.Builder builder, LogRecordListener listener);
    }

    /**
     * @param installed the store's bridge.
     * @throws IllegalStateException if one was installed already.
     */
    public static synchronized void install(final Bridge installed) {
        if (bridge != null) {
            throw new IllegalStateException("StoreInternals bridge already installed");
        }
        bridge = installed;
    }

    /**
     * @return the log's directory (to read records back by file number), or null without a log.
     */
    public static LogDirectory logDirectory(final SegmentStore store) {
        return bridge().logDirectory(store);
    }

    /**
     * @return the log's writer (stats, {@link AggregatingWriter#recover()}), or null without a log.
     */
    public static AggregatingWriter logWriter(final SegmentStore store) {
        return bridge().logWriter(store);
    }

    /**
     * @return with a log, the location index of the segment (where its bytes are in the log
     *         files, one entry per DATA record), or null without a log or if the log has no
     *         locations of it (recovered by a custom {@link RecoveryHook}). Thread-safe.
     * @throws io.streamcache.segmentstore.SegmentNotFoundException if no such segment exists.
     */
    public static LocationIndex locations(final SegmentStore store, final String segment) {
        return bridge().locations(store, segment);
    }

    /**
     * @return with a log, bytes of direct memory the location indexes hold (their
     *         {@code LocationMemory}'s slabs: metadata of the log, outside the cache's bound); 0 without.
     */
    public static long locationMemoryBytes(final SegmentStore store) {
        return bridge().locationMemoryBytes(store);
    }

    /**
     * @return the compactor the builder's {@code compaction} set up, or null.
     */
    public static Compactor compactor(final SegmentStore store) {
        return bridge().compactor(store);
    }

    /**
     * @return with a log, the reader read-through loads ranges with; else null.
     */
    public static HistoricalReader historicalReader(final SegmentStore store) {
        return bridge().historicalReader(store);
    }

    /**
     * @param hook rebuilds the segments from the log files when the store is built over a
     *             directory that holds some; by default a scanning recovery with the builder's
     *             corruption policy.
     * @return {@code builder}.
     */
    public static SegmentStore.Builder logRecovery(final SegmentStore.Builder builder, final RecoveryHook hook) {
        return bridge().logRecovery(builder, hook);
    }

    /**
     * @param listener told of every record once durable (and of retired files), on the writer
     *                 thread.
     * @return {@code builder}.
     */
    public static SegmentStore.Builder logListener(final SegmentStore.Builder builder, final LogRecordListener listener) {
        return bridge().logListener(builder, listener);
    }

    private static Bridge bridge() {
        Bridge b = bridge;
        if (b == null) {
            try {
                Class.forName(SegmentStore.class.getName(), true, SegmentStore.class.getClassLoader());
            } catch (final ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            b = bridge;
        }
        return b;
    }
}
