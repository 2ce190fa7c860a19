package io.streamcache.bookkeeper;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CloseGate;
import io.streamcache.core.StreamcacheException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentNotFoundException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.DurabilityPolicy;
import io.streamcache.log.StoreLog;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.StoreHealth;
import org.apache.bookkeeper.bookie.Bookie;
import org.apache.bookkeeper.bookie.BookieException;
import org.apache.bookkeeper.bookie.CheckpointSource;
import org.apache.bookkeeper.bookie.Checkpointer;
import org.apache.bookkeeper.bookie.CompactableLedgerStorage;
import org.apache.bookkeeper.bookie.EntryLocation;
import org.apache.bookkeeper.bookie.GarbageCollector;
import org.apache.bookkeeper.bookie.LastAddConfirmedUpdateNotification;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.bookie.ScanAndCompareGarbageCollector;
import org.apache.bookkeeper.bookie.StateManager;
import org.apache.bookkeeper.common.util.Watcher;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.proto.BookieProtocol;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.stats.OpStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;
import org.apache.bookkeeper.util.collections.ConcurrentLongHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bookie's ledger storage on streamcache's durable {@link SegmentStore}: thread-safe, as the
 * bookie requires (its add threads, read threads, sync thread, garbage collector and journal
 * replay call it concurrently; calls on one ledger are ordered by that ledger's
 * {@link LedgerState} monitor, calls on different ledgers share no lock but the store's own).
 * {@link #shutdown()} may race the request threads: calls that use the store enter a
 * {@link CloseGate}, so that once it begins they throw {@code IOException} and those in flight
 * finish first; with {@code streamcacheZeroCopyReads} the cache's memory is freed only once the
 * views {@link #getEntry} lent out were released (both waits bounded by {@link #CLOSE_WAIT}).
 * Chosen with {@code ledgerStorageClass=io.streamcache.bookkeeper.StreamcacheLedgerStorage}.
 *
 * <h2>Layout</h2>
 * One segment per ledger ({@code ledger-<id>}), holding the ledger's records in the order the
 * bookie gave them ({@link LedgerRecords}: entries, master key, fence, limbo, explicit LAC), and
 * one segment {@code bookie-state} for the storage-state flags. In memory, per ledger, an entry
 * index (entry id to segment offset and length, 8 bytes in an open-addressing map), the flags,
 * the LAC and its long-poll watchers ({@link LedgerState}); the scan at start rebuilds them from
 * the segments ({@link LedgerScan}). All ledgers share one log: the store's aggregating writer
 * turns the adds of every ledger into one sequential stream of 4 KB-aligned forced batches, the
 * role the entry logger plays in {@code DbLedgerStorage}, and the store's block cache is both its
 * write cache and its read cache (tail reads hit it; catch-up reads fill it from the log by 1 MiB
 * ranges with read-ahead).
 *
 * <h2>Reads</h2>
 * {@link #getEntry} returns, by default, a copy of the entry in a buffer from the bookie's
 * allocator, which the caller owns, as {@code DbLedgerStorage} does (it copies out of its write
 * and read-ahead caches): BookKeeper's read path treats the buffer as its own (its tests write
 * into it), and no cache memory stays pinned while a slow client's network write is pending.
 * With {@code streamcacheZeroCopyReads} it returns a read-only view instead (of the cache, or of
 * the record still being appended), pinned until the caller releases it: one copy fewer, for
 * embedders that never write into read buffers. A writable view onto shared memory is never lent.
 *
 * <h2>Durability</h2>
 * {@code addEntry} queues the entry's append and returns; the entry is readable at once (from the
 * in-flight buffer until the log has it, then from the cache or the log). The bookie
 * acknowledges an add once its journal has forced it, so the log need not force it again: with
 * the journal writing data (the default) the log runs under {@link DurabilityPolicy#NEVER}
 * (an append completes once written), and {@link #flush} and {@link #checkpoint} force it on
 * demand ({@link StoreLog#force()}: one {@code fdatasync}) and return once every append queued
 * before them is forced, after which the bookie may drop the journal before that checkpoint.
 * With {@code streamcacheDurableAdds} (on by itself when the bookie's {@code journalWriteData}
 * is false) the log forces every batch ({@link DurabilityPolicy#EVERY_BATCH}) and
 * {@code addEntry} returns only once the entry is forced, so that an acknowledgement without the
 * journal still means "on disk". Master keys, fences, limbo flags and storage-state flags are
 * forced before their calls return (under {@code NEVER} by a force of their own); explicit LACs
 * are queued (the journal holds them too).
 *
 * <h2>Deletion</h2>
 * The bookie's garbage collection runs here as in {@code DbLedgerStorage}: a
 * {@link ScanAndCompareGarbageCollector} compares the ledgers held with the metadata every
 * {@code gcWaitTime} and calls {@link #deleteLedger}, which deletes the segment (its DELETE is
 * logged first) and tells the listeners. The log's compaction reclaims the space in the
 * background ({@code streamcacheCompaction}, on by default).
 */
public final class StreamcacheLedgerStorage implements CompactableLedgerStorage {

    private static final Logger LOG = LoggerFactory.getLogger(StreamcacheLedgerStorage.class);

    static final String LEDGER_PREFIX = "ledger-";
    static final String STATE_SEGMENT = "bookie-state";
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /**
     * Between the log's compaction passes. A pass visits every segment, one per ledger: at the
     * store's default (200 ms) it took 17% of the CPU samples of a bookie with 10,000 open
     * ledgers and nothing to reclaim. Space comes back after deletions, which the bookie's own
     * garbage collection makes every {@code gcWaitTime} (minutes by default): seconds are soon enough.
     */
    static final java.time.Duration COMPACTION_INTERVAL = java.time.Duration.ofSeconds(5);

    /**
     * How long {@link #shutdown()} waits for the calls in flight, and then for the buffers
     * {@link #getEntry} lent out, before it frees the cache's memory.
     */
    static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(10);

    /** Calls that use the store or its cache enter; {@link #shutdown()} refuses new ones and waits for these. */
    private final CloseGate gate = new CloseGate();
    /** The ledgers held, in id order (for {@link #getActiveLedgersInRange}); changed under {@link #lifecycle}, with {@link #byId}. */
    private final ConcurrentSkipListMap<Long, LedgerState> ledgers = new ConcurrentSkipListMap<>();
    /**
     * The same ledgers by id, for the look-ups every add and read makes: a hash map of primitive
     * keys whose {@code get} takes no lock, where the skip list walks a dozen nodes and compares
     * boxed keys (its {@code doGet} was 8% of the storage's CPU samples on the add path, JFR, 1 KB
     * adds over 100 ledgers). Changed under {@link #lifecycle}, after {@link #ledgers} on a put and
     * before it on a removal.
     */
    private final ConcurrentLongHashMap<LedgerState> byId = ConcurrentLongHashMap.<LedgerState>newBuilder().build();
    private final CopyOnWriteArrayList<LedgerDeletionListener> deletionListeners = new CopyOnWriteArrayList<>();
    /** Orders creation and deletion of ledgers (rare), so that a segment is created once. */
    private final Object lifecycle = new Object();

    private StreamcacheStorageSettings settings;
    private ByteBufAllocator allocator;
    private BlockCache cache;
    private SegmentStore store;
    private GarbageCollector garbageCollector;
    /** What the storage reports through the bookie's stats logger; set in {@link #initialize}. */
    private StorageStats stats;
    /** Set while {@link #initialize} opens the store and scans the ledgers: {@link #health()} says so. */
    private volatile String recovering = "not initialized";
    private ScheduledExecutorService gcExecutor;
    private volatile int storageState;
    private volatile boolean shutDown;

    /** Made by the bookie through {@code ledgerStorageClass}; {@link #initialize} opens it. */
    public StreamcacheLedgerStorage() {
    }

    @Override
    public void initialize(final ServerConfiguration conf, final LedgerManager ledgerManager,
                           final LedgerDirsManager ledgerDirsManager, final LedgerDirsManager indexDirsManager,
                           final StatsLogger statsLogger, final ByteBufAllocator allocator) throws IOException {
        this.settings = StreamcacheStorageSettings.from(conf);
        this.allocator = allocator;
        final List<File> dirs = ledgerDirsManager.getAllLedgerDirs();
        if (dirs.size() != 1) {
            LOG.warn("StreamcacheLedgerStorage uses the first of ledgerDirectories={} only", dirs);
        }
        final Path directory = dirs.get(0).toPath().resolve(StreamcacheStorageSettings.DIRECTORY);
        Files.createDirectories(directory);
        this.stats = new StorageStats(statsLogger != null ? statsLogger : NullStatsLogger.INSTANCE, dirs.get(0).toString());
        recovering = "opening the log in " + directory + " and scanning its ledgers";
        final long start = System.nanoTime();
        try {
            // Unique in the JVM (the MBeans and threads carry it): tests run several bookies, and
            // restart one on the same port, in one JVM.
            final String storeName = "bookie-" + conf.getBookiePort() + "-" + INSTANCES.incrementAndGet();
            cache = BlockCache.builder().capacity(settings.cacheBytes()).name(storeName).registerMBean(false).build();
            final SegmentStore.Builder builder = SegmentStore.builder(cache).name(storeName)
                .log(settings.logConfig(directory));
            if (settings.compaction()) {
                builder.compaction(CompactionConfig.builder().interval(COMPACTION_INTERVAL).build());
            }
            store = builder.build();
            for (final String name : store.segmentNames()) {
                if (name.startsWith(LEDGER_PREFIX)) {
                    final long ledgerId = Long.parseLong(name.substring(LEDGER_PREFIX.length()));
                    final LedgerState scanned = LedgerScan.scan(store, name, ledgerId);
                    ledgers.put(ledgerId, scanned);
                    byId.put(ledgerId, scanned);
                }
            }
            storageState = readStorageState();
            stats.bind(store, this);
        } catch (final StreamcacheException | IOException e) {
            closeQuietly();
            throw e instanceof IOException io ? io : new IOException("cannot open the streamcache ledger storage in directory="
                + directory + ": " + e, e);
        }
        recovering = null;
        LOG.info("StreamcacheLedgerStorage opened directory={} ledgers={} in {} ms; settings={}", directory, ledgers.size(),
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), settings);
        if (ledgerManager != null) {
            garbageCollector = new ScanAndCompareGarbageCollector(ledgerManager, this, conf, statsLogger);
        }
    }

    @Override
    public void setStateManager(final StateManager stateManager) {
        // Nothing to tell it: a failed append fails that ledger's calls, which the bookie reports.
    }

    @Override
    public void setCheckpointSource(final CheckpointSource checkpointSource) {
        // Checkpoints come from the sync thread (checkpoint(...)); the storage never starts one.
    }

    @Override
    public void setCheckpointer(final Checkpointer checkpointer) {
        // As above: there is no write cache to fill up and force a checkpoint.
    }

    @Override
    public void start() {
        if (garbageCollector != null) {
            gcExecutor = Executors.newSingleThreadScheduledExecutor(task -> {
                final Thread thread = new Thread(task, "streamcache-bookie-gc");
                thread.setDaemon(true);
                return thread;
            });
            final long interval = Math.max(1, settings.gcInterval().toMillis());
            gcExecutor.scheduleWithFixedDelay(this::collectGarbage, interval, interval, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void shutdown() throws InterruptedException {
        if (shutDown) {
            return;
        }
        shutDown = true;
        if (gcExecutor != null) {
            gcExecutor.shutdownNow();
            gcExecutor.awaitTermination(10, TimeUnit.SECONDS);
        }
        // The bookie's request threads may still be serving (its server stops them on its own
        // schedule): new calls now throw IOException, and those in flight finish first.
        if (!gate.closeAndAwait(CLOSE_WAIT.toNanos())) {
            LOG.warn("StreamcacheLedgerStorage: {} call(s) still in flight after {}; shutting down under them", gate.inFlight(),
                CLOSE_WAIT);
        }
        try {
            flushAll();
        } catch (final IOException e) {
            LOG.warn("StreamcacheLedgerStorage: appends still in flight failed at shutdown", e);
        }
        for (final LedgerState state : ledgers.values()) {
            state.close();
        }
        closeQuietly();
    }

    // ---- ledgers ----

    @Override
    public boolean ledgerExists(final long ledgerId) {
        return byId.containsKey(ledgerId);
    }

    @Override
    public boolean entryExists(final long ledgerId, final long entryId) throws IOException, BookieException {
        if (entryId == BookieProtocol.LAST_ADD_CONFIRMED) {
            return false;
        }
        final LedgerState state = byId.get(ledgerId);
        if (state == null) {
            return false;
        }
        if (state.location(entryId) != -1) {
            return true;
        }
        throwIfLimbo(state);
        return false;
    }

    @Override
    public boolean setFenced(final long ledgerId) throws IOException {
        enter();
        try {
            final LedgerState state = ledgerForWrite(ledgerId);
            if (state.fenced()) {
                return false;
            }
            writeDurably(state, LedgerRecords.TYPE_FENCED, new byte[0]);
            state.fenced(true);
            // Long-polling readers learn at once that no more entries will come.
            state.wakeAll();
            return true;
        } finally {
            gate.exit();
        }
    }

    @Override
    public boolean isFenced(final long ledgerId) throws IOException, BookieException {
        final LedgerState state = ledger(ledgerId);
        if (!state.fenced()) {
            throwIfLimbo(state);
            return false;
        }
        return true;
    }

    @Override
    public void setLimboState(final long ledgerId) throws IOException {
        enter();
        try {
            final LedgerState state = ledgerForWrite(ledgerId);
            writeDurably(state, LedgerRecords.TYPE_LIMBO, new byte[] {1});
            state.limbo(true);
        } finally {
            gate.exit();
        }
    }

    @Override
    public boolean hasLimboState(final long ledgerId) throws IOException {
        return ledger(ledgerId).limbo();
    }

    @Override
    public void clearLimboState(final long ledgerId) throws IOException {
        enter();
        try {
            final LedgerState state = ledger(ledgerId);
            writeDurably(state, LedgerRecords.TYPE_LIMBO, new byte[] {0});
            state.limbo(false);
        } finally {
            gate.exit();
        }
    }

    @Override
    public void setMasterKey(final long ledgerId, final byte[] masterKey) throws IOException {
        enter();
        try {
            final LedgerState state = ledgerForWrite(ledgerId);
            if (Arrays.equals(state.masterKey(), masterKey)) {
                return;
            }
            writeDurably(state, LedgerRecords.TYPE_MASTER_KEY, masterKey);
            state.masterKey(masterKey);
        } finally {
            gate.exit();
        }
    }

    @Override
    public byte[] readMasterKey(final long ledgerId) throws IOException, BookieException {
        return ledger(ledgerId).masterKey().clone();
    }

    @Override
    public void deleteLedger(final long ledgerId) throws IOException {
        enter();
        try {
            final LedgerState state;
            synchronized (lifecycle) {
                state = byId.remove(ledgerId);
                if (state == null) {
                    return;
                }
                ledgers.remove(ledgerId);
                try {
                    store.delete(state.segment);
                } catch (final SegmentNotFoundException e) {
                    // Never written beyond its creation, or deleted by an earlier attempt: gone either way.
                } catch (final StreamcacheException e) {
                    ledgers.put(ledgerId, state);
                    byId.put(ledgerId, state);
                    throw new IOException("cannot delete ledger=" + ledgerId + ": " + e, e);
                }
            }
            state.close();
            for (final LedgerDeletionListener listener : deletionListeners) {
                listener.ledgerDeleted(ledgerId);
            }
        } finally {
            gate.exit();
        }
    }

    @Override
    public void registerLedgerDeletionListener(final LedgerDeletionListener listener) {
        deletionListeners.add(listener);
    }

    @Override
    public Iterable<Long> getActiveLedgersInRange(final long firstLedgerId, final long lastLedgerId) {
        return ledgers.subMap(firstLedgerId, true, lastLedgerId, false).keySet();
    }

    @Override
    public PrimitiveIterator.OfLong getListOfEntriesOfLedger(final long ledgerId) throws IOException {
        return ledger(ledgerId).entryIds();
    }

    /**
     * Not supported: entry locations are segment offsets, which the store's own compaction keeps
     * valid; BookKeeper's entry-log compactor, the only caller, is not run on this storage.
     */
    @Override
    public void updateEntriesLocations(final Iterable<EntryLocation> locations) {
        throw new UnsupportedOperationException("StreamcacheLedgerStorage has no entry logs to compact: the log compacts itself");
    }

    /** Nothing to do: see {@link #updateEntriesLocations}. */
    @Override
    public void flushEntriesLocationsIndex() {
    }

    // ---- entries ----

    @Override
    public long addEntry(final ByteBuf entry) throws IOException, BookieException {
        final long start = System.nanoTime();
        boolean added = false;
        try {
            final long entryId = add(entry);
            added = true;
            return entryId;
        } finally {
            record(stats.addEntry, start, added);
        }
    }

    private static void record(final OpStatsLogger op, final long start, final boolean success) {
        final long nanos = System.nanoTime() - start;
        if (success) {
            op.registerSuccessfulEvent(nanos, TimeUnit.NANOSECONDS);
        } else {
            op.registerFailedEvent(nanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The store's health for the bookie's health checks: {@link StoreHealth#recovering(String)}
     * while {@link #initialize} opens the log and scans the ledgers, then the store's own
     * ({@link SegmentStore#health()}), which is also the gauge {@code bookie_streamcache_health}
     * (0 healthy, 1 degraded, 2 failed). {@code docs/operations.md} maps it onto
     * {@code /api/v1/bookie/state} and Kubernetes probes. Any thread.
     *
     * @return the health now.
     */
    public StoreHealth health() {
        final String recovery = recovering;
        final SegmentStore open = store;
        if (recovery != null || open == null) {
            return StoreHealth.recovering(recovery != null ? recovery : "not initialized");
        }
        return open.health();
    }

    private long add(final ByteBuf entry) throws IOException, BookieException {
        enter();
        try {
            final int at = entry.readerIndex();
            final int length = entry.readableBytes();
            if (length < LedgerRecords.ENTRY_PREFIX_LENGTH || length > LedgerRecords.MAX_ENTRY_LENGTH) {
                throw new IOException("entry length=" + length + " is outside [" + LedgerRecords.ENTRY_PREFIX_LENGTH + ", "
                    + LedgerRecords.MAX_ENTRY_LENGTH + "]");
            }
            final long ledgerId = entry.getLong(at);
            final long entryId = entry.getLong(at + LedgerRecords.ENTRY_ID_OFFSET);
            final long lac = entry.getLong(at + LedgerRecords.ENTRY_LAC_OFFSET);
            final LedgerState state = ledgerForWrite(ledgerId);
            final ByteBuf record = LedgerRecords.record(allocator, LedgerRecords.TYPE_ENTRY, entry);
            final CompletableFuture<Long> append;
            synchronized (state) {
                final long payload = state.nextOffset() + LedgerRecords.HEADER_LENGTH;
                state.putPending(entryId, record);
                append = append(state, record);
                state.putLocation(entryId, LedgerRecords.location(payload, length));
            }
            append.whenComplete((offset, failure) -> {
                appended(state, failure);
                state.completed(record);
            });
            state.raiseLac(lac);
            if (settings.durableAdds()) {
                await(append, state);
            }
            return entryId;
        } finally {
            gate.exit();
        }
    }

    @Override
    public ByteBuf getEntry(final long ledgerId, final long entryId) throws IOException, BookieException {
        final long start = System.nanoTime();
        boolean read = false;
        try {
            final ByteBuf entry = readEntry(ledgerId, entryId);
            read = true;
            return entry;
        } finally {
            record(stats.readEntry, start, read);
        }
    }

    private ByteBuf readEntry(final long ledgerId, final long entryId) throws IOException, BookieException {
        enter();
        try {
            final LedgerState state = ledger(ledgerId);
            long id = entryId;
            if (id == BookieProtocol.LAST_ADD_CONFIRMED) {
                id = state.lastEntryId();
            }
            final long location = id < 0 ? -1 : state.location(id);
            if (location == -1) {
                throwIfLimbo(state);
                throw new Bookie.NoEntryException(ledgerId, entryId);
            }
            final ByteBuf inFlight = state.pendingPayload(id);
            if (inFlight != null) {
                stats.writeCacheHits.inc();
                return settings.zeroCopyReads() ? inFlight.asReadOnly() : ownedCopy(inFlight);
            }
            final long offset = LedgerRecords.locationOffset(location);
            final int length = LedgerRecords.locationLength(location);
            if (!settings.zeroCopyReads()) {
                final ByteBuf cached = cachedCopy(state.segment, offset, length);
                if (cached != null) {
                    stats.readCacheHits.inc();
                    return cached;
                }
            } else if (cached(state.segment, offset, length)) {
                // A view goes through the read-through, which charges it to the store's read
                // budget until the bookie releases it; the look-up above only tells the hit.
                stats.readCacheHits.inc();
                return SegmentReads.view(store, state.segment, offset, length, allocator);
            }
            stats.readCacheMisses.inc();
            final long readStart = System.nanoTime();
            boolean read = false;
            try {
                final ByteBuf entry = settings.zeroCopyReads()
                    ? SegmentReads.view(store, state.segment, offset, length, allocator)
                    : SegmentReads.copy(store, state.segment, offset, length, allocator);
                read = true;
                return entry;
            } finally {
                record(stats.readEntryLog, readStart, read);
            }
        } finally {
            gate.exit();
        }
    }

    /**
     * @return a copy of the entry in a buffer from the bookie's allocator, which the caller owns,
     *         if the cache holds all of it; else null: the caller reads it through the log, which
     *         also reports the errors (a truncated segment, say) that this does not.
     */
    private ByteBuf cachedCopy(final String segment, final long offset, final int length) {
        final io.streamcache.segmentstore.ReadResult result = cachedRead(segment, offset, length);
        if (result == null) {
            return null;
        }
        try {
            final ByteBuf data = result.data();
            return allocator.buffer(length, length).writeBytes(data, data.readerIndex(), length);
        } finally {
            result.close();
        }
    }

    /** @return whether the cache holds all of the entry now. */
    private boolean cached(final String segment, final long offset, final int length) {
        final io.streamcache.segmentstore.ReadResult result = cachedRead(segment, offset, length);
        if (result == null) {
            return false;
        }
        result.close();
        return true;
    }

    /** @return a result of the whole entry from the cache (the caller closes it), or null if the cache lacks some of it. */
    private io.streamcache.segmentstore.ReadResult cachedRead(final String segment, final long offset, final int length) {
        final io.streamcache.segmentstore.ReadResult result;
        try {
            result = store.read(segment, offset, length);
        } catch (final StreamcacheException e) {
            return null;
        }
        if (result.length() != length) {
            result.close();
            return null;
        }
        return result;
    }

    /**
     * @return a copy of {@code inFlight} (a retained slice of a record still being appended, which
     *         this releases) in a buffer from the bookie's allocator, which the caller owns.
     */
    private ByteBuf ownedCopy(final ByteBuf inFlight) {
        try {
            final int length = inFlight.readableBytes();
            return allocator.buffer(length, length).writeBytes(inFlight, inFlight.readerIndex(), length);
        } finally {
            inFlight.release();
        }
    }

    @Override
    public long getLastAddConfirmed(final long ledgerId) throws IOException, BookieException {
        final LedgerState state = ledger(ledgerId);
        throwIfLimbo(state);
        final long lac = state.lac();
        if (lac != LedgerState.NO_LAC) {
            return lac;
        }
        final ByteBuf last = getEntry(ledgerId, BookieProtocol.LAST_ADD_CONFIRMED);
        try {
            return state.raiseLac(last.getLong(last.readerIndex() + LedgerRecords.ENTRY_LAC_OFFSET));
        } finally {
            last.release();
        }
    }

    @Override
    public boolean waitForLastAddConfirmedUpdate(final long ledgerId, final long previousLAC,
                                                 final Watcher<LastAddConfirmedUpdateNotification> watcher) throws IOException {
        return ledger(ledgerId).waitForLac(previousLAC, watcher);
    }

    @Override
    public void cancelWaitForLastAddConfirmedUpdate(final long ledgerId,
                                                    final Watcher<LastAddConfirmedUpdateNotification> watcher) {
        final LedgerState state = byId.get(ledgerId);
        if (state != null) {
            state.deleteWatcher(watcher);
        }
    }

    @Override
    public void setExplicitLac(final long ledgerId, final ByteBuf lac) throws IOException {
        enter();
        try {
            final LedgerState state = ledgerForWrite(ledgerId);
            final byte[] bytes = new byte[lac.readableBytes()];
            lac.getBytes(lac.readerIndex(), bytes);
            final ByteBuf record = LedgerRecords.record(allocator, LedgerRecords.TYPE_EXPLICIT_LAC, bytes);
            final CompletableFuture<Long> append;
            synchronized (state) {
                append = append(state, record);
                state.explicitLac(bytes);
            }
            append.whenComplete((offset, failure) -> {
                appended(state, failure);
                record.release();
            });
            if (bytes.length >= LedgerRecords.EXPLICIT_LAC_VALUE_OFFSET + Long.BYTES) {
                state.raiseLac(lac.getLong(lac.readerIndex() + LedgerRecords.EXPLICIT_LAC_VALUE_OFFSET));
            }
        } finally {
            gate.exit();
        }
    }

    @Override
    public ByteBuf getExplicitLac(final long ledgerId) throws IOException {
        final byte[] lac = ledger(ledgerId).explicitLac();
        return lac == null ? null : Unpooled.wrappedBuffer(lac.clone());
    }

    // ---- durability ----

    @Override
    public void flush() throws IOException {
        enter();
        try {
            flushAll();
        } finally {
            gate.exit();
        }
    }

    private void flushAll() throws IOException {
        final long start = System.nanoTime();
        // Null if initialize failed before the store opened (a shutdown then flushes nothing).
        final StoreLog log = store != null ? store.log().orElse(null) : null;
        final long writtenBefore = log != null ? log.writerStats().bytesWritten() : 0;
        boolean flushed = false;
        try {
            flushLedgers();
            flushed = true;
        } finally {
            record(stats.flush, start, flushed);
            if (flushed && log != null) {
                stats.flushSize.registerSuccessfulValue(log.writerStats().bytesWritten() - writtenBefore);
            }
        }
    }

    private void flushLedgers() throws IOException {
        // Under NEVER: one force covers every append queued before it, those of every ledger;
        // the per-ledger waits below still report a ledger whose append failed.
        final CompletableFuture<Void> forced = settings.forceAtCheckpoints() ? storeLog().force() : null;
        for (final LedgerState state : ledgers.values()) {
            await(state.lastAppend(), state);
        }
        if (forced != null) {
            awaitForce(forced);
        }
    }

    @Override
    public void checkpoint(final CheckpointSource.Checkpoint checkpoint) throws IOException {
        flush();
    }

    // ---- storage-state flags ----

    @Override
    public EnumSet<StorageState> getStorageStateFlags() {
        final EnumSet<StorageState> flags = EnumSet.noneOf(StorageState.class);
        for (final StorageState flag : StorageState.values()) {
            if ((storageState & 1 << flag.ordinal()) != 0) {
                flags.add(flag);
            }
        }
        return flags;
    }

    @Override
    public void setStorageStateFlag(final StorageState flag) throws IOException {
        enter();
        try {
            writeStorageState(storageState | 1 << flag.ordinal());
        } finally {
            gate.exit();
        }
    }

    @Override
    public void clearStorageStateFlag(final StorageState flag) throws IOException {
        enter();
        try {
            writeStorageState(storageState & ~(1 << flag.ordinal()));
        } finally {
            gate.exit();
        }
    }

    /** Each change appends the whole bit set (4 bytes); the last one is the state. */
    private synchronized void writeStorageState(final int flags) throws IOException {
        try {
            if (!store.exists(STATE_SEGMENT)) {
                store.create(STATE_SEGMENT);
            }
            final ByteBuf value = Unpooled.buffer(Integer.BYTES).writeInt(flags);
            final CompletableFuture<Long> append = store.appendAsync(STATE_SEGMENT, value);
            final CompletableFuture<Void> forced = settings.forceAtCheckpoints() ? storeLog().force() : null;
            await(append, STATE_SEGMENT);
            if (forced != null) {
                awaitForce(forced);
            }
        } catch (final StreamcacheException e) {
            throw new IOException("cannot write storage state flags=" + flags + ": " + e, e);
        }
        storageState = flags;
    }

    private int readStorageState() throws IOException {
        if (!store.exists(STATE_SEGMENT)) {
            return 0;
        }
        final long length = store.info(STATE_SEGMENT).length();
        if (length < Integer.BYTES) {
            return 0;
        }
        final ByteBuf value = Unpooled.buffer(Integer.BYTES);
        SegmentReads.readFully(store, STATE_SEGMENT, length - Integer.BYTES, Integer.BYTES, value);
        return value.getInt(0);
    }

    // ---- helpers ----

    static String segmentName(final long ledgerId) {
        return LEDGER_PREFIX + ledgerId;
    }

    /** @return the ledger's state. @throws Bookie.NoLedgerException if this bookie holds no such ledger. */
    private LedgerState ledger(final long ledgerId) throws Bookie.NoLedgerException {
        final LedgerState state = byId.get(ledgerId);
        if (state == null) {
            throw new Bookie.NoLedgerException(ledgerId);
        }
        return state;
    }

    /** @return the ledger's state, its segment created first if it is new. */
    private LedgerState ledgerForWrite(final long ledgerId) throws IOException {
        final LedgerState known = byId.get(ledgerId);
        if (known != null) {
            failIfBroken(known);
            return known;
        }
        if (ledgerId < 0) {
            throw new IOException("ledgerId=" + ledgerId + " is negative");
        }
        synchronized (lifecycle) {
            LedgerState state = byId.get(ledgerId);
            if (state == null) {
                final String segment = segmentName(ledgerId);
                try {
                    store.create(segment);
                } catch (final StreamcacheException e) {
                    throw new IOException("cannot create the segment of ledger=" + ledgerId + ": " + e, e);
                }
                state = new LedgerState(ledgerId, segment, 0);
                ledgers.put(ledgerId, state);
                byId.put(ledgerId, state);
            }
            return state;
        }
    }

    /** Queues {@code record} at the ledger's next offset; the caller holds the ledger's monitor. */
    @GuardedBy("state")
    private CompletableFuture<Long> append(final LedgerState state, final ByteBuf record) {
        final int length = record.readableBytes();
        CompletableFuture<Long> append;
        try {
            append = store.appendAsync(state.segment, state.nextOffset(), record);
        } catch (final RuntimeException e) {
            append = CompletableFuture.failedFuture(e);
        }
        state.advance(length, append);
        if (append.isCompletedExceptionally()) {
            // Refused at once: the ledger refuses work before the monitor is released.
            append.whenComplete((offset, failure) -> state.fail(failure));
        }
        return append;
    }

    /**
     * What every append's one completion callback does first (a caller registers one callback
     * per append, which also releases its record: each {@code whenComplete} costs a future, a
     * completion node and a lambda, which a profile of bookies under Pulsar showed as a fifth of
     * the bookie's sampled allocation when {@link #append} and its caller registered one each).
     */
    private static void appended(final LedgerState state, final Throwable failure) {
        if (failure != null) {
            state.fail(failure);
        }
    }

    private void writeDurably(final LedgerState state, final byte type, final byte[] payload) throws IOException {
        final ByteBuf record = LedgerRecords.record(allocator, type, payload);
        final CompletableFuture<Long> append;
        synchronized (state) {
            append = append(state, record);
        }
        append.whenComplete((offset, failure) -> {
            appended(state, failure);
            record.release();
        });
        final CompletableFuture<Void> forced = settings.forceAtCheckpoints() ? storeLog().force() : null;
        await(append, state);
        if (forced != null) {
            awaitForce(forced);
        }
    }

    private StoreLog storeLog() {
        return store.log().orElseThrow(() -> new IllegalStateException("the store of StreamcacheLedgerStorage has no log"));
    }

    /** Waits for a force of the log; its failure (a disk error, a closed store) as an {@link IOException}. */
    private static void awaitForce(final CompletableFuture<Void> forced) throws IOException {
        try {
            forced.get();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            final InterruptedIOException io = new InterruptedIOException("interrupted waiting for the log to be forced");
            io.initCause(e);
            throw io;
        } catch (final ExecutionException e) {
            throw new IOException("cannot force the log: " + e.getCause(), e.getCause());
        }
    }

    private static void failIfBroken(final LedgerState state) throws IOException {
        final Throwable failure = state.failure();
        if (failure != null) {
            throw new IOException("ledger=" + state.ledgerId + " refuses writes since an append failed: " + failure, failure);
        }
    }

    private static void throwIfLimbo(final LedgerState state) throws BookieException {
        if (state.limbo()) {
            throw BookieException.create(BookieException.Code.DataUnknownException);
        }
    }

    private static void await(final CompletableFuture<?> future, final LedgerState state) throws IOException {
        SegmentReads.await(future, state.segment, -1);
    }

    private static void await(final CompletableFuture<?> future, final String segment) throws IOException {
        SegmentReads.await(future, segment, -1);
    }

    private void collectGarbage() {
        try {
            garbageCollector.gc(ledgerId -> {
                try {
                    deleteLedger(ledgerId);
                } catch (final IOException e) {
                    LOG.warn("StreamcacheLedgerStorage: garbage collection cannot delete ledger={}", ledgerId, e);
                }
            });
        } catch (final RuntimeException e) {
            LOG.warn("StreamcacheLedgerStorage: garbage collection pass failed", e);
        }
    }

    /** @throws IOException once {@link #shutdown()} has begun; else the caller must {@code gate.exit()} after its call. */
    private void enter() throws IOException {
        if (!gate.enter()) {
            throw new IOException("StreamcacheLedgerStorage is shut down");
        }
    }

    private void closeQuietly() {
        if (stats != null) {
            stats.unbind();
        }
        if (store != null) {
            store.close();
        }
        if (cache != null) {
            if (store != null && !borrowedBuffersReturned()) {
                LOG.warn("StreamcacheLedgerStorage: {} buffer(s) returned by getEntry still unreleased after {}: the cache's"
                    + " memory is left allocated, not freed under them (a leak, or a reader stuck past the shutdown)",
                    store.cacheManager().stats().pinnedResults(), CLOSE_WAIT);
                return;
            }
            cache.close();
        }
    }

    /**
     * Waits until every zero-copy buffer {@link #getEntry} returned was released (the bookie
     * releases them once written to the network), at most {@link #CLOSE_WAIT}: freeing the cache
     * under one would let its reader see released memory, or another entry's bytes.
     */
    private boolean borrowedBuffersReturned() {
        final long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        while (store.cacheManager().stats().pinnedResults() != 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                TimeUnit.MILLISECONDS.sleep(1);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return store.cacheManager().stats().pinnedResults() == 0;
            }
        }
        return true;
    }

    /** @return the number of ledgers held (for tests and sizing). */
    int ledgerCount() {
        return ledgers.size();
    }

    /** @return the store (for tests). */
    SegmentStore store() {
        return store;
    }
}
