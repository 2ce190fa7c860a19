package io.streamcache.bench.stress;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Writes and checks segment bytes against a {@link SegmentContent}; stateless, thread-safe.
 * Both directions work a word at a time where the range is 8-byte aligned and a byte at a time
 * at its ragged ends.
 */
final class ContentChecker {
    /** Returned by {@link #firstMismatch} when every byte matched. */
    static final long MATCH = -1;

    private ContentChecker() {
    }

    /**
     * Writes {@code length} bytes of the segment with {@code seed}, from segment offset
     * {@code offset}, at {@code buffer}'s writer index (which advances).
     */
    static void fill(final ByteBuf buffer, final SegmentContent content, final long seed, final long offset, final int length) {
        long o = offset;
        final long end = offset + length;
        while (o < end && (o & 7) != 0) {
            buffer.writeByte(content.byteAt(seed, o++));
        }
        while (end - o >= 8) {
            buffer.writeLongLE(content.word(seed, o >>> 3));
            o += 8;
        }
        while (o < end) {
            buffer.writeByte(content.byteAt(seed, o++));
        }
    }

    /**
     * @return the segment offset of the first byte of {@code view}'s readable bytes (which are the
     *         segment's bytes from {@code offset}) that differs from the content, or {@link #MATCH}.
     *
     * <p>A view over many buffers (a cache read's composite of blocks) is checked one NIO buffer
     * at a time: Netty's {@code FixedCompositeByteBuf} finds the component of an index by a scan
     * from the first, so reading a 1 MiB view of 256 blocks a word at a time through it ran at
     * 7-10 MB/s on the benchmark machine, and the harness's verification, not the store, set the
     * pace of its readers.
     */
    static long firstMismatch(final ByteBuf view, final SegmentContent content, final long seed, final long offset) {
        final int length = view.readableBytes();
        if (length == 0) {
            return MATCH;
        }
        if (view.nioBufferCount() <= 0) {
            return firstMismatchByIndex(view, content, seed, offset);
        }
        long at = offset;
        for (final ByteBuffer part : view.nioBuffers(view.readerIndex(), length)) {
            final long bad = firstMismatch(part.slice().order(ByteOrder.LITTLE_ENDIAN), content, seed, at);
            if (bad != MATCH) {
                return bad;
            }
            at += part.remaining();
        }
        return MATCH;
    }

    /** {@link #firstMismatch} over the bytes [0, limit) of {@code part}, a little-endian buffer. */
    private static long firstMismatch(final ByteBuffer part, final SegmentContent content, final long seed, final long offset) {
        final int length = part.remaining();
        int i = 0;
        while (i < length && ((offset + i) & 7) != 0) {
            if (part.get(i) != content.byteAt(seed, offset + i)) {
                return offset + i;
            }
            i++;
        }
        while (length - i >= 8) {
            if (part.getLong(i) != content.word(seed, (offset + i) >>> 3)) {
                for (int k = 0; k < 8; k++) {
                    if (part.get(i + k) != content.byteAt(seed, offset + i + k)) {
                        return offset + i + k;
                    }
                }
            }
            i += 8;
        }
        while (i < length) {
            if (part.get(i) != content.byteAt(seed, offset + i)) {
                return offset + i;
            }
            i++;
        }
        return MATCH;
    }

    /** {@link #firstMismatch} through the view's own accessors, for a view with no NIO buffers. */
    private static long firstMismatchByIndex(final ByteBuf view, final SegmentContent content, final long seed, final long offset) {
        final int base = view.readerIndex();
        final int length = view.readableBytes();
        int i = 0;
        while (i < length && ((offset + i) & 7) != 0) {
            if (view.getByte(base + i) != content.byteAt(seed, offset + i)) {
                return offset + i;
            }
            i++;
        }
        while (length - i >= 8) {
            if (view.getLongLE(base + i) != content.word(seed, (offset + i) >>> 3)) {
                for (int k = 0; k < 8; k++) {
                    if (view.getByte(base + i + k) != content.byteAt(seed, offset + i + k)) {
                        return offset + i + k;
                    }
                }
            }
            i += 8;
        }
        while (i < length) {
            if (view.getByte(base + i) != content.byteAt(seed, offset + i)) {
                return offset + i;
            }
            i++;
        }
        return MATCH;
    }
}
