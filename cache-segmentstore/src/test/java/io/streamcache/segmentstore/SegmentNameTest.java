package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogConfig;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentNameException;
import io.streamcache.segmentstore.SegmentNames;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Segment names are checked (non-empty, well-formed UTF-16, at most {@link SegmentNames#MAX_NAME_LENGTH}
 * bytes of UTF-8) before anything is logged, so a store always reopens, with a log or without,
 * and through the message-queue facade.
 */
class SegmentNameTest {
    @TempDir
    Path directory;

    private static LogConfig config(final Path directory) {
        return TestLogs.small(directory).build();
    }

    private static SegmentStore store(final BlockCache cache, final Path directory) {
        return SegmentStore.builder(cache).log(config(directory)).build();
    }

    @Test
    void shouldRefuseUnpairedSurrogatesSoTheStoreStillReopens() {
        try (BlockCache cache = TestSegments.cache(1 << 20)) {
            try (SegmentStore store = store(cache, directory)) {
                final SegmentNameException high = assertThrows(SegmentNameException.class, () -> store.create("x\uD800"));
                assertTrue(high.getMessage().contains("index=1"), high.getMessage());
                assertThrows(SegmentNameException.class, () -> store.create("x\uD801"));
                assertThrows(SegmentNameException.class, () -> store.create("\uDC00x"));
                assertThrows(SegmentNameException.class, () -> store.create("a\uDBFF\uDBFFb"));
                store.create("ok\uD83D\uDE00");
                assertEquals(Set.of("ok\uD83D\uDE00"), store.segmentNames());
            }
            try (SegmentStore reopened = store(cache, directory)) {
                assertEquals(Set.of("ok\uD83D\uDE00"), reopened.segmentNames());
            }
        }
    }

    @Test
    void shouldRefuseEmptyAndTooLongNamesAndAcceptTheLongestThatFits() {
        final String longest = "\u00E9".repeat(SegmentNames.MAX_NAME_LENGTH / 2);
        try (BlockCache cache = TestSegments.cache(1 << 20)) {
            try (SegmentStore store = store(cache, directory)) {
                assertThrows(SegmentNameException.class, () -> store.create(""));
                final SegmentNameException tooLong = assertThrows(SegmentNameException.class, () -> store.create(longest + "x"));
                assertTrue(tooLong.getMessage().contains("maxNameLength=" + SegmentNames.MAX_NAME_LENGTH), tooLong.getMessage());
                assertThrows(SegmentNameException.class, () -> store.create("\uD83D\uDE00".repeat(SegmentNames.MAX_NAME_LENGTH / 4 + 1)));
                store.create(longest);
                store.create("\uD83D\uDE00".repeat(SegmentNames.MAX_NAME_LENGTH / 4));
                assertEquals(2, store.segmentCount());
            }
            try (SegmentStore reopened = store(cache, directory)) {
                assertEquals(2, reopened.segmentCount());
                assertTrue(reopened.exists(longest));
            }
        }
    }

    @Test
    void shouldRefuseBadNamesWithoutALogToo() {
        try (BlockCache cache = TestSegments.cache(1 << 20); SegmentStore store = SegmentStore.builder(cache).build()) {
            assertThrows(SegmentNameException.class, () -> store.create("x\uD800"));
            assertThrows(SegmentNameException.class, () -> store.create(""));
            assertEquals(0, store.segmentCount());
        }
    }

    @Test
    void shouldRefuseBadTopicNamesOfTheFacadeAndLeaveNoQueue() {
        final ByteBuffer data = ByteBuffer.wrap(new byte[] {1, 2, 3});
        try (MessageQueueStore queues = MessageQueueStore.open(config(directory), 4L << 20)) {
            assertThrows(SegmentNameException.class, () -> queues.append("x\uD800", 0, data));
            assertThrows(SegmentNameException.class, () -> queues.append("x\uD801", 0, data));
            assertThrows(SegmentNameException.class, () -> queues.append("t".repeat(SegmentNames.MAX_NAME_LENGTH), 0, data));
            assertEquals(0, queues.queueCount(), "a failed append leaves no queue");
            assertEquals(0, queues.segmentStore().segmentCount());
            assertEquals(0, queues.messageCount("x\uD800", 0));
            assertEquals(0, queues.append("t", 0, data));
        }
        try (MessageQueueStore reopened = MessageQueueStore.open(config(directory), 4L << 20)) {
            assertEquals(1, reopened.queueCount());
            assertFalse(reopened.getRange("t", 0, 0, 10).isEmpty());
        }
    }
}
