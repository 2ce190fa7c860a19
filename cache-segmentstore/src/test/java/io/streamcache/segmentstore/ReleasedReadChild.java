package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.streamcache.core.cache.BlockCache;

import java.util.Arrays;

/**
 * The child JVM of {@link ReleasedReadWithoutNettyChecksTest}, started with Netty's access check
 * turned off: reads a released view after a truncate and another segment's append (single-threaded).
 * Prints one line per access: {@code threw} (an {@link IllegalReferenceCountException}) or
 * {@code served <bytes>}; exits 0.
 */
final class ReleasedReadChild {
    private ReleasedReadChild() {
    }

    public static void main(final String[] args) {
        try (BlockCache cache = TestSegments.cache(1 << 20);
             SegmentStore store = TestSegments.store(cache, 1000)) {
            store.create("s");
            store.create("t");
            for (int i = 0; i < 3; i++) {
                store.append("s", TestSegments.buffer(1, i * 700L, 700));
            }
            final ReadResult result = store.read("s", 0, 2100);
            final ByteBuf data = result.data();
            final ByteBuf view = result.view(0);
            final ByteBuf slice = data.slice(600, 200);
            result.close();
            store.truncate("s", 2100);
            store.append("t", TestSegments.buffer(2, 0, 2100));
            access("getByte", () -> new byte[] {data.getByte(0)});
            access("getBytes", () -> {
                final byte[] bytes = new byte[16];
                data.getBytes(0, bytes);
                return bytes;
            });
            access("view.getLong", () -> {
                final long value = view.getLong(0);
                return new byte[] {(byte) (value >>> 56), (byte) (value >>> 48)};
            });
            access("slice.getByte", () -> new byte[] {slice.getByte(0)});
            access("nioBuffer", () -> {
                final byte[] bytes = new byte[16];
                data.nioBuffer(0, 16).get(bytes);
                return bytes;
            });
        }
    }

    private static void access(final String name, final Access access) {
        try {
            System.out.println(name + " served " + Arrays.toString(access.read()));
        } catch (final IllegalReferenceCountException e) {
            System.out.println(name + " threw");
        }
    }

    /** One read of the released buffers. */
    private interface Access {
        byte[] read();
    }
}
