package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.CacheClosedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentNotFoundException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.SegmentTruncatedException;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Randomized races between reads that go to the log ({@code readThrough}, {@code readAsync})
 * and deletes, truncations, recreations, evictions and the store's close. Every read must end
 * in bytes equal to what was appended at that offset, in a status that is not an empty
 * NOT_CACHED (with a log every byte a live segment holds can be read back, so an empty
 * NOT_CACHED is a retry the store owed), or in an exception {@code docs/errors.md} names for the
 * race: {@link SegmentNotFoundException}, {@link SegmentTruncatedException}, and
 * {@link CacheClosedException} once the close began. Never an {@link IllegalStateException}.
 * The work is bounded by counts (rounds, mutations), not by time; outcomes are asserted, never
 * timing.
 */
@Timeout(180)
class ReadRaceTest {
    private static final int SEGMENTS = 4;
    private static final int APPEND = 3000;
    private static final int APPENDS = 40;
    private static final int READERS = 3;
    private static final int ROUNDS = 8;
    private static final int MUTATIONS = 150;

    @TempDir
    Path root;

    /** Content is a function of the segment's name and offset only, so a recreated segment holds the same bytes. */
    private static long seed(final String name) {
        return name.hashCode();
    }

    private static void fill(final SegmentStore store, final String name, final int appends) {
        final List<CompletableFuture<Long>> futures = new ArrayList<>();
        for (int i = 0; i < appends; i++) {
            futures.add(store.appendAsync(name, TestSegments.buffer(seed(name), (long) i * APPEND, APPEND)));
        }
        futures.forEach(CompletableFuture::join);
    }

    private static void evict(final SegmentStore store) {
        for (int i = 0; i < 2; i++) {
            store.cacheManager().evictDownTo(0.0);
        }
    }

    /** What the readers saw that they must not. */
    private static final class Outcomes {
        final AtomicLong reads = new AtomicLong();
        final AtomicLong withData = new AtomicLong();
        final AtomicLong documented = new AtomicLong();
        final AtomicLong emptyNotCached = new AtomicLong();
        final Map<String, Throwable> wrong = new ConcurrentHashMap<>();
    }

    private static Throwable unwrap(final Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static void readOnce(final SegmentStore store, final SplittableRandom random, final AtomicBoolean closing,
                                 final Outcomes outcomes) throws InterruptedException {
        final String name = "s" + random.nextInt(SEGMENTS);
        final long offset = random.nextLong((long) APPEND * APPENDS);
        final int maxLength = 1 + random.nextInt(3 * APPEND);
        outcomes.reads.incrementAndGet();
        try {
            final CompletableFuture<ReadResult> future = random.nextBoolean() ? store.readThrough(name, offset, maxLength)
                : store.readAsync(name, offset, maxLength, Duration.ZERO);
            try (ReadResult result = future.get(30, TimeUnit.SECONDS)) {
                if (result.length() > 0) {
                    assertArrayEquals(TestSegments.pattern(seed(name), offset, result.length()), TestSegments.bytes(result),
                        () -> "wrong bytes of " + name + " at " + offset);
                    outcomes.withData.incrementAndGet();
                } else if (result.status() == ReadStatus.NOT_CACHED) {
                    outcomes.emptyNotCached.incrementAndGet();
                }
            }
        } catch (final ExecutionException | RuntimeException e) {
            final Throwable cause = unwrap(e);
            if (cause instanceof SegmentNotFoundException || cause instanceof SegmentTruncatedException
                || cause instanceof CacheClosedException && closing.get()) {
                outcomes.documented.incrementAndGet();
            } else {
                outcomes.wrong.putIfAbsent(cause.getClass().getName() + ": " + String.valueOf(cause.getMessage()).replaceAll("[0-9]+", "N"), cause);
            }
        } catch (final java.util.concurrent.TimeoutException e) {
            outcomes.wrong.putIfAbsent("a read did not complete in 30 s", e);
        }
    }

    private void round(final int round, final Outcomes outcomes) throws Exception {
        final SplittableRandom random = new SplittableRandom(round * 7919L);
        final Path directory = root.resolve("log" + round);
        final BlockCache cache = TestSegments.cache(16 << 20);
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).fileLength(256 * 1024).build())
            .readThroughRangeLength(16 * 1024)
            .build();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicBoolean closing = new AtomicBoolean();
        final List<Thread> readers = new ArrayList<>();
        try {
            for (int s = 0; s < SEGMENTS; s++) {
                store.create("s" + s);
                fill(store, "s" + s, APPENDS);
            }
            evict(store);
            for (int r = 0; r < READERS; r++) {
                final SplittableRandom own = random.split();
                final Thread reader = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            readOnce(store, own, closing, outcomes);
                        }
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (final Throwable e) {
                        outcomes.wrong.putIfAbsent("reader died: " + e, e);
                    }
                }, "race-reader-" + r);
                reader.start();
                readers.add(reader);
            }
            for (int m = 0; m < MUTATIONS; m++) {
                final String name = "s" + random.nextInt(SEGMENTS);
                try {
                    switch (random.nextInt(4)) {
                        case 0 -> store.truncate(name, random.nextLong(store.info(name).length() + 1));
                        case 1 -> {
                            store.delete(name);
                            store.create(name);
                            fill(store, name, 1 + random.nextInt(APPENDS));
                        }
                        case 2 -> evict(store);
                        default -> Thread.onSpinWait();
                    }
                } catch (final IllegalArgumentException | SegmentNotFoundException e) {
                    // A truncation past a length that a recreation just shortened: the mutator's own race.
                }
                if (m % 10 == 0) {
                    Thread.sleep(1);
                }
            }
            if (round % 2 == 1) {
                // Close under the readers: they must see CacheClosedException (or the data).
                closing.set(true);
                store.close();
            }
        } finally {
            Thread.sleep(5);
            stop.set(true);
            for (final Thread reader : readers) {
                reader.join(TimeUnit.SECONDS.toMillis(60));
            }
            closing.set(true);
            store.close();
            cache.close();
        }
    }

    @Test
    void shouldEndEveryReadRacingDeleteTruncateOrCloseInDataOrADocumentedException() throws Exception {
        final Outcomes outcomes = new Outcomes();
        for (int round = 0; round < ROUNDS; round++) {
            round(round, outcomes);
        }
        final String summary = "reads=" + outcomes.reads + " withData=" + outcomes.withData + " documented=" + outcomes.documented
            + " emptyNotCached=" + outcomes.emptyNotCached;
        outcomes.wrong.values().stream().findFirst().ifPresent(Throwable::printStackTrace);
        assertTrue(outcomes.wrong.isEmpty(), () -> summary + ", undocumented outcomes: " + outcomes.wrong.keySet());
        assertEquals(0, outcomes.emptyNotCached.get(), () -> "reads that ended NOT_CACHED with no data: " + summary);
        assertTrue(outcomes.withData.get() > 0 && outcomes.documented.get() > 0, () -> "the races never happened: " + summary);
    }
}
