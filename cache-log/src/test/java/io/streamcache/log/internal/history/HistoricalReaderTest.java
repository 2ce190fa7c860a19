package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.streamcache.core.CacheClosedException;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationMemory;
import io.streamcache.log.internal.location.LocationList;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.internal.recovery.LogFiles;
import io.streamcache.log.internal.recovery.LogRecovery;
import io.streamcache.log.internal.recovery.RecoveredLog;
import io.streamcache.log.internal.recovery.RecoveredSegment;
import io.streamcache.log.internal.recovery.TestLogWriter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HistoricalReaderTest {
    private static final long FILE_LENGTH = 128 << 10;
    private static final int BATCH = 16 << 10;

    @TempDir
    Path directory;

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (final AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    @Test
    void shouldReadExactBytesAcrossRecordsAndFiles() throws Exception {
        final RecoveredLog log = interleavedLog(1, 2000);
        for (final int threads : new int[] {0, 2}) {
            final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(48 << 10).threads(threads));
            final SplittableRandom random = new SplittableRandom(threads);
            int crossFile = 0;
            for (final RecoveredSegment segment : log.liveSegments()) {
                if (segment.length() == segment.startOffset()) {
                    continue;
                }
                for (int probe = 0; probe < 8; probe++) {
                    final long offset = segment.startOffset() + random.nextLong(segment.length() - segment.startOffset());
                    final LogRange range = reader.read(segment.id(), segment.locations(), offset).get(10, TimeUnit.SECONDS);
                    final long rangeStart = offset - offset % (48 << 10);
                    assertEquals(Math.max(rangeStart, segment.startOffset()), range.offset());
                    assertEquals(Math.min(rangeStart + (48 << 10), segment.length()), range.endOffset());
                    assertTrue(range.contains(offset));
                    assertBytes(segment.id(), range);
                    assertTrue(range.data().isReadOnly());
                    crossFile += filesSpanned(segment.locations(), range) > 1 ? 1 : 0;
                }
            }
            assertTrue(crossFile > 0, "some ranges span files");
            assertEquals(0, reader.stats().failures());
        }
    }

    @Test
    void shouldCoalesceContiguousRecordsIntoOneRead() throws Exception {
        final TestLogWriter writer = new TestLogWriter(directory, 1 << 20, 64 << 10);
        writer.create(1, "alone");
        writer.create(2, "other");
        for (int i = 0; i < 100; i++) {
            writer.data(1, 500);
        }
        for (int i = 0; i < 100; i++) {
            writer.data(1, 300);
            writer.data(2, 20_000);
        }
        writer.close();
        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        final RecoveredSegment alone = log.segment("alone");

        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(32 << 10).threads(0));
        final LogRange contiguous = reader.read(alone.id(), alone.locations(), 100).join();
        assertBytes(alone.id(), contiguous);
        assertEquals(1, reader.stats().fileReads(), "64 records side by side: one read");

        // Records 20 KB apart: one read each with no gap allowed, fewer when the gap may be read over.
        final HistoricalReader strict = reader(HistoricalReader.builder(channels()).rangeLength(4 << 10).maxReadGap(0).threads(0));
        final LogRange sparse = strict.read(alone.id(), alone.locations(), 50_000 + 10).join();
        assertBytes(alone.id(), sparse);
        final LocationList list = new LocationList();
        alone.locations().locate(sparse.offset(), sparse.endOffset(), list);
        assertEquals(list.count(), strict.stats().fileReads());
        final HistoricalReader loose = reader(HistoricalReader.builder(channels()).rangeLength(4 << 10).maxReadGap(32 << 10)
            .threads(0));
        assertBytes(alone.id(), loose.read(alone.id(), alone.locations(), 50_000 + 10).join());
        assertTrue(loose.stats().fileReads() < strict.stats().fileReads(), loose.stats() + " vs " + strict.stats());
        assertTrue(loose.stats().bytesRead() > strict.stats().bytesRead(), "reads over the other segment's records");
    }

    @Test
    void shouldNotReadARangeTheCacheGotMeanwhile() throws Exception {
        final RecoveredLog log = interleavedLog(2, 600);
        final RecoveredSegment segment = log.liveSegments().stream().filter(s -> s.length() > 20_000).findFirst().orElseThrow();
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(8 << 10).threads(0));

        final LogRange skipped = reader.read(segment.id(), segment.locations(), 10_000, () -> false).join();
        assertEquals(0, skipped.length(), "cached meanwhile: nothing read");
        assertFalse(skipped.contains(10_000));
        assertEquals(0, reader.stats().loads());
        assertEquals(0, reader.stats().fileReads());
        assertEquals(1, reader.stats().cachedMeanwhile());
        assertEquals(0, reader.inFlightCount(), "the skipped read left nothing in flight");

        assertBytes(segment.id(), reader.read(segment.id(), segment.locations(), 10_000, () -> true).join());
        assertEquals(1, reader.stats().loads(), "still missing: read");
        final LogRange despiteFailedCheck = reader.read(segment.id(), segment.locations(), 10_000, () -> {
            throw new IllegalStateException("the check failed");
        }).join();
        assertTrue(despiteFailedCheck.contains(10_000), "a check that throws counts as still missing");
        assertEquals(2, reader.stats().loads());
    }

    @Test
    void shouldClipTheRangeToTheIndexedBytes() throws Exception {
        final RecoveredLog log = interleavedLog(2, 600);
        final RecoveredSegment segment = log.liveSegments().stream().filter(s -> s.length() > 20_000).findFirst().orElseThrow();
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(1 << 20).threads(0));

        final LogRange whole = reader.read(segment.id(), segment.locations(), segment.length() - 1).join();
        assertEquals(segment.startOffset(), whole.offset());
        assertEquals(segment.length(), whole.endOffset());
        assertBytes(segment.id(), whole);

        final long newStart = segment.startOffset() + 5_000;
        segment.locations().truncate(newStart);
        final LogRange truncated = reader.read(segment.id(), segment.locations(), segment.startOffset()).join();
        assertEquals(newStart, truncated.offset(), "the segment was truncated after the miss: the range starts later");
        assertTrue(!truncated.contains(segment.startOffset()));
        assertBytes(segment.id(), truncated);
        assertEquals(segment.length() - newStart, truncated.data(newStart).readableBytes());
    }

    @Test
    @Timeout(10)
    void shouldReadARangeOnceForConcurrentMisses() throws Exception {
        final RecoveredLog log = interleavedLog(3, 1500);
        final RecoveredSegment segment = longest(log);
        final ConcurrentLinkedQueue<Runnable> gate = new ConcurrentLinkedQueue<>();
        final AtomicInteger fills = new AtomicInteger();
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(16 << 10).executor(gate::add)
            .sink((id, offset, data) -> fills.incrementAndGet()));
        final int threads = 8;
        final CyclicBarrier start = new CyclicBarrier(threads);
        final ExecutorService callers = Executors.newFixedThreadPool(threads);
        final List<Future<CompletableFuture<LogRange>>> calls = new ArrayList<>();
        final long base = segment.startOffset() - segment.startOffset() % (16 << 10) + (16 << 10);
        for (int t = 0; t < threads; t++) {
            final long offset = base + 1000L * t;
            calls.add(callers.submit(() -> {
                start.await();
                return reader.read(segment.id(), segment.locations(), offset);
            }));
        }
        final List<CompletableFuture<LogRange>> futures = new ArrayList<>();
        for (final Future<CompletableFuture<LogRange>> call : calls) {
            futures.add(call.get());
        }
        callers.shutdown();

        assertEquals(1, gate.size(), "one read for eight misses in one range");
        assertEquals(1, reader.stats().loads());
        assertEquals(threads - 1, reader.stats().joins());
        gate.poll().run();

        final LogRange first = futures.get(0).get();
        for (final CompletableFuture<LogRange> future : futures) {
            assertSame(first, future.get(), "every caller shares the one range read");
        }
        assertBytes(segment.id(), first);
        assertEquals(1, fills.get(), "the sink fills the cache once");
        final long fileReads = reader.stats().fileReads();

        final HistoricalReader alone = reader(HistoricalReader.builder(channels()).rangeLength(16 << 10).threads(0));
        alone.read(segment.id(), segment.locations(), base).join();
        assertEquals(alone.stats().fileReads(), fileReads, "the file reads of one range, not of eight");
        assertEquals(0, reader.inFlightCount());
    }

    @Test
    @Timeout(10)
    void shouldDeduplicateOnItsOwnThreads() throws Exception {
        final RecoveredLog log = interleavedLog(4, 1500);
        final RecoveredSegment segment = longest(log);
        final LogFileChannels files = channels();
        final CountDownLatch joined = new CountDownLatch(1);
        final AtomicInteger opened = new AtomicInteger();
        final LogFileSource blocking = fileNumber -> {
            opened.incrementAndGet();
            try {
                assertTrue(joined.await(5, TimeUnit.SECONDS));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return files.channel(fileNumber);
        };
        final HistoricalReader reader = reader(HistoricalReader.builder(blocking).rangeLength(8 << 10).threads(2));
        final List<CompletableFuture<LogRange>> futures = new ArrayList<>();
        final long offset = segment.startOffset();
        for (int i = 0; i < 20; i++) {
            futures.add(reader.read(segment.id(), segment.locations(), offset + i));
        }
        futures.get(3).cancel(false);
        joined.countDown();
        final Set<LogRange> ranges = new HashSet<>();
        for (int i = 0; i < futures.size(); i++) {
            if (i != 3) {
                ranges.add(futures.get(i).get());
            }
        }
        assertEquals(1, ranges.size(), "cancelling one caller's future cancels nobody else's");
        assertBytes(segment.id(), ranges.iterator().next());
        assertEquals(1, reader.stats().loads());
        assertEquals(19, reader.stats().joins());
    }

    @Test
    void shouldFailWithLogCorruptedExceptionWhenARecordNoLongerValidates() throws Exception {
        final RecoveredLog log = interleavedLog(5, 800);
        final RecoveredSegment segment = longest(log);
        final LocationList list = new LocationList();
        segment.locations().locate(segment.startOffset(), segment.startOffset() + 1, list);
        final Path file = directory.resolve(io.streamcache.log.internal.LogFileDescriptor.fileName(list.fileNumber(0)));
        LogFiles.flipBit(file, list.position(0) + LogRecordDescriptor.HEADER_LENGTH + list.length(0) - 1, 7);
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).rangeLength(4 << 10).threads(1));

        final ExecutionException e = assertThrows(ExecutionException.class,
            () -> reader.read(segment.id(), segment.locations(), segment.startOffset()).get());

        final LogCorruptedException corrupted = assertInstanceOf(LogCorruptedException.class, e.getCause());
        assertEquals(file, corrupted.file());
        assertEquals(list.position(0), corrupted.position());
        assertTrue(corrupted.reason().contains("CRC"), corrupted.reason());
        assertEquals(1, reader.stats().failures());
        assertEquals(0, reader.inFlightCount(), "a failed read leaves no entry behind");
    }

    @Test
    void shouldFailForADeletedSegmentAndAfterClose() throws Exception {
        final RecoveredLog log = interleavedLog(6, 300);
        final RecoveredSegment segment = longest(log);
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).threads(0));
        final LocationIndex locations = segment.locations();
        locations.clear();
        final CompletableFuture<LogRange> deleted = reader.read(segment.id(), locations, 0);
        assertInstanceOf(IllegalStateException.class, assertThrows(ExecutionException.class, deleted::get).getCause());
        assertThrows(IllegalArgumentException.class, () -> reader.read(segment.id(), locations, -1));

        reader.close();
        final CompletableFuture<LogRange> closed = reader.read(segment.id(), LocationIndex.create(0, new LocationMemory()), 0);
        assertInstanceOf(CacheClosedException.class, assertThrows(ExecutionException.class, closed::get).getCause());
    }

    @Test
    void shouldKeepTheRangeWhenTheSinkFails() throws Exception {
        final RecoveredLog log = interleavedLog(7, 400);
        final RecoveredSegment segment = longest(log);
        final IllegalStateException failure = new IllegalStateException("cache full");
        final HistoricalReader reader = reader(HistoricalReader.builder(channels()).threads(0).sink((id, offset, data) -> {
            throw failure;
        }));

        final LogRange range = reader.read(segment.id(), segment.locations(), segment.startOffset()).get();

        assertSame(failure, range.fillFailure());
        assertBytes(segment.id(), range);
        assertEquals(1, reader.stats().fillFailures());
        assertNull(reader(HistoricalReader.builder(channels()).threads(0)).read(segment.id(), segment.locations(),
            segment.startOffset()).get().fillFailure());
    }

    @Test
    void shouldReopenAChannelClosedUnderIt() throws Exception {
        final RecoveredLog log = interleavedLog(8, 400);
        final RecoveredSegment segment = longest(log);
        final LogFileChannels files = channels();
        final HistoricalReader reader = reader(HistoricalReader.builder(files).threads(0));
        assertBytes(segment.id(), reader.read(segment.id(), segment.locations(), segment.startOffset()).get());
        final int open = files.openCount();
        for (long n = 1; n <= log.tailFileNumber(); n++) {
            final FileChannel channel = files.channel(n);
            channel.close();
        }
        assertBytes(segment.id(), reader.read(segment.id(), segment.locations(), segment.startOffset()).get());
        assertEquals(open, files.openCount());
    }

    // ------------------------------------------------------------------------------------------

    private RecoveredLog interleavedLog(final long seed, final int appends) throws IOException {
        final TestLogWriter writer = new TestLogWriter(directory, FILE_LENGTH, BATCH);
        final SplittableRandom random = new SplittableRandom(seed);
        for (int id = 1; id <= 5; id++) {
            writer.create(id, "segment-" + id);
        }
        for (int i = 0; i < appends; i++) {
            writer.data(1 + random.nextInt(5), 1 + random.nextInt(random.nextBoolean() ? 4000 : 200));
            if (random.nextInt(30) == 0) {
                writer.flush();
            }
        }
        writer.truncate(2, 3000);
        writer.close();
        final RecoveredLog log = LogRecovery.builder(directory).build().recover();
        assertTrue(log.tailFileNumber() > 2, "several files");
        return log;
    }

    private LogFileChannels channels() {
        final LogFileChannels channels = new LogFileChannels(directory);
        closeables.add(channels);
        return channels;
    }

    private HistoricalReader reader(final HistoricalReader.Builder builder) {
        final HistoricalReader reader = builder.build();
        closeables.add(0, reader);
        return reader;
    }

    private static RecoveredSegment longest(final RecoveredLog log) {
        return log.liveSegments().stream().max((a, b) -> Long.compare(a.length() - a.startOffset(), b.length() - b.startOffset()))
            .orElseThrow();
    }

    private static int filesSpanned(final LocationIndex locations, final LogRange range) {
        final LocationList list = new LocationList();
        locations.locate(range.offset(), range.endOffset(), list);
        final Set<Long> files = new HashSet<>();
        for (int i = 0; i < list.count(); i++) {
            files.add(list.fileNumber(i));
        }
        return files.size();
    }

    private static void assertBytes(final int segmentId, final LogRange range) {
        final ByteBuf data = range.data();
        assertEquals(range.length(), data.readableBytes());
        assertArrayEquals(TestLogWriter.pattern(segmentId, range.offset(), range.length()), ByteBufUtil.getBytes(data),
            "bytes of " + range);
    }
}
