package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;

/**
 * Pravega's read index on Pravega's own cache: the same test, so any difference is ours.
 */
class DirectMemoryCacheReadIndexTest extends AbstractReadIndexTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return new DirectMemoryCache(capacity);
    }
}
