package io.streamcache.segmentstore;

import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Read-through under the reader-aware policy's fill admission: with the cache over its target,
 * bytes read back from the log for a read nobody is expected to follow are served and not
 * cached (or staged in the slowest tier); a reader that reads on gets its ranges cached.
 */
@Timeout(60)
class ReadThroughAdmissionTest {
    private static final int RANGE = 16 * 1024;
    private static final int APPEND = 8000;
    private static final int APPENDS = 160;
    private static final long IDLE = 1_000_000;
    private static final long LENGTH = (long) APPEND * APPENDS;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private final AtomicLong clock = new AtomicLong();
    private final ReaderAwarePolicy policy = new ReaderAwarePolicy(0, ReaderAwarePolicy.POPULARITY_HALF_LIFE_DEFAULT, IDLE, clock::get).admitFills(true);

    private SegmentStore store(final BlockCache cache, final int fillTier) {
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache).policy(policy).targetUtilization(0.5))
            .log(TestLogs.small(directory).fileLength(256 * 1024).build())
            .readThroughRangeLength(RANGE)
            .fillTier(fillTier)
            .build();
        closer.add(store);
        return store;
    }

    private static void append(final SegmentStore store, final String name, final long seed, final int appends) {
        store.create(name);
        final List<CompletableFuture<Long>> futures = new ArrayList<>();
        for (int i = 0; i < appends; i++) {
            futures.add(store.appendAsync(name, TestSegments.buffer(seed, (long) i * APPEND, APPEND)));
        }
        futures.forEach(CompletableFuture::join);
    }

    /**
     * "s" (1.28 MB) written and read to its end by one reader (a live reader that has passed
     * everything), "cold" written, both evicted, then "filler" puts the cache
     * over its target.
     */
    private void prepare(final SegmentStore store, final int fillerAppends) throws Exception {
        append(store, "s", 7, APPENDS);
        // A reader of the whole segment, in order (an inferred reader counts as passing data after 1 MiB).
        for (long at = 0; at < LENGTH; ) {
            clock.incrementAndGet();
            try (ReadResult result = store.readThrough("s", at, 64 * 1024).get(10, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, "bytes at " + at);
                at += result.length();
            }
        }
        // A segment nobody reads: its data is evicted after s's passed data, so the last cut-off
        // reaches data that no live reader passed (what a new reader behind the tail's first
        // range, a re-read, ranks as).
        append(store, "cold", 8, 8);
        for (int i = 0; i < 4; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
        try (ReadResult result = store.read("s", 0, 10)) {
            assertEquals(ReadStatus.NOT_CACHED, result.status(), "evicted");
        }
        append(store, "filler", 9, fillerAppends);
    }

    /** @return what one read-through returned (up to {@code length} bytes; a range boundary may cut it short). */
    private byte[] readThrough(final SegmentStore store, final long offset, final int length) throws Exception {
        clock.incrementAndGet();
        try (ReadResult result = store.readThrough("s", offset, length).get(10, TimeUnit.SECONDS)) {
            assertTrue(result.length() > 0, "bytes at " + offset);
            final byte[] bytes = new byte[result.length()];
            result.data().getBytes(result.data().readerIndex(), bytes);
            return bytes;
        }
    }

    private static boolean cached(final SegmentStore store, final long offset) {
        try (ReadResult result = store.read("s", offset, 1)) {
            return result.length() == 1;
        }
    }

    @Test
    void aReadNobodyFollowsIsServedAndNotCachedAndAReaderThatReadsOnIsCached() throws Exception {
        // 2,048 blocks of 256 bytes, target 50%: the filler's 320,000 bytes put it at 61%.
        final SegmentStore store = store(TestSegments.cache(512 * 1024), 0);
        prepare(store, 40);
        final long kept = policy.fillsKept();
        final long refused = policy.fillsRefused();
        assertArrayEquals(TestSegments.pattern(7, 100_000, 100), readThrough(store, 100_000, 100));
        assertTrue(!cached(store, 100_000), "a one-off read behind the live tail reader of a segment nobody re-reads: not kept");
        assertEquals(refused + 1, policy.fillsRefused());
        assertEquals(kept, policy.fillsKept());
        // A reader going on from where it read: the ranges it is heading into are kept.
        for (long at = 100_100; at < 100_000 + 3 * RANGE; ) {
            final byte[] bytes = readThrough(store, at, 1000);
            assertArrayEquals(TestSegments.pattern(7, at, bytes.length), bytes, "bytes at " + at);
            at += bytes.length;
        }
        assertTrue(policy.fillsKept() >= kept + 1, "kept " + policy.fillsKept() + ", refused " + policy.fillsRefused());
        assertTrue(cached(store, 100_000 + 3 * RANGE - 1), "a reader that reads on: the range it reads is kept");
    }

    @Test
    void aRefusedRangeIsStagedInTheSlowestTier() throws Exception {
        final BlockCache cache = BlockCache.builder()
            .tier("fast", 64L * TestSegments.BUFFER_LENGTH, DirectMemoryRegion.factory())
            .tier("slow", 64L * TestSegments.BUFFER_LENGTH, DirectMemoryRegion.factory())
            .blockLength(TestSegments.BLOCK_LENGTH).bufferLength(TestSegments.BUFFER_LENGTH)
            .fullRetryTimeout(Duration.ofMillis(200)).registerMBean(false).build();
        final SegmentStore store = store(cache, 0);
        prepare(store, 40); // tier 0: 512 KB, the filler puts it at 61%, over its 50%
        final long slowBefore = cache.tierUsedBlocks(1);
        final long refused = policy.fillsRefused();
        assertArrayEquals(TestSegments.pattern(7, 100_000, 100), readThrough(store, 100_000, 100));
        assertEquals(refused + 1, policy.fillsRefused());
        assertTrue(cached(store, 100_000), "staged: cached, in the slow tier");
        assertTrue(cache.tierUsedBlocks(1) >= slowBefore + RANGE / TestSegments.BLOCK_LENGTH,
            "the range went into the slow tier: " + slowBefore + " -> " + cache.tierUsedBlocks(1));
    }
}
