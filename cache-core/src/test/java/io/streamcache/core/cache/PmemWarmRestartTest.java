package io.streamcache.core.cache;

import io.streamcache.core.memory.MemoryRegionFactory;
import io.streamcache.core.memory.PmemRegion;

import java.nio.file.Path;

/**
 * {@link WarmRestartTest} over a persistent PMEM region: an llpl pool on a regular file, reopened
 * with {@code MemoryPool.openPool} (pool offset = file offset, so the flips land alike).
 */
class PmemWarmRestartTest extends WarmRestartTest {
    @Override
    MemoryRegionFactory persistentRegion(final Path file) {
        return PmemRegion.persistent(file);
    }
}
