package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheStorage;

/**
 * A whole Pravega segment container caching in streamcache's block cache.
 */
class StreamcacheSegmentContainerTest extends AbstractSegmentContainerTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return StreamcacheCacheStorage.create(capacity);
    }
}
