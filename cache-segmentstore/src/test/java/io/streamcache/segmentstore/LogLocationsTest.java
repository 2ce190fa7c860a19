package io.streamcache.segmentstore;

import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.LogRecordListener;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.history.LogFileChannels;
import io.streamcache.log.internal.location.LocationIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.streamcache.log.internal.location.LocationList;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
        table = new SegmentTable("locations", cache, manager.hooks(), 1000, 0, true, waiting);
        channels = new LogFileChannels(directory);
        final RecoveredLog recovered = RecoveredLog.builder().segment(7, "seven", 0, 100, false).build();
        table.restore(recovered);
    }

    @AfterEach
    void tearDown() throws Exception {
        table.deleteAll();
        locations.close();
        waiting.shutdown();
        channels.close();
        manager.close();
        cache.close();
    }

    @Test
    void shouldAdoptTheRecoveredIndexesOfLiveSegmentsOnly() {
        final LocationIndex live = LocationIndex.create(0, locations.memory());
        final LocationIndex gone = LocationIndex.create(0, locations.memory());
        live.add(0, 10, 1, 64);
        locations.adopt(Map.of(7, live, 8, gone), table);
        assertTrue(live.isCleared(), "the table took its row over");
        assertEquals(10, locations.get(7).endOffset());
        assertEquals(locations.get(7), locations.get(7), "two views of one id are equal");
        assertNull(locations.get(8), "segment 8 is not in the table");
        assertTrue(gone.isCleared(), "its memory is given back at once");
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
        locations.adopt(Map.of(7, LocationIndex.create(0, locations.memory())), table);
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

    @Test
    void shouldMakeAPageForTheFirstIdOfItAndDropItWithTheLast() {
        final LogRecordListener feed = locations.feed(next, table, channels);
        assertEquals(0, locations.pageCount());
        final int base = 5 * LogLocations.PAGE_IDS;
        for (int id = base; id < base + 3; id++) {
            feed.onRecord(LogRecordDescriptor.TYPE_CREATE, id, 0, 0, 1, 0);
        }
        feed.onRecord(LogRecordDescriptor.TYPE_CREATE, base + LogLocations.PAGE_IDS, 0, 0, 1, 0);
        assertEquals(2, locations.pageCount());
        assertNull(locations.get(base - 1), "an id of a page never made");
        assertNull(locations.get(base + 10 * LogLocations.PAGE_IDS), "an id past the directory");
        assertNull(locations.get(-1));
        for (int id = base; id < base + 3; id++) {
            assertNotNull(locations.get(id));
            feed.onRecord(LogRecordDescriptor.TYPE_DELETE, id, 0, 0, 1, 0);
        }
        assertEquals(1, locations.pageCount(), "the page of the deleted ids is dropped");
        assertNotNull(locations.get(base + LogLocations.PAGE_IDS));
    }

    @Test
    void shouldClearEveryIndexAndGiveTheMemoryBackAtClose() {
        final LogRecordListener feed = locations.feed(next, table, channels);
        final List<LocationIndex> held = new ArrayList<>();
        for (int id = 100; id < 3000; id++) {
            feed.onRecord(LogRecordDescriptor.TYPE_CREATE, id, 0, 0, 1, 0);
            feed.onRecord(LogRecordDescriptor.TYPE_DATA, id, 0, 100, 1, 64);
            held.add(locations.get(id));
        }
        assertTrue(locations.reservedBytes() > 0);
        assertTrue(locations.memory().usedBytes() >= 2900 * 128L);
        locations.close();
        assertEquals(0, locations.reservedBytes());
        assertTrue(locations.memory().isClosed());
        for (final LocationIndex index : held) {
            assertTrue(index.isCleared(), "an index held by a reader finds nothing after the close");
            assertFalse(index.locate(0, 100, new LocationList()));
        }
        assertNull(locations.get(100));
        // The writer's feed after the close drops what it is given and still passes it on.
        feed.onRecord(LogRecordDescriptor.TYPE_CREATE, 5000, 0, 0, 1, 0);
        assertNull(locations.get(5000));
        locations.close();
    }

    /**
     * The table's lookups under contention: the writer's thread creates segments with
     * ever larger ids (new pages), appends to them and deletes the old ones (pages dropped, chunks
     * recycled), while readers look ids up and locate ranges. Every record's place is a function
     * of its segment and offset, so a reader that saw a page, slot or chunk of another segment, or
     * a recycled one, would find a wrong location.
     */
    @Test
    void shouldLookIndexesUpWithoutALockWhileTheWriterCreatesAppendsAndDeletes() throws InterruptedException {
        final LogRecordListener feed = locations.feed(new LogRecordListener() {
            @Override
            public void onRecord(final byte type, final int segmentId, final long segmentOffset, final int length,
                                 final long fileNumber, final long position) {
            }

            @Override
            public void onCopy(final int segmentId, final long segmentOffset, final int length, final long fileNumber,
                               final long position) {
            }

            @Override
            public void onFileRetired(final long fileNumber) {
            }
        }, table, channels);
        final int live = 300;
        final AtomicInteger newest = new AtomicInteger(1000);
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong reads = new AtomicLong();
        final List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            final int seed = r;
            final Thread reader = new Thread(() -> {
                final SplittableRandom random = new SplittableRandom(seed);
                final LocationList list = new LocationList();
                try {
                    while (!done.get() && failure.get() == null) {
                        final int id = newest.get() - random.nextInt(2 * live);
                        final LocationIndex index = locations.get(id);
                        if (index == null || !index.locate(0, 100L * random.nextInt(200), list)) {
                            continue;
                        }
                        for (int i = 0; i < list.count(); i++) {
                            final long n = list.offset(i) / 100;
                            if (list.length(i) != 100 || list.fileNumber(i) != id || list.position(i) != 8 * n) {
                                throw new AssertionError("segment " + id + ": " + list);
                            }
                        }
                        reads.incrementAndGet();
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "reader-" + r);
            readers.add(reader);
            reader.start();
        }
        try {
            final SplittableRandom random = new SplittableRandom(42);
            final long[] ends = new long[1 << 16];
            int created = 1000;
            for (int id = 1000 - live; id < 1000; id++) {
                feed.onRecord(LogRecordDescriptor.TYPE_CREATE, id, 0, 0, 1, 0);
            }
            for (int step = 0; step < 200_000 && failure.get() == null; step++) {
                if (step % 10_000 == 0) {
                    final long seen = reads.get();
                    while (reads.get() < seen + 10 && failure.get() == null) {
                        Thread.yield();
                    }
                }
                if (random.nextInt(20) == 0 && created < 1000 + ends.length - 1) {
                    feed.onRecord(LogRecordDescriptor.TYPE_CREATE, created, 0, 0, 1, 0);
                    newest.set(created);
                    feed.onRecord(LogRecordDescriptor.TYPE_DELETE, created - live, 0, 0, 1, 0);
                    created++;
                } else {
                    final int id = created - 1 - random.nextInt(live);
                    final int slot = id - 1000 + live;
                    final long n = ends[slot] / 100;
                    feed.onRecord(LogRecordDescriptor.TYPE_DATA, id, ends[slot], 100, id, 8 * n);
                    ends[slot] += 100;
                }
            }
        } finally {
            done.set(true);
            for (final Thread reader : readers) {
                reader.join();
            }
        }
        assertNull(failure.get(), () -> "a reader saw a bad location: " + failure.get());
        assertTrue(reads.get() >= 20, "reads checked: " + reads.get());
        assertTrue(locations.memory().reused() > 0, "chunks of deleted segments were reused");
        assertTrue(locations.pageCount() <= 2, "pages of deleted ids are dropped: " + locations.pageCount());
    }
}
