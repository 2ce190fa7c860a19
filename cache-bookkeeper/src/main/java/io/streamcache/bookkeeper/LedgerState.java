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

/**
 * What the storage knows of one ledger in memory: thread-safe; the entry index, the flags and
 * the reservation of segment offsets are guarded by this object's monitor (which is also the
 * monitor of the {@link Watchable} it extends, so adding a LAC watcher and checking the LAC are
 * one step); the LAC and the fenced and limbo flags are volatile (read on every add without the
 * monitor); entries still in flight to the log are in a queue under a lock of their own, which
 * the log's completion thread takes without the monitor.
 *
 * <p>The ledger's durable copy is its segment ({@link LedgerRecords} gives the records);
 * everything here is rebuilt from it at start ({@link LedgerScan}).
 *
 * <p><b>In-flight entries.</b> An added entry is readable as soon as {@code addEntry} returns,
 * while the log has yet to force it (the bookie acknowledges it once its journal has): its
 * record buffer stays in the in-flight queue until the append's future completes, and a read
 * takes a retained slice of it under the queue's lock, which the completion's removal takes too,
 * so the buffer cannot be released (and recycled) between the lookup and the retain. Once the
 * future completes the bytes are in the segment and the store serves them.
 *
 * <p><b>Design note:</b> the queue is a ring of entry ids and records in add order, which is the
 * order of their segment offsets and so of their completions (the store completes a segment's
 * appends in offset order): a completion takes the oldest, a read scans from the newest. It was
 * a {@code ConcurrentHashMap} keyed by the boxed entry id: its put (a node, a box) and its
 * remove were a fifth of the storage's CPU samples on a bookie's add path (JFR, 1 KB adds over
 * 100 ledgers), more than the index put or the commit into the cache.
 */
final class LedgerState extends Watchable<LastAddConfirmedUpdateNotification> {

    /** No LAC known yet (no entry, no explicit LAC). */
    static final long NO_LAC = Long.MIN_VALUE;
    private static final long NO_LOCATION = -1L;
    private static final byte[] NO_KEY = new byte[0];

    final long ledgerId;
    final String segment;

    /**
     * The entry index, packed locations ({@link LedgerRecords#location}) by entry id: ids below
     * {@code dense.length} in an array indexed by the id (-1 where no entry is), the rest in a
     * hash map. A ledger's entry ids count up from 0, and a bookie holds all of them or, striped
     * over a wider ensemble, most: the array grows by doubling for an id at most
     * {@link #DENSE_SLACK} past its end, and an id further out (a gap no ledger writer leaves)
     * goes to the map. The array takes 8 bytes per id where the map took about 25 per entry (16
     * bytes a slot at a load of 0.65), and its put is a store where the map's was a probe into a
     * cache line of its own: {@code Long2LongHashMap.put} was the largest storage frame of a
     * bookie's add path (JFR, 1 KB adds over 100 ledgers, 10% of the add thread's samples).
     */
    @GuardedBy("this")
    private long[] dense = NO_IDS;
    /** Entries in {@link #dense}. */
    @GuardedBy("this")
    private int denseCount;
    /** The ids past {@link #dense}'s reach; null until one comes (most ledgers never see one). */
    @GuardedBy("this")
    private Long2LongHashMap sparse;
    private static final long[] NO_IDS = new long[0];
    private static final ByteBuf[] NO_RECORDS = new ByteBuf[0];
    private static final int FIRST_PENDING_CAPACITY = 8;
    /** How far past the end of {@link #dense} an id may be for the array to grow to it. */
    static final int DENSE_SLACK = 1024;
    private static final int FIRST_DENSE_LENGTH = 16;

    /** Guards the in-flight ring below; taken inside this object's monitor by adds, alone by completions and reads. */
    private final Object pendingLock = new Object();
    /** The in-flight ring, oldest at {@link #pendingHead}: entry ids, and their record buffers (one reference each, the ring's). */
    @GuardedBy("pendingLock")
    private long[] pendingIds = NO_IDS;
    @GuardedBy("pendingLock")
    private ByteBuf[] pendingRecords = NO_RECORDS;
    @GuardedBy("pendingLock")
    private int pendingHead;
    @GuardedBy("pendingLock")
    private int pendingCount;

    @GuardedBy("this")
    private long lastEntryId = -1;
    @GuardedBy("this")
    private long nextOffset;
    @GuardedBy("this")
    private byte[] masterKey = NO_KEY;
    /** Written under this; read without it (every add asks). */
    private volatile boolean fenced;
    private volatile boolean limbo;
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
        if (entryId >= dense.length && entryId <= (long) dense.length + DENSE_SLACK
            && entryId < Integer.MAX_VALUE / 2 && sparse == null) {
            growDense((int) entryId);
        }
        if (entryId >= 0 && entryId < dense.length) {
            final int index = (int) entryId;
            if (dense[index] == NO_LOCATION) {
                denseCount++;
            }
            dense[index] = location;
        } else {
            if (sparse == null) {
                sparse = new Long2LongHashMap(NO_LOCATION);
            }
            sparse.put(entryId, location);
        }
        if (entryId > lastEntryId) {
            lastEntryId = entryId;
        }
    }

    @GuardedBy("this")
    private void growDense(final int entryId) {
        int length = Math.max(FIRST_DENSE_LENGTH, dense.length);
        while (length <= entryId) {
            length *= 2;
        }
        final long[] grown = Arrays.copyOf(dense, length);
        Arrays.fill(grown, dense.length, length, NO_LOCATION);
        dense = grown;
    }

    /** @return the entry's packed location, or -1 if this ledger does not hold it. */
    synchronized long location(final long entryId) {
        if (entryId >= 0 && entryId < dense.length) {
            return dense[(int) entryId];
        }
        return sparse != null ? sparse.get(entryId) : NO_LOCATION;
    }

    /** @return the highest entry id held, or -1. */
    synchronized long lastEntryId() {
        return lastEntryId;
    }

    synchronized int entryCount() {
        return denseCount + (sparse != null ? sparse.size() : 0);
    }

    /** @return the entry ids held when called, ascending. */
    PrimitiveIterator.OfLong entryIds() {
        final long[] ids;
        synchronized (this) {
            ids = new long[entryCount()];
            int i = 0;
            for (int id = 0; id < dense.length; id++) {
                if (dense[id] != NO_LOCATION) {
                    ids[i++] = id;
                }
            }
            if (sparse != null) {
                final Long2LongHashMap.KeyIterator it = sparse.keySet().iterator();
                while (it.hasNext()) {
                    ids[i++] = it.nextValue();
                }
            }
        }
        Arrays.sort(ids);
        return Arrays.stream(ids).iterator();
    }

    /**
     * Queues an entry whose append is being queued, in add order: the caller holds this object's
     * monitor across this and the append, so the ring's order is the appends' offset order. The
     * ring takes over the caller's reference to {@code record}; {@link #completed} drops it.
     */
    @GuardedBy("this")
    void putPending(final long entryId, final ByteBuf record) {
        synchronized (pendingLock) {
            if (pendingCount == pendingIds.length) {
                growPending();
            }
            final int slot = (pendingHead + pendingCount) & (pendingIds.length - 1);
            pendingIds[slot] = entryId;
            pendingRecords[slot] = record;
            pendingCount++;
        }
    }

    @GuardedBy("pendingLock")
    private void growPending() {
        final int capacity = Math.max(FIRST_PENDING_CAPACITY, pendingIds.length * 2);
        final long[] ids = new long[capacity];
        final ByteBuf[] records = new ByteBuf[capacity];
        for (int i = 0; i < pendingCount; i++) {
            final int slot = (pendingHead + i) & (pendingIds.length - 1);
            ids[i] = pendingIds[slot];
            records[i] = pendingRecords[slot];
        }
        pendingIds = ids;
        pendingRecords = records;
        pendingHead = 0;
    }

    /**
     * Called once the append of {@code record} completed (either way): takes it out of the ring
     * (the oldest, but for an append refused at once) and drops the ring's reference.
     */
    void completed(final ByteBuf record) {
        synchronized (pendingLock) {
            final int mask = pendingIds.length - 1;
            int found = -1;
            for (int i = 0; i < pendingCount; i++) {
                if (pendingRecords[(pendingHead + i) & mask] == record) {
                    found = i;
                    break;
                }
            }
            // Every record completed here was queued by putPending first (the add does both).
            assert found != -1 : "ledger=" + ledgerId + ": a completed record was not in flight";
            if (found != -1) {
                // The older entries move up by one, in order (none when it is the oldest).
                for (int i = found; i > 0; i--) {
                    final int to = (pendingHead + i) & mask;
                    final int from = (pendingHead + i - 1) & mask;
                    pendingIds[to] = pendingIds[from];
                    pendingRecords[to] = pendingRecords[from];
                }
                pendingRecords[pendingHead] = null;
                pendingHead = (pendingHead + 1) & mask;
                pendingCount--;
            }
        }
        record.release();
    }

    /** @return how many entries are in flight (for tests). */
    int pendingCount() {
        synchronized (pendingLock) {
            return pendingCount;
        }
    }

    /**
     * @return a retained slice of the entry's payload if its append is still in flight (its
     *         latest copy, if journal replay added it again), else null.
     */
    ByteBuf pendingPayload(final long entryId) {
        synchronized (pendingLock) {
            final int mask = pendingIds.length - 1;
            for (int i = pendingCount - 1; i >= 0; i--) {
                final int slot = (pendingHead + i) & mask;
                if (pendingIds[slot] == entryId) {
                    final ByteBuf record = pendingRecords[slot];
                    return record.retainedSlice(LedgerRecords.HEADER_LENGTH, record.getInt(LedgerRecords.LENGTH_OFFSET));
                }
            }
            return null;
        }
    }

    // ---- flags and keys ----

    synchronized byte[] masterKey() {
        return masterKey;
    }

    synchronized void masterKey(final byte[] key) {
        masterKey = key.clone();
    }

    boolean fenced() {
        return fenced;
    }

    synchronized void fenced(final boolean value) {
        fenced = value;
    }

    boolean limbo() {
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
