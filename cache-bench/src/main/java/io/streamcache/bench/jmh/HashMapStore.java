package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;

import java.util.Map;

/**
 * The seed's baseline: a {@code HashMap<Integer, byte[]>} that copies bytes in on put and out on
 * get, allocating an array per put. For several threads the same code runs over a
 * {@code ConcurrentHashMap}.
 *
 * <p>Thread-safe exactly when the map given to it is.
 */
final class HashMapStore implements ByteStore {
    private final Map<Integer, byte[]> map;

    HashMapStore(final Map<Integer, byte[]> map) {
        this.map = map;
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        final byte[] bytes = new byte[data.readableBytes()];
        data.getBytes(data.readerIndex(), bytes);
        map.put(key, bytes);
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        final byte[] bytes = map.get(key);
        destination.setBytes(0, bytes);
        return bytes.length;
    }

    @Override
    public void remove(final int key) {
        map.remove(key);
    }

    @Override
    public void close() {
        map.clear();
    }
}
