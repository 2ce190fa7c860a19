package io.streamcache.bookkeeper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.apache.bookkeeper.bookie.Bookie;
import org.apache.bookkeeper.bookie.BookieException;
import org.apache.bookkeeper.bookie.LastAddConfirmedUpdateNotification;
import org.apache.bookkeeper.bookie.LedgerDirsManager;
import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.common.util.Watcher;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.proto.BookieProtocol;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.util.DiskChecker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The storage alone, as the bookie calls it, over a real log in a temporary directory. */
class StreamcacheLedgerStorageTest {

    private static final byte[] KEY = "master-key".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path directory;

    private final List<StreamcacheLedgerStorage> opened = new ArrayList<>();

    @AfterEach
    void shutdown() throws InterruptedException {
        for (final StreamcacheLedgerStorage storage : opened) {
            storage.shutdown();
        }
    }

    @Test
    void shouldReadEveryEntryBackBeforeAndAfterFlushAndAfterRestart() throws Exception {
        StreamcacheLedgerStorage storage = open(conf -> { });
        final SplittableRandom random = new SplittableRandom(1);
        final List<ByteBuf> written = new ArrayList<>();
        for (long ledger = 1; ledger <= 3; ledger++) {
            storage.setMasterKey(ledger, KEY);
            for (long entry = 0; entry < 50; entry++) {
                final ByteBuf e = entry(ledger, entry, entry - 1, random.nextInt(1, 70_000), random);
                assertEquals(entry, storage.addEntry(e));
                written.add(e);
                assertEntry(e, storage.getEntry(ledger, entry));
            }
        }
        storage.flush();
        for (final ByteBuf e : written) {
            assertEntry(e, storage.getEntry(e.getLong(0), e.getLong(8)));
        }
        storage.shutdown();

        storage = open(conf -> { });
        assertEquals(3, storage.ledgerCount());
        for (final ByteBuf e : written) {
            assertEntry(e, storage.getEntry(e.getLong(0), e.getLong(8)));
        }
        assertArrayEquals(KEY, storage.readMasterKey(2));
        assertEquals(48, storage.getLastAddConfirmed(2));
    }

    @Test
    void shouldReadEntriesEvictedFromASmallCacheThroughTheLog() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 4L << 20));
        final SplittableRandom random = new SplittableRandom(2);
        final List<ByteBuf> written = new ArrayList<>();
        storage.setMasterKey(9, KEY);
        for (long entry = 0; entry < 40; entry++) {
            final ByteBuf e = entry(9, entry, entry - 1, 1 << 20, random);
            storage.addEntry(e);
            written.add(e);
        }
        storage.flush();
        for (final ByteBuf e : written) {
            assertEntry(e, storage.getEntry(9, e.getLong(8)));
        }
    }

    @Test
    void shouldAnswerLastAddConfirmedReadsWithTheHighestEntry() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        storage.setMasterKey(4, KEY);
        final SplittableRandom random = new SplittableRandom(3);
        final ByteBuf e5 = entry(4, 5, 3, 100, random);
        storage.addEntry(entry(4, 2, 1, 10, random));
        storage.addEntry(e5);
        storage.addEntry(entry(4, 3, 2, 10, random));
        assertEntry(e5, storage.getEntry(4, BookieProtocol.LAST_ADD_CONFIRMED));
        assertEquals(3, storage.getLastAddConfirmed(4));
        assertFalse(storage.entryExists(4, BookieProtocol.LAST_ADD_CONFIRMED));
        assertTrue(storage.entryExists(4, 3));
        assertFalse(storage.entryExists(4, 4));
    }

    @Test
    void shouldReportMissingLedgersAndEntriesWithBookieExceptions() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        assertThrows(Bookie.NoLedgerException.class, () -> storage.getEntry(77, 0));
        assertThrows(Bookie.NoLedgerException.class, () -> storage.readMasterKey(77));
        assertFalse(storage.ledgerExists(77));
        storage.setMasterKey(77, KEY);
        assertTrue(storage.ledgerExists(77));
        assertThrows(Bookie.NoEntryException.class, () -> storage.getEntry(77, 0));
        assertThrows(Bookie.NoEntryException.class, () -> storage.getEntry(77, BookieProtocol.LAST_ADD_CONFIRMED));
    }

    @Test
    void shouldKeepFenceLimboAndExplicitLacAcrossRestart() throws Exception {
        StreamcacheLedgerStorage storage = open(conf -> { });
        storage.setMasterKey(5, KEY);
        storage.addEntry(entry(5, 0, -1, 10, new SplittableRandom(4)));
        assertFalse(storage.isFenced(5));
        assertTrue(storage.setFenced(5));
        assertFalse(storage.setFenced(5), "a second fence changes nothing");
        storage.setLimboState(6);
        final ByteBuf lac = Unpooled.buffer().writeLong(5).writeLong(41).writeBytes(new byte[] {1, 2, 3});
        storage.setExplicitLac(5, lac);
        assertEquals(41, storage.getLastAddConfirmed(5));
        storage.shutdown();

        storage = open(conf -> { });
        assertTrue(storage.isFenced(5));
        assertTrue(storage.hasLimboState(6));
        assertFalse(storage.hasLimboState(5));
        assertEquals(lac, storage.getExplicitLac(5));
        assertEquals(41, storage.getLastAddConfirmed(5));
        final StreamcacheLedgerStorage reopened = storage;
        assertThrows(BookieException.DataUnknownException.class, () -> reopened.getEntry(6, 0));
        assertThrows(BookieException.DataUnknownException.class, () -> reopened.isFenced(6));
        assertThrows(BookieException.DataUnknownException.class, () -> reopened.getLastAddConfirmed(6));
        storage.clearLimboState(6);
        assertFalse(storage.isFenced(6));
        assertThrows(Bookie.NoEntryException.class, () -> reopened.getEntry(6, 0));
        assertNull(storage.getExplicitLac(6));
    }

    @Test
    @Timeout(30)
    void shouldWakeLongPollingWatchersWhenTheLacMovesOrTheLedgerIsFenced() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        storage.setMasterKey(8, KEY);
        final SplittableRandom random = new SplittableRandom(5);
        storage.addEntry(entry(8, 0, -1, 10, random));
        storage.addEntry(entry(8, 1, 0, 10, random));
        assertFalse(storage.waitForLastAddConfirmedUpdate(8, -1, new Recorder()), "LAC 0 is past -1: no wait");

        final Recorder moved = new Recorder();
        assertTrue(storage.waitForLastAddConfirmedUpdate(8, 0, moved));
        storage.addEntry(entry(8, 2, 1, 10, random));
        assertEquals(1, moved.next.get(10, TimeUnit.SECONDS));

        final Recorder cancelled = new Recorder();
        assertTrue(storage.waitForLastAddConfirmedUpdate(8, 1, cancelled));
        storage.cancelWaitForLastAddConfirmedUpdate(8, cancelled);
        final Recorder fenced = new Recorder();
        assertTrue(storage.waitForLastAddConfirmedUpdate(8, 1, fenced));
        storage.setFenced(8);
        assertEquals(Long.MAX_VALUE, fenced.next.get(10, TimeUnit.SECONDS));
        assertFalse(cancelled.next.isDone(), "a cancelled watcher is not called");
    }

    @Test
    void shouldDeleteLedgersForGoodAndTellTheListeners() throws Exception {
        StreamcacheLedgerStorage storage = open(conf -> { });
        final SplittableRandom random = new SplittableRandom(6);
        for (long ledger = 10; ledger < 15; ledger++) {
            storage.setMasterKey(ledger, KEY);
            storage.addEntry(entry(ledger, 0, -1, 1000, random));
        }
        final List<Long> deleted = new CopyOnWriteArrayList<>();
        storage.registerLedgerDeletionListener(deleted::add);
        storage.deleteLedger(12);
        storage.deleteLedger(12);
        assertEquals(List.of(12L), deleted);
        assertFalse(storage.ledgerExists(12));
        final List<Long> active = new ArrayList<>();
        storage.getActiveLedgersInRange(11, 14).forEach(active::add);
        assertEquals(List.of(11L, 13L), active);
        storage.shutdown();

        storage = open(conf -> { });
        assertFalse(storage.ledgerExists(12));
        assertTrue(storage.ledgerExists(13));
        assertEquals(4, storage.ledgerCount());
    }

    @Test
    void shouldListTheEntriesOfALedgerInOrder() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        storage.setMasterKey(3, KEY);
        final SplittableRandom random = new SplittableRandom(7);
        for (final long entry : new long[] {4, 0, 9, 2, 4}) {
            storage.addEntry(entry(3, entry, -1, 10, random));
        }
        final PrimitiveIterator.OfLong ids = storage.getListOfEntriesOfLedger(3);
        final List<Long> listed = new ArrayList<>();
        ids.forEachRemaining((long id) -> listed.add(id));
        assertEquals(List.of(0L, 2L, 4L, 9L), listed);
        assertThrows(Bookie.NoLedgerException.class, () -> storage.getListOfEntriesOfLedger(99));
    }

    @Test
    void shouldKeepStorageStateFlagsAcrossRestart() throws Exception {
        StreamcacheLedgerStorage storage = open(conf -> { });
        assertEquals(EnumSet.noneOf(LedgerStorage.StorageState.class), storage.getStorageStateFlags());
        storage.setStorageStateFlag(LedgerStorage.StorageState.NEEDS_INTEGRITY_CHECK);
        storage.shutdown();
        storage = open(conf -> { });
        assertEquals(EnumSet.of(LedgerStorage.StorageState.NEEDS_INTEGRITY_CHECK), storage.getStorageStateFlags());
        storage.clearStorageStateFlag(LedgerStorage.StorageState.NEEDS_INTEGRITY_CHECK);
        storage.shutdown();
        storage = open(conf -> { });
        assertEquals(EnumSet.noneOf(LedgerStorage.StorageState.class), storage.getStorageStateFlags());
    }

    @Test
    void shouldReturnFromAddsOnlyWhenForcedWithDurableAdds() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> conf.setJournalWriteData(false));
        storage.setMasterKey(21, KEY);
        final SplittableRandom random = new SplittableRandom(8);
        for (long entry = 0; entry < 20; entry++) {
            storage.addEntry(entry(21, entry, entry - 1, 5000, random));
            assertEquals(storage.store().info(StreamcacheLedgerStorage.segmentName(21)).length(),
                storage.store().info(StreamcacheLedgerStorage.segmentName(21)).durableLength(),
                "every record of the ledger is in the log when addEntry returns");
            assertTrue(storage.store().info(StreamcacheLedgerStorage.segmentName(21)).length() > 0);
        }
    }

    @Test
    void shouldForceTheLogAtFlushOnlyWithTheJournalWritingData() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        storage.setMasterKey(22, KEY);
        final String segment = StreamcacheLedgerStorage.segmentName(22);
        final long before = storage.store().log().orElseThrow().writerStats().forces();
        final SplittableRandom random = new SplittableRandom(9);
        for (long entry = 0; entry < 50; entry++) {
            storage.addEntry(entry(22, entry, entry - 1, 1000, random));
        }
        // Under NEVER an append completes once written: wait for all of them, without a force.
        while (storage.store().info(segment).durableLength() < storage.store().info(segment).length()) {
            Thread.sleep(1);
        }
        assertEquals(before, storage.store().log().orElseThrow().writerStats().forces(),
            "the journal holds the adds: the log is not forced per batch");
        storage.flush();
        assertTrue(storage.store().log().orElseThrow().writerStats().forces() > before, "flush forces the log");
        final long afterFlush = storage.store().log().orElseThrow().writerStats().forces();
        storage.setFenced(22);
        assertTrue(storage.store().log().orElseThrow().writerStats().forces() > afterFlush, "a fence is forced before it returns");
    }

    @Test
    void shouldLendACopyTheCallerOwnsAndMayWriteIntoByDefault() throws Exception {
        // BookKeeper treats getEntry's buffer as its own: its tests write into it (CorruptReadBookie).
        final StreamcacheLedgerStorage storage = open(conf -> conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 4L << 20));
        storage.setMasterKey(23, KEY);
        final SplittableRandom random = new SplittableRandom(10);
        final List<ByteBuf> written = new ArrayList<>();
        for (long entry = 0; entry < 12; entry++) {
            final ByteBuf e = entry(23, entry, entry - 1, entry % 3 == 0 ? 1 << 20 : 3000, random);
            storage.addEntry(e);
            written.add(e);
            // Right after the add: from the in-flight record or the cache.
            scribbleAndReread(storage, e);
        }
        storage.flush();
        // After the flush: the early entries from the log (evicted from the 4 MiB cache), the late from the cache.
        for (final ByteBuf e : written) {
            scribbleAndReread(storage, e);
        }
    }

    @Test
    void shouldLendAReadOnlyViewWithZeroCopyReads() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> {
            conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 4L << 20);
            conf.setProperty(StreamcacheStorageSettings.ZERO_COPY_READS, true);
        });
        storage.setMasterKey(24, KEY);
        final SplittableRandom random = new SplittableRandom(11);
        final List<ByteBuf> written = new ArrayList<>();
        for (long entry = 0; entry < 12; entry++) {
            final ByteBuf e = entry(24, entry, entry - 1, entry % 3 == 0 ? 1 << 20 : 3000, random);
            storage.addEntry(e);
            written.add(e);
            assertReadOnlyEntry(e, storage.getEntry(24, entry));
        }
        storage.flush();
        for (final ByteBuf e : written) {
            assertReadOnlyEntry(e, storage.getEntry(24, e.getLong(8)));
        }
    }

    @Test
    void shouldRejectEntriesTooShortToHoldTheirIds() throws Exception {
        final StreamcacheLedgerStorage storage = open(conf -> { });
        final java.io.IOException e = assertThrows(java.io.IOException.class,
            () -> storage.addEntry(Unpooled.buffer().writeLong(1).writeLong(2)));
        assertTrue(e.getMessage().contains("entry length=16"), e.getMessage());
        assertFalse(storage.ledgerExists(1), "nothing was created");
    }

    // ---- helpers ----

    private StreamcacheLedgerStorage open(final Consumer<ServerConfiguration> tweak) throws Exception {
        final ServerConfiguration conf = new ServerConfiguration();
        conf.setLedgerDirNames(new String[] {directory.toString()});
        conf.setProperty(StreamcacheStorageSettings.CACHE_BYTES, 32L << 20);
        conf.setProperty(StreamcacheStorageSettings.LOG_FILE_BYTES, 16L << 20);
        tweak.accept(conf);
        final LedgerDirsManager dirs = new LedgerDirsManager(conf, new File[] {directory.toFile()},
            new DiskChecker(conf.getDiskUsageThreshold(), conf.getDiskUsageWarnThreshold()));
        final StreamcacheLedgerStorage storage = new StreamcacheLedgerStorage();
        storage.initialize(conf, null, dirs, dirs, NullStatsLogger.INSTANCE, UnpooledByteBufAllocator.DEFAULT);
        storage.start();
        opened.add(storage);
        return storage;
    }

    /** An entry as the bookie hands it over: ledger id, entry id, LAC, then payload bytes. */
    static ByteBuf entry(final long ledgerId, final long entryId, final long lac, final int payload, final SplittableRandom random) {
        final byte[] bytes = new byte[payload];
        random.nextBytes(bytes);
        return Unpooled.buffer(24 + payload).writeLong(ledgerId).writeLong(entryId).writeLong(lac).writeBytes(bytes);
    }

    /**
     * Reads {@code e} back, checks that the buffer is the caller's (writable, from the bookie's
     * allocator, no cache memory pinned under it), overwrites every byte of it, and reads
     * {@code e} again: the storage's copy must be untouched.
     */
    private static void scribbleAndReread(final StreamcacheLedgerStorage storage, final ByteBuf e) throws Exception {
        final long ledger = e.getLong(0);
        final long entry = e.getLong(8);
        final ByteBuf lent = storage.getEntry(ledger, entry);
        try {
            assertFalse(lent.isReadOnly(), "the caller owns the buffer");
            assertTrue(lent.alloc() == UnpooledByteBufAllocator.DEFAULT, "from the bookie's allocator: " + lent.alloc());
            assertEquals(0, storage.store().cacheManager().stats().pinnedResults(), "no cache memory pinned under a copy");
            assertTrue(io.netty.buffer.ByteBufUtil.equals(e, lent), "entry bytes differ");
            for (int i = lent.readerIndex(); i < lent.writerIndex(); i++) {
                lent.setByte(i, ~lent.getByte(i));
            }
        } finally {
            lent.release();
        }
        assertEntry(e, storage.getEntry(ledger, entry));
    }

    private static void assertReadOnlyEntry(final ByteBuf expected, final ByteBuf actual) {
        try {
            assertTrue(actual.isReadOnly(), "a zero-copy read lends a read-only buffer");
            final int at = actual.readerIndex();
            assertThrows(java.nio.ReadOnlyBufferException.class, () -> actual.setByte(at, 1));
            assertEquals(expected.readableBytes(), actual.readableBytes());
            assertTrue(io.netty.buffer.ByteBufUtil.equals(expected, actual), "entry bytes differ");
        } finally {
            actual.release();
        }
    }

    private static void assertEntry(final ByteBuf expected, final ByteBuf actual) {
        try {
            assertEquals(expected.readableBytes(), actual.readableBytes());
            assertTrue(io.netty.buffer.ByteBufUtil.equals(expected, actual), "entry bytes differ");
        } finally {
            actual.release();
        }
    }

    private static final class Recorder implements Watcher<LastAddConfirmedUpdateNotification> {
        final CompletableFuture<Long> next = new CompletableFuture<>();

        @Override
        public void update(final LastAddConfirmedUpdateNotification value) {
            next.complete(value.getLastAddConfirmed());
            value.recycle();
        }
    }
}
