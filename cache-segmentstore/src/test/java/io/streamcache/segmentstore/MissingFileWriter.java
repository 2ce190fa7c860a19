package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;

import java.nio.file.Path;

/**
 * The child process of {@link MissingFileTest}: opens a store on the log directory given as its
 * argument, appends 500 records of 1000 bytes to segment "s" (each acknowledged; the small test
 * log rolls every ~90 KiB), and with a second argument {@code truncate} then truncates "s" at
 * 400,000 (retention: the files before it are retired) and appends 100 more; prints
 * {@code written} and waits to be killed, the store open.
 */
public final class MissingFileWriter {
    private MissingFileWriter() {
    }

    public static void main(final String[] args) throws Exception {
        final BlockCache cache = TestSegments.cache(8 << 20);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(Path.of(args[0])).build()).build();
        store.create("s");
        for (int i = 0; i < 500; i++) {
            store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
        }
        if (args.length > 1 && args[1].equals("truncate")) {
            store.truncate("s", 400_000L);
            for (int i = 500; i < 600; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
        }
        System.out.println("written");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
