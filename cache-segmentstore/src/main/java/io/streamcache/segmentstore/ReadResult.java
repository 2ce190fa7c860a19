package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.index.ReadIndexEntry;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The outcome of a read: read-only, zero-copy views of the bytes available from {@link #offset()},
 * with the {@link ReadStatus} that says why they stop and the {@link #nextOffset()} to read from
 * next. Use from one thread at a time (hand it over across a happens-before edge);
 * {@link #release()} is thread-safe and idempotent.
 *
 * <h2>Validity</h2>
 * The views read the cache's memory directly. The result <em>pins</em> the index entries it
 * covers: while it is held, eviction skips them, and a truncation or deletion that removes them
 * defers freeing their cache blocks to the last release. So the views stay valid, whatever
 * happens to the segment, <b>until {@link #release()}</b> (or {@link #close()}); after it, their
 * bytes may be reused for other data at any moment, and reading them is a bug that no check
 * catches. Every result must be released, also one with no data (it is then a no-op);
 * try-with-resources does it. Releasing the views themselves ({@code ByteBuf.release()}) does
 * nothing: they are not reference counted.
 *
 * <p>Views are read-only ({@code isReadOnly()}; writes throw {@code ReadOnlyBufferException}).
 * Each view covers one index entry's part of the range; {@link #data()} joins them.
 */
public final class ReadResult implements AutoCloseable {
    private static final VarHandle RELEASED;
    private static final ByteBuf[] NO_VIEWS = new ByteBuf[0];
    private static final ReadIndexEntry[] NO_ENTRIES = new ReadIndexEntry[0];

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(ReadResult.class, "released", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String segment;
    private final long offset;
    private final int length;
    private final ReadStatus status;
    private final ByteBuf[] views;
    private final ReadIndexEntry[] pinned;
    private final int viewCount;
    private final BlockCache cache;
    private ByteBuf data;
    /** 0 while held, 1 once released; only through {@link #RELEASED}. */
    @SuppressWarnings("unused")
    private volatile int released;

    ReadResult(final String segment, final long offset, final int length, final ReadStatus status,
               final ByteBuf[] views, final ReadIndexEntry[] pinned, final int viewCount, final BlockCache cache) {
        this.segment = segment;
        this.offset = offset;
        this.length = length;
        this.status = status;
        this.views = views;
        this.pinned = pinned;
        this.viewCount = viewCount;
        this.cache = cache;
    }

    /**
     * @return a result with no data and no pin.
     */
    static ReadResult empty(final String segment, final long offset, final ReadStatus status) {
        return new ReadResult(segment, offset, 0, status, NO_VIEWS, NO_ENTRIES, 0, null);
    }

    /**
     * @return a result of one read-only view that pins nothing (heap bytes read from the log):
     *         releasing it only marks it released.
     */
    static ReadResult unpinned(final String segment, final long offset, final ByteBuf view, final ReadStatus status) {
        final ByteBuf readOnly = view.isReadOnly() ? view : view.asReadOnly();
        return new ReadResult(segment, offset, readOnly.readableBytes(), status, new ByteBuf[] {readOnly}, NO_ENTRIES, 1, null);
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
     * @return view {@code index}, in offset order: read-only, zero-copy, valid until {@link #release()}.
     * @throws IndexOutOfBoundsException if {@code index} is not in {@code [0, viewCount())}.
     */
    public ByteBuf view(final int index) {
        Objects.checkIndex(index, viewCount);
        return views[index];
    }

    /**
     * @return all the data as one read-only, zero-copy buffer (the single view, or a composite of
     *         the views built on the first call, from their full contents); valid until
     *         {@link #release()}. An empty buffer with no data.
     */
    public ByteBuf data() {
        if (data == null) {
            if (viewCount == 0) {
                data = Unpooled.EMPTY_BUFFER;
            } else if (viewCount == 1) {
                data = views[0];
            } else {
                final ByteBuf[] parts = new ByteBuf[viewCount];
                for (int i = 0; i < viewCount; i++) {
                    parts[i] = views[i].slice(0, views[i].capacity());
                }
                data = Unpooled.wrappedUnmodifiableBuffer(parts).asReadOnly();
            }
        }
        return data;
    }

    /**
     * Drops the pins: the views must not be read after this. Idempotent and thread-safe; a
     * truncated or deleted entry whose last pin this was has its cache blocks freed here.
     */
    public void release() {
        if (!RELEASED.compareAndSet(this, 0, 1)) {
            return;
        }
        for (int i = 0; i < pinned.length && i < viewCount; i++) {
            final ReadIndexEntry entry = pinned[i];
            pinned[i] = null;
            if (entry.unpin() && entry.isCached() && !cache.isClosed()) {
                cache.delete(entry.address());
            }
        }
    }

    /**
     * Same as {@link #release()}.
     */
    @Override
    public void close() {
        release();
    }

    /**
     * @return whether {@link #release()} was called.
     */
    public boolean isReleased() {
        return (int) RELEASED.getVolatile(this) != 0;
    }

    @Override
    public String toString() {
        return "ReadResult{segment=" + segment + ", offset=" + offset + ", length=" + length + ", status=" + status
            + ", views=" + viewCount + ", released=" + isReleased() + '}';
    }
}
