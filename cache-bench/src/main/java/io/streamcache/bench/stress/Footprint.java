package io.streamcache.bench.stress;

/**
 * What a stress run held at its end, measured once producers and readers stopped and before the
 * store closed; an immutable value.
 *
 * @param diskBytes        bytes of the files in the log directory at the end.
 * @param diskBytesMax     the most seen at any sample.
 * @param logFilesDeleted  log files the log deleted (dead once truncated past) during the run.
 * @param heapUsedAfterGc  Java heap in use after a full collection ({@code System.gc()}), at the end: the
 *                         whole process's heap (store, read index, harness, histograms), not the cache's alone.
 * @param cachedBytes      bytes of entry data in the cache at the end.
 * @param cacheUsedBytes   bytes of cache memory in use (used blocks plus metadata) at the end.
 */
record Footprint(long diskBytes, long diskBytesMax, long logFilesDeleted, long heapUsedAfterGc, long cachedBytes, long cacheUsedBytes) {
    /** @return heap bytes per MB (2^20 bytes) of cached data, or 0 if nothing is cached. */
    double heapBytesPerCachedMB() {
        return cachedBytes == 0 ? 0 : heapUsedAfterGc / (cachedBytes / (double) (1 << 20));
    }
}
