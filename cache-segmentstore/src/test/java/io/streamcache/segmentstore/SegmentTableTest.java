package io.streamcache.segmentstore;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.log.internal.recovery.RecoveredLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static io.streamcache.segmentstore.TestSegments.bytes;
import static io.streamcache.segmentstore.TestSegments.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The in-memory segment table on its own, without the store's facade: the table by name and id,
 * recovery's restore, a create racing the close, and the waiters its operations complete or fail.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SegmentTableTest {
    private static final long SEED = 3;
    private static final long LONG = TimeUnit.MINUTES.toNanos(5);

    private BlockCache cache;
    private CacheManager manager;
    private WaitingReads waiting;
    private SegmentTable table;

    @BeforeEach
    void setUp() {
        cache = TestSegments.cache(1 << 20);
        manager = TestSegments.manualManager(cache).build();
        waiting = new WaitingReads("table", StreamcacheThreads.defaults());
        table = new SegmentTable("table", cache, manager.hooks(), 1000, 0, true, waiting);
    }

    @AfterEach
    void tearDown() {
        table.deleteAll();
        waiting.shutdown();
        manager.close();
        cache.close();
    }

    @Test
    void shouldCreateOnceByName() {
        table.create("a");
        assertThrows(SegmentExistsException.class, () -> table.create("a"));
        assertTrue(table.exists("a"));
        assertEquals(1, table.count());
        assertEquals(Set.of("a"), table.names());
        assertNull(table.segmentById(table.segment("a").id), "ids are tracked only for a log's segments");
    }

    @Test
    void shouldRestoreRecoveredSegmentsAsGapsAndGiveNewSegmentsHigherIds() {
        final RecoveredLog recovered = RecoveredLog.builder().segment(4, "four", 10, 300, true).build();
        table.restore(recovered);
        final Segment four = table.segment("four");
        assertEquals(four, table.segmentById(4));
        final SegmentInfo info = table.info("four");
        assertEquals(10, info.startOffset());
        assertEquals(300, info.length());
        assertTrue(info.sealed());
        try (ReadResult result = four.read(10, 100)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status());
            assertEquals(0, result.length());
        }
        assertTrue(table.newSegment("next").id > 4);
    }

    @Test
    void shouldRefuseARecoveryThatRestoresOneNameTwice() {
        final RecoveredLog recovered = RecoveredLog.builder().segment(1, "same", 0, 0, false).segment(2, "same", 0, 0, false).build();
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class, () -> table.restore(recovered));
        assertTrue(e.getMessage().contains("same"), e.getMessage());
    }

    @Test
    void shouldUndoACreateThatRacedTheClose() {
        final Segment late = table.newSegment("late");
        table.segments.putIfAbsent(late);
        assertTrue(table.markClosed());
        assertFalse(table.markClosed(), "closed once");
        assertThrows(CacheClosedException.class, () -> table.undoIfClosed(late));
        assertFalse(table.exists("late"));
        assertTrue(late.deleted);
    }

    @Test
    void shouldCompleteTheWaitersAnAppendReachesWithFreshReads() throws Exception {
        table.create("s");
        final Segment segment = table.segment("s");
        final CompletableFuture<ReadResult> reached = waiting.readOrWait(segment, 0, 1000, LONG);
        final CompletableFuture<ReadResult> beyond = waiting.readOrWait(segment, 500, 1000, LONG);
        assertEquals(0, table.append("s", SegmentMutations.ANY_OFFSET, buffer(SEED, 0, 100)));
        assertTrue(reached.isDone(), "completed before the append returned");
        assertFalse(beyond.isDone());
        try (ReadResult result = reached.get()) {
            assertArrayEquals(pattern(SEED, 0, 100), bytes(result));
        }
        assertThrows(SegmentLengthMismatchException.class, () -> table.append("s", 7, buffer(SEED, 100, 10)));
        table.delete("s");
        final ExecutionException e = assertThrows(ExecutionException.class, beyond::get);
        assertInstanceOf(SegmentNotFoundException.class, e.getCause());
        assertThrows(SegmentNotFoundException.class, () -> table.segment("s"));
    }

    @Test
    void shouldSealAndCompleteEveryWaiterWithTheSealedEnd() throws Exception {
        table.create("s");
        final CompletableFuture<ReadResult> waiter = waiting.readOrWait(table.segment("s"), 0, 10, LONG);
        assertEquals(0, table.seal("s"));
        try (ReadResult result = waiter.get()) {
            assertEquals(ReadStatus.SEALED_END, result.status());
        }
        final CompletableFuture<Long> refused = table.appendAsync("s", SegmentMutations.ANY_OFFSET, buffer(SEED, 0, 10));
        final ExecutionException e = assertThrows(ExecutionException.class, refused::get);
        assertInstanceOf(SegmentSealedException.class, e.getCause());
    }
}
