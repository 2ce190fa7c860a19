package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheState;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;

/**
 * The conformance suite on Pravega's own cache: the reference the suite is checked against.
 */
class DirectMemoryCacheConformanceTest extends AbstractCacheStorageTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return new DirectMemoryCache(capacity);
    }

    @Override
    protected long usedDataBytes(final CacheState state) {
        return state.getUsedBytes() - state.getReservedBytes();
    }
}
