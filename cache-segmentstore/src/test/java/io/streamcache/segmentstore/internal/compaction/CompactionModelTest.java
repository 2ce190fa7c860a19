package io.streamcache.segmentstore.internal.compaction;

import io.streamcache.segmentstore.StoreParts;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.testing.Closer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random creates, appends, truncates and deletes with compaction passes between them and
 * reopens of the store: after each reopen every segment's bytes equal a reference, and the
 * files stay within live data plus the slack.
 */
@Timeout(300)
class CompactionModelTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    /** A segment of the reference: its bytes are the pattern of {@code seed} in [start, length). */
    private static final class Ref {
        final long seed;
        long start;
        long length;

        Ref(final long seed) {
            this.seed = seed;
        }
    }

    private SegmentStore open(final BlockCache cache) {
        final SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(CompactionTest.log(directory))
            .compaction(CompactionConfig.builder().background(false).slackLength(CompactionTest.FILE).bytesPerSecond(1L << 40).build())
            .build();
        return store;
    }

    @Test
    void shouldKeepEverySegmentsBytesThroughCompactionsAndReopens() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            run(seed, directory.resolve("run-" + seed));
        }
    }

    private void run(final long seed, final Path path) throws Exception {
        directory = path;
        final SplittableRandom random = new SplittableRandom(seed);
        final BlockCache cache = TestSegments.cache(16 << 20);
        closer.add(cache);
        SegmentStore store = open(cache);
        final Map<String, Ref> model = new HashMap<>();
        long seeds = seed * 1000;
        long compacted = 0;
        long copied = 0;
        for (int step = 0; step < 1500; step++) {
            final int op = random.nextInt(100);
            final String name = "s" + random.nextInt(10);
            final Ref ref = model.get(name);
            if (ref == null) {
                if (op < 60) {
                    store.create(name);
                    model.put(name, new Ref(++seeds));
                }
            } else if (op < 75) {
                final int length = 1 + random.nextInt(random.nextInt(10) == 0 ? 6000 : 400);
                store.append(name, TestSegments.buffer(ref.seed, ref.length, length));
                ref.length += length;
            } else if (op < 85) {
                final long offset = ref.start + random.nextLong(ref.length - ref.start + 1);
                store.truncate(name, offset);
                ref.start = Math.max(ref.start, offset);
            } else if (op < 87) {
                store.delete(name);
                model.remove(name);
            } else if (op < 97) {
                final Compactor compactor = StoreParts.compactor(store);
                compactor.runOnce();
                assertEquals(0, compactor.failures(), () -> "seed " + seed + ": " + compactor.lastFailure());
            } else {
                compacted += StoreParts.compactor(store).filesCompacted();
                copied += StoreParts.compactor(store).recordsCopied();
                store.close();
                store = open(cache);
                check(store, model, seed);
            }
        }
        StoreParts.compactor(store).runOnce();
        compacted += StoreParts.compactor(store).filesCompacted();
        copied += StoreParts.compactor(store).recordsCopied();
        assertTrue(compacted > 10 && copied > 10, "seed " + seed + ": compacted=" + compacted + " copied=" + copied);
        final long live = CompactionTest.liveBytes(store);
        final long files = CompactionTest.logBytes(path);
        store.close();
        store = open(cache);
        check(store, model, seed);
        assertTrue(files <= live + CompactionTest.FILE + 3 * CompactionTest.FILE
                || files <= (long) (live / CompactionPlanner.MAX_LIVE_FRACTION) + 3 * CompactionTest.FILE,
            "seed " + seed + ": files=" + files + " live=" + live);
        store.close();
    }

    private static void check(final SegmentStore store, final Map<String, Ref> model, final long seed) throws Exception {
        assertEquals(model.keySet(), store.segmentNames(), "seed " + seed);
        for (final Map.Entry<String, Ref> entry : model.entrySet()) {
            final Ref ref = entry.getValue();
            final SegmentInfo info = store.info(entry.getKey());
            assertEquals(ref.length, info.length(), "seed " + seed + " " + entry.getKey());
            assertEquals(ref.start, info.startOffset(), "seed " + seed + " " + entry.getKey());
            assertArrayEquals(TestSegments.pattern(ref.seed, ref.start, (int) (ref.length - ref.start)),
                CompactionTest.readAll(store, entry.getKey()), "seed " + seed + " " + entry.getKey());
        }
    }
}
