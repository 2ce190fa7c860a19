package io.streamcache.pravega;

import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.cache.DirectMemoryCache;

/**
 * The same segment container on Pravega's own cache, so that any difference is ours.
 */
class DirectMemoryCacheSegmentContainerTest extends AbstractSegmentContainerTest {
    @Override
    protected CacheStorage newStorage(final long capacity) {
        return new DirectMemoryCache(capacity);
    }
}
