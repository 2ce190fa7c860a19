package io.streamcache.bench.mq;

import java.nio.ByteBuffer;

/**
 * The messages of the message-queue benchmark: each one's length and bytes follow from its
 * queue and its index alone, so a reader verifies any message it gets without keeping a copy.
 *
 * <pre>
 *   0        4        8               16                                   length
 *   +--------+--------+---------------+-------------------------------------+
 *   | queue  | length | index         | words w, w+1, w+2, ... (8 bytes each, |
 *   | (int)  | (int)  | (long)        |  w = mix(queue, index)); a tail of    |
 *   |        |        |               |  length % 8 bytes of the next word    |
 *   +--------+--------+---------------+-------------------------------------+
 * </pre>
 *
 * Stateless and thread-safe; fills and checks allocate nothing.
 */
public final class MqMessages {
    /** The header: queue, length, index. */
    public static final int HEADER = 16;

    private MqMessages() {
    }

    /**
     * @return the length of message {@code index} of global queue {@code queue}, uniform in
     *         [{@code min}, {@code max}] over messages.
     */
    public static int length(final int queue, final long index, final int min, final int max) {
        final long h = mix(queue, index ^ 0x5DEECE66DL);
        return min + (int) Long.remainderUnsigned(h, max - min + 1);
    }

    /**
     * Writes the message into {@code buffer} from its position, leaving the position after it.
     */
    public static void fill(final ByteBuffer buffer, final int queue, final long index, final int length) {
        buffer.putInt(queue).putInt(length).putLong(index);
        long word = mix(queue, index);
        int left = length - HEADER;
        while (left >= 8) {
            buffer.putLong(word++);
            left -= 8;
        }
        for (int i = 0; i < left; i++) {
            buffer.put((byte) (word >>> (56 - 8 * i)));
        }
    }

    /**
     * @return null if {@code message} (its bytes from position to limit) is message {@code index}
     *         of {@code queue} with the expected length, else what differs.
     */
    public static String check(final ByteBuffer message, final int queue, final long index, final int length) {
        final int p = message.position();
        if (message.remaining() != length) {
            return "queue=" + queue + " index=" + index + ": length " + message.remaining() + ", expected " + length;
        }
        if (message.getInt(p) != queue || message.getInt(p + 4) != length || message.getLong(p + 8) != index) {
            return "queue=" + queue + " index=" + index + ": header names queue=" + message.getInt(p) + " length="
                + message.getInt(p + 4) + " index=" + message.getLong(p + 8);
        }
        long word = mix(queue, index);
        int at = p + HEADER;
        final int end = p + length;
        while (end - at >= 8) {
            if (message.getLong(at) != word) {
                return "queue=" + queue + " index=" + index + ": wrong bytes at message byte " + (at - p);
            }
            word++;
            at += 8;
        }
        for (int i = 0; at < end; i++, at++) {
            if (message.get(at) != (byte) (word >>> (56 - 8 * i))) {
                return "queue=" + queue + " index=" + index + ": wrong bytes at message byte " + (at - p);
            }
        }
        return null;
    }

    private static long mix(final int queue, final long index) {
        long z = queue * 0x9E3779B97F4A7C15L + index * 0xC2B2AE3D27D4EB4FL + 0x165667B19E3779F9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
