package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheState;
import io.pravega.segmentstore.storage.cache.CacheStorage;

/**
 * The conformance suite on streamcache's block cache behind Pravega's interface.
 */
class StreamcacheCacheStorageConformanceTest extends AbstractCacheStorageTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return StreamcacheCacheStorage.create(capacity);
    }

    @Override
    protected long usedDataBytes(final CacheState state) {
        return state.getUsedBytes() - state.getReservedBytes();
    }
}
