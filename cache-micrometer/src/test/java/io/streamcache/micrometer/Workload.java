package io.streamcache.micrometer;

import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import io.streamcache.segmentstore.compaction.CompactionConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A real durable store on a small cache, and a workload that moves every kind of meter. */
final class Workload implements AutoCloseable {
    static final int APPEND = 4096;

    final BlockCache cache;
    final SegmentStore store;

    Workload(final Path directory, final String name) {
        cache = BlockCache.builder().capacity(4L << 20).name(name + "-cache").registerMBean(false).build();
        store = SegmentStore.builder(cache).name(name)
            .log(LogConfig.builder(directory).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0).preWrite(false)
                .maxDelay(Duration.ofMillis(1)).registerMBeans(false).build())
            .compaction(CompactionConfig.builder().interval(Duration.ofHours(1)).build())
            .readThroughRangeLength(64 * 1024)
            .build();
    }

    /**
     * Appends {@code appends} records to segment {@code s}, reads them from the cache, evicts
     * everything, reads them again through the log, and forces the log.
     */
    void run(final int appends) throws Exception {
        if (!store.exists("s")) {
            store.create("s");
        }
        final long start = store.info("s").length();
        final byte[] bytes = new byte[APPEND];
        for (int i = 0; i < appends; i++) {
            bytes[0] = (byte) i;
            store.append("s", Unpooled.wrappedBuffer(bytes));
        }
        for (long at = start; at < start + (long) appends * APPEND; at += APPEND) {
            try (ReadResult result = store.read("s", at, APPEND)) {
                assertEquals(APPEND, result.length());
            }
        }
        store.cacheManager().evictDownTo(0.0);
        for (long at = start; at < start + (long) appends * APPEND; at += APPEND) {
            try (ReadResult result = store.readThrough("s", at, APPEND).get(30, TimeUnit.SECONDS)) {
                assertEquals(APPEND, result.length());
            }
        }
        store.log().orElseThrow().force().get(30, TimeUnit.SECONDS);
        store.compaction().orElseThrow().runOnce();
    }

    @Override
    public void close() {
        store.close();
        cache.close();
    }
}
