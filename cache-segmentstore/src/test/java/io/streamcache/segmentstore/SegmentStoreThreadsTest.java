package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The threads a store starts come from the {@link StreamcacheThreads} its builder was given.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SegmentStoreThreadsTest {

    @Test
    void shouldStartItsReadTimeoutsThreadThroughTheGivenThreads() throws Exception {
        final List<String> made = new CopyOnWriteArrayList<>();
        final StreamcacheThreads recording = (role, owner, task) -> {
            made.add(role + "/" + owner);
            final Thread thread = new Thread(task, "embedder-" + role.label());
            thread.setDaemon(true);
            return thread;
        };
        try (BlockCache cache = TestSegments.cache(1 << 20);
             SegmentStore store = SegmentStore.builder(cache).name("threaded").threads(recording)
                 .cacheManager(TestSegments.manualManager(cache)).build()) {
            store.create("s");
            assertTrue(made.isEmpty(), "no thread before a read waits: " + made);
            final CompletableFuture<ReadResult> waiting = store.readOrWait("s", 0, 10, Duration.ofMillis(10));
            assertEquals(List.of("READ_TIMEOUTS/threaded"), made);
            try (ReadResult result = waiting.get(20, TimeUnit.SECONDS)) {
                assertEquals(ReadStatus.TIMED_OUT, result.status());
            }
        }
    }

    @Test
    void shouldRejectNullThreads() {
        try (BlockCache cache = TestSegments.cache(1 << 20)) {
            final NullPointerException e = assertThrows(NullPointerException.class, () -> SegmentStore.builder(cache).threads(null));
            assertEquals("threads", e.getMessage());
        }
    }
}
