package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogLock;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The child process of {@link TwoProcessLockTest}: opens a store on the log directory given as
 * its argument, appends 20 records of 700 bytes to segment "s" (each acknowledged), prints
 * {@code locked} and then waits to be killed, holding the store (and the lock) open. With a
 * second argument {@code read}, it first reads every file in the directory whole but the one the
 * OS lock is on (as a support
 * tool or a health check in the holder's process would): that must not let the lock go.
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
        if (args.length > 1 && args[1].equals("read")) {
            try (var files = Files.list(Path.of(args[0]))) {
                for (final Path file : files.toList()) {
                    if (Files.isRegularFile(file) && !file.getFileName().toString().equals(LogLock.LOCK_FILE_NAME)) {
                        Files.readAllBytes(file);
                    }
                }
            }
        }
        System.out.println("locked");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
