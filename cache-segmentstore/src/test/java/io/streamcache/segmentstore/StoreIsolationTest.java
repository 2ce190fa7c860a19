package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Isolation of a store with a log: no fill from the log, pinned result or full cache stops the
 * appends of other segments or the log's completion thread. Every test asserts progress (a
 * future completes while the obstacle is still in place), never a time; the futures' timeouts
 * only bound how long a broken build takes to fail.
 */
@Timeout(120)
class StoreIsolationTest {
    private static final int APPEND = 4096;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    /**
     * A cache whose allocations keep trying for a minute: an allocation that waits with a lock
     * held would hold it that long.
     */
    private BlockCache cache(final long capacity) {
        final BlockCache cache = BlockCache.builder()
            .capacity(capacity)
            .blockLength(TestSegments.BLOCK_LENGTH * 16)
            .bufferLength(TestSegments.BUFFER_LENGTH * 16)
            .fullRetryTimeout(Duration.ofSeconds(60))
            .registerMBean(false)
            .build();
        closer.add(cache);
        return cache;
    }

    private SegmentStore store(final BlockCache cache) {
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(16 * 1024)
            .cacheManager(TestSegments.manualManager(cache))
            .log(LogConfig.builder(directory.resolve("log")).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0).preWrite(false)
                .maxDelay(Duration.ofMillis(1)).build())
            .readThroughRangeLength(64 * 1024)
            .build();
        closer.add(store);
        return store;
    }

    private static long freeBlocks(final BlockCache cache) {
        return cache.stats().blockCount() - cache.stats().usedBlockCount();
    }

    /** Appends to {@code name} until the cache has no free block left (at most {@code max} appends). */
    private static long appendUntilFull(final SegmentStore store, final BlockCache cache, final String name, final int max) {
        long at = store.info(name).length();
        for (int i = 0; i < max && freeBlocks(cache) > 0; i++) {
            store.append(name, TestSegments.buffer(name.hashCode(), at, APPEND));
            at += APPEND;
        }
        assertEquals(0, freeBlocks(cache), "the cache is full");
        return at;
    }

    /** Holds a segment's lock on a thread of its own until {@link #release}, like a reader stuck in it. */
    private static final class HeldLock implements AutoCloseable {
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final Thread thread;

        HeldLock(final Segment segment) throws InterruptedException {
            thread = new Thread(() -> {
                segment.lock();
                try {
                    held.countDown();
                    release.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    segment.unlock();
                }
            }, "held-segment-lock");
            thread.setDaemon(true);
            thread.start();
            held.await();
        }

        @Override
        public void close() {
            release.countDown();
            try {
                thread.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void shouldCompleteAppendsOfOneSegmentWhileAFillOfAnotherFindsNoMemory() throws Exception {
        final BlockCache cache = cache(4 << 20);
        final SegmentStore store = store(cache);
        store.create("a");
        store.create("b");
        store.create("c");
        final int bLength = 256 * 1024;
        for (long at = 0; at < bLength; at += APPEND) {
            store.append("b", TestSegments.buffer(2, at, APPEND));
        }
        for (int i = 0; i < 4; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
        // Every cached byte is c's, and c's lock is held: an eviction pass can free nothing and
        // finds a busy segment, so a full cache keeps asking the allocation to retry.
        appendUntilFull(store, cache, "c", 4096);
        final HeldLock held = new HeldLock(store.segmentOrNull("c"));
        try {
            final long callsBefore = cache.stats().fullHandlerCalls();
            final CompletableFuture<ReadResult> fill = store.readThrough("b", 0, 1000);
            // The fill from the log has found the cache full (in the allocation, or done with it).
            while (cache.stats().fullHandlerCalls() == callsBefore && !fill.isDone()) {
                Thread.onSpinWait();
            }
            final CompletableFuture<Long> appendB = store.appendAsync("b", TestSegments.buffer(2, bLength, 100));
            final CompletableFuture<Long> appendA = store.appendAsync("a", TestSegments.buffer(1, 0, 100));
            assertEquals(0L, appendA.get(30, TimeUnit.SECONDS), "a's append completes while b's fill finds no memory");
            assertEquals((long) bLength, appendB.get(30, TimeUnit.SECONDS), "so does b's own append");
            try (ReadResult result = fill.get(30, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, "the read-through is served, cached or not: " + result);
                assertArrayEquals(TestSegments.pattern(2, 0, result.length()), TestSegments.bytes(result));
            }
        } finally {
            held.close();
        }
        try (ReadResult result = store.readThrough("a", 0, 100).get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(1, 0, 100), TestSegments.bytes(result));
        }
    }

    @Test
    void shouldLetTheCompleterCompleteAppendsWhileEveryCachedEntryIsPinned() throws Exception {
        final BlockCache cache = cache(4 << 20);
        final SegmentStore store = store(cache);
        store.create("a");
        store.create("c");
        final long cLength = appendUntilFull(store, cache, "c", 4096);
        // Readers hold every entry the cache has (the synchronous read is not budgeted) and
        // another thread sits in c's lock: no eviction pass can free anything, and one finds a
        // busy segment, so a full cache keeps asking the allocation to retry.
        final java.util.List<ReadResult> pins = new java.util.ArrayList<>();
        try {
            for (long at = 0; at < cLength; ) {
                final ReadResult result = store.read("c", at, 1 << 20);
                pins.add(result);
                at = result.length() > 0 ? result.nextOffset() : at + 1;
            }
            final HeldLock held = new HeldLock(store.segmentOrNull("c"));
            try {
                final java.util.List<CompletableFuture<Long>> appends = new java.util.ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    appends.add(store.appendAsync("a", TestSegments.buffer(1, (long) i * APPEND, APPEND)));
                }
                for (int i = 0; i < appends.size(); i++) {
                    assertEquals((long) i * APPEND, appends.get(i).get(30, TimeUnit.SECONDS),
                        "the completer completes append " + i + " while every entry is pinned");
                }
            } finally {
                held.close();
            }
        } finally {
            pins.forEach(ReadResult::close);
        }
        final int length = 64 * APPEND;
        final byte[] read = new byte[length];
        for (int at = 0; at < length; ) {
            try (ReadResult result = store.readThrough("a", at, length - at).get(30, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, "bytes at " + at);
                result.data().getBytes(result.data().readerIndex(), read, at, result.length());
                at += result.length();
            }
        }
        assertArrayEquals(TestSegments.pattern(1, 0, length), read, "every byte, cached or read back from the log");
    }

    @Test
    void shouldAnswerAReadPastTheEndAtOnce() throws Exception {
        final BlockCache cache = cache(4 << 20);
        final SegmentStore store = store(cache);
        store.create("s");
        store.append("s", TestSegments.buffer(1, 0, 100));
        final CompletableFuture<ReadResult> past = store.readAsync("s", 101, 10, Duration.ofHours(1));
        assertTrue(past.isDone(), "no wait for an offset no append has been given");
        try (ReadResult result = past.join()) {
            assertEquals(ReadStatus.PAST_END, result.status());
            assertEquals(0, result.length());
            assertEquals(101, result.nextOffset());
        }
        assertEquals(1, store.isolationStats().readsPastEnd());
        final javax.management.ObjectName bean = new javax.management.ObjectName(
            "io.streamcache:type=Isolation,name=" + javax.management.ObjectName.quote(store.name()));
        assertEquals(1L, java.lang.management.ManagementFactory.getPlatformMBeanServer().getAttribute(bean, "ReadsPastEnd"),
            "the MBean shows what the snapshot shows");
        // At the end a read still waits for the next append.
        final CompletableFuture<ReadResult> atEnd = store.readAsync("s", 100, 10, Duration.ofHours(1));
        assertTrue(!atEnd.isDone(), "a tail read waits");
        store.append("s", TestSegments.buffer(1, 100, 10));
        try (ReadResult result = atEnd.get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(1, 100, 10), TestSegments.bytes(result));
        }
    }

    @Test
    void shouldNotLetAReaderOverItsBudgetStopAnotherReader() throws Exception {
        final BlockCache cache = cache(8 << 20);
        final SegmentStore store = store(cache);
        store.create("s");
        final int length = 512 * 1024;
        for (long at = 0; at < length; at += APPEND) {
            store.append("s", TestSegments.buffer(3, at, APPEND));
        }
        final ReadBudget slow = ReadBudget.waiting("slow-channel", 64 * 1024);
        final ReadBudget other = ReadBudget.waiting("other-channel", 64 * 1024);
        final ReadBudget strict = ReadBudget.failFast("strict-channel", 16 * 1024);
        // The slow reader holds its results (its channel does not drain) until its budget is spent.
        final java.util.List<ReadResult> held = new java.util.ArrayList<>();
        long at = 0;
        while (slow.used() < slow.limit()) {
            final ReadResult result = store.readAsync("s", at, 16 * 1024, Duration.ofSeconds(30), slow).get(30, TimeUnit.SECONDS);
            held.add(result);
            at = result.nextOffset();
        }
        final CompletableFuture<ReadResult> waiting = store.readAsync("s", at, 16 * 1024, Duration.ofSeconds(30), slow);
        assertTrue(!waiting.isDone(), "the slow reader waits for its own budget");
        assertEquals(1, slow.waitingReads());
        // Another reader, and the store's own budget, go on.
        for (long o = 0; o < length; o += 16 * 1024) {
            try (ReadResult result = store.readAsync("s", o, 16 * 1024, Duration.ofSeconds(30), other).get(30, TimeUnit.SECONDS)) {
                assertArrayEquals(TestSegments.pattern(3, o, result.length()), TestSegments.bytes(result));
            }
        }
        try (ReadResult result = store.readThrough("s", 0, 1000).get(30, TimeUnit.SECONDS)) {
            assertEquals(1000, result.length());
        }
        // A fail-fast reader over its budget is refused at once, and alone.
        final ReadResult strictHeld = store.readAsync("s", 0, 16 * 1024, Duration.ofSeconds(30), strict).get(30, TimeUnit.SECONDS);
        final java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
            java.util.concurrent.ExecutionException.class, () -> store.readAsync("s", 0, 10, Duration.ofSeconds(30), strict).get(30, TimeUnit.SECONDS));
        assertTrue(refused.getCause() instanceof ReadBudgetExceededException, String.valueOf(refused.getCause()));
        assertEquals(1, store.isolationStats().readBudgetRefusals());
        strictHeld.close();
        // Releasing the slow reader's results lets its waiting read go on.
        assertTrue(!waiting.isDone());
        final CompletableFuture<Thread> issuedOn = waiting.thenApply(result -> Thread.currentThread());
        held.forEach(ReadResult::close);
        // Issued on the store's thread, not on the releasing one (a broker's event loop). Asked
        // before this thread waits on the read's future (a thread waiting on it may run its stages).
        org.junit.jupiter.api.Assertions.assertNotSame(Thread.currentThread(), issuedOn.get(30, TimeUnit.SECONDS));
        try (ReadResult result = waiting.get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(3, at, result.length()), TestSegments.bytes(result));
        }
        assertEquals(0, slow.used());
        assertEquals(0, other.used());
        assertEquals(0, store.readBudget().used(), "every result released gave its bytes back");
        assertTrue(store.isolationStats().readBudgetWaits() >= 1);
    }

    @Test
    @Timeout(60)
    void shouldReturnFromAsynchronousReadsWhileAnotherThreadHoldsTheSegmentsLock() throws Exception {
        final BlockCache cache = cache(8 << 20);
        final SegmentStore store = store(cache);
        store.create("s");
        for (long at = 0; at < 64 * 1024; at += APPEND) {
            store.append("s", TestSegments.buffer(6, at, APPEND));
        }
        final Segment segment = store.segmentOrNull("s");
        // Another thread (a fill publishing, an eviction) holds the segment's lock until released.
        final java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch unlock = new java.util.concurrent.CountDownLatch(1);
        final Thread holder = new Thread(() -> {
            segment.lock();
            try {
                locked.countDown();
                // Bounded, so that a read that does wait for the lock ends (and fails the test) rather than hang.
                unlock.await(20, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                segment.unlock();
            }
        }, "lock-holder");
        holder.start();
        assertTrue(locked.await(30, TimeUnit.SECONDS));
        final java.util.List<CompletableFuture<ReadResult>> reads = new java.util.ArrayList<>();
        try {
            // Each call returns (this thread would otherwise wait with the holder): the futures complete later.
            reads.add(store.readAsync("s", 0, 4096, Duration.ofSeconds(30)));
            reads.add(store.readThrough("s", 4096, 4096));
            reads.add(store.readOrWait("s", 8192, 4096, Duration.ofSeconds(30)));
            for (final CompletableFuture<ReadResult> read : reads) {
                assertTrue(!read.isDone(), "a read needing the held lock completes once it is released");
            }
        } finally {
            unlock.countDown();
        }
        for (int i = 0; i < reads.size(); i++) {
            try (ReadResult result = reads.get(i).get(30, TimeUnit.SECONDS)) {
                assertArrayEquals(TestSegments.pattern(6, i * 4096L, 4096), TestSegments.bytes(result));
            }
        }
        holder.join(30_000);
        assertEquals(0, store.readBudget().used());
        assertTrue(store.isolationStats().readsHandedOff() > 0, "the reads that found the lock held are counted");
    }

    @Test
    void shouldKeepTheTimeoutThreadFreeWhileAReaderWaitsAtItsShareOfTheStoresBudget() throws Exception {
        final BlockCache cache = cache(8 << 20);
        final SegmentStore store = store(cache);
        store.create("s");
        store.create("t");
        final int length = 4 << 20;
        for (long at = 0; at < length; at += APPEND) {
            store.append("s", TestSegments.buffer(5, at, APPEND));
        }
        // A reader whose own budget is larger than its share of the store's (half): it stops at
        // the share, below its own limit, and its next fetch waits in its own budget.
        final ReadBudget greedy = ReadBudget.waiting("greedy-channel", cache.capacity());
        final java.util.List<ReadResult> held = new java.util.ArrayList<>();
        long at = 0;
        CompletableFuture<ReadResult> next;
        while ((next = store.readAsync("s", at, 64 * 1024, Duration.ofSeconds(30), greedy)).isDone()) {
            final ReadResult result = next.get();
            held.add(result);
            at = result.nextOffset();
        }
        assertTrue(greedy.used() < greedy.limit(), "waits below its own limit");
        // The store's read-timeouts thread times out another reader's wait: it does not spin
        // over the waiting fetch (it did, for as long as the reader held its results).
        try (ReadResult result = store.readOrWait("t", 0, 100, Duration.ofMillis(50)).get(20, TimeUnit.SECONDS)) {
            assertEquals(ReadStatus.TIMED_OUT, result.status());
        }
        held.forEach(ReadResult::close);
        try (ReadResult result = next.get(20, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(5, at, result.length()), TestSegments.bytes(result));
        }
    }

    @Test
    void shouldNotLetAReaderWithABudgetAsLargeAsTheStoresSpendItForEveryOtherReader() throws Exception {
        final BlockCache cache = cache(8 << 20);
        final SegmentStore store = store(cache);
        store.create("s");
        final int length = 4 << 20;
        for (long at = 0; at < length; at += APPEND) {
            store.append("s", TestSegments.buffer(5, at, APPEND));
        }
        final long storeLimit = store.readBudget().limit();
        // A channel that never drains, its own budget the whole cache: it holds every result it
        // gets, and fetches until a fetch does not complete (a cache hit admitted completes at once).
        final ReadBudget greedy = ReadBudget.waiting("greedy-channel", cache.capacity());
        final java.util.List<ReadResult> held = new java.util.ArrayList<>();
        long at = 0;
        CompletableFuture<ReadResult> next;
        while ((next = store.readAsync("s", at, 64 * 1024, Duration.ofSeconds(30), greedy)).isDone()) {
            final ReadResult result = next.get();
            held.add(result);
            at = result.nextOffset();
            assertTrue(at < length, "the greedy reader was stopped before the segment's end");
        }
        assertTrue(store.readBudget().used() < storeLimit,
            "the greedy reader holds " + store.readBudget().used() + " of the store's " + storeLimit + ": room is left");
        // Other readers, with a budget of their own or with none, read the whole segment meanwhile.
        final ReadBudget other = ReadBudget.waiting("other-channel", cache.capacity());
        for (long o = 0; o < length; o += 64 * 1024) {
            try (ReadResult result = store.readAsync("s", o, 64 * 1024, Duration.ofSeconds(30), other).get(30, TimeUnit.SECONDS)) {
                assertArrayEquals(TestSegments.pattern(5, o, result.length()), TestSegments.bytes(result));
            }
            try (ReadResult result = store.readThrough("s", o, 1000).get(30, TimeUnit.SECONDS)) {
                assertEquals(1000, result.length());
            }
        }
        // The greedy reader's waiting fetch goes on once it releases what it holds.
        assertTrue(!next.isDone());
        held.forEach(ReadResult::close);
        try (ReadResult result = next.get(30, TimeUnit.SECONDS)) {
            assertArrayEquals(TestSegments.pattern(5, at, result.length()), TestSegments.bytes(result));
        }
        assertEquals(0, greedy.used());
        assertEquals(0, store.readBudget().used(), "every result released gave its bytes back");
    }

    @Test
    void shouldHoldAsynchronousReadsToTheStoreBudgetSoThatAppendsKeepTheirRoom() throws Exception {
        final BlockCache cache = cache(4 << 20);
        final SegmentStore store = store(cache);
        assertEquals((long) (cache.capacity() * SegmentStore.Builder.READ_BUDGET_FRACTION_DEFAULT), store.readBudget().limit());
        store.create("hog");
        store.create("a");
        final int hogLength = 3 << 20;
        for (long at = 0; at < hogLength; at += APPEND) {
            store.append("hog", TestSegments.buffer(4, at, APPEND));
        }
        // A consumer that pipelines every fetch of the segment and never reads its socket.
        final java.util.List<CompletableFuture<ReadResult>> fetches = new java.util.ArrayList<>();
        for (long at = 0; at < hogLength; at += 64 * 1024) {
            fetches.add(store.readAsync("hog", at, 64 * 1024, Duration.ofSeconds(30)));
        }
        long pinned = 0;
        for (final CompletableFuture<ReadResult> fetch : fetches) {
            if (fetch.isDone()) {
                pinned += fetch.join().length();
            }
        }
        assertTrue(pinned <= store.readBudget().limit() + 64 * 1024, "pinned=" + pinned + " within the budget and one read");
        assertTrue(fetches.stream().anyMatch(f -> !f.isDone()), "the rest wait for room");
        // Appends of another segment go into the cache: the budget left them their room.
        final long uncachedBefore = store.uncachedCommitBytes();
        final java.util.List<CompletableFuture<Long>> appends = new java.util.ArrayList<>();
        for (int i = 0; i < 256; i++) {
            appends.add(store.appendAsync("a", TestSegments.buffer(1, (long) i * APPEND, APPEND)));
        }
        for (final CompletableFuture<Long> append : appends) {
            append.get(30, TimeUnit.SECONDS);
        }
        assertEquals(uncachedBefore, store.uncachedCommitBytes(), "no append became a gap: reads left appends their room");
        // The consumer drains: every fetch completes, every byte as appended.
        for (int i = 0; i < fetches.size(); i++) {
            try (ReadResult result = fetches.get(i).get(30, TimeUnit.SECONDS)) {
                final long at = (long) i * 64 * 1024;
                assertEquals(at, result.offset());
                assertArrayEquals(TestSegments.pattern(4, at, result.length()), TestSegments.bytes(result));
            }
        }
        assertEquals(0, store.readBudget().used());
    }
}
