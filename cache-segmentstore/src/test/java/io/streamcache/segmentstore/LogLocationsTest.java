package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.internal.log.LogRecordDescriptor;
import io.streamcache.segmentstore.internal.log.LogRecordListener;
import io.streamcache.segmentstore.internal.log.recovery.RecoveredLog;
import io.streamcache.segmentstore.internal.log.history.LogFileChannels;
import io.streamcache.segmentstore.internal.log.recovery.LocationIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The location indexes on their own: what recovery hands over is kept for live segments only,
 * and the feed follows CREATE, DATA, TRUNCATE, copies and DELETE, forgets a deleted segment's
 * id, and passes every call on to the next listener.
 */
class LogLocationsTest {
    @TempDir
    Path directory;

    private BlockCache cache;
    private CacheManager manager;
    private WaitingReads waiting;
    private SegmentTable table;
    private LogFileChannels channels;
    private final LogLocations locations = new LogLocations();
    private final List<String> passedOn = new ArrayList<>();
    private final LogRecordListener next = new LogRecordListener() {
        @Override
        public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                             final long fileNumber, final long position) {
            passedOn.add("record " + type + " " + segmentId + " " + segmentOffset);
        }

        @Override
        public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                           final long position) {
            passedOn.add("copy " + segmentId + " " + segmentOffset);
        }

        @Override
        public void onFileRetired(final long fileNumber) {
            passedOn.add("retired " + fileNumber);
        }
    };

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        manager = TestSegments.manualManager(cache).build();
        waiting = new WaitingReads("locations", StreamcacheThreads.defaults());
        table = new SegmentTable("locations", cache, manager, 1000, 0, true, waiting);
        channels = new LogFileChannels(directory);
        final RecoveredLog recovered = RecoveredLog.builder().segment(7, "seven", 0, 100, false).build();
        table.restore(recovered);
    }

    @AfterEach
    void tearDown() throws Exception {
        table.deleteAll();
        waiting.shutdown();
        channels.close();
        manager.close();
        cache.close();
    }

    @Test
    void shouldAdoptTheRecoveredIndexesOfLiveSegmentsOnly() {
        final LocationIndex live = new LocationIndex(0);
        final LocationIndex gone = new LocationIndex(0);
        locations.adopt(Map.of(7, live, 8, gone), table);
        assertSame(live, locations.get(7));
        assertNull(locations.get(8), "segment 8 is not in the table");
    }

    @Test
    void shouldFollowTheRecordsAndPassThemOn() {
        final LogRecordListener feed = locations.feed(next, table, channels);
        feed.onRecord(LogRecordDescriptor.TYPE_CREATE, 9, 0, 0, 1, 0);
        final LocationIndex index = locations.get(9);
        assertNotNull(index);
        feed.onRecord(LogRecordDescriptor.TYPE_DATA, 9, 0, 100, 1, 64);
        feed.onRecord(LogRecordDescriptor.TYPE_DATA, 9, 100, 50, 1, 256);
        assertEquals(2, index.count());
        assertEquals(150, index.endOffset());
        feed.onRecord(LogRecordDescriptor.TYPE_TRUNCATE, 9, 100, 0, 1, 512);
        assertEquals(100, index.startOffset());
        feed.onCopy(9, 100, 50, 2, 64);
        feed.onFileRetired(1);
        assertEquals(List.of("record " + LogRecordDescriptor.TYPE_CREATE + " 9 0", "record " + LogRecordDescriptor.TYPE_DATA + " 9 0",
            "record " + LogRecordDescriptor.TYPE_DATA + " 9 100", "record " + LogRecordDescriptor.TYPE_TRUNCATE + " 9 100", "copy 9 100",
            "retired 1"), passedOn);
    }

    @Test
    void shouldForgetADeletedSegmentsIndexAndId() {
        locations.adopt(Map.of(7, new LocationIndex(0)), table);
        final LocationIndex index = locations.get(7);
        assertSame(table.segmentOrNull("seven"), table.segmentById(7));
        locations.feed(next, table, channels).onRecord(LogRecordDescriptor.TYPE_DELETE, 7, 0, 0, 1, 0);
        assertNull(locations.get(7));
        assertTrue(index.isCleared());
        assertNull(table.segmentById(7), "the fills of a deleted segment find nothing");
    }

    @Test
    void shouldDropAnIndexThatCannotTakeARecordAndStillPassItOn() {
        final LogRecordListener feed = locations.feed(next, table, channels);
        feed.onRecord(LogRecordDescriptor.TYPE_CREATE, 9, 0, 0, 1, 0);
        feed.onRecord(LogRecordDescriptor.TYPE_DATA, 9, 0, 100, 1, 64);
        // Not where the index ends: the index refuses it, and the feed drops the index.
        feed.onRecord(LogRecordDescriptor.TYPE_DATA, 9, 500, 100, 1, 256);
        assertNull(locations.get(9));
        assertEquals(3, passedOn.size());
    }
}
