package io.streamcache.segmentstore;

import io.streamcache.log.HistoricalReadStats;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.LogConfig;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A catch-up read of one segment among many interleaved in the log reads at most 1.5 bytes from
 * the files per byte it returns. It read 7x before: the historical reader read across any gap of
 * other segments' records up to 64 KiB, and page-aligned every read.
 */
@Timeout(120)
class ReadAmplificationTest {
    private static final int SEGMENTS = 64;

    @TempDir
    Path directory;

    /**
     * Writes {@code SEGMENTS} segments round robin with {@code appendLength}-byte appends until
     * each holds {@code perSegment} bytes, reopens the store (so nothing is cached), reads segment
     * 0 from 0 to its end with the one read call, and returns {bytes returned, file reads, bytes read}.
     */
    static long[] catchUp(final Path directory, final int appendLength, final int perSegment) {
        final LogConfig log = LogConfig.builder(directory).fileLength(8L << 20).build();
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).build()) {
            for (int s = 0; s < SEGMENTS; s++) {
                store.create("s" + s);
            }
            final List<CompletableFuture<Long>> appends = new ArrayList<>();
            for (int at = 0; at < perSegment; at += appendLength) {
                for (int s = 0; s < SEGMENTS; s++) {
                    appends.add(store.appendAsync("s" + s, TestSegments.buffer(s, at, appendLength)));
                }
                if (appends.size() > 1024) {
                    appends.forEach(CompletableFuture::join);
                    appends.clear();
                }
            }
            appends.forEach(CompletableFuture::join);
        }
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).build()) {
            final long end = store.info("s0").length();
            final byte[] out = new byte[(int) end];
            long at = 0;
            while (at < end) {
                try (ReadResult result = store.readAsync("s0", at, (int) (end - at), Duration.ofSeconds(5)).join()) {
                    result.data().getBytes(0, out, (int) at, result.length());
                    at = result.nextOffset();
                }
            }
            assertArrayEquals(TestSegments.pattern(0, 0, (int) end), out);
            final HistoricalReadStats stats = store.historicalReader().stats();
            return new long[] {end, stats.fileReads(), stats.bytesRead()};
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 1000, 4096, 10_000})
    void shouldReadAtMostOneAndAHalfBytesPerByteReturned(final int appendLength) {
        final int perSegment = appendLength >= 4096 ? 2 << 20 : 256 << 10;
        final long[] figures = catchUp(directory.resolve("a" + appendLength), appendLength, perSegment);
        final double amplification = (double) figures[2] / figures[0];
        System.out.printf(java.util.Locale.ROOT, "read amplification: appendLength=%d segments=%d returned=%d fileReads=%d bytesRead=%d"
            + " amplification=%.3f%n", appendLength, SEGMENTS, figures[0], figures[1], figures[2], amplification);
        assertTrue(amplification <= 1.5, "appendLength=" + appendLength + ": read " + figures[2] + " bytes in " + figures[1]
            + " reads for " + figures[0] + " returned: amplification=" + amplification);
    }

    @Test
    void shouldReadAContiguousSegmentInFewLargeReads() {
        // One segment alone in the log: each 1 MiB range is one positional read, whatever the appends.
        final long[] figures = catchUpAlone(directory.resolve("alone"));
        assertTrue(figures[1] <= figures[0] / (512 << 10) + 1, "reads=" + figures[1] + " for " + figures[0] + " bytes");
        assertTrue(figures[2] <= figures[0] * 3 / 2, "read=" + figures[2]);
    }

    @Test
    void shouldGrowTheReadAheadOfASequentialCatchUp() {
        // 16 MiB of one segment: 1 MiB loads would take 17; doubling to 8 MiB takes 1+2+4+8+...
        final long[] figures = catchUpAlone(directory.resolve("ahead"), 16 << 20);
        System.out.printf(java.util.Locale.ROOT, "read-ahead: returned=%d loads=%d fileReads=%d bytesRead=%d%n",
            figures[0], figures[3], figures[1], figures[2]);
        assertTrue(figures[3] <= 6, "loads=" + figures[3] + " for " + figures[0] + " bytes");
        assertTrue(figures[2] <= figures[0] * 3 / 2, "read=" + figures[2]);
    }

    @Test
    void shouldStopTheReadAheadAtBytesTheCacheHolds() {
        // 16 MiB of one segment, [8, 12) MiB cached again (as after a warm reopen), then a
        // sequential catch-up from 0 with an 8 MiB read-ahead: the doubling loads 1, 2, 4 and
        // then 8 MiB from 7 MiB, which would read the 4 cached MiB from the log once more.
        final int mib = 1 << 20;
        final int length = 16 * mib;
        final Path dir = directory.resolve("cached-middle");
        final LogConfig log = LogConfig.builder(dir).fileLength(8L << 20).build();
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).build()) {
            store.create("only");
            for (int at = 0; at < length; at += 4096) {
                store.appendAsync("only", TestSegments.buffer(1, at, 4096));
            }
            store.append("only", TestSegments.buffer(1, length, 1));
        }
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).readThroughMaxReadAhead(8 << 20).build()) {
            // Backwards, so that no load looks sequential: one range each.
            for (int at = 11 * mib; at >= 8 * mib; at -= mib) {
                store.readThrough("only", at, mib).join().close();
            }
            final HistoricalReader reader = store.historicalReader();
            final long before = reader.stats().bytesRead();
            final long end = store.info("only").length();
            final byte[] out = new byte[(int) end];
            long at = 0;
            while (at < end) {
                try (ReadResult result = store.readAsync("only", at, (int) (end - at), Duration.ofSeconds(5)).join()) {
                    result.data().getBytes(0, out, (int) at, result.length());
                    at = result.nextOffset();
                }
            }
            assertArrayEquals(TestSegments.pattern(1, 0, (int) end), out);
            final long read = reader.stats().bytesRead() - before;
            final long uncached = end - 4L * mib;
            System.out.printf(java.util.Locale.ROOT, "read-ahead over cached bytes: uncached=%d bytesRead=%d%n", uncached, read);
            assertTrue(read <= uncached * 11 / 10, "read " + read + " bytes from the log for " + uncached + " uncached bytes");
        }
    }

    private static long[] catchUpAlone(final Path directory) {
        return catchUpAlone(directory, 4 << 20);
    }

    private static long[] catchUpAlone(final Path directory, final int length) {
        final LogConfig log = LogConfig.builder(directory).fileLength(8L << 20).build();
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).build()) {
            store.create("only");
            for (int at = 0; at < length; at += 4096) {
                store.appendAsync("only", TestSegments.buffer(1, at, 4096));
            }
            store.append("only", TestSegments.buffer(1, length, 1));
        }
        // The read-ahead asked for explicitly: by default it is held to 1/64 of the cache (1 MiB here).
        try (BlockCache cache = BlockCache.builder().capacity(64L << 20).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).log(log).readThroughMaxReadAhead(8 << 20).build()) {
            final long end = store.info("only").length();
            long at = 0;
            while (at < end) {
                try (ReadResult result = store.readAsync("only", at, (int) (end - at), Duration.ofSeconds(5)).join()) {
                    at = result.nextOffset();
                }
            }
            final HistoricalReadStats stats = store.historicalReader().stats();
            return new long[] {end, stats.fileReads(), stats.bytesRead(), stats.loads()};
        }
    }
}
