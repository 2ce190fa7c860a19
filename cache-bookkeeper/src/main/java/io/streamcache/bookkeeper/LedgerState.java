package io.streamcache.bookkeeper;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.netty.buffer.ByteBuf;
import org.agrona.collections.Long2LongHashMap;
import org.apache.bookkeeper.bookie.LastAddConfirmedUpdateNotification;
import org.apache.bookkeeper.common.util.Watchable;
import org.apache.bookkeeper.common.util.Watcher;

import java.util.Arrays;
import java.util.PrimitiveIterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the storage knows of one ledger in memory: thread-safe; the entry index, the flags and
 * the reservation of segment offsets are guarded by this object's monitor (which is also the
 * monitor of the {@link Watchable} it extends, so adding a LAC watcher and checking the LAC are
 * one step); the LAC is volatile; entries still in flight to the log are in a concurrent map
 * that the log's completion thread empties without taking the monitor.
 *
 * <p>The ledger's durable copy is its segment ({@link LedgerRecords} gives the records);
 * everything here is rebuilt from it at start ({@link LedgerScan}).
 *
 * <p><b>In-flight entries.</b> An added entry is readable as soon as {@code addEntry} returns,
 * while the log has yet to force it (the bookie acknowledges it once its journal has): its
 * record buffer stays in {@link #pending} until the append's future completes, and a read takes
 * a retained slice of it inside {@link ConcurrentHashMap#computeIfPresent}, atomically with the
 * completion's removal, so the buffer cannot be released (and recycled) between the lookup and
 * the retain. Once the future completes the bytes are in the segment and the store serves them.
 */
final class LedgerState extends Watchable<LastAddConfirmedUpdateNotification> {

    /** No LAC known yet (no entry, no explicit LAC). */
    static final long NO_LAC = Long.MIN_VALUE;
    private static final long NO_LOCATION = -1L;
    private static final byte[] NO_KEY = new byte[0];

    final long ledgerId;
    final String segment;

    /** entry id to packed location ({@link LedgerRecords#location}). */
    @GuardedBy("this")
    private final Long2LongHashMap locations = new Long2LongHashMap(NO_LOCATION);
    /** entry id to its record buffer, while its append is in flight (one reference, the map's). */
    private final ConcurrentHashMap<Long, ByteBuf> pending = new ConcurrentHashMap<>();

    @GuardedBy("this")
    private long lastEntryId = -1;
    @GuardedBy("this")
    private long nextOffset;
    @GuardedBy("this")
    private byte[] masterKey = NO_KEY;
    @GuardedBy("this")
    private boolean fenced;
    private boolean limbo;
    private byte[] explicitLac;
    private boolean closed;

    /** Written under this; read by flush without it. */
    private volatile CompletableFuture<?> lastAppend = CompletableFuture.completedFuture(null);
    /** The first append of this ledger that failed; the ledger refuses work from then on. */
    private volatile Throwable failure;
    private volatile long lac = NO_LAC;

    LedgerState(final long ledgerId, final String segment, final long nextOffset) {
        super(LastAddConfirmedUpdateNotification.WATCHER_RECYCLER);
        this.ledgerId = ledgerId;
        this.segment = segment;
        this.nextOffset = nextOffset;
    }

    // ---- offsets and appends (callers hold the monitor) ----

    @GuardedBy("this")
    long nextOffset() {
        assert Thread.holdsLock(this);
        return nextOffset;
    }

    @GuardedBy("this")
    void advance(final long recordLength, final CompletableFuture<?> append) {
        assert Thread.holdsLock(this);
        nextOffset += recordLength;
        lastAppend = append;
    }

    CompletableFuture<?> lastAppend() {
        return lastAppend;
    }

    void fail(final Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
    }

    Throwable failure() {
        return failure;
    }

    // ---- entries ----

    /** Records where an entry is (replacing an earlier copy of it, as journal replay adds). */
    synchronized void putLocation(final long entryId, final long location) {
        locations.put(entryId, location);
        if (entryId > lastEntryId) {
            lastEntryId = entryId;
        }
    }

    /** @return the entry's packed location, or -1 if this ledger does not hold it. */
    synchronized long location(final long entryId) {
        return locations.get(entryId);
    }

    /** @return the highest entry id held, or -1. */
    synchronized long lastEntryId() {
        return lastEntryId;
    }

    synchronized int entryCount() {
        return locations.size();
    }

    /** @return the entry ids held when called, ascending. */
    PrimitiveIterator.OfLong entryIds() {
        final long[] ids;
        synchronized (this) {
            ids = new long[locations.size()];
            final Long2LongHashMap.KeyIterator it = locations.keySet().iterator();
            int i = 0;
            while (it.hasNext()) {
                ids[i++] = it.nextValue();
            }
        }
        Arrays.sort(ids);
        return Arrays.stream(ids).iterator();
    }

    void putPending(final Long entryId, final ByteBuf record) {
        pending.put(entryId, record);
    }

    /** Called once the append of {@code record} completed (either way): drops the map's reference. */
    void completed(final Long entryId, final ByteBuf record) {
        pending.remove(entryId, record);
        record.release();
    }

    /**
     * @return a retained slice of the entry's payload if its append is still in flight, else null.
     */
    ByteBuf pendingPayload(final long entryId) {
        final ByteBuf[] out = new ByteBuf[1];
        pending.computeIfPresent(entryId, (id, record) -> {
            out[0] = record.retainedSlice(LedgerRecords.HEADER_LENGTH, record.getInt(LedgerRecords.LENGTH_OFFSET));
            return record;
        });
        return out[0];
    }

    // ---- flags and keys ----

    synchronized byte[] masterKey() {
        return masterKey;
    }

    synchronized void masterKey(final byte[] key) {
        masterKey = key.clone();
    }

    synchronized boolean fenced() {
        return fenced;
    }

    synchronized void fenced(final boolean value) {
        fenced = value;
    }

    synchronized boolean limbo() {
        return limbo;
    }

    synchronized void limbo(final boolean value) {
        limbo = value;
    }

    synchronized byte[] explicitLac() {
        return explicitLac;
    }

    synchronized void explicitLac(final byte[] value) {
        explicitLac = value;
    }

    // ---- last add confirmed ----

    long lac() {
        return lac;
    }

    /**
     * Raises the LAC to {@code candidate} if that is higher, and wakes the watchers if it moved.
     *
     * @return the LAC after the call.
     */
    long raiseLac(final long candidate) {
        final long now;
        final boolean moved;
        synchronized (this) {
            moved = candidate > lac;
            if (moved) {
                lac = candidate;
            }
            now = lac;
        }
        if (moved) {
            notifyWatchers(LastAddConfirmedUpdateNotification.FUNC, now);
        }
        return now;
    }

    /**
     * @return true if {@code watcher} was registered (the LAC is not past {@code previousLac});
     *         false if the caller may read at once.
     */
    synchronized boolean waitForLac(final long previousLac,
                                    final Watcher<LastAddConfirmedUpdateNotification> watcher) {
        if ((lac != NO_LAC && lac > previousLac) || closed) {
            return false;
        }
        addWatcher(watcher);
        return true;
    }

    /** Wakes every watcher with "no more updates" (fencing, deletion, shutdown). */
    void wakeAll() {
        notifyWatchers(LastAddConfirmedUpdateNotification.FUNC, Long.MAX_VALUE);
    }

    /** Marks the ledger gone: watchers wake, in-flight buffers stay with their appends. */
    void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        wakeAll();
    }
}
