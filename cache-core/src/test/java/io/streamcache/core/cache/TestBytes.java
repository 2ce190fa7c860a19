package io.streamcache.core.cache;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Deterministic byte patterns and the kinds of buffer a cache takes data from and copies data
 * into, for the block cache tests. Stateless; safe from any thread.
 */
final class TestBytes {
    /** Bytes placed before the data in every source and around the range in every destination. */
    static final int PREFIX = 5;
    /** Bytes placed after the data in every source and destination. */
    static final int SUFFIX = 3;
    private static final byte JUNK = (byte)0xA5;
    private static final byte CANARY = (byte)0x3C;

    private TestBytes() {
    }

    /**
     * @return byte {@code position} of the pattern named {@code seed}: a hash of both, so that a
     *         block written at the wrong place or from the wrong entry shows.
     */
    static byte at(final long seed, final long position) {
        long z = seed * 0x9E37_79B9_7F4A_7C15L + position * 0xBF58_476D_1CE4_E5B9L + 0x94D0_49BB_1331_11EBL;
        z = (z ^ (z >>> 31)) * 0x94D0_49BB_1331_11EBL;
        return (byte)(z ^ (z >>> 29));
    }

    /**
     * @return bytes {@code [from, from + length)} of the pattern named {@code seed}.
     */
    static byte[] pattern(final long seed, final int from, final int length) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = at(seed, from + (long)i);
        }
        return bytes;
    }

    static byte[] pattern(final long seed, final int length) {
        return pattern(seed, 0, length);
    }

    static byte[] concat(final byte[] a, final byte[] b) {
        final byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    /**
     * @return the readable bytes of {@code buf}, leaving its indices alone.
     */
    static byte[] readable(final ByteBuf buf) {
        return ByteBufUtil.getBytes(buf, buf.readerIndex(), buf.readableBytes());
    }

    /**
     * @return the whole entry, read with a copy into a heap {@link ByteBuffer}.
     */
    static byte[] copyOf(final BlockCache cache, final int address) {
        final byte[] bytes = new byte[cache.length(address)];
        cache.copyTo(address, 0, ByteBuffer.wrap(bytes));
        return bytes;
    }

    /**
     * Where data comes from: every kind of buffer an insert, append or replace accepts. Every
     * source puts junk before and after the data, so that a cache that ignores the reader index
     * or the position shows it, and checks that the cache left its indices alone.
     */
    enum Source {
        HEAP_BYTE_BUF,
        DIRECT_BYTE_BUF,
        COMPOSITE_BYTE_BUF,
        HEAP_BYTE_BUFFER,
        SLICED_HEAP_BYTE_BUFFER,
        READ_ONLY_HEAP_BYTE_BUFFER,
        DIRECT_BYTE_BUFFER;

        boolean isByteBuf() {
            return this == HEAP_BYTE_BUF || this == DIRECT_BYTE_BUF || this == COMPOSITE_BYTE_BUF;
        }

        /**
         * @return a buffer whose readable bytes are {@code data}, at reader index {@link #PREFIX}.
         */
        ByteBuf byteBuf(final byte[] data) {
            final int length = data.length;
            switch (this) {
                case HEAP_BYTE_BUF:
                    return framed(Unpooled.buffer(PREFIX + length + SUFFIX), data);
                case DIRECT_BYTE_BUF:
                    return framed(Unpooled.directBuffer(PREFIX + length + SUFFIX), data);
                case COMPOSITE_BYTE_BUF: {
                    final int a = length / 3;
                    final int b = 2 * length / 3;
                    final ByteBuf first = Unpooled.buffer(PREFIX + a);
                    first.writeBytes(junk(PREFIX)).writeBytes(data, 0, a);
                    final ByteBuf second = Unpooled.directBuffer(Math.max(1, b - a));
                    second.writeBytes(data, a, b - a);
                    final ByteBuf third = Unpooled.buffer(length - b + SUFFIX);
                    third.writeBytes(data, b, length - b).writeBytes(junk(SUFFIX));
                    final CompositeByteBuf composite = Unpooled.compositeBuffer();
                    composite.addComponents(true, first, second, third);
                    composite.setIndex(PREFIX, PREFIX + length);
                    return composite;
                }
                default:
                    throw new IllegalStateException(this + " is not a ByteBuf source");
            }
        }

        /**
         * @return a buffer whose remaining bytes are {@code data}, at position {@link #PREFIX}.
         */
        ByteBuffer byteBuffer(final byte[] data) {
            final int length = data.length;
            final ByteBuffer buffer;
            switch (this) {
                case HEAP_BYTE_BUFFER:
                    buffer = ByteBuffer.allocate(PREFIX + length + SUFFIX);
                    break;
                case SLICED_HEAP_BYTE_BUFFER:
                    buffer = ByteBuffer.allocate(PREFIX + length + SUFFIX + 11).position(11).slice();
                    break;
                case READ_ONLY_HEAP_BYTE_BUFFER:
                case DIRECT_BYTE_BUFFER:
                    buffer = this == DIRECT_BYTE_BUFFER ? ByteBuffer.allocateDirect(PREFIX + length + SUFFIX) : ByteBuffer.allocate(PREFIX + length + SUFFIX);
                    break;
                default:
                    throw new IllegalStateException(this + " is not a ByteBuffer source");
            }
            buffer.put(junk(PREFIX)).put(data).put(junk(SUFFIX));
            buffer.position(PREFIX).limit(PREFIX + length);
            return this == READ_ONLY_HEAP_BYTE_BUFFER ? buffer.asReadOnlyBuffer() : buffer;
        }

        int insert(final BlockCache cache, final byte[] data) {
            if (isByteBuf()) {
                final ByteBuf buf = byteBuf(data);
                try {
                    return cache.insert(buf);
                } finally {
                    checkAndRelease(buf, data.length);
                }
            }
            final ByteBuffer buffer = byteBuffer(data);
            try {
                return cache.insert(buffer);
            } finally {
                checkAndFree(buffer, data.length);
            }
        }

        int append(final BlockCache cache, final int address, final byte[] data) {
            if (isByteBuf()) {
                final ByteBuf buf = byteBuf(data);
                try {
                    return cache.append(address, buf);
                } finally {
                    checkAndRelease(buf, data.length);
                }
            }
            final ByteBuffer buffer = byteBuffer(data);
            try {
                return cache.append(address, buffer);
            } finally {
                checkAndFree(buffer, data.length);
            }
        }

        /**
         * Replace takes only a {@link ByteBuf}; the {@link ByteBuffer} kinds go in wrapped.
         */
        int replace(final BlockCache cache, final int address, final byte[] data) {
            final ByteBuffer nio = isByteBuf() ? null : byteBuffer(data);
            final ByteBuf buf = nio == null ? byteBuf(data) : Unpooled.wrappedBuffer(nio);
            final int readerIndex = buf.readerIndex();
            try {
                return cache.replace(address, buf);
            } finally {
                try {
                    assertEquals(readerIndex, buf.readerIndex(), "replace must not move the reader index");
                    assertEquals(readerIndex + data.length, buf.writerIndex(), "replace must not move the writer index");
                } finally {
                    buf.release();
                    if (nio != null) {
                        BufferUtil.free(nio);
                    }
                }
            }
        }

        private static ByteBuf framed(final ByteBuf buf, final byte[] data) {
            buf.writeBytes(junk(PREFIX)).writeBytes(data).writeBytes(junk(SUFFIX));
            buf.setIndex(PREFIX, PREFIX + data.length);
            return buf;
        }

        private static void checkAndRelease(final ByteBuf buf, final int length) {
            try {
                assertEquals(PREFIX, buf.readerIndex(), "the cache must not move the source's reader index");
                assertEquals(PREFIX + length, buf.writerIndex(), "the cache must not move the source's writer index");
            } finally {
                buf.release();
            }
        }

        private static void checkAndFree(final ByteBuffer buffer, final int length) {
            try {
                assertEquals(PREFIX, buffer.position(), "the cache must not move the source's position");
                assertEquals(PREFIX + length, buffer.limit(), "the cache must not move the source's limit");
            } finally {
                BufferUtil.free(buffer);
            }
        }
    }

    /**
     * Where data goes: every kind of buffer {@code copyTo} writes into. Each destination has
     * canary bytes around the copied range, checked to be intact after the copy.
     */
    enum Destination {
        HEAP_BYTE_BUF,
        DIRECT_BYTE_BUF,
        COMPOSITE_BYTE_BUF,
        HEAP_BYTE_BUFFER,
        SLICED_HEAP_BYTE_BUFFER,
        DIRECT_BYTE_BUFFER;

        /**
         * Copies {@code length} bytes of the entry from {@code offset} into a fresh destination of
         * this kind and returns them.
         */
        byte[] copy(final BlockCache cache, final int address, final int offset, final int length) {
            final int capacity = PREFIX + length + SUFFIX;
            switch (this) {
                case HEAP_BYTE_BUF:
                case DIRECT_BYTE_BUF:
                case COMPOSITE_BYTE_BUF: {
                    final ByteBuf dst = byteBuf(capacity);
                    try {
                        dst.setBytes(0, canaries(capacity));
                        dst.setIndex(1, 2);
                        cache.copyTo(address, offset, dst, PREFIX, length);
                        assertEquals(1, dst.readerIndex(), "copyTo must not move the destination's reader index");
                        assertEquals(2, dst.writerIndex(), "copyTo must not move the destination's writer index");
                        final byte[] all = ByteBufUtil.getBytes(dst, 0, capacity);
                        return checkCanaries(all, length);
                    } finally {
                        dst.release();
                    }
                }
                default: {
                    final ByteBuffer dst = byteBuffer(capacity);
                    try {
                        dst.put(canaries(capacity)).clear();
                        dst.position(PREFIX).limit(PREFIX + length);
                        cache.copyTo(address, offset, dst);
                        assertEquals(PREFIX + length, dst.position(), "copyTo(ByteBuffer) must advance the position by the length");
                        assertEquals(PREFIX + length, dst.limit());
                        final byte[] all = new byte[capacity];
                        dst.clear();
                        dst.get(all);
                        return checkCanaries(all, length);
                    } finally {
                        BufferUtil.free(dst);
                    }
                }
            }
        }

        /**
         * Copies the whole entry with {@link BlockCache#copyTo(int, ByteBuf, int)} into a fresh
         * {@link ByteBuf} of this kind (a ByteBuf kind only) with room for exactly {@code length} bytes between its
         * canaries, checks that the call returned {@code length}, and returns the bytes.
         */
        byte[] copyWhole(final BlockCache cache, final int address, final int length) {
            final int capacity = PREFIX + length + SUFFIX;
            final ByteBuf dst = byteBuf(capacity);
            try {
                dst.setBytes(0, canaries(capacity));
                dst.setIndex(1, 2);
                assertEquals(length, cache.copyTo(address, dst, PREFIX), "copyTo(address, destination, index) returns the length");
                assertEquals(1, dst.readerIndex(), "copyTo must not move the destination's reader index");
                assertEquals(2, dst.writerIndex(), "copyTo must not move the destination's writer index");
                return checkCanaries(ByteBufUtil.getBytes(dst, 0, capacity), length);
            } finally {
                dst.release();
            }
        }

        private ByteBuf byteBuf(final int capacity) {
            switch (this) {
                case HEAP_BYTE_BUF:
                    return Unpooled.buffer(capacity, capacity);
                case DIRECT_BYTE_BUF:
                    return Unpooled.directBuffer(capacity, capacity);
                default: {
                    final int a = capacity / 3;
                    final int b = capacity / 3;
                    final CompositeByteBuf composite = Unpooled.compositeBuffer();
                    composite.addComponents(true, Unpooled.directBuffer(a).writeZero(a), Unpooled.buffer(b).writeZero(b),
                        Unpooled.directBuffer(capacity - a - b).writeZero(capacity - a - b));
                    return composite;
                }
            }
        }

        private ByteBuffer byteBuffer(final int capacity) {
            switch (this) {
                case HEAP_BYTE_BUFFER:
                    return ByteBuffer.allocate(capacity);
                case SLICED_HEAP_BYTE_BUFFER:
                    return ByteBuffer.allocate(capacity + 9).position(9).slice();
                default:
                    return ByteBuffer.allocateDirect(capacity);
            }
        }

        private static byte[] checkCanaries(final byte[] all, final int length) {
            final byte[] expectedPrefix = new byte[PREFIX];
            Arrays.fill(expectedPrefix, CANARY);
            final byte[] expectedSuffix = new byte[SUFFIX];
            Arrays.fill(expectedSuffix, CANARY);
            assertArrayEquals(expectedPrefix, Arrays.copyOfRange(all, 0, PREFIX), "bytes before the destination range were written");
            assertArrayEquals(expectedSuffix, Arrays.copyOfRange(all, PREFIX + length, all.length), "bytes after the destination range were written");
            return Arrays.copyOfRange(all, PREFIX, PREFIX + length);
        }
    }

    static byte[] junk(final int length) {
        final byte[] bytes = new byte[length];
        Arrays.fill(bytes, JUNK);
        return bytes;
    }

    private static byte[] canaries(final int length) {
        final byte[] bytes = new byte[length];
        Arrays.fill(bytes, CANARY);
        return bytes;
    }
}
