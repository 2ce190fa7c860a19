package io.streamcache.segmentstore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.TestSegments.EntryView;
import io.streamcache.segmentstore.eviction.CacheManager;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import io.streamcache.log.LogConfig;
import io.streamcache.segmentstore.queue.MessageQueueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store whose cache manager runs {@link ReaderAwarePolicy} finds its readers from the reads
 * themselves: every read call reports to the policy, nobody registers anything.
 */
@Timeout(60)
class AutomaticReadersTest {
    private static final int ENTRY = 4096;
    private static final long IDLE = 1_000;

    @TempDir
    Path directory;

    private final AtomicLong clock = new AtomicLong();
    private final ReaderAwarePolicy policy = new ReaderAwarePolicy(0, ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT, IDLE, clock::get);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(final T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private SegmentStore store(final BlockCache cache) {
        return closeLater(SegmentStore.builder(cache).maxIndexEntryLength(ENTRY)
            .cacheManager(TestSegments.manualManager(cache).policy(policy)).build());
    }

    private static void fill(final SegmentStore store, final String name, final int length) {
        store.create(name);
        for (int offset = 0; offset < length; offset += ENTRY) {
            store.append(name, buffer(name.hashCode(), offset, ENTRY));
        }
    }

    @Test
    void everyReadCallMovesTheReaderItBelongsTo() throws Exception {
        final BlockCache cache = closeLater(TestSegments.cache(1 << 20));
        final SegmentStore store = store(cache);
        fill(store, "s", 16 * ENTRY);
        final ByteBuf destination = Unpooled.buffer(ENTRY);
        long offset = 0;
        for (int i = 0; i < 3; i++) {
            destination.clear();
            clock.incrementAndGet();
            store.read("s", offset, destination);
            offset += destination.readableBytes();
        }
        try (ReadResult view = store.read("s", offset, ENTRY)) {
            offset = view.nextOffset();
        }
        final ByteBuffer nio = ByteBuffer.allocate(ENTRY);
        store.read("s", offset, nio);
        offset += nio.position();
        try (ReadResult through = store.readThrough("s", offset, ENTRY).get(10, TimeUnit.SECONDS)) {
            offset = through.nextOffset();
        }
        try (ReadResult async = store.readAsync("s", offset, ENTRY, Duration.ZERO).get(10, TimeUnit.SECONDS)) {
            offset = async.nextOffset();
        }
        assertEquals(7L * ENTRY, offset);
        assertEquals(1, policy.trackedReaderCount("s"), "seven sequential reads by four calls are one reader");
        // A tail-read waiter: completes on the append with a read from where the reader stands.
        final CompletableFuture<ReadResult> waiting = store.readOrWait("s", 16L * ENTRY, ENTRY, Duration.ofSeconds(30));
        store.read("s", 16L * ENTRY, ENTRY).close();
        assertEquals(1, policy.trackedReaderCount("s"), "an empty read at the tail: not a reader yet");
        store.append("s", buffer(1, 16L * ENTRY, ENTRY));
        try (ReadResult tail = waiting.get(10, TimeUnit.SECONDS)) {
            assertEquals(17L * ENTRY, tail.nextOffset());
        }
        assertEquals(2, policy.trackedReaderCount("s"), "the waiter's read continued the tail reader: now a reader");
        clock.addAndGet(IDLE + 1);
        assertEquals(0, policy.trackedReaderCount("s"), "idle past the timeout");
    }

    @Test
    void aBrokerThatOnlyReadsGetsTheDataAheadOfItsReadersKeptLast() {
        final BlockCache cache = closeLater(TestSegments.cache(1 << 20));
        final SegmentStore store = store(cache);
        final CacheManager manager = store.cacheManager();
        fill(store, "a", 32 * ENTRY);
        fill(store, "b", 32 * ENTRY);
        // "a" is read up to 8 blocks; "b" is read to its end afterwards (its data is the most recently used).
        final ByteBuf destination = Unpooled.buffer(ENTRY);
        for (int i = 0; i < 8; i++) {
            destination.clear();
            clock.addAndGet(10); // a read every 10 ticks: it stalls only 160 ticks after its last
            store.read("a", (long) i * ENTRY, destination);
        }
        for (int i = 0; i < 32; i++) {
            destination.clear();
            clock.incrementAndGet();
            store.read("b", (long) i * ENTRY, destination);
        }
        // Evict step by step: the 24 blocks ahead of a's reader go only once everything else went.
        boolean aheadLost = false;
        for (int step = 500; step >= 0 && !aheadLost; step--) {
            manager.evictDownTo(step / 500.0);
            final List<EntryView> a = TestSegments.entries(store, "a");
            final List<EntryView> b = TestSegments.entries(store, "b");
            final boolean ahead = a.stream().filter(e -> e.offset() >= 8L * ENTRY).allMatch(EntryView::cached);
            if (!ahead) {
                aheadLost = true;
                assertFalse(b.stream().anyMatch(EntryView::cached), "b's data goes before the data a's reader is heading for");
                assertFalse(a.stream().filter(e -> e.offset() < 8L * ENTRY).anyMatch(EntryView::cached),
                    "a's passed data goes before the data ahead of its reader");
            }
        }
        assertTrue(aheadLost, "evicting down to 0 evicts everything in the end");
    }

    @Test
    void deletingASegmentForgetsItsReaders() {
        final BlockCache cache = closeLater(TestSegments.cache(1 << 20));
        final SegmentStore store = store(cache);
        fill(store, "s", 4 * ENTRY);
        store.read("s", 0, ENTRY).close();
        store.read("s", ENTRY, ENTRY).close();
        assertEquals(1, policy.trackedReaderCount("s"));
        store.delete("s");
        assertEquals(0, policy.trackedReaderCount("s"));
    }

    @Test
    void messageQueueGetRangeIsTrackedToo() {
        final BlockCache cache = closeLater(BlockCache.builder().capacity(16L << 20).registerMBean(false).build());
        final SegmentStore store = closeLater(SegmentStore.builder(cache)
            .cacheManager(CacheManager.builder(cache).generationPeriod(Duration.ZERO).registerMBean(false).policy(policy))
            .log(LogConfig.builder(directory).fileLength(16L << 20).preWrite(false).spareFiles(0).build())
            .build());
        final MessageQueueStore queues = new MessageQueueStore(store);
        for (int i = 0; i < 20; i++) {
            queues.append("orders", 0, ByteBuffer.wrap(new byte[1000 + i]));
        }
        final String segment = MessageQueueStore.segmentName("orders", 0);
        for (int i = 0; i < 20; i += 5) {
            clock.incrementAndGet();
            assertEquals(5, queues.getRange("orders", 0, i, 5).size());
        }
        assertEquals(1, policy.trackedReaderCount(segment), "four getRange calls in order are one reader");
    }
}
