package io.streamcache.core.cache;

import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryRegionFactory;

/**
 * The block cache suite in direct memory taken whole at build and committed page by page on
 * first write ({@link DirectMemoryRegion.Commit#LAZY}).
 */
class LazyDirectRegionBlockCacheTest extends AbstractBlockCacheTest {
    @Override
    protected MemoryRegionFactory region() {
        return DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY);
    }
}
