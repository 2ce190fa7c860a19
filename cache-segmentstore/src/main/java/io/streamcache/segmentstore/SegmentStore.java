package io.streamcache.segmentstore;

import io.streamcache.log.internal.StoreLogView;
import io.streamcache.log.StoreLog;
import io.streamcache.segmentstore.compaction.Compaction;
import java.util.Optional;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.segmentstore.internal.eviction.EvictionSource;
import io.streamcache.segmentstore.internal.index.AvlReadIndex;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.LogConfig;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.LogException;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.internal.compaction.Compactor;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveryHook;
import io.streamcache.log.internal.recovery.ScanningRecoveryHook;

import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Append-only byte streams (segments) held in a {@link BlockCache} through one read index per
 * segment: thread-safe; operations on one segment are serialized by that segment's lock, and
 * operations on different segments run in parallel with no lock in common.
 *
 * <h2>Segments</h2>
 * A segment is named by a string and holds the bytes {@code [startOffset, length)}: appends add
 * at {@code length}, {@link #truncate} moves {@code startOffset} forward, {@link #seal} fixes
 * {@code length} for good. Its <em>read index</em> ({@code AvlReadIndex}) maps segment offsets
 * to cache addresses; its nodes are the index entries themselves, so the
 * cache needs no index of its own (Pravega's streaming cache). Entries cover the segment's
 * bytes without overlap; an entry whose address is 0 was evicted: a read there reports
 * {@link ReadStatus#NOT_CACHED} and the owner of the durable copy (the log, in the next layer)
 * must supply the bytes, which it may put back with {@link #fill}: the evicted entry is split
 * into the part now cached again (in entries of at most the maximum entry length) and evicted
 * parts around it. Adjacent evicted entries are coalesced into one placeholder as they are
 * evicted, so a segment's index holds at most about one placeholder per cached entry (one per
 * gap between cached runs), however many bytes it ever held: see {@code Segment}.
 *
 * <pre>
 *  index entry (48 heap bytes; see ReadIndexEntry for the field layout and the pin word):
 *
 *  +-----------------+-----------+------------+--------------+----------+--------------+
 *  | offset (key)    | length    | address    | generation   | pin word | left, right, |
 *  | 64-bit, final   | 32-bit    | 32-bit,    | of last use, | R + pins | height (AVL) |
 *  |                 | &lt;= max(*) | 0 = evicted| for eviction |          |              |
 *  +-----------------+-----------+------------+--------------+----------+--------------+
 *  (*) a cached entry's; an evicted one (a coalesced placeholder) may be longer
 * </pre>
 *
 * <h2>Append path</h2>
 * <pre>
 *  append(name, data)
 *    | segments.get(name)                 SegmentMap: lock-free, no string built, no global lock
 *    | segment.lock()                     appends to one segment are ordered by this lock
 *    | last = index.last()
 *    |-- last is cached, open and shorter than maxIndexEntryLength:
 *    |     address = cache.append(last.address, data)     grows the entry in place, copies once
 *    |     last.address = address; last.length += n; last.generation = current
 *    |-- else, or for the rest past maxIndexEntryLength:
 *    |     address = cache.insert(chunk); index.insert(new ReadIndexEntry(length, n, address))
 *    | length += data.length; durableLength = length  (if appends count as durable)
 *    | woken = waiters with offset &lt; length        taken out of the queue in offset order
 *    | segment.unlock()
 *    | for each woken waiter, in offset order: read(offset, maxLength) and complete its future
 *    v return the offset the data landed at
 * </pre>
 * The index grows with bytes, not with appends: a stream of small appends fills one entry of up
 * to {@link Builder#maxIndexEntryLength(int) maxIndexEntryLength} bytes (1 MiB by default)
 * before it starts another. In steady state an append allocates nothing: the lookup, the lock,
 * {@code cache.append} and the bookkeeping are allocation-free; an entry (48 bytes) is
 * allocated per {@code maxIndexEntryLength} bytes, and a slice wrapper when an append straddles
 * two entries. An append is all or nothing: if the cache cannot take it (a
 * {@code CacheFullException} after the cache manager's attempt to free blocks), the index and
 * the segment's bounds are left as they were.
 *
 * <h2>Read path</h2>
 * <pre>
 *  read(name, offset, maxLength)
 *    | segments.get(name); segment.lock()
 *    | offset &lt; startOffset -&gt; SegmentTruncatedException;  offset &gt;= length -&gt; END_OF_DATA / SEALED_END
 *    | entry = index.floorContaining(offset)            the entry holding offset: O(log n)
 *    | loop while bytes are wanted:
 *    |    entry missing or evicted (address 0)  -&gt; stop: NOT_CACHED
 *    |    view = cache.view(entry.address, from, n)     read-only, zero-copy
 *    |    entry.pin(); entry.generation = current
 *    |    entry = index.next(entry)
 *    | segment.unlock()
 *    v ReadResult{views, status: MAX_LENGTH | END_OF_DATA | SEALED_END | NOT_CACHED, nextOffset}
 *
 *      offsets:  0          1 MiB        2 MiB        3 MiB    length
 *                |  entry A  |  entry B   |  entry C   | entry D |
 *                | cached    | evicted: 0 | cached     | cached  |
 *      read(0.5 MiB, 4 MiB) returns A's second half and stops at 1 MiB: NOT_CACHED
 *      read(2 MiB, 4 MiB)   returns views of C and D and stops at length: END_OF_DATA
 * </pre>
 * <b>Design note:</b> reads take the segment's lock, like appends, rather than walking the
 * tree lock-free: the block cache forbids a view of an entry while an append changes it, the
 * AVL tree is not a concurrent structure, and pinning under the lock is what makes "eviction
 * skips pinned entries" and "truncation defers freeing" race-free without a second protocol.
 * The lock is held for an O(log n) lookup plus one view per entry covered (a 1 MiB entry is
 * one view), so readers and the appender of a segment take turns quickly; readers of
 * different segments never meet.
 *
 * <p><b>Copying read.</b> {@link #read(String, long, ByteBuf)} (and its {@link ByteBuffer}
 * overload) walks the same entries under the same lock, but copies each one's bytes into the
 * caller's buffer ({@link BlockCache#copyTo}) instead of making a view: nothing is pinned,
 * there is no result to release, and nothing is allocated; it returns the status the view read
 * would give for {@code maxLength} = the room in the destination. The view read allocates its
 * result, arrays and view wrappers (see docs/buffers.md for the measured bytes per read); the copying read is the
 * zero-garbage read path, for a reader that owns a buffer.
 *
 * <h2>Pinning</h2>
 * The views read the cache's memory, so a {@link ReadResult} pins every entry it covers (a count
 * in the entry's pin word) until its reference count reaches zero ({@link ReadResult#close()}, or
 * the release of its data by a Netty pipeline; see docs/buffers.md). The cache
 * manager never evicts a pinned entry; truncation and deletion remove pinned entries from the
 * index at once but <em>retire</em> them instead of freeing them, and the release that drops
 * the last pin frees their cache blocks. Pins are taken under the segment's lock and dropped
 * lock-free from any thread (an atomic pin word, see {@code ReadIndexEntry}). Appends may keep
 * growing a pinned entry: bytes already in the cache never move, and a view covers only bytes
 * that were there when it was made.
 *
 * <h2>Waiting reads</h2>
 * {@link #readOrWait} at or past the end of an unsealed segment queues a waiter in the segment
 * (a priority queue by offset, under the segment's lock) and returns its future: no thread waits.
 * The append that makes the segment longer than a waiter's offset takes it out of the queue
 * with every other such waiter, in offset order, and after unlocking completes each with a
 * fresh read, in that order; {@link #seal} completes every waiter with
 * {@link ReadStatus#SEALED_END}; {@link #delete} fails them with a
 * {@link SegmentNotFoundException}; a waiter's timeout, scheduled on the store's one
 * read-timeouts thread (made by the builder's {@link Builder#threads(StreamcacheThreads) threads}), completes it
 * with {@link ReadStatus#TIMED_OUT}. Futures complete on the thread that appends, seals,
 * deletes, or on the timeout thread: dependent actions that do
 * real work should use the {@code ...Async} variants. Truncation cannot reach a waiter (it
 * cannot move past {@code length}, and waiters wait at or past it).
 *
 * <p><b>Design note:</b> a woken waiter gets a fresh read made after the appender unlocked,
 * not a result built under the appender's lock: the appender's critical section stays as short
 * with a thousand tail readers as with none, user callbacks never run under a segment lock (they
 * may call the store), and a read that fails (the segment was deleted meanwhile) fails only its
 * own future.
 *
 * <h2>Durability and eviction</h2>
 * Each segment has a durable length: only entries wholly below it may be evicted, since the
 * cache may hold the only copy of the rest. With {@link Builder#appendsDurable(boolean)
 * appendsDurable} (the default) every append is durable at once: right for an owner that
 * appends only bytes already on disk, and for a pure in-memory store that accepts losing evicted
 * bytes (reads then report them NOT_CACHED for good). Without it, the owner (an aggregating
 * writer that caches before it forces) calls {@link #markDurable} once its log holds the bytes.
 *
 * <p>The {@link CacheManager} (one per cache, shared or owned by the store) evicts: the store
 * registers itself as an {@code EvictionSource}, and the manager's passes, on its timer, on
 * demand, and on threads that find the cache full, walk the segments and evict durable,
 * unpinned entries the {@link io.streamcache.segmentstore.eviction.EvictionPolicy} selects.
 * Eviction takes each segment's lock with {@code tryLock} and skips busy segments, so two
 * appenders that both find the cache full, each holding its own segment's lock, never wait for
 * each other; an appender may evict its own segment's older entries, never the entry its append
 * is writing into.
 *
 * <h2>Durable appends (with a log)</h2>
 * Built with {@link Builder#log(LogConfig) a log}, the store makes appends durable before anyone
 * sees them, through an {@code AggregatingWriter} over a {@code LogDirectory}:
 * <pre>
 *  appendAsync(name, data)                               completion thread (in log order)
 *    | segment.lock: offset = reservedLength;               | segment.lock
 *    |   reservedLength += n; writer.append(...)            |   cache.append / insert (or a NOT_CACHED
 *    | unlock; return the request (a future)   ... log ...  |   gap if the cache is full); length += n
 *    v                                     batch forced --&gt; |   woken = waiters below length
 *                                                           | unlock; complete woken reads; complete future
 * </pre>
 * The offset is reserved under the segment's lock and the request queued under it, so a
 * segment's records reach the log in offset order; the completion thread commits them in that
 * order, so {@code length} (what readers see, and what tail readers wait on) only ever covers
 * durable bytes, and waiting reads complete on the completion thread. The data are copied into
 * the cache from the producer's buffer at commit: <b>the producer must not change (or release)
 * its buffer until the future completes</b>. A durable append the cache cannot take (full even
 * after eviction) becomes a NOT_CACHED gap rather than a failure: its bytes are in the log, and
 * whoever reads the log can {@link #fill} them back.
 *
 * <p>Create, seal, truncate and delete are logged first too (write-ahead) and applied when
 * durable; the calls wait for that. A seal is final once its record is written after every
 * append admitted before it; a deleted segment's name is free once its DELETE is durable.
 *
 * <p>A disk error fails the appends in flight with a {@link LogFailedException} (their offsets
 * are given back: the next append after recovery gets the first failed offset) and the log
 * rejects requests until it recovers: by itself, retrying every
 * {@link LogConfig#retryInterval()} once the disk takes writes again, or at
 * {@link StoreLog#recover()} (see {@link #log()}). A
 * segment whose requests from before the error are still in flight refuses new ones until they
 * have failed. A store built over a directory that holds log files recovers them, by default
 * with a {@code ScanningRecoveryHook} (its class comment gives the procedure step by step; the
 * corruption policy is {@link Builder#logCorruptionPolicy(CorruptionPolicy)}), or with the
 * {@code RecoveryHook} given to the builder: each segment comes back with its bounds and seal,
 * its bytes NOT_CACHED gaps ({@code RecoveredLog#liveSegments()}), and appends continue at its
 * length. Records can be followed as they become durable with a
 * listener given to the builder (for the integration modules; not part of the public API).
 *
 * <h2>Read-through</h2>
 * With a log the store keeps, per segment, a location index (an off-heap row, reached through a
 * {@code LocationIndex} view: segment offset to log file
 * and position, one entry per DATA record: recovery rebuilds it from the record headers, and the
 * writer's listener feeds it as records become durable, before their appends commit; a retired
 * file's read channel is closed). {@link #readThrough(String, long, int)} uses it for bytes that are not cached,
 * evicted or restored by recovery:
 * <pre>
 *  readThrough(name, offset, maxLength)
 *    | r = read(name, offset, maxLength)               the cache, as read does
 *    |-- not NOT_CACHED (or no log, or no locations)  -&gt; r
 *    |-- NOT_CACHED after some data                    -&gt; r; the range at r.nextOffset is loaded
 *    |                                                    in the background (a catch-up reader's
 *    |                                                    next call finds it cached)
 *    |-- NOT_CACHED at offset:
 *    |     historicalReader.read(id, locations, offset, L)  range [x - x % R, + L): R = 1 MiB by
 *    |       | concurrent misses on the range join one read   default (readThroughRangeLength),
 *    |       | records read, validated (CRC), copied          L = R, or up to 8 R for a reader
 *    |       | sink: fill(segment, range)                     going on where the last load ended
 *    |       |   back into the cache, clipped to length       (readThroughMaxReadAhead)
 *    |     r = read(name, offset, maxLength)           now cached
 *    |     still NOT_CACHED (the cache could not take it): a read-only view of the range's
 *    v     bytes (a pooled direct buffer, given back at the result's release), pinning nothing
 * </pre>
 * A catch-up reader reading an evicted segment sequentially therefore costs one log read per
 * range and hits the cache in between; the bytes a range brings in are ordinary durable entries,
 * evicted again by the cache manager when cold.
 *
 * <h2>Structure</h2>
 * This class is the facade: it checks the arguments and hands each call on; most of its length
 * is the contract above and on each method. The segments live in a {@code SegmentTable} (the
 * table by name, every change applied in memory at once, the eviction walk); with a log, a
 * {@code DurableSegmentTable} decorates it (each change logged first, then applied to the table
 * by its {@code LogCommits} once durable) and the facade sends the changes there. A
 * {@code WaitingReads} queues tail reads and times them out, a {@code ReadThrough} loads from the
 * log what the cache does not hold, a {@code LogLocations} follows where each segment's records
 * are, and a {@code LogOpening} recovers the log while the store is built. The per-segment
 * algorithms are {@code Segment}'s. Around the facade, in classes of their own: a
 * {@code HandedOffReads} runs on the timeout thread the reads that would wait for a segment's
 * lock, a {@code StoreSegments} is what the compactor sees of the store, a {@code HealthBean} and
 * an {@code IsolationBean} publish {@link #health()} and {@link #isolationStats()} over JMX, a
 * {@code StartupReport} writes the line the builder logs. The parts are wired here, each
 * handed what it uses when it is made: the cache manager's hooks ({@link CacheManager#hooks()})
 * to the table and the read-through, the writer and directory to the compactor. What stays here is the public contract (this comment and one per
 * public method, about half of the file), the argument checks and hand-offs, and the
 * {@link Builder}, nested because it is part of the API as {@code SegmentStore.Builder}.
 *
 * <h2>Lifecycle</h2>
 * The store does not own the cache: close the store, then the cache (closing them the other
 * way round frees nothing twice, but the views of unreleased results die with the cache). {@link #close()} deletes
 * every segment (freeing its unpinned entries), fails the waiting reads with a
 * {@link CacheClosedException}, stops the timeout thread and closes an owned manager.
 */
public final class SegmentStore implements AutoCloseable {
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** The expected offset of an unconditional append: wherever the segment ends. */
    private static final long ANY_OFFSET = SegmentMutations.ANY_OFFSET;

    private final BlockCache cache;
    private final CacheManager manager;
    private final boolean ownsManager;
    private final int maxIndexEntryLength;
    private final boolean appendsDurable;
    private final String name;
    /** Creates the store's threads; for the builders of the parts that start threads. */
    private final StreamcacheThreads threads;
    private final WaitingReads waiting;
    /** Reads handed to the timeout thread and not yet issued; close fails them. */
    private final HandedOffReads handedOff;
    // What a hand-off issues on the timeout thread, one object each for the store's life: the
    // hand-off keeps the read's arguments, so that handing a read off captures nothing.
    private final HandedOffReads.Issuer cacheReadIssuer = this::issueCacheRead;
    private final HandedOffReads.Issuer readThroughIssuer = this::issueReadThrough;
    private final HandedOffReads.Issuer readAsyncIssuer = this::issueReadAsync;
    private final HandedOffReads.Issuer readOrWaitIssuer = this::issueReadOrWait;
    /** The segments, in memory. */
    private final SegmentTable table;
    /** Where the changes go: the table, or, with a log, the durable layer over it. */
    private final SegmentMutations mutations;
    /** With a log: the durable layer (the writer, the commits); else null. */
    private final DurableSegmentTable durable;
    private final LogDirectory logDirectory;
    private final StoreLog storeLog;
    /** With a log: each live segment's location index, by id; else null. */
    private final LogLocations locations;
    /** With a log: reads of what the cache does not hold; else null. */
    private final ReadThrough readThrough;
    /** Admits the asynchronous view reads through the store's read budget and the readers'. */
    private final ReadAdmission admission;
    /** The isolation MBean's name, or null if its name was taken; unregistered at close. */
    private final javax.management.ObjectName isolationMBean;
    /** With a log and {@link Builder#compaction}: retention and compaction; else null. */
    private final Compactor compactor;
    /** With a cache built for a warm restart: writes its catalog; else null. */
    private final WarmCheckpointer checkpointer;
    /** What the warm restart brought back. */
    private final WarmRestoreStats warmRestore;
    /** Evaluates {@link #health()}; set once the constructor has built the rest. */
    private final HealthCheck healthCheck;
    /** The health MBean's name, or null if its name was taken; unregistered at close. */
    private final javax.management.ObjectName healthMBean;
    /** The line the builder logged at INFO: the sizes derived and the limits checked. */
    private String startupReport;

    private SegmentStore(final Builder builder) {
        this.cache = builder.cache;
        this.maxIndexEntryLength = builder.maxIndexEntryLength;
        this.appendsDurable = builder.appendsDurable;
        this.name = builder.name != null ? builder.name : "segment-store-" + INSTANCES.incrementAndGet();
        this.threads = builder.threads;
        this.waiting = new WaitingReads(name, threads);
        this.manager = builder.manager;
        this.ownsManager = builder.ownsManager;
        final ManagerHooks managerHooks = manager.hooks();
        this.table = new SegmentTable(name, cache, managerHooks, maxIndexEntryLength, builder.fillTier, appendsDurable, waiting);
        waiting.counters = table.isolation;
        this.handedOff = new HandedOffReads(name, table.isolation, waiting.executor());
        final long readBudgetBytes = builder.readBudget > 0 ? builder.readBudget
            : Math.max(1L, (long) (cache.capacity() * Builder.READ_BUDGET_FRACTION_DEFAULT));
        final ReadBudget storeBudget = builder.readBudgetFailFast ? ReadBudget.failFast(name, readBudgetBytes)
            : ReadBudget.waiting(name, readBudgetBytes);
        this.admission = new ReadAdmission(storeBudget, table.isolation, waiting.executor());
        this.isolationMBean = io.streamcache.log.internal.LogMBeans.register("Isolation", name, new IsolationBean(this));
        this.healthCheck = new HealthCheck(this, saturatedNanos(builder.healthWindow),
            builder.diskReserve >= 0 ? builder.diskReserve : builder.log != null ? 2 * builder.log.fileLength() : 0, System::nanoTime);
        this.healthMBean = io.streamcache.log.internal.LogMBeans.register("Health", name, new HealthBean(this));
        managerHooks.register(table.evictionSource());
        if (builder.log == null) {
            this.checkpointer = null;
            this.warmRestore = WarmRestoreStats.DISABLED;
            this.mutations = table;
            this.durable = null;
            this.logDirectory = null;
            this.storeLog = null;
            this.locations = null;
            this.readThrough = null;
            this.compactor = null;
            return;
        }
        this.locations = new LogLocations();
        // By default sized against the cache: eight ranges, but at most 1/64 of the cache (a
        // catch-up reader's 8 MiB loads on a 16-64 MB cache evicted the tails it shared the
        // cache with), and never below one range.
        final int maxReadAhead = builder.readThroughMaxReadAhead != -1 ? builder.readThroughMaxReadAhead
            : (int) Math.min(1 << 30, Math.min(8L * builder.readThroughRangeLength,
                Math.max(builder.readThroughRangeLength, cache.capacity() / Builder.READ_AHEAD_CACHE_DIVISOR)));
        this.readThrough = new ReadThrough(table, managerHooks, locations, builder.log.directory(), builder.readThroughRangeLength,
            builder.readThroughMaxGap, builder.readThroughThreads, maxReadAhead, name, threads, storeBudget, handedOff);
        final LogOpening opening = new LogOpening(builder.log, builder.logRecovery, builder.logCorruptionPolicy, threads, name);
        try {
            final RecoveredLog recovered = opening.open(table, locations);
            this.logDirectory = opening.directory();
            if (cache.warmStart().enabled()) {
                // After recovery, which says what is durable; before any append can come.
                final WarmRestore.Result restored = WarmRestore.attach(name, cache, table, logDirectory.epoch());
                this.warmRestore = restored.stats();
                this.checkpointer = new WarmCheckpointer(name, cache, table, manager, logDirectory.epoch(), cache.warmStart().sequence(),
                    builder.warmCheckpointInterval, restored.digests(), threads);
            } else {
                this.warmRestore = WarmRestoreStats.DISABLED;
                this.checkpointer = null;
            }
            this.durable = new DurableSegmentTable(table, waiting, logDirectory,
                locations.feed(builder.logListener, table, readThrough.channels()), recovered, threads);
            this.mutations = durable;
            this.storeLog = new StoreLogView(durable.writer(), logDirectory, readThrough.historicalReader());
            if (checkpointer != null) {
                checkpointer.start();
            }
            // Last: its thread may start a pass on the store at once.
            this.compactor = builder.compaction != null
                ? Compactor.start(new StoreSegments(this), durable.writer(), logDirectory, builder.compaction, threads) : null;
        } catch (final IOException e) {
            abandon(opening);
            throw new LogException("could not open the log in " + builder.log.directory() + ": " + e.getMessage(), e);
        } catch (final RuntimeException | Error e) {
            abandon(opening);
            throw e;
        }
    }

    /** Undoes a constructor that failed to open the log. */
    private void abandon(final LogOpening opening) {
        io.streamcache.log.internal.LogMBeans.unregister(isolationMBean);
        io.streamcache.log.internal.LogMBeans.unregister(healthMBean);
        table.abandon();
        waiting.shutdown();
        handedOff.failPending();
        readThrough.close();
        locations.close();
        opening.abandon();
    }

    /**
     * @param cache the cache to hold the segments' bytes; the store does not close it.
     * @return a builder with the defaults: 1 MiB index entries, appends durable at once, an
     *         owned {@link CacheManager} with its defaults.
     */
    public static Builder builder(final BlockCache cache) {
        return new Builder(cache);
    }

    // ------------------------------------------------------------------------------------------
    // Segments
    // ------------------------------------------------------------------------------------------

    /**
     * Creates an empty segment.
     *
     * @throws SegmentExistsException if a segment of that name exists; it is untouched.
     * @throws SegmentNameException   if the name breaks the rules of {@link SegmentNames} (empty,
     *                                an unpaired surrogate, too long); nothing was created or logged.
     * @throws NullPointerException   if {@code name} is null.
     */
    public void create(final String name) {
        Objects.requireNonNull(name, "name");
        SegmentNames.check(name);
        table.ensureOpen();
        mutations.create(name);
    }

    /**
     * Creates an empty segment without waiting for its creation to be durable: the segment
     * exists at once (appends, reads and seals may follow right away, in this thread or others),
     * and its creation becomes durable with the batch that carries it, which is at the latest
     * the batch of its first acknowledged append (the log keeps order). A broker that creates a
     * segment for its first append (one per queue, partition, ledger) saves a force round trip
     * per segment this way. Without a log, the same as {@link #create}.
     *
     * <p>After a crash before the future completed and before any operation on the segment was
     * acknowledged, the segment may be absent: nothing acknowledged is lost.
     *
     * @return completes once the creation is durable; exceptionally with
     *         {@link SegmentExistsException} if a segment of that name exists (it is untouched),
     *         or with the log's failure (the segment is then removed again).
     * @throws SegmentNameException if the name breaks the rules of {@link SegmentNames}; nothing
     *                              was created or logged.
     * @throws NullPointerException if {@code name} is null.
     */
    public CompletableFuture<Void> createAsync(final String name) {
        Objects.requireNonNull(name, "name");
        SegmentNames.check(name);
        table.ensureOpen();
        return mutations.createAsync(name);
    }

    /**
     * Appends the readable bytes of {@code data} (its indices are not moved; the caller keeps
     * ownership: the bytes are copied into the cache). Appends to one segment from many threads
     * are ordered; the data lands whole and contiguous. Without a log, completes the waiting reads
     * the new bytes reach, on this thread, before returning; with a log, waits for
     * {@link #appendAsync(String, ByteBuf)} (the data must not change until this returns),
     * without its future: a pooled log request of the calling thread, so that with a log an
     * append allocates nothing.
     *
     * @return the offset the data landed at: the segment's length before the append.
     * @throws SegmentNotFoundException if no such segment exists.
     * @throws SegmentSealedException   if the segment is sealed.
     * @throws NullPointerException     if {@code name} or {@code data} is null.
     * @throws IllegalArgumentException if {@code data} was released (its reference count is 0).
     * @throws io.streamcache.core.CacheFullException if the cache has no room even after
     *         eviction; nothing was appended (without a log; with one, such bytes stay
     *         NOT_CACHED).
     * @throws LogFailedException       with a log, if the log failed (a disk error) or rejects appends since.
     * @throws SegmentAppendTooLongException with a log, if the data is longer than the log's
     *                                  {@link #maxAppendLength()}; nothing was appended.
     */
    public long append(final String name, final ByteBuf data) {
        return appendAt(name, ANY_OFFSET, data);
    }

    /**
     * Appends like {@link #append(String, ByteBuf)}, but only if the segment's length is
     * {@code expectedOffset}: the conditional append, for a replica that copies a leader's
     * segment and for an idempotent producer (a retry of an append that landed fails instead of
     * landing twice). The check and the append are one step under the segment's lock: of
     * concurrent conditional appends at one offset, exactly one succeeds. With a log the length
     * compared is the one appends are ordered by: every append admitted before, durable or not.
     *
     * @return {@code expectedOffset}, where the data landed.
     * @throws SegmentLengthMismatchException if the segment's length is not {@code expectedOffset};
     *                                        nothing was appended.
     * @throws IllegalArgumentException       if {@code expectedOffset} is negative.
     * @see #append(String, ByteBuf) for the other exceptions
     */
    public long append(final String name, final long expectedOffset, final ByteBuf data) {
        checkExpectedOffset(expectedOffset);
        return appendAt(name, expectedOffset, data);
    }

    /**
     * Appends the remaining bytes of {@code data} (its position is not moved) if the segment's
     * length is {@code expectedOffset}; allocates a wrapper.
     *
     * @see #append(String, long, ByteBuf)
     */
    public long append(final String name, final long expectedOffset, final ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return append(name, expectedOffset, Unpooled.wrappedBuffer(data));
    }

    /** An append at {@code expectedOffset}, or wherever the segment ends if it is {@link #ANY_OFFSET}. */
    private long appendAt(final String name, final long expectedOffset, final ByteBuf data) {
        checkData(data);
        return mutations.append(name, expectedOffset, data);
    }

    /**
     * A released buffer is bad input, refused before anything changes (Netty's own check, an
     * {@code IllegalReferenceCountException}, is an {@link IllegalStateException}: a bug's
     * exception, thrown from deep inside the copy).
     */
    private static void checkData(final ByteBuf data) {
        Objects.requireNonNull(data, "data");
        if (data.refCnt() == 0) {
            throw new IllegalArgumentException("data was released (refCnt=0): " + data.getClass().getSimpleName());
        }
    }

    /**
     * Appends the remaining bytes of {@code data} (its position is not moved); allocates a
     * wrapper, unlike {@link #append(String, ByteBuf)}.
     *
     * @see #append(String, ByteBuf)
     */
    public long append(final String name, final ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return append(name, Unpooled.wrappedBuffer(data));
    }

    /**
     * Appends the readable bytes of {@code data} (its indices are not moved) durably: the offset
     * is reserved now, and the future completes with it once the bytes are in the log (forced,
     * with the default durability policy) and then in the cache and the read index, where tail
     * readers see them. <b>The caller must not change the bytes, nor release the buffer, until
     * the future completes</b>: they are copied into the log's batch buffer, then into the cache,
     * from it. Appends to one segment complete in offset order. Without a log, appends at once
     * and returns a completed future.
     *
     * <p>The future fails with {@link SegmentNotFoundException}, {@link SegmentSealedException},
     * {@link CacheClosedException}, or a {@link LogFailedException} if the log failed or rejects
     * appends since a disk error (the reserved offsets are then given back).
     *
     * <p>The future completes on the log's completion thread, after the bytes entered the cache
     * (and after the waiting reads they reach were completed, on that thread too). A dependent
     * action that does real work, or waits for another append of this store, must run elsewhere
     * (the {@code ...Async} variants of the future's methods): the completion thread completes
     * every append in turn, so blocking it blocks them all.
     *
     * <p><b>Never blocks</b> on a reader, the cache or the disk: the call checks and reserves the
     * offset under the segment's lock (held briefly: no lock of the store is held across
     * allocation, eviction, a fill from the log or a wait) and hands the record to the writer's
     * bounded queue without waiting; everything else completes the future later. When the writer
     * is behind (a stalled disk) and its queue ({@code LogConfig.queueCapacity}) is full, the
     * record goes to an overflow of the same capacity, in order; when that is full too the
     * future fails at once with a {@link io.streamcache.log.LogQueueFullException}
     * and nothing was appended (retry later; {@link #append(String, ByteBuf)} waits for room
     * instead, with no lock held). The completion thread never waits for
     * memory: a durable append the cache has no room for (after one eviction pass, run with no
     * lock held) is kept as a NOT_CACHED gap, read back from the log on demand
     * ({@link #uncachedCommitBytes()}). Without a log the append is made on the calling thread
     * with the blocks free after one eviction pass, or the future fails at once with a
     * {@code CacheFullException} ({@link #append(String, ByteBuf)} is the call that waits for
     * room, with no lock held, up to the cache's {@code fullRetryTimeout}).
     *
     * <p><b>Allocation:</b> the returned future is the log request itself, the only object an
     * append allocates on the producer's side.
     *
     * @throws NullPointerException     if {@code name} or {@code data} is null.
     * @throws IllegalArgumentException if {@code data} was released (its reference count is 0).
     * @throws SegmentAppendTooLongException if the data is longer than the log's
     *                                  {@link #maxAppendLength()} (16 MiB by default); nothing was appended.
     */
    public CompletableFuture<Long> appendAsync(final String name, final ByteBuf data) {
        return appendAsyncAt(name, ANY_OFFSET, data);
    }

    /**
     * Appends like {@link #appendAsync(String, ByteBuf)}, but only if the segment's length is
     * {@code expectedOffset} (see {@link #append(String, long, ByteBuf)}): the check and the
     * reservation of the offset are one step under the segment's lock. With a log the length
     * compared is the reserved length (every append admitted before this one, durable or not,
     * since they are ordered before it); if one of those fails later (a disk error), its offsets
     * are given back and so are this append's: it fails too, with a {@link LogFailedException}.
     *
     * <p>The future fails with a {@link SegmentLengthMismatchException} if the length is not
     * {@code expectedOffset} (nothing was appended), or as {@link #appendAsync(String, ByteBuf)}'s.
     *
     * @throws IllegalArgumentException if {@code expectedOffset} is negative, or as
     *                                  {@link #appendAsync(String, ByteBuf)}.
     * @throws NullPointerException     if {@code name} or {@code data} is null.
     */
    public CompletableFuture<Long> appendAsync(final String name, final long expectedOffset, final ByteBuf data) {
        checkExpectedOffset(expectedOffset);
        return appendAsyncAt(name, expectedOffset, data);
    }

    /**
     * Appends the remaining bytes of {@code data} (its position is not moved) durably if the
     * segment's length is {@code expectedOffset}; allocates a wrapper.
     *
     * @see #appendAsync(String, long, ByteBuf)
     */
    public CompletableFuture<Long> appendAsync(final String name, final long expectedOffset, final ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return appendAsync(name, expectedOffset, Unpooled.wrappedBuffer(data));
    }

    private CompletableFuture<Long> appendAsyncAt(final String name, final long expectedOffset, final ByteBuf data) {
        Objects.requireNonNull(name, "name");
        checkData(data);
        return mutations.appendAsync(name, expectedOffset, data);
    }

    /**
     * Appends the remaining bytes of {@code data} (its position is not moved) durably; allocates
     * a wrapper.
     *
     * @see #appendAsync(String, ByteBuf)
     */
    public CompletableFuture<Long> appendAsync(final String name, final ByteBuffer data) {
        Objects.requireNonNull(data, "data");
        return appendAsync(name, Unpooled.wrappedBuffer(data));
    }

    /**
     * Puts back into the cache bytes of the segment that are not cached (evicted): for the owner
     * of the durable copy (the log), after a read stopped with {@link ReadStatus#NOT_CACHED}.
     * {@code data}'s readable bytes (its indices are not moved) must be the segment's bytes from
     * {@code offset}; where the index has no cached bytes they are copied into the cache and the
     * index, where it has, they are skipped (not compared), and so are bytes before the start
     * offset. The new entries count as durable only below the segment's durable length, like
     * any other. If the cache fills up midway, the ranges done so far stay cached and the
     * exception propagates.
     *
     * <p>Only for a store without a log: with one, the log fills the cache itself from bytes
     * whose CRC it checked ({@link #readThrough(String, long, int)}); it is never handed bytes from outside, which
     * would be served without being compared with the logged ones.
     *
     * @return bytes newly cached.
     * @throws SegmentNotFoundException if no such segment exists.
     * @throws SegmentFillRefusedException if the store has a log; nothing was changed.
     * @throws IllegalArgumentException if {@code offset} is negative or the data ends past the segment's length.
     * @throws io.streamcache.core.CacheFullException if the cache has no room even after eviction.
     */
    public long fill(final String name, final long offset, final ByteBuf data) {
        checkOffset(offset);
        Objects.requireNonNull(data, "data");
        final Segment segment = table.segment(name);
        if (durable != null) {
            throw new SegmentFillRefusedException(name, offset);
        }
        return table.fill(segment, offset, data);
    }

    /**
     * Reads what is available now from {@code offset}: up to {@code maxLength} bytes as read-only
     * zero-copy views, stopping at the end of the data, at {@code maxLength}, or at the first byte
     * not in the cache; the status says which. At or past the end it returns no data with
     * {@link ReadStatus#END_OF_DATA} (or {@link ReadStatus#SEALED_END}). The caller must
     * {@link ReadResult#close() close} the result (or release its data); its views are
     * reference counted and fail once it is released.
     *
     * @throws SegmentNotFoundException  if no such segment exists.
     * @throws SegmentTruncatedException if {@code offset} is before the segment's start offset.
     * @throws IllegalArgumentException  if {@code offset} or {@code maxLength} is negative.
     */
    public ReadResult read(final String name, final long offset, final int maxLength) {
        checkRead(offset, maxLength);
        return table.segment(name).read(offset, maxLength);
    }

    /**
     * Copies what is available now from {@code offset} into {@code destination}, from its writer
     * index: the bytes {@link #read(String, long, int)} would return for {@code maxLength} =
     * {@code destination.writableBytes()}, stopping at the end of the data, when the destination
     * is full, or at the first byte not in the cache, with the status that read would give
     * ({@link ReadStatus#MAX_LENGTH}, {@link ReadStatus#END_OF_DATA},
     * {@link ReadStatus#SEALED_END} or {@link ReadStatus#NOT_CACHED}). The writer index advances
     * by the bytes copied, so the next offset to read is {@code offset} plus that; the reader
     * index is not moved. The destination is not grown past its capacity.
     *
     * <p>The copy is made under the segment's lock, like the view read's lookup, so it pins
     * nothing and there is nothing to release; it counts as a use of every entry it copies from
     * for eviction, and as a cache hit, like the view read. Thread-safe like the other
     * operations: it is ordered with the segment's appends, truncations and evictions by that
     * lock and sees the bytes of every append that returned before it started. The destination
     * is the caller's: no other thread may use it during the call.
     *
     * <p><b>Allocation:</b> none, for a heap or direct destination, whatever the eviction
     * policy and tier (the copying read is the store's zero-garbage read path; the view read
     * allocates its result and views). As for every locked operation, a thread that finds the
     * segment's lock taken queues a node to wait for it.
     *
     * <p>On an exception the destination's indices are as they were (bytes past the writer
     * index may have been written if the cache failed midway).
     *
     * @return why the copy stopped where it did.
     * @throws SegmentNotFoundException  if no such segment exists.
     * @throws SegmentTruncatedException if {@code offset} is before the segment's start offset.
     * @throws IllegalArgumentException  if {@code offset} is negative.
     * @throws NullPointerException      if {@code name} or {@code destination} is null.
     * @throws ReadOnlyBufferException   if the destination is read-only.
     * @throws IllegalReferenceCountException if the destination was released.
     * @throws CacheClosedException      if the store is closed.
     */
    public ReadStatus read(final String name, final long offset, final ByteBuf destination) {
        checkOffset(offset);
        Objects.requireNonNull(destination, "destination");
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (destination.refCnt() == 0) {
            throw new IllegalReferenceCountException("destination has been released (refCnt=0)");
        }
        return table.copy(name, offset, destination);
    }

    /**
     * Copies what is available now from {@code offset} into {@code destination}, from its
     * position up to its limit, and advances its position by the bytes copied (the limit is not
     * moved); otherwise as {@link #read(String, long, ByteBuf)}, with
     * {@code maxLength = destination.remaining()}. Allocates nothing. On an exception the
     * destination's position and limit are as they were.
     *
     * @return why the copy stopped where it did.
     * @throws SegmentNotFoundException  if no such segment exists.
     * @throws SegmentTruncatedException if {@code offset} is before the segment's start offset.
     * @throws IllegalArgumentException  if {@code offset} is negative.
     * @throws NullPointerException      if {@code name} or {@code destination} is null.
     * @throws ReadOnlyBufferException   if the destination is read-only.
     * @throws CacheClosedException      if the store is closed.
     */
    public ReadStatus read(final String name, final long offset, final ByteBuffer destination) {
        checkOffset(offset);
        Objects.requireNonNull(destination, "destination");
        if (destination.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        return table.copy(name, offset, destination);
    }

    /**
     * Reads like {@link #read}, but goes to the log for bytes that are not in the cache (see
     * <em>Read-through</em> in the class comment). The future completes at once with the read's
     * result when it returns any data or stops for another reason than NOT_CACHED (if it returned
     * data and then stopped at NOT_CACHED, the range after it is loaded in the background, so the
     * next call finds it cached); otherwise once the range holding {@code offset} was read from
     * the log (or joined the read of it already in flight), put back into the cache and read
     * again, or, if the cache could not take it, with a read-only view of the bytes read
     * (pinning nothing). Without a log, or for bytes the log has no location of (recovered by a
     * custom {@code RecoveryHook}), the NOT_CACHED result is returned as is. The caller must
     * release the result.
     *
     * <p>The future completes on the caller's thread or on a reading thread of the
     * historical reader (its stats: {@link StoreLog#historicalReadStats()}); it fails with {@link SegmentNotFoundException},
     * {@link SegmentTruncatedException}, {@link CacheClosedException}, a
     * {@link io.streamcache.log.LogCorruptedException} if a record read
     * back no longer validates, or an {@link java.io.UncheckedIOException} if reading failed.
     *
     * @throws IllegalArgumentException if {@code offset} or {@code maxLength} is negative.
     * @throws NullPointerException     if {@code name} is null.
     */
    public CompletableFuture<ReadResult> readThrough(final String name, final long offset, final int maxLength) {
        return readThrough(name, offset, maxLength, null);
    }

    /**
     * As {@link #readThrough(String, long, int)}, admitted through the store's
     * {@link #readBudget()} and {@code budget} (a reader's or a channel's; null: the store's
     * only). Over budget the future completes once room returns, or fails at once with
     * {@link ReadBudgetExceededException} if the spent budget is fail-fast; the result is charged
     * to both until it is released. A load's length is also held to half of the smaller budget
     * (at least one range), so that a catch-up reader's read-ahead fits what it may hold.
     *
     * <p><b>Never blocks:</b> the call returns after a cache lookup under the segment's lock,
     * taken only if it is free (if another thread holds it, a fill publishing, an eviction or an
     * append, the whole read is handed to the store's read-timeouts thread instead), and a
     * hand-off to the historical reader's queue; a read over budget is queued in the budget and
     * issued on the read-timeouts thread once a release makes room, never on this thread nor on
     * the releasing one. Everything that waits completes the future later.
     *
     * @throws IllegalArgumentException if {@code offset} or {@code maxLength} is negative.
     * @throws NullPointerException     if {@code name} is null.
     */
    public CompletableFuture<ReadResult> readThrough(final String name, final long offset, final int maxLength, final ReadBudget budget) {
        checkRead(offset, maxLength);
        Objects.requireNonNull(name, "name");
        return admission.admit(budget, () -> readThroughAdmitted(name, offset, maxLength, budget));
    }

    private CompletableFuture<ReadResult> issueCacheRead(final String segmentName, final Segment segment, final long offset,
                                                         final int maxLength, final long timeoutNanos, final ReadBudget budget) {
        return CompletableFuture.completedFuture(table.segment(segmentName).read(offset, maxLength));
    }

    private CompletableFuture<ReadResult> issueReadThrough(final String segmentName, final Segment segment, final long offset,
                                                           final int maxLength, final long timeoutNanos, final ReadBudget budget) {
        return readThrough.read(segment, offset, maxLength, budget);
    }

    private CompletableFuture<ReadResult> issueReadAsync(final String segmentName, final Segment segment, final long offset,
                                                         final int maxLength, final long timeoutNanos, final ReadBudget budget) {
        return readOrWaitAdmitted(segmentName, offset, maxLength, timeoutNanos, true, false);
    }

    private CompletableFuture<ReadResult> issueReadOrWait(final String segmentName, final Segment segment, final long offset,
                                                          final int maxLength, final long timeoutNanos, final ReadBudget budget) {
        return readOrWaitAdmitted(segmentName, offset, maxLength, timeoutNanos, false, false);
    }

    /**
     * A read-through admitted by the budgets, on whatever thread admitted it: it tries the
     * segment's lock and, if another thread holds it (a fill publishing, an eviction, an append),
     * hands the read to the store's read-timeouts thread rather than wait for it.
     */
    private CompletableFuture<ReadResult> readThroughAdmitted(final String name, final long offset, final int maxLength, final ReadBudget budget) {
        final Segment segment;
        try {
            segment = table.segment(name);
            if (readThrough == null) {
                final ReadResult result = segment.tryRead(offset, maxLength);
                return result != null ? CompletableFuture.completedFuture(result)
                    : handedOff.handOff(cacheReadIssuer, name, null, offset, maxLength, 0L, null);
            }
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
        final CompletableFuture<ReadResult> tried = readThrough.tryRead(segment, offset, maxLength, budget);
        return tried != null ? tried : handedOff.handOff(readThroughIssuer, name, segment, offset, maxLength, 0L, budget);
    }

    /**
     * The one read call: the bytes at {@code offset} from wherever they are. The future completes
     * <ul>
     *   <li>at once, with views of the cache, when the cache holds bytes at {@code offset};</li>
     *   <li>after a read from the log ({@link #readThrough(String, long, int)}) when they are not cached (evicted,
     *       or not loaded since a restart): the range read goes back into the cache, and the
     *       result holds its bytes;</li>
     *   <li>when bytes arrive, when {@code offset} is at the end of an unsealed segment, as
     *       {@link #readOrWait} does: with {@link ReadStatus#TIMED_OUT} and no data after
     *       {@code timeout}, with {@link ReadStatus#SEALED_END} if the segment is or gets sealed;</li>
     *   <li>exceptionally as {@link #readOrWait} and {@link #readThrough(String, long, int)} do (a missing or deleted
     *       segment, an offset truncated away, a closed store, a log that cannot be read).</li>
     * </ul>
     * The result may stop before {@code maxLength} where the cached bytes stop
     * ({@link ReadStatus#NOT_CACHED}): read on from {@link ReadResult#nextOffset()}. The caller
     * closes every result it receives (or releases its data). Without a log, bytes that are not
     * cached are lost, and the result says {@link ReadStatus#NOT_CACHED} with no data.
     * The table of outcomes is in {@code docs/reading.md}.
     *
     * @throws IllegalArgumentException if {@code offset}, {@code maxLength} or {@code timeout} is negative.
     * @throws NullPointerException     if {@code name} or {@code timeout} is null.
     */
    public CompletableFuture<ReadResult> readAsync(final String name, final long offset, final int maxLength, final Duration timeout) {
        return readAsync(name, offset, maxLength, timeout, null);
    }

    /**
     * As {@link #readAsync(String, long, int, Duration)}, admitted through the store's
     * {@link #readBudget()} and {@code budget} (a reader's or a channel's; null: the store's
     * only): over budget the future completes once room returns (results charged to the spent
     * budget are released), or fails at once with {@link ReadBudgetExceededException} if that
     * budget is fail-fast. Only the reads of the spent budget wait: a reader over its own budget
     * never holds up another reader. The result is charged its length to both budgets until it
     * is released.
     *
     * <p><b>Never blocks:</b> the call returns after a lookup under the segment's lock, taken
     * only if it is free (no lock of the store is ever held across allocation, eviction, a load
     * or a wait; if another thread holds it, the whole read is handed to the store's
     * read-timeouts thread), and a bounded hand-off: a waiter queued, a load handed to the
     * historical reader's queue, or a read queued in a budget. A read queued in a budget is
     * issued on the read-timeouts thread once a release makes room, never on the calling thread
     * nor on the releasing one. A reader's budget may hold at most half of the store's
     * ({@link ReadBudget#READER_SHARE_DIVISOR}): beyond it its reads wait in its own queue, so a
     * reader never spends the store's budget for the others. Anything that has to wait completes
     * the future later.
     *
     * <p>On a miss the call takes no other lock: the load's read-ahead is computed without a
     * monitor, the load is queued with a compare-and-set, and a load that is done already (the
     * bytes were cached meanwhile, or it joined one that just completed) is read under the
     * segment's lock only if it is free, the rest handed off as above. What can still make the
     * calling thread wait, briefly: the scheduler's queue lock when a read at the tail schedules
     * its timeout (taken with the segment's lock released) or when a hand-off wakes the
     * read-timeouts thread (once per batch). A hit builds its views on the calling thread,
     * 45-60 us for a cached 1 MiB read in the stress harness; on a host with more runnable threads than
     * cores, that is the window in which the scheduler preempts the caller, and what the call's
     * slowest percentiles measure there (see {@code docs/reading.md}).
     *
     * @throws IllegalArgumentException if {@code offset}, {@code maxLength} or {@code timeout} is negative.
     * @throws NullPointerException     if {@code name} or {@code timeout} is null.
     */
    public CompletableFuture<ReadResult> readAsync(final String name, final long offset, final int maxLength, final Duration timeout,
                                                   final ReadBudget budget) {
        final long timeoutNanos = checkReadOrWait(name, offset, maxLength, timeout);
        return admission.admit(budget, () -> {
            // The first lookup tries the segment's lock; held by another thread, the read is
            // handed off rather than wait on this thread.
            CompletableFuture<ReadResult> first = readOrWaitAdmitted(name, offset, maxLength, timeoutNanos, true, true);
            if (first == null) {
                first = handedOff.handOff(readAsyncIssuer, name, null, offset, maxLength, timeoutNanos, null);
            }
            return first.thenCompose(result -> {
                if (result.length() > 0 || result.status() != ReadStatus.NOT_CACHED || readThrough == null) {
                    return CompletableFuture.completedFuture(result);
                }
                result.close();
                // The lookup above found the miss: the load starts without a second one.
                final Segment segment;
                try {
                    segment = table.segment(name);
                } catch (final StreamcacheException e) {
                    return CompletableFuture.<ReadResult>failedFuture(e);
                }
                return readThrough.readMissed(segment, offset, maxLength, budget);
            });
        });
    }

    /**
     * Reads like {@link #read}, but when no byte is available at {@code offset} yet (at or past
     * the end of an unsealed segment) waits for one without holding a thread. The future
     * completes:
     * <ul>
     *   <li>at once, with the read's result, if bytes are available or the segment is sealed
     *       ({@link ReadStatus#SEALED_END}), or if {@code timeout} is zero (then
     *       {@link ReadStatus#END_OF_DATA} with no data);</li>
     *   <li>on the appending thread, with a fresh read, when an append makes the segment longer
     *       than {@code offset}; the waiters an append reaches complete in offset order;</li>
     *   <li>with {@link ReadStatus#SEALED_END} and no data when the segment is sealed;</li>
     *   <li>with {@link ReadStatus#TIMED_OUT} and no data after {@code timeout} (a status, not an
     *       exception), on the store's timeout thread;</li>
     *   <li>exceptionally with {@link SegmentNotFoundException} if the segment does not exist or
     *       is deleted meanwhile, {@link SegmentTruncatedException} if {@code offset} is before its
     *       start, {@link CacheClosedException} if the store closes meanwhile.</li>
     * </ul>
     * Cancelling the future is allowed; the waiter then stays queued until its timeout or the
     * next append, which releases the result it would have delivered. The caller must release
     * every result it receives.
     *
     * <p><b>Never blocks:</b> a lookup under the segment's lock if it is free (else the read is
     * handed to the store's read-timeouts thread) and, to wait, a waiter queued in the segment; admitted through the store's {@link #readBudget()} like
     * {@link #readAsync(String, long, int, Duration, ReadBudget)} (over it the future completes
     * once room returns). Unlike {@code readAsync}, a read past the end waits there too.
     *
     * @throws IllegalArgumentException if {@code offset} or {@code maxLength} is negative, or
     *                                  {@code timeout} is negative.
     * @throws NullPointerException     if {@code name} or {@code timeout} is null.
     */
    public CompletableFuture<ReadResult> readOrWait(final String name, final long offset, final int maxLength, final Duration timeout) {
        final long timeoutNanos = checkReadOrWait(name, offset, maxLength, timeout);
        return admission.admit(null, () -> {
            final CompletableFuture<ReadResult> first = readOrWaitAdmitted(name, offset, maxLength, timeoutNanos, false, true);
            return first != null ? first : handedOff.handOff(readOrWaitIssuer, name, null, offset, maxLength, timeoutNanos, null);
        });
    }

    private long checkReadOrWait(final String name, final long offset, final int maxLength, final Duration timeout) {
        checkRead(offset, maxLength);
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout=" + timeout + " must not be negative");
        }
        return saturatedNanos(timeout);
    }

    private CompletableFuture<ReadResult> readOrWaitAdmitted(final String name, final long offset, final int maxLength, final long timeoutNanos,
                                                             final boolean pastEndAtOnce) {
        return readOrWaitAdmitted(name, offset, maxLength, timeoutNanos, pastEndAtOnce, false);
    }

    /** @return as {@link WaitingReads#readOrWait(Segment, long, int, long, boolean, boolean)}: null if {@code tryOnly} found the lock held. */
    private CompletableFuture<ReadResult> readOrWaitAdmitted(final String name, final long offset, final int maxLength, final long timeoutNanos,
                                                             final boolean pastEndAtOnce, final boolean tryOnly) {
        final Segment segment;
        try {
            segment = table.segment(name);
        } catch (final SegmentNotFoundException | CacheClosedException e) {
            return CompletableFuture.failedFuture(e);
        }
        return waiting.readOrWait(segment, offset, maxLength, timeoutNanos, pastEndAtOnce, tryOnly);
    }

    /**
     * @return the store's read budget ({@link Builder#readBudget(long)}): every asynchronous view read
     *         ({@link #readAsync}, {@link #readOrWait}, {@link #readThrough(String, long, int)}) is admitted through
     *         it and its result charged to it; fills from the log are refused while it is spent.
     */
    public ReadBudget readBudget() {
        return admission.storeBudget();
    }

    /**
     * @return how this store kept readers and writers apart so far: appends that waited for
     *         memory, fills admitted or refused, reads past the end (a snapshot).
     */
    public IsolationStats isolationStats() {
        final ReadBudget budget = admission.storeBudget();
        final RangeBufferPool pool = readThrough != null ? readThrough.rangeBuffers() : null;
        return table.isolation.snapshot(budget.limit(), budget.used(), budget.waitingReads(), pool != null ? pool.heldBytes() : 0,
            pool != null ? pool.heapFallbacks() : 0);
    }

    /**
     * The store's health now, for a broker's health check, a probe or a gauge: {@code FAILED}
     * when the log is failed (appends refused) or the store closed; {@code DEGRADED} when the
     * log's disk has less usable space than {@link Builder#diskReserve(long)}, when appends or
     * fills found no cache room or reads were refused their budget within the
     * {@link Builder#healthWindow(Duration) health window}, when reads wait for the read budget
     * now, and for one window after a warm restart that discarded entries; else {@code HEALTHY}.
     * Any thread, any time (also after close); takes no lock of the data path, reads the file
     * system's free space once (a {@code statfs}), and allocates a little: poll it every few
     * seconds, not per request.
     *
     * @return the state and its issues, worst first.
     */
    public StoreHealth health() {
        return healthCheck.evaluate();
    }

    /**
     * Seals a segment: no append is accepted any more, and the waiting reads complete with
     * {@link ReadStatus#SEALED_END}. Idempotent.
     *
     * @return the segment's final length.
     * @throws SegmentNotFoundException if no such segment exists.
     */
    public long seal(final String name) {
        return mutations.seal(name);
    }

    /**
     * Drops the prefix before {@code offset}: the start offset moves there, and the entries
     * wholly before it leave the index, their cache entries freed now (or at the last release of
     * a result that pins them). An entry straddling {@code offset} stays. A no-op if
     * {@code offset} is at or before the start offset.
     *
     * @throws SegmentNotFoundException if no such segment exists.
     * @throws IllegalArgumentException if {@code offset} is negative or past the segment's length.
     */
    public void truncate(final String name, final long offset) {
        checkOffset(offset);
        mutations.truncate(name, offset);
    }

    /**
     * Deletes a segment: its name is free again at once, its entries are freed (pinned ones at
     * their last release), its waiting reads fail with {@link SegmentNotFoundException}.
     *
     * @throws SegmentNotFoundException if no such segment exists.
     */
    public void delete(final String name) {
        Objects.requireNonNull(name, "name");
        table.ensureOpen();
        mutations.delete(name);
    }

    /**
     * Declares the segment's bytes before {@code offset} durable (on disk): the entries wholly
     * below it become evictable. Never moves the durable length back. Needed only when appends
     * are not durable at once ({@link Builder#appendsDurable(boolean)}).
     *
     * @throws SegmentNotFoundException if no such segment exists.
     * @throws IllegalArgumentException if {@code offset} is negative or past the segment's length.
     */
    public void markDurable(final String name, final long offset) {
        checkOffset(offset);
        table.markDurable(name, offset);
    }

    /**
     * @return a snapshot of the segment's bounds.
     * @throws SegmentNotFoundException if no such segment exists.
     */
    public SegmentInfo info(final String name) {
        return table.info(name);
    }

    /**
     * @return whether a segment of that name exists now.
     * @throws CacheClosedException if the store is closed.
     */
    public boolean exists(final String name) {
        Objects.requireNonNull(name, "name");
        table.ensureOpen();
        return table.exists(name);
    }

    /**
     * @return how many segments exist now.
     */
    public int segmentCount() {
        return table.count();
    }

    // ------------------------------------------------------------------------------------------
    // Configuration and lifecycle
    // ------------------------------------------------------------------------------------------

    public String name() {
        return name;
    }

    public BlockCache cache() {
        return cache;
    }

    /**
     * @return the cache manager evicting this store's entries (owned or shared).
     */
    public CacheManager cacheManager() {
        return manager;
    }

    public int maxIndexEntryLength() {
        return maxIndexEntryLength;
    }

    public boolean appendsDurable() {
        return appendsDurable;
    }

    /**
     * @return the longest append: with a log, {@link LogConfig#maxAppendLength()} (an append is
     *         one record, in the log whole or not at all); without, {@link Integer#MAX_VALUE}
     *         (the cache bounds it).
     */
    public int maxAppendLength() {
        return durable != null ? durable.writer().maxAppendLength() : Integer.MAX_VALUE;
    }

    /**
     * @return with a log, the log as a broker operates it (statistics, failure and recovery,
     *         files prepared ahead); empty without a log. The same object every time.
     */
    public Optional<StoreLog> log() {
        return Optional.ofNullable(storeLog);
    }

    /**
     * @return with a {@link Builder#compaction(CompactionConfig) compaction config}, the store's
     *         retention and compaction (per-segment policies, a pass now, counters); else empty.
     */
    public Optional<Compaction> compaction() {
        return Optional.ofNullable(compactor);
    }

    /**
     * @return the log's directory (to read records back by file number), or null without a log.
     */
    LogDirectory logDirectory() {
        return logDirectory;
    }

    /**
     * @return the log's writer (stats, {@link AggregatingWriter#recover()}), or null without a log.
     */
    AggregatingWriter logWriter() {
        return durable != null ? durable.writer() : null;
    }

    /**
     * @return bytes of durable appends that could not enter the cache (it was full) and became
     *         NOT_CACHED gaps, since the store was built.
     */
    public long uncachedCommitBytes() {
        return durable != null ? durable.uncachedCommitBytes() : 0;
    }

    /**
     * Closes the store: frees every segment's cache entries (pinned ones at their last
     * release) and drops the segments from memory, fails the waiting reads with
     * {@link CacheClosedException}, stops the timeout thread, and closes the cache manager if the
     * store built it. With a log this deletes nothing on disk: the writer writes and forces what
     * it holds, and a store reopened on the directory finds every segment again (their bytes
     * NOT_CACHED until read). The cache stays open. Idempotent; operations after it throw
     * {@link CacheClosedException}.
     */
    @Override
    public void close() {
        if (!table.markClosed()) {
            return;
        }
        admission.close(new CacheClosedException("segment store " + name + " is closed"));
        io.streamcache.log.internal.LogMBeans.unregister(isolationMBean);
        io.streamcache.log.internal.LogMBeans.unregister(healthMBean);
        final Compactor running = compactor;
        if (running != null) {
            // Before the writer: its copies and truncates go through the writer.
            running.close();
        }
        final AggregatingWriter writer = logWriter();
        if (writer != null) {
            // Writes and completes what was submitted: the commits still find their segments.
            writer.close();
        }
        if (checkpointer != null) {
            // The last catalog, after the writer drained and with eviction stopped, so that
            // nothing changes in the cache after it; the entries then stay in the cache.
            checkpointer.close();
            table.stopEviction();
            boolean written = false;
            try {
                checkpointer.checkpoint(writer.cleanEnd() != null);
                written = true;
            } catch (final IOException | RuntimeException e) {
                LoggerFactory.getLogger(SegmentStore.class).warn("store {}: the warm catalog could not be written at close; the"
                    + " next open finds the last checkpoint's: {}", name, e.toString());
            }
            table.deleteAll(written);
        } else {
            table.deleteAll();
        }
        waiting.shutdown();
        handedOff.failPending();
        if (ownsManager) {
            manager.close();
        }
        if (readThrough != null) {
            readThrough.close();
        }
        if (locations != null) {
            // After the writer and the read-through: gives the location indexes' memory back.
            locations.close();
        }
        if (logDirectory != null) {
            // After the writer: marks the close clean if it finished cleanly, then unlocks.
            logDirectory.close(writer != null ? writer.cleanEnd() : null);
        }
    }

    public boolean isClosed() {
        return table.isClosed();
    }

    /**
     * @return what this store's warm restart brought back when it was built
     *         ({@link WarmRestoreStats#DISABLED} unless its cache was built with
     *         {@link BlockCache.Builder#warmRestart}). Immutable; any thread.
     */
    public WarmRestoreStats warmRestore() {
        return warmRestore;
    }

    /** For tests in this package: the start-up report the builder logged. */
    String startupReport() {
        return startupReport;
    }

    /** Whether the store built its cache manager (and closes it); for the start-up report. */
    boolean ownsManager() {
        return ownsManager;
    }

    /** The usable bytes the log's file system should keep; for the start-up report. */
    long diskReserve() {
        return healthCheck.diskReserve();
    }

    /** For tests in this package: the warm checkpointer, or null. */
    WarmCheckpointer warmCheckpointer() {
        return checkpointer;
    }

    /**
     * @return the names of the live segments now: a snapshot, sorted.
     */
    public Set<String> segmentNames() {
        return table.names();
    }

    /**
     * The log's location index of a segment (where its bytes are in the log files, one entry per
     * DATA record, i.e. per append): thread-safe; it follows the segment as records become
     * durable. For this module's facades and the library's tools (the message-queue facade
     * rebuilds its message boundaries from it, {@code cache-bench} measures its lookups): its
     * type lives in a package the log module exports to this module only, so a broker on the
     * module path cannot use it, and one on the class path must not rely on it (it may change in
     * any release).
     *
     * @param name the segment.
     * @return the index, or null without a log or if the log has no locations of it (recovered
     *         by a custom {@code RecoveryHook}).
     * @throws SegmentNotFoundException if no such segment exists.
     */
    @SuppressWarnings("exports")
    public LocationIndex locations(final String name) {
        final Segment segment = table.segment(name);
        return locations != null ? locations.get(segment.id) : null;
    }

    /**
     * @return the compactor the builder's {@link Builder#compaction} set up (retention and
     *         compaction), or null.
     */
    Compactor compactor() {
        return compactor;
    }

    /**
     * Bytes of direct memory the log's location indexes hold now: any thread. They
     * are the log's metadata (where each append's record is in the files), outside the cache's
     * bound, so the JVM's direct memory limit must leave room for them.
     *
     * @return the bytes with a log (their {@code LocationMemory}'s slabs); 0 without.
     */
    public long locationMemoryBytes() {
        return locations != null ? locations.reservedBytes() : 0;
    }

    /**
     * @return with a log, the reader {@link #readThrough(String, long, int)} loads ranges with (for its statistics); else null.
     */
    HistoricalReader historicalReader() {
        return readThrough != null ? readThrough.historicalReader() : null;
    }

    @Override
    public String toString() {
        return "SegmentStore{name=" + name + ", cache=" + cache.name() + ", segments=" + table.count()
            + ", maxIndexEntryLength=" + maxIndexEntryLength + ", appendsDurable=" + appendsDurable
            + (logDirectory != null ? ", log=" + logDirectory.path() : "") + '}';
    }

    // ------------------------------------------------------------------------------------------
    // Machinery
    // ------------------------------------------------------------------------------------------

    /** For tests in this package: the segment object, or null. */
    Segment segmentOrNull(final String name) {
        return table.segmentOrNull(name);
    }

    /** For tests in this package: what the cache manager walks to evict this store's entries. */
    EvictionSource evictionSourceForTests() {
        return table.evictionSource();
    }

    private static void checkExpectedOffset(final long expectedOffset) {
        if (expectedOffset < 0) {
            throw new IllegalArgumentException("expectedOffset=" + expectedOffset + " must be >= 0");
        }
    }

    private static void checkOffset(final long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset=" + offset + " must be >= 0");
        }
    }

    private static void checkRead(final long offset, final int maxLength) {
        checkOffset(offset);
        if (maxLength < 0) {
            throw new IllegalArgumentException("maxLength=" + maxLength + " must be >= 0");
        }
    }

    private static long saturatedNanos(final Duration duration) {
        try {
            return duration.toNanos();
        } catch (final ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Configures and builds a {@link SegmentStore}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        /** Default longest index entry: 1 MiB. */
        public static final int MAX_INDEX_ENTRY_LENGTH_DEFAULT = 1 << 20;
        /** Default interval between warm checkpoints. */
        public static final Duration WARM_CHECKPOINT_INTERVAL_DEFAULT = Duration.ofSeconds(30);
        /**
         * The store's default read budget, as a fraction of the cache's capacity: what the
         * results of asynchronous view reads not yet released may hold, so that appends always
         * have the other three quarters.
         */
        public static final double READ_BUDGET_FRACTION_DEFAULT = 0.25;
        /** The default longest read-ahead is at most the cache's capacity divided by this (and at least one range). */
        public static final int READ_AHEAD_CACHE_DIVISOR = 64;
        /** How long a refusal keeps {@link SegmentStore#health()} degraded by default (one to two windows). */
        public static final Duration HEALTH_WINDOW_DEFAULT = Duration.ofSeconds(30);

        /**
         * @param diskReserve the usable bytes the log's file system should keep: below it
         *                    {@link SegmentStore#health()} reports {@link StoreHealth.Reason#DISK_BELOW_RESERVE}.
         *                    &gt;= 0; by default twice the log's {@link LogConfig#fileLength()} (room
         *                    to roll to the next file and prepare one more), 0 without a log.
         */
        public Builder diskReserve(final long diskReserve) {
            if (diskReserve < 0) {
                throw new CacheConfigurationException("diskReserve=" + diskReserve + " must be >= 0");
            }
            this.diskReserve = diskReserve;
            return this;
        }

        /**
         * @param healthWindow how far back {@link SegmentStore#health()} looks for refusals (appends
         *                     without cache room, reads without budget) and how long it reports a
         *                     warm restart's discarded entries: positive, {@link #HEALTH_WINDOW_DEFAULT} by default.
         */
        public Builder healthWindow(final Duration healthWindow) {
            Objects.requireNonNull(healthWindow, "healthWindow");
            if (healthWindow.isNegative() || healthWindow.isZero()) {
                throw new CacheConfigurationException("healthWindow=" + healthWindow + " must be positive");
            }
            this.healthWindow = healthWindow;
            return this;
        }

        private final BlockCache cache;
        private int maxIndexEntryLength = MAX_INDEX_ENTRY_LENGTH_DEFAULT;
        private boolean appendsDurable = true;
        private int fillTier;
        private CacheManager manager;
        private CacheManager.Builder managerBuilder;
        private boolean ownsManager;
        private String name;
        private LogConfig log;
        private RecoveryHook logRecovery;
        private LogRecordListener logListener = LogRecordListener.NONE;
        private CorruptionPolicy logCorruptionPolicy = CorruptionPolicy.FAIL;
        private int readThroughRangeLength = HistoricalReader.RANGE_LENGTH_DEFAULT;
        private int readThroughMaxGap = HistoricalReader.MAX_READ_GAP_DEFAULT;
        /** -1: eight range lengths, at most 1/{@link #READ_AHEAD_CACHE_DIVISOR} of the cache. */
        private int readThroughMaxReadAhead = -1;
        /** 0: {@link #READ_BUDGET_FRACTION_DEFAULT} of the cache's capacity. */
        private long readBudget;
        private boolean readBudgetFailFast;
        private int readThroughThreads = HistoricalReader.THREADS_DEFAULT;
        private CompactionConfig compaction;
        private StreamcacheThreads threads = StreamcacheThreads.defaults();
        private Duration warmCheckpointInterval = WARM_CHECKPOINT_INTERVAL_DEFAULT;
        /** -1: two log files' length with a log, 0 without. */
        private long diskReserve = -1;
        private Duration healthWindow = HEALTH_WINDOW_DEFAULT;

        private Builder(final BlockCache cache) {
            this.cache = Objects.requireNonNull(cache, "cache");
        }

        /**
         * @param maxIndexEntryLength the longest an index entry (one cache entry) grows before
         *                            appends start a new one: in [1, cache.maxEntryLength()].
         *                            Eviction works in whole entries.
         */
        public Builder maxIndexEntryLength(final int maxIndexEntryLength) {
            this.maxIndexEntryLength = maxIndexEntryLength;
            return this;
        }

        /**
         * @param fillTier the cache tier {@link SegmentStore#fill} (and so read-through) puts
         *                 bytes read back from the log into first: 0 (the default, the fastest),
         *                 or a slower tier of a tiered cache, so that historical data does not push
         *                 the tail out of DRAM. Appends always start in tier 0.
         */
        public Builder fillTier(final int fillTier) {
            this.fillTier = fillTier;
            return this;
        }

        /**
         * @param appendsDurable whether appended bytes count as durable (evictable) at once
         *                       (default); if not, only what {@link SegmentStore#markDurable}
         *                       declares durable may be evicted.
         */
        public Builder appendsDurable(final boolean appendsDurable) {
            this.appendsDurable = appendsDurable;
            return this;
        }

        /**
         * @param manager a manager of the same cache, shared with other stores: the store
         *                registers with it and does not close it.
         */
        public Builder cacheManager(final CacheManager manager) {
            this.manager = Objects.requireNonNull(manager, "manager");
            this.managerBuilder = null;
            return this;
        }

        /**
         * @param managerBuilder settings of the manager the store builds, owns and closes
         *                       (built from {@link CacheManager#builder(BlockCache)} over the same cache).
         */
        public Builder cacheManager(final CacheManager.Builder managerBuilder) {
            this.managerBuilder = Objects.requireNonNull(managerBuilder, "managerBuilder");
            this.manager = null;
            return this;
        }

        /**
         * @param name the store's name in its threads and messages; generated if not set.
         */
        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @param log makes appends (and create, seal, truncate, delete) durable through an
         *            aggregating writer over log files in {@link LogConfig#directory()}; the store
         *            owns the writer and the directory. A directory holding log files is
         *            recovered (by default with a {@code ScanningRecoveryHook}).
         */
        public Builder log(final LogConfig log) {
            this.log = Objects.requireNonNull(log, "log");
            return this;
        }

        /**
         * @param logCorruptionPolicy what the default recovery ({@code ScanningRecoveryHook})
         *                            does with corruption before the tail of the log:
         *                            {@link CorruptionPolicy#FAIL} (the default: the build fails
         *                            with a {@code LogCorruptedException} naming file and
         *                            position) or {@link CorruptionPolicy#TRUNCATE}.
         */
        public Builder logCorruptionPolicy(final CorruptionPolicy logCorruptionPolicy) {
            this.logCorruptionPolicy = Objects.requireNonNull(logCorruptionPolicy, "logCorruptionPolicy");
            return this;
        }

        /**
         * @param readThroughRangeLength bytes a {@link SegmentStore#readThrough(String, long, int)} miss loads from
         *                               the log, aligned to a multiple of it; 1 MiB by default.
         */
        public Builder readThroughRangeLength(final int readThroughRangeLength) {
            this.readThroughRangeLength = readThroughRangeLength;
            return this;
        }

        /**
         * @param readThroughThreads threads that read ranges from the log for
         *                           {@link SegmentStore#readThrough(String, long, int)} (2 by default); 0 reads on the
         *                           thread of the caller that misses first (it then waits for the
         *                           disk, and so do the callers joining its read).
         */
        public Builder readThroughThreads(final int readThroughThreads) {
            this.readThroughThreads = readThroughThreads;
            return this;
        }

        /**
         * @param readThroughMaxGap the largest run of other segments' records between two records
         *                          of a range that one positional read spans rather than two
         *                          (64 KiB by default); 0 reads each record's span on its own.
         */
        public Builder readThroughMaxGap(final int readThroughMaxGap) {
            this.readThroughMaxGap = readThroughMaxGap;
            return this;
        }

        /**
         * @param readThroughMaxReadAhead the longest load from the log (by default eight
         *                                {@link #readThroughRangeLength(int)}s: 8 MiB): a reader
         *                                that misses where the segment's last load ended gets twice
         *                                that load's length, up to this; any other miss reads
         *                                {@link #readThroughRangeLength(int)}. At most 1 GiB; a value
         *                                below the range length means no read-ahead.
         */
        public Builder readThroughMaxReadAhead(final int readThroughMaxReadAhead) {
            this.readThroughMaxReadAhead = readThroughMaxReadAhead;
            return this;
        }

        /**
         * @param readBudget the store's read budget in bytes (see {@link ReadBudget}): the
         *                   asynchronous view reads ({@link SegmentStore#readAsync},
         *                   {@link SegmentStore#readOrWait}, {@link SegmentStore#readThrough(String, long, int)}) are
         *                   admitted while their unreleased results hold less, and fills from the
         *                   log are refused (the read is served uncached) while they hold more.
         *                   By default {@link #READ_BUDGET_FRACTION_DEFAULT} of the cache's
         *                   capacity. The synchronous {@link SegmentStore#read(String, long, int)}
         *                   and the copying reads are not budgeted (they never wait).
         * @throws IllegalArgumentException if not positive.
         */
        public Builder readBudget(final long readBudget) {
            if (readBudget <= 0) {
                throw new IllegalArgumentException("readBudget=" + readBudget + " must be positive");
            }
            this.readBudget = readBudget;
            return this;
        }

        /**
         * @param readBudgetFailFast whether a read the store's spent budget cannot admit fails at
         *                           once with {@link ReadBudgetExceededException} (default false:
         *                           it waits for room).
         */
        public Builder readBudgetFailFast(final boolean readBudgetFailFast) {
            this.readBudgetFailFast = readBudgetFailFast;
            return this;
        }

        /**
         * @param logRecovery rebuilds the segments from the log files when the store is built
         *                    over a directory that holds some; by default a
         *                    {@code ScanningRecoveryHook} with the
         *                    {@link #logCorruptionPolicy(CorruptionPolicy) corruption policy}.
         */
        Builder logRecovery(final RecoveryHook logRecovery) {
            this.logRecovery = Objects.requireNonNull(logRecovery, "logRecovery");
            return this;
        }

        /**
         * @param compaction with a log: retention and compaction in the background (see
         *                   {@code Compactor}); off by default (log files then go only once all
         *                   their data are dead). {@link SegmentStore#compaction()} returns it; {@link #close()}
         *                   stops it before the writer.
         */
        public Builder compaction(final CompactionConfig compaction) {
            this.compaction = Objects.requireNonNull(compaction, "compaction");
            return this;
        }

        /**
         * @param logListener told of every record once durable (and of retired files), on the
         *                    writer thread: for a location index.
         */
        Builder logListener(final LogRecordListener logListener) {
            this.logListener = Objects.requireNonNull(logListener, "logListener");
            return this;
        }

        /**
         * Sets how often a store whose cache was built for a warm restart
         * ({@link BlockCache.Builder#warmRestart}) writes its warm catalog on its checkpoint
         * thread; it writes one at once when built, early ones 1 s, 3 s, 7 s, ... after that (the
         * delay doubling from 1 s until it reaches the interval, so that a crash soon after an
         * open still finds entries to bring back) and one at its clean close. After a crash the
         * next open can bring back what the last checkpoint saw and still holds; entries cached
         * since are read from the log again. Each checkpoint hashes only the entries that changed
         * since the last one.
         *
         * @param interval positive; 30 seconds by default.
         */
        public Builder warmCheckpointInterval(final Duration interval) {
            this.warmCheckpointInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * @param threads creates the threads the store starts (the read-timeouts thread, role
         *                {@link StreamcacheThreads.Role#READ_TIMEOUTS}); by default
         *                {@link StreamcacheThreads#defaults()}. The roles are listed in
         *                {@code docs/threads.md}.
         */
        public Builder threads(final StreamcacheThreads threads) {
            this.threads = Objects.requireNonNull(threads, "threads");
            return this;
        }

        private void checkSameCache(final CacheManager candidate, final boolean owned) {
            if (candidate.cache() != cache) {
                if (owned) {
                    candidate.close();
                }
                throw new CacheConfigurationException("the cache manager " + candidate.name() + " manages cache="
                    + candidate.cache().name() + ", not cache=" + cache.name());
            }
        }

        /** Logs the built store's start-up report (one INFO line) and keeps it for {@code startupReport()}. */
        private SegmentStore reported(final SegmentStore store) {
            store.startupReport = StartupReport.line(store, log, readBudget > 0, readThroughThreads, readThroughRangeLength,
                compaction != null);
            LoggerFactory.getLogger(SegmentStore.class).info("{}", store.startupReport);
            return store;
        }

        /**
         * @throws CacheConfigurationException if a setting is out of range or the manager manages another cache,
         *                                     or the log directory holds files and no recovery is set.
         * @throws CacheClosedException        if the cache is closed.
         * @throws LogException                if the log cannot be opened or recovered.
         */
        public SegmentStore build() {
            if (cache.isClosed()) {
                throw new CacheClosedException("cache " + cache.name() + " is closed");
            }
            if (cache.warmStart().enabled() && log == null) {
                throw new CacheConfigurationException("cache " + cache.name() + " is built for a warm restart, which needs a log:"
                    + " set log(LogConfig), or build the cache without warmRestart");
            }
            if (warmCheckpointInterval.isNegative() || warmCheckpointInterval.isZero()) {
                throw new CacheConfigurationException("warmCheckpointInterval=" + warmCheckpointInterval + " must be positive");
            }
            if (cache.warmStart().enabled() && !cache.warmStart().claim()) {
                throw new CacheConfigurationException("cache " + cache.name() + " restarted warm for another store: a cache built"
                    + " with warmRestart serves one store");
            }
            if (compaction != null && log == null) {
                throw new CacheConfigurationException("compaction needs a log: set log(LogConfig) too");
            }
            if (log != null && !appendsDurable) {
                throw new CacheConfigurationException("appendsDurable=false does not apply with a log: durable appends enter the cache"
                    + " only once they are in the log");
            }
            if (readThroughRangeLength < 1 || readThroughRangeLength > 1 << 30) {
                throw new CacheConfigurationException("readThroughRangeLength=" + readThroughRangeLength + " must be in [1, "
                    + (1 << 30) + "]");
            }
            if (readThroughThreads < 0) {
                throw new CacheConfigurationException("readThroughThreads=" + readThroughThreads + " must be >= 0");
            }
            if (readThroughMaxGap < 0) {
                throw new CacheConfigurationException("readThroughMaxGap=" + readThroughMaxGap + " must be >= 0");
            }
            if (readThroughMaxReadAhead != -1 && (readThroughMaxReadAhead < 1 || readThroughMaxReadAhead > 1 << 30)) {
                throw new CacheConfigurationException("readThroughMaxReadAhead=" + readThroughMaxReadAhead + " must be in [1, "
                    + (1 << 30) + "]");
            }
            if (maxIndexEntryLength < 1 || maxIndexEntryLength > cache.maxEntryLength()) {
                throw new CacheConfigurationException("maxIndexEntryLength=" + maxIndexEntryLength + " must be in [1, "
                    + cache.maxEntryLength() + "] (the cache's maxEntryLength)");
            }
            if (fillTier < 0 || fillTier >= cache.tierCount()) {
                throw new CacheConfigurationException("fillTier=" + fillTier + " is not a tier of cache " + cache.name()
                    + " (tierCount=" + cache.tierCount() + ")");
            }
            if (manager != null) {
                if (manager.isClosed()) {
                    throw new CacheClosedException("cache manager " + manager.name() + " is closed");
                }
                checkSameCache(manager, false);
                ownsManager = false;
                return reported(new SegmentStore(this));
            }
            // A manager the store builds from scratch takes the store's threads; a builder the caller
            // passed keeps whatever threads the caller gave it.
            final CacheManager built = (managerBuilder != null ? managerBuilder : CacheManager.builder(cache).threads(threads)).build();
            checkSameCache(built, true);
            manager = built;
            ownsManager = true;
            try {
                return reported(new SegmentStore(this));
            } catch (final RuntimeException | Error e) {
                built.close();
                throw e;
            } finally {
                manager = null;
            }
        }
    }
}
