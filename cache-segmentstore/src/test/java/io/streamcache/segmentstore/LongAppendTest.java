package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.log.LogConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentAppendTooLongException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.internal.recovery.ScanningRecoveryHook;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Appends longer than a batch (1 MiB by default) up to the documented maxAppendLength (16 MiB by
 * default) are one record each, written with the batch they end, read back, and recovered; a
 * longer one fails with a specific exception and changes nothing.
 */
@Timeout(120)
class LongAppendTest {
    private static final int[] LENGTHS = {(1 << 20) + 1, 5 << 20, 16 << 20};

    @TempDir
    Path directory;

    private LogConfig config() {
        return LogConfig.builder(directory).preWrite(false).spareFiles(0).build();
    }

    private static BlockCache cache() {
        return BlockCache.builder().capacity(96L << 20).registerMBean(false).build();
    }

    private static byte[] read(final SegmentStore store, final String segment, final long from, final int length) throws Exception {
        final byte[] bytes = new byte[length];
        int at = 0;
        while (at < length) {
            try (ReadResult result = store.readThrough(segment, from + at, length - at).get(30, TimeUnit.SECONDS)) {
                assertTrue(result.length() > 0, () -> "no progress at " + (from + bytes.length) + ": " + result);
                final ByteBuf data = result.data();
                data.getBytes(data.readerIndex(), bytes, at, result.length());
                at += result.length();
            }
        }
        return bytes;
    }

    @Test
    void shouldAppendAndRecoverAppendsOfOneToSixteenMebibytesBesideSmallOnes() throws Exception {
        final LogConfig config = config();
        assertEquals(LogConfig.MAX_APPEND_LENGTH_DEFAULT, config.maxAppendLength());
        final List<Long> offsets = new ArrayList<>();
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        final long smallLength;
        try (BlockCache cache = cache(); SegmentStore store = SegmentStore.builder(cache).log(config).build()) {
            assertEquals(16 << 20, store.maxAppendLength());
            store.create("long");
            store.create("small");
            // Small appends of another segment race with the long ones: they share batches, carried tails and buffers.
            final AtomicBoolean stop = new AtomicBoolean();
            final Thread small = new Thread(() -> {
                long offset = 0;
                try {
                    while (!stop.get()) {
                        store.append("small", TestSegments.buffer(7, offset, 3000));
                        offset += 3000;
                    }
                } catch (final Throwable e) {
                    errors.add(e);
                }
            });
            small.start();
            long offset = 0;
            for (final int length : LENGTHS) {
                offsets.add(store.appendAsync("long", TestSegments.buffer(1, offset, length)).get(60, TimeUnit.SECONDS));
                offset += length;
                store.append("long", TestSegments.buffer(1, offset, 10));
                offset += 10;
            }
            stop.set(true);
            small.join();
            assertEquals(List.of(), errors);
            final SegmentAppendTooLongException tooLong = assertThrows(SegmentAppendTooLongException.class,
                () -> store.append("long", Unpooled.wrappedBuffer(new byte[(16 << 20) + 1])));
            assertEquals(16 << 20, tooLong.maxAppendLength());
            assertTrue(tooLong.getMessage().contains("maxAppendLength=" + (16 << 20)), tooLong.getMessage());
            assertEquals(offset, store.info("long").length(), "the refused append changed nothing");
            assertEquals(List.of(0L, (1L << 20) + 11, (1L << 20) + 11 + (5 << 20) + 10), offsets);
            assertArrayEquals(TestSegments.pattern(1, 0, (int) offset), read(store, "long", 0, (int) offset));
            smallLength = store.info("small").length();
            assertTrue(smallLength > 0);
        }
        try (BlockCache cache = cache(); SegmentStore reopened = SegmentStore.builder(cache).log(config).build()) {
            final long length = reopened.info("long").length();
            assertEquals((1 << 20) + 1 + (5 << 20) + (16 << 20) + 30, length);
            try (ReadResult result = reopened.read("long", 0, 10)) {
                assertEquals(ReadStatus.NOT_CACHED, result.status(), "recovered bytes come from the log");
            }
            assertArrayEquals(TestSegments.pattern(1, 0, (int) length), read(reopened, "long", 0, (int) length));
            assertEquals(smallLength, reopened.info("small").length());
            assertArrayEquals(TestSegments.pattern(7, 0, (int) smallLength), read(reopened, "small", 0, (int) smallLength));
            final List<Integer> records = new ArrayList<>();
            reopened.locations("long").forEach((offset, recordLength, fileNumber, position) -> records.add(recordLength));
            assertEquals(List.of((1 << 20) + 1, 10, 5 << 20, 10, 16 << 20, 10), records, "one record per append");
            reopened.append("long", TestSegments.buffer(1, length, 100));
        }
    }

    @Test
    void shouldDeriveTheLimitFromSmallFilesAndCoverItInTheTornWriteWindow() {
        final LogConfig small = TestLogs.small(directory).build();
        assertEquals(LogConfig.maxAppendLengthFor(TestLogs.FILE), small.maxAppendLength());
        assertTrue(small.maxAppendLength() > TestLogs.BATCH, "longer than a batch");
        assertTrue(ScanningRecoveryHook.tornWriteWindow(config()) >= (16 << 20) + 2 * LogFileDescriptor.PAGE_LENGTH);
        assertThrows(io.streamcache.core.CacheConfigurationException.class,
            () -> TestLogs.small(directory).maxAppendLength(small.maxAppendLength() + 1).build());
        assertThrows(io.streamcache.core.CacheConfigurationException.class,
            () -> TestLogs.small(directory).maxAppendLength(TestLogs.BATCH - 100).build());
        assertEquals(20_000, TestLogs.small(directory).maxAppendLength(20_000).build().maxAppendLength());
        assertEquals(20_000, TestLogs.small(directory).maxAppendLength(20_000).build().toBuilder().build().maxAppendLength());
    }
}
