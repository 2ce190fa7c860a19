package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationList;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.streamcache.segmentstore.TestSegments.buffer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The location indexes' off-heap memory through a store's life: held while the store is open,
 * rebuilt by recovery in the reopened store's own memory (which then holds every index), and
 * given back when the store closes, so that an index a caller still holds finds nothing.
 */
class LocationMemoryStoreTest {
    @TempDir
    Path directory;

    @Test
    void shouldHoldTheIndexesOffHeapAndGiveThemBackAtClose() throws Exception {
        try (BlockCache cache = TestSegments.cache(4 << 20)) {
            final LogConfig log = LogConfig.builder(directory).fileLength(16L << 20).preWrite(false).spareFiles(0).build();
            final SegmentStore store = SegmentStore.builder(cache).log(log).build();
            for (int s = 0; s < 50; s++) {
                store.create("s" + s);
                for (int i = 0; i < 10; i++) {
                    store.append("s" + s, buffer(s, 1000L * i, 1000));
                }
            }
            assertTrue(store.locationMemoryBytes() > 0);
            final LocationIndex held = store.locations("s7");
            assertEquals(10, held.count());
            store.close();
            assertEquals(0, store.locationMemoryBytes(), "the memory is given back at close");
            assertTrue(held.isCleared());
            assertFalse(held.locate(0, 10_000, new LocationList()));

            final SegmentStore reopened = SegmentStore.builder(cache).log(log).build();
            try {
                final long bytes = reopened.locationMemoryBytes();
                assertTrue(bytes > 0, "recovery built the indexes in the store's memory");
                final LocationIndex recovered = reopened.locations("s7");
                assertNotNull(recovered);
                assertEquals(10, recovered.count());
                final LocationList list = new LocationList();
                assertTrue(recovered.locate(0, 10_000, list));
                assertEquals(10, list.count());
            } finally {
                reopened.close();
            }
            assertEquals(0, reopened.locationMemoryBytes());
        }
    }
}
