package io.streamcache.bench.jmh;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.netty.buffer.ByteBuf;

/**
 * Peer: Caffeine holding {@code byte[]} values, bounded by weight (the sum of the value lengths)
 * to the block cache's capacity. Copies in on put (a new array) and out on get, as
 * {@link HashMapStore} does. Eviction maintenance runs on the calling thread
 * ({@code executor(Runnable::run)}), so its cost is charged to the operation that triggers it,
 * as the block cache's bookkeeping is; the workloads fit, so nothing is evicted, and a get that
 * misses fails the benchmark instead of timing a miss.
 *
 * <p>Thread-safe (Caffeine's cache is): one instance may be shared by every benchmark thread,
 * each using its own keys.
 */
final class CaffeineStore implements ByteStore {
    private final Cache<Integer, byte[]> cache;

    CaffeineStore(final long capacity) {
        this.cache = Caffeine.newBuilder()
            .maximumWeight(capacity)
            .weigher((final Integer key, final byte[] value) -> value.length)
            .executor(Runnable::run)
            .build();
    }

    @Override
    public void put(final int key, final ByteBuf data) {
        final byte[] bytes = new byte[data.readableBytes()];
        data.getBytes(data.readerIndex(), bytes);
        cache.put(key, bytes);
    }

    @Override
    public int get(final int key, final ByteBuf destination) {
        final byte[] bytes = cache.getIfPresent(key);
        if (bytes == null) {
            throw new IllegalStateException("caffeine: key " + key + " is missing (evicted: capacity too small?)");
        }
        destination.setBytes(0, bytes);
        return bytes.length;
    }

    @Override
    public void remove(final int key) {
        if (cache.asMap().remove(key) == null) {
            throw new IllegalStateException("caffeine: key " + key + " to remove is missing");
        }
    }

    @Override
    public void close() {
        cache.invalidateAll();
        cache.cleanUp();
    }
}
