package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.log.LogConfig;
import io.streamcache.log.testing.Closer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A synchronous append to a durable store takes a pooled log request (see the log's
 * {@code PooledRequestTest}): it allocates no request per append.
 */
@Timeout(120)
class DurableAppendAllocationTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    @Test
    void shouldAllocateNoRequestPerSynchronousDurableAppend() {
        final BlockCache cache = TestSegments.cache(16L << 20);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(LogConfig.builder(directory).build()).build();
        closer.add(store);
        store.create("s");
        final ByteBuf data = TestSegments.buffer(1, 0, 100);
        final int appends = 2_000;
        long offset = 0;
        for (int i = 0; i < appends; i++) {
            assertEquals(offset, store.append("s", data));
            offset += 100;
        }
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
            .getThreadMXBean();
        final long tid = Thread.currentThread().getId();
        final long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < appends; i++) {
            if (store.append("s", data) != offset) {
                throw new AssertionError("append " + i + " landed elsewhere");
            }
            offset += 100;
        }
        final long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertTrue(allocated < 8L * appends, "allocated " + allocated + " bytes over " + appends + " synchronous appends");
    }

}
