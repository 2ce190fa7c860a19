package io.streamcache.segmentstore.internal.log;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.log.compaction.CompactionConfig;
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
}
