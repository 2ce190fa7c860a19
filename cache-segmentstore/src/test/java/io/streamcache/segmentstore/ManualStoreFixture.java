package io.streamcache.segmentstore;

import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The store most segment tests run against: a 1 MiB test cache, index entries of at most
 * {@link #MAX_ENTRY} bytes, a manual cache manager (no thread, no generations of its own) whose
 * policy evicts exactly the offsets a test selects, and one segment {@code "s"}. Each test gets a
 * fresh one; it is closed after the test.
 */
abstract class ManualStoreFixture {
    /** Longest index entry of the store. */
    static final int MAX_ENTRY = 1000;

    BlockCache cache;
    OffsetSelectingPolicy policy;
    SegmentStore store;

    @BeforeEach
    void openStore() {
        cache = TestSegments.cache(1 << 20);
        policy = new OffsetSelectingPolicy();
        store = SegmentStore.builder(cache)
            .maxIndexEntryLength(MAX_ENTRY)
            .cacheManager(TestSegments.manualManager(cache).policy(policy))
            .build();
        store.create("s");
    }

    @AfterEach
    void closeStore() {
        store.close();
        cache.close();
    }
}
