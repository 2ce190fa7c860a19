package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.StoreLog;
import io.streamcache.log.WriterStats;
import io.streamcache.segmentstore.compaction.Compaction;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.compaction.RetentionPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A store's log and compaction as the API shows them: {@link SegmentStore#log()}, {@link SegmentStore#compaction()}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreLogTest {
    @TempDir
    Path directory;

    @Test
    void shouldShowTheLogOfADurableStoreAndNoneOfAnInMemoryOne() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            try (SegmentStore memory = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache)).build()) {
                assertTrue(memory.log().isEmpty());
                assertTrue(memory.compaction().isEmpty());
            }
            try (SegmentStore store = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache))
                .log(TestLogs.small(directory).build()).build()) {
                final StoreLog log = store.log().orElseThrow();
                assertSame(log, store.log().orElseThrow(), "the same object every time");
                assertEquals(directory, log.directory());
                store.create("s");
                for (int i = 0; i < 20; i++) {
                    store.append("s", TestLogs.data(1, i * 10_000L, 10_000));
                }
                final WriterStats writer = log.writerStats();
                assertTrue(writer.requests() >= 21, "create + 20 appends: " + writer);
                assertTrue(writer.payloadBytes() >= 200_000, writer.toString());
                assertTrue(writer.forces() >= 1, writer.toString());
                assertFalse(log.isFailed());
                assertEquals(0, log.automaticRecoveries());
                assertTrue(log.directoryStats().files() >= 2, "200 KB in 96 KB files: " + log.directoryStats());
                log.recover().get(10, TimeUnit.SECONDS);  // a no-op on a healthy log
                assertFalse(log.isFailed());

                log.prepareFiles(2);
                assertEquals(2, log.directoryStats().preparedFiles(), log.directoryStats().toString());
                final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> log.prepareFiles(-1));
                assertTrue(bad.getMessage().contains("count=-1"), bad.getMessage());
                assertTrue(store.compaction().isEmpty(), "no compaction config");
            }
        }
    }

    @Test
    void shouldSetRetentionAndRunAPassThroughTheCompactionApi() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20);
             SegmentStore store = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache))
                 .log(TestLogs.small(directory).build())
                 .compaction(CompactionConfig.builder().background(false).build()).build()) {
            final Compaction compaction = store.compaction().orElseThrow();
            store.create("s");
            for (int i = 0; i < 30; i++) {
                store.append("s", TestLogs.data(1, i * 10_000L, 10_000));
            }
            assertEquals(RetentionPolicy.KEEP_ALL, compaction.retention("s"));
            compaction.retention("s", RetentionPolicy.ofLength(50_000));
            assertEquals(RetentionPolicy.ofLength(50_000), compaction.retention("s"));
            compaction.runOnce();
            assertEquals(1, compaction.stats().passes());
            assertEquals(1, compaction.stats().retentionTruncations());
            assertTrue(store.info("s").startOffset() >= 300_000 - 50_000 - 10_000, store.info("s").toString());
            compaction.retention("s", null);
            assertEquals(RetentionPolicy.KEEP_ALL, compaction.retention("s"), "back to the default");
        }
    }
}
