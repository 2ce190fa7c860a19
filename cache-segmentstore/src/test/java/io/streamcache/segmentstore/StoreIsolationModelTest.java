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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A randomized model of a broker on a small cache: appenders on their own segments, tail readers
 * and catch-up readers (from offset 0, through the log) that hold and release their results at
 * random, each under a budget of its own, all at once. The reference is the pattern every byte
 * was appended with ({@link TestSegments#pattern}) and the lengths the appends were acknowledged
 * at: every byte every reader gets is checked against it, every append must be acknowledged,
 * every reader must reach the end, and once every result is released every budget is back at
 * zero. It asserts progress (everything completes), never a time.
 */
@Timeout(180)
class StoreIsolationModelTest {
    private static final int SEGMENTS = 4;
    private static final int APPENDS_PER_SEGMENT = 600;

    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    @Test
    void shouldKeepEveryByteAndMakeProgressWhileReadersHoldAndReleaseAtRandom() throws Exception {
        for (final long seed : new long[] {1, 2, 3}) {
            run(seed, directory.resolve("run-" + seed));
        }
    }

    private void run(final long seed, final Path logDirectory) throws Exception {
        final BlockCache cache = BlockCache.builder().capacity(2 << 20).blockLength(4096).bufferLength(128 * 1024)
            .fullRetryTimeout(Duration.ofSeconds(60)).registerMBean(false).build();
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(16 * 1024)
            .log(LogConfig.builder(logDirectory).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0).preWrite(false)
                .maxDelay(Duration.ofMillis(1)).build())
            .readThroughRangeLength(32 * 1024)
            .name("model-" + seed)
            .build();
        closer.add(store);
        final AtomicLongArray acknowledged = new AtomicLongArray(SEGMENTS);
        for (int s = 0; s < SEGMENTS; s++) {
            store.create("s" + s);
        }
        final ExecutorService threads = Executors.newFixedThreadPool(2 * SEGMENTS + 2);
        try {
            final List<Future<?>> tasks = new ArrayList<>();
            for (int s = 0; s < SEGMENTS; s++) {
                final int segment = s;
                tasks.add(threads.submit(() -> append(store, segment, new Random(seed * 31 + segment), acknowledged)));
                tasks.add(threads.submit(() -> read(store, segment, new Random(seed * 57 + segment), acknowledged, false)));
            }
            for (int r = 0; r < 2; r++) {
                final int segment = r;
                tasks.add(threads.submit(() -> read(store, segment, new Random(seed * 91 + segment), acknowledged, true)));
            }
            for (final Future<?> task : tasks) {
                task.get(150, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertEquals(0, store.readBudget().used(), "every result released gave its bytes back: " + store.isolationStats());
        assertEquals(0, store.readBudget().waitingReads());
    }

    /** Appends random lengths, several in flight, and records each acknowledged end. */
    private static Void append(final SegmentStore store, final int segment, final Random random, final AtomicLongArray acknowledged)
        throws Exception {
        final String name = "s" + segment;
        long at = 0;
        final ArrayDeque<CompletableFuture<Long>> inFlight = new ArrayDeque<>();
        final ArrayDeque<Long> ends = new ArrayDeque<>();
        for (int i = 0; i < APPENDS_PER_SEGMENT; i++) {
            final int length = 1 + random.nextInt(random.nextInt(8) == 0 ? 16 * 1024 : 1024);
            inFlight.add(store.appendAsync(name, at, TestSegments.buffer(segment, at, length)));
            at += length;
            ends.add(at);
            while (inFlight.size() > 1 + random.nextInt(8)) {
                inFlight.poll().get(60, TimeUnit.SECONDS);
                acknowledged.set(segment, ends.poll());
            }
        }
        while (!inFlight.isEmpty()) {
            inFlight.poll().get(60, TimeUnit.SECONDS);
            acknowledged.set(segment, ends.poll());
        }
        store.seal(name);
        return null;
    }

    /**
     * Reads a segment from 0 to its sealed end under a budget of its own, holding up to a random
     * number of results before releasing some at random. A read that does not complete soon is
     * waiting for a budget: the reader releases one held result and waits on, so that readers
     * that all hold never wait for each other for ever (a broker's channel drains likewise).
     */
    private static Void read(final SegmentStore store, final int segment, final Random random, final AtomicLongArray acknowledged,
                             final boolean catchUp) throws Exception {
        final String name = "s" + segment;
        final ReadBudget budget = ReadBudget.waiting((catchUp ? "catch-up-" : "tail-") + name, 64 * 1024 + random.nextInt(256 * 1024));
        final ArrayDeque<ReadResult> held = new ArrayDeque<>();
        long at = 0;
        try {
            if (catchUp) {
                // A catch-up reader starts once some of the segment went by.
                while (acknowledged.get(segment) < 256 * 1024 && !store.info(name).sealed()) {
                    Thread.sleep(1);
                }
            }
            while (true) {
                final int maxLength = 1 + random.nextInt(48 * 1024);
                final CompletableFuture<ReadResult> future = catchUp
                    ? store.readThrough(name, at, maxLength, budget)
                    : store.readAsync(name, at, maxLength, Duration.ofSeconds(30), budget);
                ReadResult result = null;
                while (result == null) {
                    try {
                        result = future.get(20, TimeUnit.MILLISECONDS);
                    } catch (final TimeoutException e) {
                        if (!held.isEmpty()) {
                            held.poll().close();
                        }
                    }
                }
                if (result.length() > 0) {
                    assertTrue(result.nextOffset() <= Math.max(acknowledged.get(segment), store.info(name).length()),
                        "no byte before it is durable");
                    assertArrayEquals(TestSegments.pattern(segment, at, result.length()), TestSegments.bytes(result),
                        name + " at " + at);
                    at = result.nextOffset();
                }
                final ReadStatus status = result.status();
                if (random.nextInt(3) == 0) {
                    result.close();
                } else {
                    held.add(result);
                }
                while (held.size() > random.nextInt(6)) {
                    held.poll().close();
                }
                if (status == ReadStatus.SEALED_END) {
                    break;
                }
                assertTrue(status != ReadStatus.PAST_END, "never past the end: " + name + " at " + at);
                if (status == ReadStatus.TIMED_OUT || result.length() == 0 && catchUp) {
                    Thread.onSpinWait();
                }
            }
            assertEquals(acknowledged.get(segment), at, name + " read to its end");
        } finally {
            held.forEach(ReadResult::close);
        }
        assertEquals(0, budget.used(), budget.toString());
        return null;
    }
}
