package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.caffinitas.ohc.CacheSerializer;
import org.caffinitas.ohc.DirectValueAccess;
import org.caffinitas.ohc.OHCache;
import org.caffinitas.ohc.OHCacheBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * Peer: OHC, an off-heap hash map with LRU eviction (Cassandra's former row cache), bounded to
 * the block cache's capacity. Values are serialized straight from the source {@link ByteBuf}
 * into the entry's off-heap memory and read back through {@link OHCache#getDirect} (a view of
 * the entry, no value object), so the data is copied once each way, as in the block cache.
 *
 * <p>OHC cannot run an operation without allocating on the Java heap: every put wraps the new
 * entry's key and value memory in two {@code DirectByteBuffer}s for the serializers; every get
 * and remove serializes the key into a heap {@code KeyBuffer} (an object and a {@code byte[]});
 * a get also creates a {@code DirectValueAccess} and its {@code ByteBuffer}. Each entry is a
 * separate {@code malloc} (off-heap, not counted by {@code -prof gc}). Keys are boxed
 * {@code Integer}s, as in the map stores. A put that OHC rejects (entry too large for its
 * segment, or no memory) fails the benchmark, as does a get that misses.
 *
 * <p>Thread-safe (OHC's segments are locked): one instance may be shared by every benchmark
 * thread, each using its own keys.
 */
final class OhcStore implements ByteStore {
    private final OHCache<Integer, ByteBuf> cache;

    OhcStore(final long capacity) {
        this.cache = OHCacheBuilder.<Integer, ByteBuf>newBuilder()
            .capacity(capacity)
            .keySerializer(new IntSerializer())
            .valueSerializer(new ByteBufSerializer())
            .throwOOME(true)
            .build();
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        if (!cache.put(key, data)) {
            throw new IllegalStateException("ohc: put of key " + key + " (" + data.readableBytes()
                + " bytes) rejected: entry larger than a segment's share or no memory");
        }
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        try (DirectValueAccess value = cache.getDirect(key)) {
            if (value == null) {
                throw new IllegalStateException("ohc: key " + key + " is missing (evicted: capacity too small?)");
            }
            final ByteBuffer bytes = value.buffer();
            final int length = bytes.remaining();
            destination.setBytes(0, bytes);
            return length;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void remove(final int key) {
        if (!cache.remove(key)) {
            throw new IllegalStateException("ohc: key " + key + " to remove is missing");
        }
    }

    @Override
    public void close() {
        try {
            cache.close();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Keys: four bytes, big-endian. */
    private static final class IntSerializer implements CacheSerializer<Integer> {
        @Override
        public void serialize(final Integer key, final ByteBuffer buffer) {
            buffer.putInt(key);
        }

        @Override
        public Integer deserialize(final ByteBuffer buffer) {
            return buffer.getInt();
        }

        @Override
        public int serializedSize(final Integer key) {
            return Integer.BYTES;
        }
    }

    /**
     * Values: the readable bytes of a {@link ByteBuf}, copied into OHC's buffer with no
     * allocation of its own (Netty copies direct to direct). {@code deserialize}, used only by
     * {@link OHCache#get} (not by this store), returns a heap copy.
     */
    private static final class ByteBufSerializer implements CacheSerializer<ByteBuf> {
        @Override
        public void serialize(final ByteBuf value, final ByteBuffer buffer) {
            value.getBytes(value.readerIndex(), buffer);
        }

        @Override
        public ByteBuf deserialize(final ByteBuffer buffer) {
            return Unpooled.buffer(buffer.remaining(), buffer.remaining()).writeBytes(buffer);
        }

        @Override
        public int serializedSize(final ByteBuf value) {
            return value.readableBytes();
        }
    }
}
