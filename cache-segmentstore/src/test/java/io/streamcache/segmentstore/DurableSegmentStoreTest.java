package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogScanner;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.internal.recovery.RecoveryHook;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.netty.buffer.ByteBuf;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentNotFoundException;
import io.streamcache.segmentstore.SegmentSealedException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.testing.TestLogs.Ack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static io.streamcache.log.testing.TestLogs.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A segment store with a log: appends enter the cache and the read index only once durable,
 * metadata is logged first, a full cache leaves gaps, a disk error gives offsets back, and a
 * store can be rebuilt from its files through the recovery hook.
 */
@Timeout(60)
class DurableSegmentStoreTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private BlockCache cache(final long capacity) {
        final BlockCache cache = TestSegments.cache(capacity);
        closer.add(cache);
        return cache;
    }

    private SegmentStore store(final BlockCache cache, final LogConfig config, final RecoveryHook recovery) {
        final SegmentStore.Builder builder = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(config);
        if (recovery != null) {
            builder.logRecovery(recovery);
        }
        final SegmentStore store = builder.build();
        closer.add(store);
        return store;
    }

    private static ByteBuf data(final String segment, final long offset, final int length) {
        return TestSegments.buffer(segment.hashCode(), offset, length);
    }

    private static byte[] bytes(final String segment, final long offset, final int length) {
        return TestSegments.pattern(segment.hashCode(), offset, length);
    }

    private static void assertReads(final SegmentStore store, final String segment, final long offset, final int length) {
        try (ReadResult result = store.read(segment, offset, length)) {
            assertEquals(length, result.length(), () -> "read " + segment + " at " + offset + ": " + result);
            assertArrayEquals(bytes(segment, offset, length), TestSegments.bytes(result));
        }
    }

    @Test
    void shouldAppendDurablyFromManyThreadsAndReadBack() throws Exception {
        final SegmentStore store = store(cache(4 << 20), TestLogs.small(directory).build(), null);
        store.create("a");
        store.create("b");
        final List<Thread> threads = new ArrayList<>();
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 4; t++) {
            final String segment = t % 2 == 0 ? "a" : "b";
            final int seed = t;
            threads.add(new Thread(() -> {
                final Random random = new Random(seed);
                for (int i = 0; i < 50; i++) {
                    // Fixed lengths per segment so every byte's pattern is known whatever the order.
                    try {
                        final long offset = store.append(segment, TestSegments.buffer(0, 0, 1 + random.nextInt(1000)));
                        assertTrue(offset >= 0);
                    } catch (final Throwable e) {
                        errors.add(e);
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        for (final Thread thread : threads) {
            thread.join();
        }
        assertEquals(List.of(), errors);
        final SegmentInfo a = store.info("a");
        final SegmentInfo b = store.info("b");
        assertEquals(a.length(), a.durableLength());
        try (ReadResult result = store.read("a", 0, (int)a.length())) {
            assertEquals(a.length(), result.length());
        }
        assertEquals(200, store.logWriter().stats().requests() - 2);
        // Sequential appends from one thread: offsets and bytes exact.
        long offset = b.length();
        for (int i = 0; i < 20; i++) {
            assertEquals(offset, store.appendAsync("b", data("b", offset, 300)).get(10, TimeUnit.SECONDS));
            offset += 300;
        }
        assertReads(store, "b", b.length(), 20 * 300);
        store.close();
        final long total = a.length() + offset;
        long logged = 0;
        for (final TestLogScanner.Record record : TestLogScanner.records(directory)) {
            if (record.type() == LogRecordDescriptor.TYPE_DATA) {
                logged += record.payload().length;
            }
        }
        assertEquals(total, logged);
    }

    @Test
    void shouldShowTailReadersOnlyDurableBytes() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final Semaphore gate = new Semaphore(0);
        final SegmentStore store = store(cache(1 << 20), TestLogs.small(directory).fileFactory(hooks).build(), null);
        store.create("s");
        final CompletableFuture<ReadResult> waiting = store.readOrWait("s", 0, 1000, Duration.ofSeconds(30));
        final CompletableFuture<Long> append;
        final CompletableFuture<Long> second;
        try {
            hooks.gate = gate;
            append = store.appendAsync("s", data("s", 0, 500));
            awaitTrue(() -> hooks.gateWaiting.get() == 1, "the write at the gate");
            // Written maybe, not forced: nobody sees it.
            assertFalse(append.isDone());
            assertFalse(waiting.isDone());
            assertEquals(new SegmentInfo("s", 0, 0, 0, false), store.info("s"));
            try (ReadResult result = store.read("s", 0, 1000)) {
                assertEquals(ReadStatus.END_OF_DATA, result.status());
                assertEquals(0, result.length());
            }
            // The next append's offset is reserved already.
            second = store.appendAsync("s", data("s", 500, 100));
        } finally {
            hooks.gate = null;
            gate.release(100);
        }
        assertEquals(0L, append.get(10, TimeUnit.SECONDS));
        try (ReadResult result = waiting.get(10, TimeUnit.SECONDS)) {
            assertTrue(result.length() >= 500);
            assertArrayEquals(bytes("s", 0, 500), java.util.Arrays.copyOf(TestSegments.bytes(result), 500));
        }
        assertEquals(500L, second.get(10, TimeUnit.SECONDS));
        assertReads(store, "s", 0, 600);
    }

    /** A durable store over a cache of 2 buffers of 31 blocks of 256 bytes (15,872 bytes of data at most), with segment "s". */
    private SegmentStore storeOfOneSegment() {
        final SegmentStore store = store(cache(16 * 1024), TestLogs.small(directory).build(), null);
        store.create("s");
        return store;
    }

    /** Appends 12,000 bytes to "s" and pins them with a read: the cache has 15 blocks left. */
    private static ReadResult pinFirst12000(final SegmentStore store) {
        store.append("s", data("s", 0, 12_000));
        return store.read("s", 0, 12_000);
    }

    @Test
    void shouldGrowOneNotCachedGapAcrossCommitsTheCacheCannotTake() throws Exception {
        final SegmentStore store = storeOfOneSegment();
        try (ReadResult pinned = pinFirst12000(store)) {
            assertEquals(12_000, pinned.length());
            // Longer than the maximum entry length (4096), then one more: one placeholder for both.
            assertEquals(12_000L, store.appendAsync("s", data("s", 12_000, 8000)).get(10, TimeUnit.SECONDS));
            assertEquals(20_000L, store.appendAsync("s", data("s", 20_000, 5000)).get(10, TimeUnit.SECONDS));
        }
        assertEquals(13_000, store.uncachedCommitBytes(), "15 blocks free: neither append fits");
        final List<TestSegments.EntryView> entries = TestSegments.entries(store, "s");
        assertEquals(new TestSegments.EntryView(12_000, 13_000, false, 0), entries.get(entries.size() - 1));
        assertEquals(1, entries.stream().filter(e -> !e.cached()).count(), "one placeholder: " + entries);
        try (ReadResult result = store.read("s", 24_999, 10)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status());
        }
        store.append("s", data("s", 25_000, 100));
        assertReads(store, "s", 25_000, 100);
    }

    @Test
    void shouldLeaveANotCachedGapWhenTheCacheIsFullAtCommit() throws Exception {
        final SegmentStore store = storeOfOneSegment();
        try (ReadResult pinned = pinFirst12000(store)) {
            assertEquals(12_000, pinned.length());
            // The cache cannot take 8,000 more bytes (the first 12,000 are pinned): a gap, not a failure.
            assertEquals(12_000L, store.appendAsync("s", data("s", 12_000, 8000)).get(10, TimeUnit.SECONDS));
        }
        assertEquals(20_000, store.info("s").length());
        assertEquals(8000, store.uncachedCommitBytes());
        try (ReadResult result = store.read("s", 12_000, 8000)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status());
            assertEquals(0, result.length());
        }
        // The bytes are in the log: the store reads them back there itself.
        store.truncate("s", 12_000);
        try (ReadResult result = store.readThrough("s", 12_000, 8000).get(10, TimeUnit.SECONDS)) {
            assertEquals(8000, result.length(), result::toString);
        }
        assertReads(store, "s", 12_000, 8000);
    }

    @Test
    void shouldLogCreateSealTruncateAndDeleteBeforeApplyingThem() throws Exception {
        final SegmentStore store = store(cache(1 << 20), TestLogs.small(directory).build(), null);
        store.create("s");
        store.append("s", data("s", 0, 1000));
        store.append("s", data("s", 1000, 1000));
        store.truncate("s", 500);
        assertEquals(500, store.info("s").startOffset());
        final CompletableFuture<ReadResult> waiting = store.readOrWait("s", 2000, 10, Duration.ofSeconds(30));
        assertEquals(2000, store.seal("s"));
        assertEquals(2000, store.seal("s"), "idempotent");
        assertEquals(ReadStatus.SEALED_END, waiting.get(10, TimeUnit.SECONDS).status());
        final ExecutionException sealed = assertThrows(ExecutionException.class,
            () -> store.appendAsync("s", data("s", 2000, 1)).get(10, TimeUnit.SECONDS));
        assertInstanceOf(SegmentSealedException.class, sealed.getCause());
        store.delete("s");
        assertFalse(store.exists("s"));
        assertThrows(SegmentNotFoundException.class, () -> store.info("s"));
        store.create("s");
        store.append("s", data("s", 0, 10));
        store.close();

        final List<TestLogScanner.Record> records = new ArrayList<>();
        for (final TestLogScanner.Record record : TestLogScanner.records(directory)) {
            if (record.type() != LogRecordDescriptor.TYPE_SNAPSHOT) {
                records.add(record);
            }
        }
        final int first = records.get(0).segmentId();
        assertEquals(List.of(LogRecordDescriptor.TYPE_CREATE, LogRecordDescriptor.TYPE_DATA, LogRecordDescriptor.TYPE_DATA,
            LogRecordDescriptor.TYPE_TRUNCATE, LogRecordDescriptor.TYPE_SEAL, LogRecordDescriptor.TYPE_DELETE,
            LogRecordDescriptor.TYPE_CREATE, LogRecordDescriptor.TYPE_DATA), records.stream().map(TestLogScanner.Record::type).toList());
        assertEquals(500, records.get(3).segmentOffset());
        assertEquals(2000, records.get(4).segmentOffset());
        assertTrue(records.get(6).segmentId() > first, "a new segment of the same name gets a new id");
    }

    @Test
    void shouldGiveBackTheOffsetsOfAppendsThatFailedOnAFullDisk() throws Exception {
        final HookedLogFile.Hooks hooks = new HookedLogFile.Hooks();
        final SegmentStore store = store(cache(1 << 20), TestLogs.small(directory).fileFactory(hooks).build(), null);
        store.create("s");
        assertEquals(0, store.append("s", data("s", 0, 1000)));
        hooks.space.set(0);
        final CompletableFuture<Long> failed = store.appendAsync("s", data("s", 1000, 1000));
        final ExecutionException e = assertThrows(ExecutionException.class, () -> failed.get(10, TimeUnit.SECONDS));
        assertInstanceOf(LogFailedException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("No space left on device"), e.getCause().getMessage());
        final LogFailedException rejected = assertThrows(LogFailedException.class, () -> store.append("s", data("s", 1000, 10)));
        assertTrue(rejected.getMessage().contains("No space left on device"), rejected.getMessage());
        assertThrows(LogFailedException.class, () -> store.create("t"));
        assertFalse(store.exists("t"));
        assertEquals(1000, store.info("s").length());
        hooks.space.set(Long.MAX_VALUE);
        store.logWriter().recover().get(10, TimeUnit.SECONDS);
        assertEquals(1000, store.append("s", data("s", 1000, 1000)), "the failed append's offset is given back");
        assertReads(store, "s", 0, 2000);
    }

    @Test
    void shouldRebuildAStoreFromItsFilesThroughTheRecoveryHook() throws Exception {
        final LogConfig config = TestLogs.small(directory).build();
        final BlockCache cache = cache(1 << 20);
        final SegmentStore first = store(cache, config, null);
        first.create("a");
        first.create("b");
        long a = 0;
        for (int i = 0; i < 30; i++) {
            a += first.append("a", data("a", a, 1500)) >= 0 ? 1500 : 0;
        }
        first.append("b", data("b", 0, 700));
        first.truncate("a", 3000);
        first.seal("b");
        first.close();

        try (SegmentStore scanned = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(config).build()) {
            assertEquals(new SegmentInfo("a", 3000, a, a, false), scanned.info("a"), "recovered by the default scanning hook");
            assertEquals(new SegmentInfo("b", 0, 700, 700, true), scanned.info("b"));
        }

        final SegmentStore second = store(cache, config, files -> TestLogs.recover(files.path()));
        assertEquals(new SegmentInfo("a", 3000, a, a, false), second.info("a"));
        assertEquals(new SegmentInfo("b", 0, 700, 700, true), second.info("b"));
        try (ReadResult result = second.read("a", 3000, 100)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status(), "restored bytes are gaps");
        }
        assertEquals(a, second.append("a", data("a", a, 100)));
        assertReads(second, "a", a, 100);
        second.create("c");
        second.append("c", data("c", 0, 10));
        second.close();

        final RecoveredLog again = TestLogs.recover(directory);
        assertEquals(3, again.segments().size());
        final java.util.Map<String, RecoveredSegment> byName = new java.util.TreeMap<>();
        again.segments().forEach(s -> byName.put(s.name(), s));
        assertEquals(a + 100, byName.get("a").length());
        assertTrue(byName.get("c").id() > Math.max(byName.get("a").id(), byName.get("b").id()));
        final List<Ack> acks = new ArrayList<>();
        for (long at = 3000; at < a; at += 1500) {
            acks.add(new Ack(byName.get("a").id(), at, 1500));
        }
        final java.util.Map<Integer, java.util.TreeMap<Long, byte[]>> logged = TestLogs.data(TestLogScanner.records(directory));
        for (final Ack ack : acks) {
            assertArrayEquals(bytes("a", ack.offset(), ack.length()), logged.get(ack.segment()).get(ack.offset()));
        }
        assertArrayEquals(bytes("a", a, 100), logged.get(byName.get("a").id()).get(a));
        TestLogs.assertWellFormed(directory);
    }

    @Test
    void shouldRefuseFillOnALoggedStoreSoReadsKeepTheLoggedBytes() throws Exception {
        final LogConfig config = TestLogs.small(directory).build();
        try (BlockCache cache = TestSegments.cache(1 << 20)) {
            try (SegmentStore store = SegmentStore.builder(cache).log(config).build()) {
                store.create("a");
                store.append("a", data("a", 0, 1000));
            }
            try (SegmentStore reopened = SegmentStore.builder(cache).log(config).build()) {
                final ByteBuf zeros = io.netty.buffer.Unpooled.wrappedBuffer(new byte[1000]);
                assertThrows(io.streamcache.segmentstore.SegmentFillRefusedException.class, () -> reopened.fill("a", 0, zeros));
                try (ReadResult result = reopened.read("a", 0, 1000)) {
                    assertEquals(ReadStatus.NOT_CACHED, result.status(), "nothing was filled");
                }
                try (ReadResult result = reopened.readThrough("a", 0, 1000).get(10, TimeUnit.SECONDS)) {
                    assertArrayEquals(bytes("a", 0, 1000), TestSegments.bytes(result), "the logged bytes, not the zeros");
                }
            }
        }
    }
}
