package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.StreamcacheException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.segmentstore.internal.eviction.ManagerHooks;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.internal.history.LogFileChannels;
import io.streamcache.log.internal.history.LogRange;
import io.streamcache.log.internal.location.LocationIndex;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * With a log: reads that go to the log for bytes the cache does not hold (evicted, or restored
 * by recovery as NOT_CACHED gaps), through a {@link HistoricalReader} it owns over the log
 * files' read channels, and puts what it read back into the cache ({@link #fillFromLog}, the
 * reader's sink) where the cache manager admits it (see {@code ManagerHooks.fillTier}: with the
 * reader-aware policy, a range read behind every live reader of a segment rarely re-read is served
 * and not cached when the cache has no free room). The flow is drawn under <em>Read-through</em> in {@link SegmentStore}'s class
 * comment, the public contract. A miss loads the historical reader's range length, or more for
 * a reader going on where the segment's last load ended ({@link SequentialReadAhead}, up to
 * {@code maxReadAhead}); a miss after some cached data loads the next range in the background.
 *
 * <p><b>Threading:</b> thread-safe. A read takes the segment's lock for each cache read (never
 * across a load); the loads run on the historical reader's threads (or on the first missing
 * caller's, with 0 threads), and so do the fills and the futures' completions.
 */
final class ReadThrough {
    /** Loads one read-through makes at most before it returns what it has (an empty or failed load is read again). */
    private static final int MAX_ATTEMPTS = 3;
    private final SegmentTable table;
    private final ManagerHooks managerHooks;
    private final LogLocations locations;
    private final LogFileChannels logChannels;
    private final HistoricalReader historicalReader;
    /** The longest load from the log a sequential reader's read-ahead grows to. */
    private final int maxReadAhead;
    /** The store's read budget: fills are refused while it is spent, and charged while they run. */
    private final ReadBudget storeBudget;
    /** The direct buffers ranges are read into (see {@link RangeBufferPool}). */
    private final RangeBufferPool rangeBuffers;
    /**
     * Runs on the store's read-timeouts thread what would otherwise wait for a segment's lock on
     * a reading call's thread: the rest of a read whose load was done when the call made it.
     */
    private final HandedOffReads handedOff;

    /**
     * Opens read channels on the log directory lazily and builds the historical reader (its
     * threads start with it).
     */
    ReadThrough(final SegmentTable table, final ManagerHooks managerHooks, final LogLocations locations, final Path directory,
                final int rangeLength, final int maxGap, final int threads, final int maxReadAhead, final String storeName,
                final StreamcacheThreads streamcacheThreads, final ReadBudget storeBudget, final HandedOffReads handedOff) {
        this.table = table;
        this.handedOff = handedOff;
        this.storeBudget = storeBudget;
        this.managerHooks = managerHooks;
        this.locations = locations;
        this.maxReadAhead = maxReadAhead;
        this.logChannels = new LogFileChannels(directory);
        // As much as the store's read budget (the loads are held to half of it), and two ranges at least.
        this.rangeBuffers = new RangeBufferPool(rangeLength, Math.max(storeBudget.limit(), 2L * rangeLength));
        this.historicalReader = HistoricalReader.builder(logChannels)
            .rangeBuffers(rangeBuffers)
            .rangeLength(rangeLength)
            .maxReadGap(maxGap)
            .threads(threads)
            .streamcacheThreads(streamcacheThreads)
            .sink(this::fillFromLog)
            .name(storeName)
            .build();
    }

    HistoricalReader historicalReader() {
        return historicalReader;
    }

    RangeBufferPool rangeBuffers() {
        return rangeBuffers;
    }

    /** The log files' read channels (the location feed closes a retired file's). */
    LogFileChannels channels() {
        return logChannels;
    }

    /**
     * Reads from the cache, else from the log: see {@link SegmentStore#readThrough}.
     */
    CompletableFuture<ReadResult> read(final Segment segment, final long offset, final int maxLength, final ReadBudget budget) {
        return readThrough(segment, offset, maxLength, budget, 0, false);
    }

    /**
     * As {@link #read}, but never waits for the segment's lock (the first lookup tries it; the
     * check before a load counts a held lock as a miss).
     *
     * @return the future, or null if another thread holds the segment's lock: the caller hands
     *         the read to a thread that may wait.
     */
    CompletableFuture<ReadResult> tryRead(final Segment segment, final long offset, final int maxLength, final ReadBudget budget) {
        return readThrough(segment, offset, maxLength, budget, 0, true);
    }

    private CompletableFuture<ReadResult> readThrough(final Segment segment, final long offset, final int maxLength, final ReadBudget budget,
                                                      final int attempt) {
        return readThrough(segment, offset, maxLength, budget, attempt, false);
    }

    private CompletableFuture<ReadResult> readThrough(final Segment segment, final long offset, final int maxLength, final ReadBudget budget,
                                                      final int attempt, final boolean tryOnly) {
        final ReadResult first;
        final long[] nextCached = {Long.MAX_VALUE};
        try {
            // One lookup finds what is cached and, on a miss, where the cache holds bytes again.
            first = segment.readForMiss(offset, maxLength, tryOnly, nextCached);
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (first == null) {
            return null;
        }
        if (first.status() != ReadStatus.NOT_CACHED) {
            return CompletableFuture.completedFuture(first);
        }
        final LocationIndex index = locations.get(segment.id);
        if (index == null) {
            // No index: bytes a custom recovery hook restored, or a delete that cleared it since
            // the read above: then the delete's exception, not an empty NOT_CACHED.
            final RuntimeException gone = liveFailure(segment, offset);
            if (gone != null) {
                first.close();
                return CompletableFuture.failedFuture(gone);
            }
            return CompletableFuture.completedFuture(first);
        }
        if (first.length() > 0) {
            // Prefetch what follows; the bytes go into the cache through the sink.
            historicalReader.read(segment.id, index, first.nextOffset()).thenAccept(LogRange::release);
            return CompletableFuture.completedFuture(first);
        }
        first.close();
        return load(segment, index, offset, maxLength, budget, attempt, nextCached[0], tryOnly);
    }

    /**
     * As {@link #tryRead}, for a read whose caller's own lookup just found no byte cached at
     * {@code offset} (the first lookup of {@code readAsync}): no second lookup, the load starts
     * here. Never waits for the segment's lock.
     */
    CompletableFuture<ReadResult> readMissed(final Segment segment, final long offset, final int maxLength, final ReadBudget budget) {
        final LocationIndex index = locations.get(segment.id);
        if (index == null) {
            // Rare (a recreated segment, a custom recovery): the answer takes the segment's lock,
            // so it is made on the store's thread, not on the reading call's.
            return handedOff.handOff((name, s, at, length, timeoutNanos, b) -> missedWithoutIndex(s, at, length), segment.name, segment,
                offset, maxLength, 0L, budget);
        }
        final long nextCached = historicalReader.rangeLength() < maxReadAhead ? segment.tryNextCachedOffset(offset) : Long.MAX_VALUE;
        return load(segment, index, offset, maxLength, budget, 0, nextCached, true);
    }

    /** {@link #readMissed} for a segment with no location index; takes the segment's lock (not on a reading call's thread). */
    private CompletableFuture<ReadResult> missedWithoutIndex(final Segment segment, final long offset, final int maxLength) {
        final RuntimeException gone = liveFailure(segment, offset);
        if (gone != null) {
            return CompletableFuture.failedFuture(gone);
        }
        // No index, so none of this segment's bytes are in the log: the segment was
        // recreated under the name since the caller's lookup (its first append not located
        // yet, its length short of the offset), or a custom recovery hook restored its bytes.
        // The cache's answer now, not an empty NOT_CACHED that a retry would not change.
        try {
            return CompletableFuture.completedFuture(segment.read(offset, maxLength));
        } catch (final StreamcacheException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Loads the range holding {@code offset} (its read-ahead cut at {@code nextCached}) and reads from it.
     *
     * @param onCaller whether this runs on a reading call's thread ({@code readAsync},
     *                 {@code readThrough}): then it never waits for the segment's lock (see
     *                 {@link #loadedOnCaller}).
     */
    private CompletableFuture<ReadResult> load(final Segment segment, final LocationIndex index, final long offset, final int maxLength,
                                               final ReadBudget budget, final int attempt, final long nextCached, final boolean onCaller) {
        final int length = untilCached(offset, nextCached,
            fitted(segment.readAhead(historicalReader.rangeLength(), maxReadAhead).lengthFor(offset), budget));
        // A retry reads whatever the cache holds: the first attempt's check found the bytes
        // cached, and they were evicted again before its second read.
        final CompletableFuture<LogRange> loading =
            historicalReader.read(segment.id, index, offset, length, attempt == 0 ? () -> stillMissing(segment, offset) : null);
        if (onCaller && loading.isDone()) {
            return loadedOnCaller(segment, loading, offset, maxLength, budget, attempt);
        }
        return afterLoading(loading, segment, offset, maxLength, budget, attempt);
    }

    /** What follows a load, on the thread that completes it (a log reader's), or at once on this one if it is done. */
    private CompletableFuture<ReadResult> afterLoading(final CompletableFuture<LogRange> loading, final Segment segment, final long offset,
                                                       final int maxLength, final ReadBudget budget, final int attempt) {
        return loading
            .thenApply(range -> {
                try {
                    return afterLoad(segment, range, offset, maxLength, false);
                } finally {
                    range.release();
                }
            })
            .handle((result, failure) -> failure != null ? afterFailedLoad(segment, offset, maxLength, budget, failure, attempt)
                : afterEmptyLoad(segment, offset, maxLength, budget, result, attempt))
            .thenCompose(next -> next);
    }

    /**
     * What follows a load that was done when the reading call made it (the bytes were cached
     * meanwhile, so nothing was read; or it joined a load that had just completed): the
     * dependent stages of {@link #afterLoading} would run at once on the caller's thread, and
     * they take the segment's lock with {@code lock()}. So the read of the cache or of the range
     * tries the lock, and if another thread holds it (a fill publishing, an eviction, an append),
     * or if what follows may take it again (an empty read to retry, a failed load), the rest is
     * handed to the store's read-timeouts thread ({@link HandedOffReads}) and completes there.
     */
    private CompletableFuture<ReadResult> loadedOnCaller(final Segment segment, final CompletableFuture<LogRange> loading, final long offset,
                                                         final int maxLength, final ReadBudget budget, final int attempt) {
        if (!loading.isCompletedExceptionally()) {
            final LogRange range = loading.join();
            final ReadResult result;
            try {
                result = afterLoad(segment, range, offset, maxLength, true);
            } catch (final StreamcacheException e) {
                range.release();
                return CompletableFuture.failedFuture(e);
            } catch (final RuntimeException e) {
                range.release();
                return handedOff.handOff((name, s, at, length, timeoutNanos, b) -> afterFailedLoad(s, at, length, b, e, attempt), segment.name,
                    segment, offset, maxLength, 0L, budget);
            }
            if (result != null) {
                range.release();
                if (result.status() != ReadStatus.NOT_CACHED || result.length() > 0) {
                    return CompletableFuture.completedFuture(result);
                }
                return handedOff.handOff((name, s, at, length, timeoutNanos, b) -> afterEmptyLoad(s, at, length, b, result, attempt),
                    segment.name, segment, offset, maxLength, 0L, budget);
            }
            // The lock is held: the range goes with the rest to the store's thread.
        }
        return handedOff.handOff((name, s, at, length, timeoutNanos, b) -> afterLoading(loading, s, at, length, b, attempt), segment.name,
            segment, offset, maxLength, 0L, budget);
    }

    /**
     * @return {@code length}, the read-ahead of a load from the range start before {@code offset},
     *         cut where the cache holds bytes again ({@code cached}, found by the read's lookup;
     *         but at least one range): after a warm reopen
     *         or another reader's fills, a doubling read-ahead would otherwise read cached bytes
     *         from the log once more (measured: 1.34 bytes read per uncached byte on a catch-up
     *         over a segment a quarter cached in its middle; 1.0 with the cut).
     */
    private int untilCached(final long offset, final long cached, final int length) {
        final int base = historicalReader.rangeLength();
        if (length <= base) {
            return length;
        }
        final long start = offset - offset % base;
        return (int) Math.max(base, Math.min(length, cached - start));
    }

    /**
     * @return {@code length} held to half of the smaller budget the read goes through (the
     *         store's, the reader's), but at least one range: a load is what a fill pins while it
     *         runs, and a reader's read-ahead should fit what it may hold.
     */
    private int fitted(final int length, final ReadBudget budget) {
        long cap = storeBudget.limit() / 2;
        if (budget != null) {
            cap = Math.min(cap, budget.limit() / 2);
        }
        return (int) Math.min(length, Math.max(historicalReader.rangeLength(), cap));
    }

    /**
     * A load that left no byte at {@code offset} (another reader's range filled the cache and the
     * bytes were evicted again before this read, a truncation or delete moved the index under
     * the load): read again, up to {@link #MAX_ATTEMPTS} times and without asking whether the
     * bytes are cached now (so the retry's range holds them), so that the caller gets bytes or
     * the race's own exception, not an empty NOT_CACHED a retry would have filled.
     */
    private CompletableFuture<ReadResult> afterEmptyLoad(final Segment segment, final long offset, final int maxLength,
                                                         final ReadBudget budget, final ReadResult result, final int attempt) {
        if (result.status() != ReadStatus.NOT_CACHED || result.length() > 0) {
            return CompletableFuture.completedFuture(result);
        }
        // A durable DELETE or TRUNCATE reaches the location index before its commit reaches the
        // segment: the index's answer is the one the commit is about to give.
        RuntimeException raced = liveFailure(segment, offset);
        final LocationIndex index = locations.get(segment.id);
        if (raced == null && index != null && offset < index.startOffset()) {
            raced = new SegmentTruncatedException(segment.name, offset, index.startOffset());
        }
        if (raced != null || attempt + 1 >= MAX_ATTEMPTS) {
            if (raced == null) {
                return CompletableFuture.completedFuture(result);
            }
            result.close();
            return CompletableFuture.failedFuture(raced);
        }
        result.close();
        return readThrough(segment, offset, maxLength, budget, attempt + 1);
    }

    /**
     * A load that failed. If the segment was deleted, truncated past {@code offset} or the store
     * closed meanwhile, that is the outcome ({@link SegmentNotFoundException},
     * {@link SegmentTruncatedException}, {@link io.streamcache.core.CacheClosedException}): the
     * historical reader reports a location index cleared under its read as an
     * {@link IllegalStateException}, which is no caller's bug. A load that failed because a log
     * file it read is gone was racing a truncation: the log deletes a file once truncation left
     * it no live record, and a range (aligned down) may have located records just before the new
     * start; it reads again (a read before the new start offset then fails with
     * {@link SegmentTruncatedException}, one after it locates live records only), as does a
     * load whose index was cleared under a segment still live. Any other failure is the caller's.
     */
    private CompletableFuture<ReadResult> afterFailedLoad(final Segment segment, final long offset, final int maxLength,
                                                          final ReadBudget budget, final Throwable failure, final int attempt) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof StreamcacheException) {
            return CompletableFuture.failedFuture(cause);
        }
        final RuntimeException gone = liveFailure(segment, offset);
        if (gone != null) {
            return CompletableFuture.failedFuture(gone);
        }
        if (attempt + 1 < MAX_ATTEMPTS) {
            if (cause instanceof IllegalStateException) {
                return readThrough(segment, offset, maxLength, budget, attempt + 1);
            }
            for (Throwable t = cause; t != null; t = t.getCause()) {
                if (t instanceof NoSuchFileException) {
                    return readThrough(segment, offset, maxLength, budget, attempt + 1);
                }
            }
        }
        return CompletableFuture.failedFuture(cause);
    }

    /**
     * @return the exception a read of {@code segment} at {@code offset} throws now (deleted, or
     *         its DELETE durable; truncated past it; the store closed), or null if the segment
     *         is readable there.
     */
    private RuntimeException liveFailure(final Segment segment, final long offset) {
        if (table.segmentById(segment.id) != segment) {
            // Its DELETE is durable (the location feed forgot the id, then cleared the index)
            // and the commit that marks it deleted has not run yet.
            return new SegmentNotFoundException(segment.name, "was deleted");
        }
        try {
            segment.read(offset, 1).close();
            return null;
        } catch (final StreamcacheException e) {
            return e;
        }
    }

    /**
     * @return whether a read at {@code offset} still misses the cache (for a read-through about
     *         to read its range: another reader's read may have filled it since).
     */
    private static boolean stillMissing(final Segment segment, final long offset) {
        // Never waits for the lock (this runs on the reading call's thread): a held lock counts
        // as a miss, and at worst the range is read once more. A lookup, no result made.
        return segment.tryIsMissing(offset);
    }

    /**
     * The second read of a read-through, once {@code range} was loaded (and, unless it failed,
     * filled into the cache): from the cache, or from the range's bytes if the cache holds none.
     * One lock in all: the cache read, and on a miss the segment's length and the read's
     * observation (then the result over the range is made with no lock held); it took two or
     * three before (a read, a lock for the length, a read again).
     *
     * @param tryOnly take the lock only if it is free (a reading call's thread).
     * @return the result, or null if {@code tryOnly} and another thread holds the lock.
     */
    private ReadResult afterLoad(final Segment segment, final LogRange range, final long offset, final int maxLength, final boolean tryOnly) {
        final ReadResult again;
        final long length;
        final boolean sealed;
        final long end;
        if (tryOnly) {
            if (!segment.tryLock()) {
                return null;
            }
        } else {
            segment.lock();
        }
        try {
            again = segment.readLocked(offset, maxLength);
            if (again.status() != ReadStatus.NOT_CACHED || again.length() > 0 || !range.contains(offset)) {
                return again;
            }
            length = segment.length;
            sealed = segment.sealed;
            end = Math.min(Math.min(range.endOffset(), length), offset + maxLength);
            if (end <= offset) {
                // Nothing of the range to serve (the segment ends before it): the cache's answer.
                return again;
            }
            // Served from the range, not the cache: the policy and the segment's reader marks
            // see the read as any other.
            segment.observeReadLocked(offset, end);
        } finally {
            segment.unlock();
        }
        // An empty NOT_CACHED result pins nothing: closed with no lock held all the same.
        again.close();
        final ReadStatus status = end == offset + maxLength ? ReadStatus.MAX_LENGTH
            : end == length ? (sealed ? ReadStatus.SEALED_END : ReadStatus.END_OF_DATA)
            : ReadStatus.NOT_CACHED;
        // A reference of the result's own: the range's buffer goes back to the pool when the
        // result is released, not when this caller lets the range go.
        final ByteBuf view = range.data(offset).retainedSlice(0, (int) (end - offset));
        return ReadResult.owning(segment.name, offset, view, status, managerHooks.readPins());
    }

    /**
     * The historical reader's sink: puts a range read from the log back into the cache, clipped
     * to the segment's committed length (the location index learns of a record just before its
     * append is committed). Throws what {@link Segment#fillLocked} throws (a full cache); the
     * reader keeps it as the range's fill failure.
     */
    private void fillFromLog(final int segmentId, final long offset, final ByteBuf data) {
        final Segment segment = table.segmentById(segmentId);
        if (segment == null) {
            return;
        }
        // One lock to clip the range to the segment, ask the manager's admission (a range nobody
        // is expected to read again is served, afterLoad reads it from the range, and not cached,
        // or staged in a slower tier) and find the missing pieces; the copies are made with no
        // lock held, and published under the lock once. Reads that hold the store's budget make
        // the fill give up (served from the range), so that reads never take the room appends
        // need (a fill is charged to it while it copies); a cache without free room makes it
        // give up likewise, never wait: appends and the completer never wait for it.
        SegmentFill.fillFromLog(segment, offset, data,
            (from, end) -> managerHooks.fillTier(segment.name, from, end, segment.fillTier()), storeBudget, table.isolation);
    }

    /** Stops the historical reader and closes the read channels. */
    void close() {
        historicalReader.close();
        rangeBuffers.close();
        try {
            logChannels.close();
        } catch (final IOException e) {
            // Read-only channels: nothing is lost; the store closes anyway.
        }
    }
}
