package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentExistsException;
import io.streamcache.segmentstore.SegmentNameException;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link SegmentStore#createAsync}: a creation that rides with the segment's first append. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CreateAsyncTest {
    @TempDir
    Path directory;

    private SegmentStore store(final BlockCache cache) {
        return SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build()).build();
    }

    @Test
    void shouldMakeTheCreationDurableNoLaterThanTheFirstAcknowledgedAppend() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            try (SegmentStore store = store(cache)) {
                final List<CompletableFuture<Void>> creations = new ArrayList<>();
                final List<CompletableFuture<Long>> appends = new ArrayList<>();
                for (int s = 0; s < 50; s++) {
                    creations.add(store.createAsync("q-" + s));
                    assertTrue(store.exists("q-" + s), "exists at once");
                    appends.add(store.appendAsync("q-" + s, TestLogs.data(s, 0, 100)));
                }
                for (int s = 0; s < 50; s++) {
                    assertEquals(0L, appends.get(s).get(30, TimeUnit.SECONDS));
                    assertTrue(creations.get(s).isDone() && !creations.get(s).isCompletedExceptionally(),
                        "an acknowledged append implies its segment's creation is durable: q-" + s);
                }
            }
            try (SegmentStore reopened = store(cache)) {
                assertEquals(50, reopened.segmentCount());
                for (int s = 0; s < 50; s++) {
                    assertEquals(100, reopened.info("q-" + s).length());
                    final byte[] got = new byte[100];
                    try (var result = reopened.readThrough("q-" + s, 0, 100).get(30, TimeUnit.SECONDS)) {
                        result.data().getBytes(0, got);
                    }
                    assertArrayEquals(TestLogs.bytes(s, 0, 100), got, "q-" + s);
                }
            }
        }
    }

    @Test
    void shouldFailTheFutureOfAnExistingSegmentAndChangeNothing() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = store(cache)) {
            store.create("s");
            store.append("s", TestLogs.data(1, 0, 10));
            final CompletableFuture<Void> again = store.createAsync("s");
            final CompletionException e = assertThrows(CompletionException.class, again::join);
            assertInstanceOf(SegmentExistsException.class, e.getCause());
            assertEquals(10, store.info("s").length(), "untouched");
        }
    }

    @Test
    void shouldRefuseABadNameAtOnceAndLogNothing() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = store(cache)) {
            final long requests = store.log().orElseThrow().writerStats().requests();
            assertThrows(SegmentNameException.class, () -> store.createAsync(""));
            assertThrows(NullPointerException.class, () -> store.createAsync(null));
            assertEquals(requests, store.log().orElseThrow().writerStats().requests(), "nothing logged");
            assertEquals(0, store.segmentCount());
        }
    }

    @Test
    void shouldCreateAtOnceWithoutALog() throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20);
             SegmentStore store = SegmentStore.builder(cache).cacheManager(TestSegments.manualManager(cache)).build()) {
            final CompletableFuture<Void> created = store.createAsync("m");
            assertTrue(created.isDone() && !created.isCompletedExceptionally());
            assertTrue(store.exists("m"));
            assertInstanceOf(SegmentExistsException.class, assertThrows(CompletionException.class, () -> store.createAsync("m").join())
                .getCause());
        }
    }
}
