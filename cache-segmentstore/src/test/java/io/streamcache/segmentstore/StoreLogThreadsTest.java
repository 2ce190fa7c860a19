package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store with a log creates its log threads (writer, completer, files, compactor) through the
 * {@link StreamcacheThreads} its builder was given.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreLogThreadsTest {
    @TempDir
    Path directory;

    @Test
    void shouldStartTheLogThreadsThroughTheStoresThreads() throws Exception {
        final List<String> roles = new CopyOnWriteArrayList<>();
        final StreamcacheThreads recording = (role, owner, task) -> {
            roles.add(role.name());
            return StreamcacheThreads.defaults().newThread(role, "store-log-threads-" + owner, task);
        };
        try (BlockCache cache = TestSegments.cache(1 << 20);
             SegmentStore store = SegmentStore.builder(cache).name("log-threads").threads(recording)
                 .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build())
                 .compaction(CompactionConfig.builder().build()).build()) {
            store.create("s");
            store.append("s", TestLogs.data(1, 0, 100));
            assertTrue(roles.containsAll(List.of("LOG_WRITER", "LOG_COMPLETER", "LOG_FILES", "COMPACTOR")), "made: " + roles);
        }
    }

    /**
     * Every thread a durable store starts (with the manager it builds, compaction, a waiting
     * read and a read from the log) comes from the embedder's threads: none is left with the
     * library's default name.
     */
    @Test
    void shouldStartNoThreadButThroughTheEmbeddersThreads() throws Exception {
        final List<String> roles = new CopyOnWriteArrayList<>();
        final StreamcacheThreads embedder = (role, owner, task) -> {
            roles.add(role.name());
            final Thread thread = new Thread(task, "embedder-" + role.label() + "-" + owner);
            thread.setDaemon(true);
            return thread;
        };
        try (BlockCache cache = TestSegments.cache(2 << 20);
             SegmentStore store = SegmentStore.builder(cache).name("all-threads").threads(embedder)
                 .log(TestLogs.small(directory).build()).compaction(CompactionConfig.builder().build()).build()) {
            store.create("s");
            for (int i = 0; i < 256; i++) {
                store.append("s", TestLogs.data(1, i * 16 * 1024L, 16 * 1024));
            }
            try (io.streamcache.segmentstore.ReadResult tail = store.readOrWait("s", 256 * 16 * 1024L, 10,
                java.time.Duration.ofMillis(5)).get(30, TimeUnit.SECONDS)) {
                assertTrue(tail.length() == 0, "nothing past the end");
            }
            try (io.streamcache.segmentstore.ReadResult old = store.readThrough("s", 0, 1000).get(30, TimeUnit.SECONDS)) {
                assertTrue(old.length() > 0, "read back from the log");
            }
            assertTrue(roles.containsAll(List.of("LOG_WRITER", "LOG_COMPLETER", "LOG_FILES", "COMPACTOR", "CACHE_MANAGER",
                "READ_TIMEOUTS", "LOG_READER")), "made: " + roles);
            for (final Thread thread : Thread.getAllStackTraces().keySet()) {
                assertTrue(!thread.getName().startsWith("streamcache-") || !thread.getName().contains("all-threads"),
                    "a thread not made by the embedder: " + thread.getName());
            }
        }
    }

    /** Reopening a log of several files reads them ahead of the replay on a thread of the embedder's. */
    @Test
    void shouldScanAheadOnRecoveryThroughTheStoresThreads() throws Exception {
        try (BlockCache cache = TestSegments.cache(2 << 20);
             SegmentStore store = SegmentStore.builder(cache).name("scan-writer")
                 .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build()).build()) {
            store.create("s");
            for (int i = 0; i < 4 * TestLogs.FILE / (16 * 1024); i++) {
                store.append("s", TestLogs.data(1, i * 16 * 1024L, 16 * 1024));
            }
        }
        final List<String> roles = new CopyOnWriteArrayList<>();
        final StreamcacheThreads recording = (role, owner, task) -> {
            roles.add(role.name());
            return StreamcacheThreads.defaults().newThread(role, "scan-reader-" + owner, task);
        };
        try (BlockCache cache = TestSegments.cache(2 << 20);
             SegmentStore store = SegmentStore.builder(cache).name("scan-reader").threads(recording)
                 .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build()).build()) {
            assertTrue(store.segmentNames().contains("s"));
            assertTrue(roles.contains("RECOVERY_SCAN"), "made: " + roles);
        }
    }
}
