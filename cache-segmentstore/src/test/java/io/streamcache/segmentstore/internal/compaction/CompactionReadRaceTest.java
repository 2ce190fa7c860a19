package io.streamcache.segmentstore.internal.compaction;

import io.streamcache.segmentstore.StoreParts;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.compaction.RetentionPolicy;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.internal.LogRequest;
import io.streamcache.log.internal.history.HistoricalReader;
import io.streamcache.log.internal.history.LogFileChannels;
import io.streamcache.log.internal.history.LogFileSource;
import io.streamcache.log.internal.history.LogRange;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationList;
import io.streamcache.log.testing.Closer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads and writes racing compaction: a historical read that located a record in a file which
 * compaction then retired reads the copy; producers and catch-up readers run beside the
 * background compactor; the writer's copy and retire requests.
 */
@Timeout(120)
class CompactionReadRaceTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private SegmentStore store(final CompactionConfig compaction) {
        final BlockCache cache = TestSegments.cache(16 << 20);
        closer.add(cache);
        final SegmentStore.Builder builder = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(CompactionTest.log(directory));
        if (compaction != null) {
            builder.compaction(compaction);
        }
        final SegmentStore store = builder.build();
        closer.add(store);
        return store;
    }

    @Test
    void shouldReadTheCopyWhenTheFileItLocatedWasRetiredMeanwhile() throws Exception {
        final SegmentStore store = store(null);
        store.create("a");
        store.append("a", TestSegments.buffer(1, 0, 3000));
        store.create("pad");
        for (int i = 0; i < 40; i++) {
            store.append("pad", TestSegments.buffer(2, i * 3000L, 3000));
        }
        final LocationIndex index = StoreParts.locations(store, "a");
        final LocationList list = new LocationList();
        index.locate(0, 3000, list);
        final long oldFile = list.fileNumber(0);
        assertTrue(oldFile < StoreParts.logWriter(store).currentFileNumber());
        final int id = CompactionTest.segmentId(store, "a");
        final AtomicBoolean raced = new AtomicBoolean();
        final LogFileChannels channels = new LogFileChannels(directory);
        closer.add(channels);
        // Between the read's locate and its file read: the bytes are copied, the file retired.
        final LogFileSource source = new LogFileSource() {
            @Override
            public FileChannel channel(final long fileNumber) throws IOException {
                if (fileNumber == oldFile && raced.compareAndSet(false, true)) {
                    StoreParts.logWriter(store).copy(id, 0, TestSegments.buffer(1, 0, 3000)).join();
                    StoreParts.logWriter(store).retireFile(oldFile).join();
                    throw new NoSuchFileException(channels.path(fileNumber).toString());
                }
                return channels.channel(fileNumber);
            }

            @Override
            public Path path(final long fileNumber) {
                return channels.path(fileNumber);
            }
        };
        final HistoricalReader reader = HistoricalReader.builder(source).threads(0).build();
        closer.add(reader);
        final LogRange range = reader.read(id, index, 0).get(10, TimeUnit.SECONDS);
        assertTrue(raced.get());
        final byte[] bytes = new byte[range.length()];
        range.data().getBytes(range.data().readerIndex(), bytes);
        assertArrayEquals(TestSegments.pattern(1, 0, 3000), bytes);
        assertEquals(0, reader.stats().failures());
    }

    @Test
    void shouldSkipCopiesOfDeadBytesAndRefuseToRetireTheCurrentFile() throws IOException {
        final SegmentStore store = store(null);
        store.create("a");
        store.append("a", TestSegments.buffer(1, 0, 1000));
        final int id = CompactionTest.segmentId(store, "a");
        store.truncate("a", 1000);
        final long[] before = StoreParts.logWriter(store).copyCounts();
        final LogRequest copy = StoreParts.logWriter(store).copy(id, 0, TestSegments.buffer(1, 0, 1000));
        assertEquals(0L, copy.join());
        final long[] after = StoreParts.logWriter(store).copyCounts();
        assertEquals(before[0], after[0], "nothing written");
        assertEquals(before[2] + 1, after[2], "skipped as dead");
        final LogRequest retire = StoreParts.logWriter(store).retireFile(StoreParts.logWriter(store).currentFileNumber());
        final Exception e = assertThrows(Exception.class, retire::join);
        assertTrue(e.getCause() instanceof IllegalArgumentException && e.getCause().getMessage().contains("current file"),
            e.toString());
        assertFalse(StoreParts.logWriter(store).isFailed());
        assertThrows(IllegalArgumentException.class, () -> StoreParts.logWriter(store).copy(id, 0,
            io.netty.buffer.Unpooled.buffer(StoreParts.logWriter(store).maxAppendLength() + 1).writeZero(StoreParts.logWriter(store).maxAppendLength() + 1)));
    }

    @Test
    void shouldServeEveryByteWhileProducersAppendAndTheCompactorRuns() throws Exception {
        final SegmentStore store = store(CompactionConfig.builder().interval(Duration.ofMillis(2)).slackLength(CompactionTest.FILE)
            .bytesPerSecond(1L << 30).build());
        store.create("idle");
        store.append("idle", TestSegments.buffer(9, 0, 5000));
        for (int s = 0; s < 4; s++) {
            store.create("busy-" + s);
            StoreParts.compactor(store).retention("busy-" + s, RetentionPolicy.ofLength(8192));
        }
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
            final String name = "busy-" + s;
            final int seed = s;
            threads.add(new Thread(() -> {
                try {
                    long offset = 0;
                    while (!stop.get()) {
                        final int length = 100 + ThreadLocalRandom.current().nextInt(3000);
                        store.append(name, TestSegments.buffer(seed, offset, length));
                        offset += length;
                    }
                } catch (final Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        threads.add(new Thread(() -> {
            try {
                while (!stop.get()) {
                    store.cacheManager().evictDownTo(0.0);
                    assertArrayEquals(TestSegments.pattern(9, 0, 5000), CompactionTest.readAll(store, "idle"));
                }
            } catch (final Throwable t) {
                failure.compareAndSet(null, t);
            }
        }));
        threads.forEach(Thread::start);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (StoreParts.compactor(store).filesCompacted() < 30 && failure.get() == null && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        stop.set(true);
        for (final Thread thread : threads) {
            thread.join();
        }
        assertNull(failure.get(), () -> "failed: " + failure.get());
        assertTrue(StoreParts.compactor(store).filesCompacted() >= 30, "compacted " + StoreParts.compactor(store).filesCompacted());
        assertEquals(0, StoreParts.compactor(store).failures(), () -> "" + StoreParts.compactor(store).lastFailure());
        try (ReadResult result = store.readThrough("idle", 0, 5000).get(10, TimeUnit.SECONDS)) {
            assertEquals(5000, result.length());
        }
    }
}
