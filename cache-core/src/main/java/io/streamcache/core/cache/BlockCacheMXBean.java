package io.streamcache.core.cache;

/**
 * JMX view of a {@link BlockCache}, registered as
 * {@code io.streamcache:type=BlockCache,name=<cache name>}. Every attribute reads a fresh
 * {@link CacheStats} snapshot; callable from any thread.
 */
public interface BlockCacheMXBean {
    String getName();

    String getRegion();

    long getCapacity();

    int getBufferCount();

    int getBlockLength();

    long getBlockCount();

    long getUsedBlockCount();

    long getFreeBlockCount();

    long getUsedBytes();

    long getStoredBytes();

    long getEntryCount();

    double getUtilization();

    long getFullHandlerCalls();

    long getFullFailures();
}
