package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheStorage;

/**
 * Pravega's read index on streamcache's block cache.
 */
class StreamcacheReadIndexTest extends AbstractReadIndexTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return StreamcacheCacheStorage.create(capacity);
    }
}
