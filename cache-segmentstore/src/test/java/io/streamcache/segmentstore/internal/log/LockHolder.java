package io.streamcache.segmentstore.internal.log;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;

import java.nio.file.Path;

/**
 * The child process of {@link TwoProcessLockTest}: opens a store on the log directory given as
 * its argument, appends 20 records of 700 bytes to segment "s" (each acknowledged), prints
 * {@code locked} and then waits to be killed, holding the store (and the lock) open.
 */
public final class LockHolder {
    private LockHolder() {
    }

    public static void main(final String[] args) throws Exception {
        final BlockCache cache = TestSegments.cache(8 << 20);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(Path.of(args[0])).build()).build();
        store.create("s");
        for (int i = 0; i < 20; i++) {
            store.append("s", TestSegments.buffer(7, i * 700L, 700));
        }
        System.out.println("locked");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
