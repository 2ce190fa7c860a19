package io.streamcache.log.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Deterministic contents for the log's and the store's tests: stateless, safe from any thread.
 */
public final class TestBytes {
    private TestBytes() {
    }

    /**
     * @return byte {@code offset} of the segment named {@code seed}: a hash of both, so that a
     *         byte from the wrong place or the wrong segment shows.
     */
    public static byte at(final long seed, final long offset) {
        long z = seed * 0x9E37_79B9_7F4A_7C15L + offset * 0xBF58_476D_1CE4_E5B9L + 0x94D0_49BB_1331_11EBL;
        z = (z ^ (z >>> 31)) * 0x94D0_49BB_1331_11EBL;
        return (byte) (z ^ (z >>> 29));
    }

    /**
     * @return bytes {@code [from, from + length)} of the pattern named {@code seed}.
     */
    public static byte[] pattern(final long seed, final long from, final int length) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = at(seed, from + i);
        }
        return bytes;
    }

    /**
     * @return a heap buffer holding bytes {@code [from, from + length)} of the pattern, with a
     *         few junk bytes before its reader index, so that an append that ignores the index shows.
     */
    public static ByteBuf buffer(final long seed, final long from, final int length) {
        final ByteBuf buffer = Unpooled.buffer(length + 3);
        buffer.writeBytes(new byte[] {(byte) 0xA5, (byte) 0xA5, (byte) 0xA5});
        buffer.writeBytes(pattern(seed, from, length));
        buffer.readerIndex(3);
        return buffer;
    }
}
