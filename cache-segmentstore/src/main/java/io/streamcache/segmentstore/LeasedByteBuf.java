package io.streamcache.segmentstore;

import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCounted;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;
import java.util.Locale;

/**
 * A read-only {@link ByteBuf} over the bytes of a {@link ReadResult} that shares the result's
 * reference count: {@link #refCnt()}, {@link #retain()} and {@link #release()} are the result's,
 * so releasing this buffer (as a Netty pipeline does after writing it) releases the result, and
 * the last release of either unpins the cache entries under it. Thread-safety as for any Netty
 * buffer: the count is atomic; the indexes are for one thread at a time.
 *
 * <p>Every access goes through {@link AbstractByteBuf}'s index checks, which first check that the
 * count is not zero: once the result is released, any read of this buffer, of a view, or of a
 * slice or duplicate derived from it (Netty's derived buffers delegate their count to this one)
 * throws {@link io.netty.util.IllegalReferenceCountException} instead of reading memory the cache
 * may have given to another segment. The check is one volatile read per access. Netty lets a
 * user turn its check off ({@code -Dio.netty.buffer.checkAccessible=false}, read once by
 * {@link AbstractByteBuf}); this buffer then makes the same check itself, since without it a
 * released buffer would serve another segment's bytes.
 *
 * <p>The bytes are read from {@code content}: one read-only view of the cache's memory, a
 * read-only composite of several, or a heap buffer of bytes read from the log.
 */
final class LeasedByteBuf extends AbstractByteBuf {
    /** Whether {@link AbstractByteBuf}'s index checks check the count (see {@link #nettyChecksCount()}). */
    private static final boolean NETTY_CHECKS_COUNT = nettyChecksCount();

    private final ReferenceCounted lease;
    private final ByteBuf content;
    private final int length;

    /**
     * @param lease   the reference count this buffer shares.
     * @param content the bytes: its readable bytes become this buffer's whole content.
     */
    LeasedByteBuf(final ReferenceCounted lease, final ByteBuf content) {
        super(content.readableBytes());
        this.lease = lease;
        this.content = content.readerIndex() == 0 ? content : content.slice();
        this.length = content.readableBytes();
        setIndex(0, length);
    }

    /**
     * @return whether Netty's {@code AbstractByteBuf} checks the count on every access: its flag
     *         {@code io.netty.buffer.checkAccessible} (or the older
     *         {@code io.netty.buffer.bytebuf.checkAccessible}), read as Netty reads it: on unless
     *         {@code false}, {@code no} or {@code 0}.
     */
    private static boolean nettyChecksCount() {
        String value = System.getProperty("io.netty.buffer.checkAccessible");
        if (value == null) {
            value = System.getProperty("io.netty.buffer.bytebuf.checkAccessible");
        }
        if (value == null) {
            return true;
        }
        final String flag = value.trim().toLowerCase(Locale.ROOT);
        return !("false".equals(flag) || "no".equals(flag) || "0".equals(flag));
    }

    // ------------------------------------------------------------------------------------------
    // Reference count: the lease's
    // ------------------------------------------------------------------------------------------

    @Override
    public int refCnt() {
        return lease.refCnt();
    }

    @Override
    public ByteBuf retain() {
        lease.retain();
        return this;
    }

    @Override
    public ByteBuf retain(final int increment) {
        lease.retain(increment);
        return this;
    }

    @Override
    public ByteBuf touch() {
        lease.touch();
        return this;
    }

    @Override
    public ByteBuf touch(final Object hint) {
        lease.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return lease.release();
    }

    @Override
    public boolean release(final int decrement) {
        return lease.release(decrement);
    }

    // ------------------------------------------------------------------------------------------
    // Geometry
    // ------------------------------------------------------------------------------------------

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(final int newCapacity) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBufAllocator alloc() {
        return content.alloc();
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return content.isDirect();
    }

    @Override
    public boolean isReadOnly() {
        return true;
    }

    @Override
    public ByteBuf asReadOnly() {
        return this;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int arrayOffset() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public boolean hasMemoryAddress() {
        return false;
    }

    @Override
    public long memoryAddress() {
        throw new UnsupportedOperationException("a leased read buffer does not expose its memory address");
    }

    // ------------------------------------------------------------------------------------------
    // Reads: index-checked (which checks the count first), then from the content
    // ------------------------------------------------------------------------------------------

    @Override
    protected byte _getByte(final int index) {
        ensureLeased();
        return content.getByte(index);
    }

    @Override
    protected short _getShort(final int index) {
        ensureLeased();
        return content.getShort(index);
    }

    @Override
    protected short _getShortLE(final int index) {
        ensureLeased();
        return content.getShortLE(index);
    }

    @Override
    protected int _getUnsignedMedium(final int index) {
        ensureLeased();
        return content.getUnsignedMedium(index);
    }

    @Override
    protected int _getUnsignedMediumLE(final int index) {
        ensureLeased();
        return content.getUnsignedMediumLE(index);
    }

    @Override
    protected int _getInt(final int index) {
        ensureLeased();
        return content.getInt(index);
    }

    @Override
    protected int _getIntLE(final int index) {
        ensureLeased();
        return content.getIntLE(index);
    }

    @Override
    protected long _getLong(final int index) {
        ensureLeased();
        return content.getLong(index);
    }

    @Override
    protected long _getLongLE(final int index) {
        ensureLeased();
        return content.getLongLE(index);
    }

    @Override
    public ByteBuf getBytes(final int index, final ByteBuf dst, final int dstIndex, final int length) {
        checkIndex(index, length);
        ensureLeased();
        content.getBytes(index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(final int index, final byte[] dst, final int dstIndex, final int length) {
        checkIndex(index, length);
        ensureLeased();
        content.getBytes(index, dst, dstIndex, length);
        return this;
    }

    @Override
    public ByteBuf getBytes(final int index, final ByteBuffer dst) {
        checkIndex(index, dst.remaining());
        ensureLeased();
        content.getBytes(index, dst);
        return this;
    }

    @Override
    public ByteBuf getBytes(final int index, final OutputStream out, final int length) throws IOException {
        checkIndex(index, length);
        ensureLeased();
        content.getBytes(index, out, length);
        return this;
    }

    @Override
    public int getBytes(final int index, final GatheringByteChannel out, final int length) throws IOException {
        checkIndex(index, length);
        ensureLeased();
        return content.getBytes(index, out, length);
    }

    @Override
    public int getBytes(final int index, final FileChannel out, final long position, final int length) throws IOException {
        checkIndex(index, length);
        ensureLeased();
        return content.getBytes(index, out, position, length);
    }

    @Override
    public ByteBuf copy(final int index, final int length) {
        checkIndex(index, length);
        ensureLeased();
        return content.copy(index, length);
    }

    @Override
    public int nioBufferCount() {
        return content.nioBufferCount();
    }

    @Override
    public ByteBuffer nioBuffer(final int index, final int length) {
        checkIndex(index, length);
        ensureLeased();
        return content.nioBuffer(index, length).asReadOnlyBuffer();
    }

    @Override
    public ByteBuffer internalNioBuffer(final int index, final int length) {
        return nioBuffer(index, length);
    }

    @Override
    public ByteBuffer[] nioBuffers(final int index, final int length) {
        checkIndex(index, length);
        ensureLeased();
        final ByteBuffer[] buffers = content.nioBuffers(index, length);
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = buffers[i].asReadOnlyBuffer();
        }
        return buffers;
    }

    /** The count check where Netty's is turned off; nothing where Netty's runs (a constant, folded). */
    private void ensureLeased() {
        if (!NETTY_CHECKS_COUNT && lease.refCnt() == 0) {
            throw new IllegalReferenceCountException(0);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Writes: refused
    // ------------------------------------------------------------------------------------------

    @Override
    protected void _setByte(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShort(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShortLE(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMedium(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMediumLE(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setInt(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setIntLE(final int index, final int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLong(final int index, final long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLongLE(final int index, final long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(final int index, final ByteBuf src, final int srcIndex, final int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(final int index, final byte[] src, final int srcIndex, final int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(final int index, final ByteBuffer src) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(final int index, final InputStream in, final int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(final int index, final ScatteringByteChannel in, final int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(final int index, final FileChannel in, final long position, final int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf discardReadBytes() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf discardSomeReadBytes() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public String toString() {
        return "LeasedByteBuf(ridx: " + readerIndex() + ", widx: " + writerIndex() + ", cap: " + length + ", refCnt: " + refCnt() + ')';
    }
}
