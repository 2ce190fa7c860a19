package io.streamcache.segmentstore;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.internal.eviction.ReadPins;
import io.streamcache.segmentstore.internal.index.ReadIndexEntry;

import io.netty.util.AbstractReferenceCounted;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCounted;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakTracker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The outcome of a read, used by one thread at a time but for its thread-safe reference count
 * (hand it over across a happens-before edge): read-only, zero-copy views of the bytes available
 * from {@link #offset()}, with the {@link ReadStatus} that says why they stop and the
 * {@link #nextOffset()} to read from next. A Netty {@link ReferenceCounted} holder of those
 * bytes, as a {@code ByteBufHolder} is.
 *
 * <h2>Ownership and validity</h2>
 * The views read the cache's memory. A result <em>pins</em> the index entries it covers: while
 * its reference count is above zero, eviction skips them, and a truncation or deletion that
 * removes them defers freeing their cache blocks to the last release. A result starts with a
 * count of 1. {@link #data()} and {@link #view(int)} return buffers that <b>share the result's
 * count</b> (like {@code ByteBufHolder.content()}: not retained): {@code retain()} on any of them,
 * or on a slice or duplicate derived from them, retains the result, and {@code release()} on any
 * of them releases it. When the count reaches zero the entries are unpinned, and every later
 * access to any of these buffers throws Netty's {@link io.netty.util.IllegalReferenceCountException}:
 * a released buffer never reads memory the cache may have reused for other data.
 *
 * <p>So: read and {@link #close()} (try-with-resources), or hand {@code data()} to a Netty
 * channel, which releases it after the write, and do not close the result then; to do both,
 * {@code retain()} before handing it over ({@code ctx.write(result.data().retain())} inside
 * try-with-resources): a write is asynchronous, and a close that ran before it would take the
 * last count. {@link #close()} is idempotent and releases one reference only while the count is
 * above zero, so closing a result whose data was already released to zero is harmless;
 * {@link #release()} is Netty's: each call takes one count, and one too many throws
 * {@link io.netty.util.IllegalReferenceCountException}.
 *
 * <h2>Leaks</h2>
 * A result whose count never reaches zero pins its entries for ever. Results are tracked by a
 * Netty {@link ResourceLeakDetector} at Netty's level ({@code -Dio.netty.leakDetection.level}:
 * disabled, simple (the default: 1 result in 128 sampled), advanced, paranoid); a result
 * collected unreleased is reported at ERROR by Netty's logger, with the places it was touched
 * at the advanced and paranoid levels (its retains, releases and touches), and counted in the
 * cache manager's stats ({@code CacheManagerStats.leakedResults()}, per manager) and in
 * {@link #leakCount()} (per JVM). The manager's stats also count the results holding pins now
 * ({@code pinnedResults}, {@code entryPins}).
 *
 * <p>Views are read-only ({@code isReadOnly()}; writes throw {@code ReadOnlyBufferException}).
 * Each view covers one index entry's part of the range; {@link #data()} joins them. A result
 * with no data holds no pin; its {@link #data()} is an empty buffer that shares its count like
 * any other result's, so one rule holds for every result: hand {@code data()} to Netty (which
 * releases it after the write) or close the result, whether or not it holds bytes.
 *
 * <h2>Read budgets</h2>
 * A result read through a {@link ReadBudget} (the store's, and the reader's if one was passed)
 * is charged its length until its count reaches zero: releasing results is what lets the reads
 * waiting in a spent budget go on.
 */
public final class ReadResult extends AbstractReferenceCounted implements AutoCloseable {
    private static final VarHandle CLOSED;
    private static final ByteBuf[] NO_VIEWS = new ByteBuf[0];
    private static final ReadIndexEntry[] NO_ENTRIES = new ReadIndexEntry[0];
    /** {@link #charge}: the count reached zero. */
    private static final Object CHARGE_RELEASED = new Object();

    /** The budgets a result is charged to (either may be null). */
    private record Charge(ReadBudget store, ReadBudget reader) {
    }

    /** Counts and tracks the results made without a manager's {@link ReadPins}. */
    private static final ReadPins UNMANAGED = new ReadPins();

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(ReadResult.class, "closed", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String segment;
    private final long offset;
    private final int length;
    private final ReadStatus status;
    /** The raw read-only views of the cache (or the log's bytes), one per entry covered. */
    private final ByteBuf[] views;
    private final ReadIndexEntry[] pinned;
    private final int viewCount;
    private final BlockCache cache;
    /** Where this result counts itself while it pins entries (null with no data). */
    private final ReadPins pins;
    /** Null for a result with no data (nothing to leak), or one Netty's level did not sample. */
    private final ResourceLeakTracker<ReferenceCounted> leak;
    /** The leased buffers handed out by {@link #view(int)} with several views, made on first call. */
    private ByteBuf[] leased;
    private ByteBuf data;
    /**
     * Null, the {@link Charge} this result's length is charged to ({@link #charge}), or
     * {@link #CHARGE_RELEASED} once the count reached zero (a charge after that is not made).
     * One field, so that the results of the unbudgeted synchronous read stay as small as they
     * were.
     */
    @GuardedBy("this")
    private Object charge;
    /** Whether the one view is a reference of its own, released with the result's last count (bytes read from the log into a pooled buffer). */
    private boolean ownsView;
    /** 0 until {@link #close()} is first called, then 1; only through {@link #CLOSED}. */
    @SuppressWarnings("unused")
    private volatile int closed;

    ReadResult(final String segment, final long offset, final int length, final ReadStatus status,
               final ByteBuf[] views, final ReadIndexEntry[] pinned, final int viewCount, final BlockCache cache,
               final ReadPins pins) {
        this.segment = segment;
        this.offset = offset;
        this.length = length;
        this.status = status;
        this.views = views;
        this.pinned = pinned;
        this.viewCount = viewCount;
        this.cache = cache;
        this.pins = pins;
        if (viewCount == 0) {
            this.leak = null;
        } else {
            if (pinned.length > 0) {
                pins.pinned(viewCount);
            }
            this.leak = pins.track(this);
        }
    }

    /**
     * @return a result with no data and no pin.
     */
    static ReadResult empty(final String segment, final long offset, final ReadStatus status) {
        return new ReadResult(segment, offset, 0, status, NO_VIEWS, NO_ENTRIES, 0, null, null);
    }

    /**
     * @return a result of one read-only view that pins nothing (bytes read from the log):
     *         reference counted like any other, its last release only ends access to it.
     */
    static ReadResult unpinned(final String segment, final long offset, final ByteBuf view, final ReadStatus status) {
        return unpinned(segment, offset, view, status, UNMANAGED);
    }

    /**
     * @return as {@link #unpinned(String, long, ByteBuf, ReadStatus)}, its leak (if any) counted
     *         in {@code pins} (the store's cache manager's).
     */
    static ReadResult unpinned(final String segment, final long offset, final ByteBuf view, final ReadStatus status,
                               final ReadPins pins) {
        final ByteBuf readOnly = view.isReadOnly() ? view : view.asReadOnly();
        return new ReadResult(segment, offset, readOnly.readableBytes(), status, new ByteBuf[] {readOnly}, NO_ENTRIES, 1,
            null, pins);
    }

    /**
     * @return as {@link #unpinned(String, long, ByteBuf, ReadStatus, ReadPins)}, taking over
     *         {@code view}'s reference: the result's last release releases it (bytes read from the
     *         log into a pooled buffer, given back when the result is released).
     */
    static ReadResult owning(final String segment, final long offset, final ByteBuf view, final ReadStatus status, final ReadPins pins) {
        final ReadResult result = unpinned(segment, offset, view, status, pins);
        result.ownsView = true;
        return result;
    }

    /**
     * @return results collected by the garbage collector without having been released, in this
     *         JVM since it started, as Netty's leak detector found them (a sample at Netty's
     *         default level; every one at {@code paranoid}). Any thread. Per cache manager:
     *         {@code CacheManagerStats.leakedResults()}.
     */
    public static long leakCount() {
        return ReadPins.jvmLeakedResults();
    }

    /**
     * @return the segment read.
     */
    public String segment() {
        return segment;
    }

    /**
     * @return the offset the read started at.
     */
    public long offset() {
        return offset;
    }

    /**
     * @return bytes returned: the sum of the views' lengths.
     */
    public int length() {
        return length;
    }

    /**
     * @return where the next read should start: {@code offset() + length()}.
     */
    public long nextOffset() {
        return offset + length;
    }

    /**
     * @return why the read stopped at {@link #nextOffset()}.
     */
    public ReadStatus status() {
        return status;
    }

    /**
     * @return how many views the data is cut into (one per index entry covered); 0 with no data.
     */
    public int viewCount() {
        return viewCount;
    }

    /**
     * @return view {@code index}, in offset order: read-only, zero-copy, sharing this result's
     *         reference count (not retained).
     * @throws IndexOutOfBoundsException if {@code index} is not in {@code [0, viewCount())}.
     */
    public ByteBuf view(final int index) {
        Objects.checkIndex(index, viewCount);
        if (viewCount == 1) {
            return data();
        }
        if (leased == null) {
            leased = new ByteBuf[viewCount];
        }
        ByteBuf view = leased[index];
        if (view == null) {
            view = new LeasedByteBuf(this, views[index]);
            leased[index] = view;
        }
        return view;
    }

    /**
     * @return all the data as one read-only, zero-copy buffer sharing this result's reference
     *         count (not retained; built on the first call, over a composite of the views when
     *         there are several). The shared empty buffer with no data.
     */
    public ByteBuf data() {
        if (data == null) {
            if (viewCount == 0) {
                // Shares the count like any result's data: handing it to Netty (which releases
                // it after the write) or closing the result are equally right.
                data = new LeasedByteBuf(this, Unpooled.EMPTY_BUFFER);
            } else if (viewCount == 1) {
                data = new LeasedByteBuf(this, views[0]);
            } else {
                final ByteBuf[] parts = new ByteBuf[viewCount];
                for (int i = 0; i < viewCount; i++) {
                    parts[i] = views[i].slice(0, views[i].capacity());
                }
                data = new LeasedByteBuf(this, Unpooled.wrappedUnmodifiableBuffer(parts));
            }
        }
        return data;
    }

    @Override
    public ReadResult retain() {
        super.retain();
        recordAccess();
        return this;
    }

    @Override
    public ReadResult retain(final int increment) {
        super.retain(increment);
        recordAccess();
        return this;
    }

    @Override
    public boolean release() {
        recordAccess();
        return super.release();
    }

    @Override
    public boolean release(final int decrement) {
        recordAccess();
        return super.release(decrement);
    }

    /** At Netty's advanced and paranoid levels, a tracked result records where it was retained and released. */
    private void recordAccess() {
        if (leak != null && ResourceLeakDetector.getLevel().ordinal() >= ResourceLeakDetector.Level.ADVANCED.ordinal()) {
            leak.record();
        }
    }

    @Override
    public ReadResult touch() {
        return touch(null);
    }

    @Override
    public ReadResult touch(final Object hint) {
        if (leak != null) {
            leak.record(hint);
        }
        return this;
    }

    /**
     * Releases one reference, the first time it is called and only while the count is above zero
     * (see the class comment): idempotent and thread-safe, so it never throws after the data was
     * released to zero. It cannot tell a write still in flight: retain what you hand over. A truncated or
     * deleted entry whose last pin this was has its cache blocks freed here.
     */
    @Override
    public void close() {
        if (CLOSED.compareAndSet(this, 0, 1)) {
            try {
                if (refCnt() > 0) {
                    release();
                }
            } catch (final IllegalReferenceCountException e) {
                // Released by another thread between the check and the release: nothing left to do.
            }
        }
    }

    /**
     * @return whether the reference count reached zero (the views must not be read).
     */
    public boolean isReleased() {
        return refCnt() == 0;
    }

    /**
     * The last release: unpins the entries, freeing those a truncation or deletion retired, and
     * only then counts the result's pins as dropped. In that order because an owner that closes the
     * cache once no pin is counted (a bookie's shutdown waits for its lent buffers so) must not close
     * it while this thread still frees a retired entry's blocks: with the count dropped first, the
     * close could land between the check below and the delete, which then failed with a closed cache.
     */
    @Override
    protected void deallocate() {
        try {
            for (int i = 0; i < pinned.length && i < viewCount; i++) {
                final ReadIndexEntry entry = pinned[i];
                pinned[i] = null;
                if (entry.unpin() && entry.isCached() && !cache.isClosed()) {
                    cache.delete(entry.address());
                }
            }
        } finally {
            if (pinned.length > 0 && viewCount > 0) {
                pins.unpinned(viewCount);
            }
        }
        if (leak != null) {
            leak.close(this);
        }
        if (ownsView) {
            views[0].release();
        }
        if (length > 0) {
            releaseCharge();
        }
    }

    /**
     * Charges this result's length to the budgets it was read through (either may be null),
     * given back when its count reaches zero. Called once, by the store, before the result is
     * handed to the caller; a result with no data is charged nothing.
     */
    void charge(final ReadBudget store, final ReadBudget reader) {
        if (length == 0) {
            return;
        }
        synchronized (this) {
            // A result released before it is charged (its first callback closed it) is not
            // charged at all; the lock orders the charge with a release on another thread.
            if (charge != null || refCnt() == 0) {
                return;
            }
            charge = new Charge(store, reader);
        }
        if (store != null) {
            store.charge(length);
        }
        if (reader != null) {
            reader.charge(length);
        }
    }

    private void releaseCharge() {
        final Object charged;
        synchronized (this) {
            charged = charge;
            charge = CHARGE_RELEASED;
        }
        if (charged instanceof Charge) {
            final Charge c = (Charge) charged;
            if (c.reader() != null) {
                c.reader().release(length);
            }
            if (c.store() != null) {
                c.store().release(length);
            }
        }
    }

    @Override
    public String toString() {
        return "ReadResult{segment=" + segment + ", offset=" + offset + ", length=" + length + ", status=" + status
            + ", views=" + viewCount + ", refCnt=" + refCnt() + '}';
    }
}
