package io.streamcache.pravega;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.contracts.ReadResult;
import io.pravega.segmentstore.contracts.ReadResultEntry;
import io.pravega.segmentstore.contracts.ReadResultEntryType;
import io.pravega.segmentstore.contracts.StreamSegmentTruncatedException;
import io.pravega.segmentstore.server.CacheManager;
import io.pravega.segmentstore.server.CachePolicy;
import io.pravega.segmentstore.server.ReadIndex;
import io.pravega.segmentstore.server.UpdateableContainerMetadata;
import io.pravega.segmentstore.server.UpdateableSegmentMetadata;
import io.pravega.segmentstore.server.containers.StreamSegmentContainerMetadata;
import io.pravega.segmentstore.server.reading.ContainerReadIndexFactory;
import io.pravega.segmentstore.server.reading.ReadIndexConfig;
import io.pravega.segmentstore.storage.SegmentHandle;
import io.pravega.segmentstore.storage.Storage;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.mocks.InMemoryStorageFactory;
import io.pravega.shared.NameUtils;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pravega's own read index ({@code ContainerReadIndex}, built by its
 * {@link ContainerReadIndexFactory} over its {@link CacheManager}) on a {@link CacheStorage}:
 * appends, reads across cache entries, tail reads, eviction and reads back from tier-2 storage,
 * transaction merges, truncation, deletion, a full cache under Pravega's eviction. Run on
 * Pravega's {@code DirectMemoryCache} and on ours by the subclasses.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class AbstractReadIndexTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int CONTAINER_ID = 0;

    private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(3);
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private UpdateableContainerMetadata metadata;
    private Storage storage;
    private CacheStorage cacheStorage;
    private EvictingCacheManager cacheManager;
    private ReadIndex readIndex;

    protected abstract CacheStorage newStorage(long capacity);

    /**
     * Pravega's cache manager with its cache-policy pass callable from the test (it is protected:
     * Pravega runs it on a timer and from the cache-full callback).
     */
    private static final class EvictingCacheManager extends CacheManager {
        EvictingCacheManager(final CachePolicy policy, final CacheStorage storage, final ScheduledExecutorService executor) {
            super(policy, storage, executor);
        }

        boolean evict() {
            return applyCachePolicy();
        }
    }

    private void start(final long cacheCapacity, final CachePolicy policy) {
        metadata = new StreamSegmentContainerMetadata(CONTAINER_ID, 1000);
        storage = InMemoryStorageFactory.newStorage(executor);
        storage.initialize(1);
        cacheStorage = newStorage(cacheCapacity);
        cacheManager = new EvictingCacheManager(policy, cacheStorage, executor);
        final ContainerReadIndexFactory factory = new ContainerReadIndexFactory(ReadIndexConfig.builder().build(), cacheManager, executor);
        readIndex = factory.createReadIndex(metadata, storage);
        toClose.add(factory);
    }

    @AfterEach
    void stop() throws Exception {
        if (readIndex != null) {
            readIndex.close();
            // The read index frees its entries in the background once closed.
            final long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (cacheStorage.getState().getStoredBytes() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, cacheStorage.getState().getStoredBytes(), "the read index leaked cache entries");
            cacheManager.close(); // closes the cache storage
            storage.close();
        }
        for (final AutoCloseable closeable : toClose) {
            closeable.close();
        }
        executor.shutdownNow();
    }

    private UpdateableSegmentMetadata segment(final long id, final String name) {
        final UpdateableSegmentMetadata segment = metadata.mapStreamSegmentId(name, id);
        segment.setLength(0);
        segment.setStorageLength(0);
        storage.create(name, TIMEOUT).join();
        return segment;
    }

    private void append(final UpdateableSegmentMetadata segment, final byte[] data) throws Exception {
        final long offset = segment.getLength();
        segment.setLength(offset + data.length);
        readIndex.append(segment.getId(), offset, new ByteArraySegment(data));
    }

    /** Writes the segment's bytes up to its length to tier-2 and says so in the metadata (what Pravega's writer does). */
    private void flush(final UpdateableSegmentMetadata segment, final byte[] contents) {
        final long from = segment.getStorageLength();
        final SegmentHandle handle = storage.openWrite(segment.getName()).join();
        storage.write(handle, from, new ByteArrayInputStream(contents, (int)from, (int)(segment.getLength() - from)),
            (int)(segment.getLength() - from), TIMEOUT).join();
        segment.setStorageLength(segment.getLength());
    }

    private byte[] read(final long segmentId, final long offset, final int length, final Set<ReadResultEntryType> types)
        throws Exception {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ReadResult result = readIndex.read(segmentId, offset, length, TIMEOUT)) {
            while (result.hasNext()) {
                final ReadResultEntry entry = result.next();
                types.add(entry.getType());
                if (entry.getType() == ReadResultEntryType.EndOfStreamSegment) {
                    break;
                }
                entry.requestContent(TIMEOUT);
                entry.getContent().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).copyTo(out);
            }
        }
        return out.toByteArray();
    }

    private static byte[] slice(final byte[] data, final int from, final int to) {
        final byte[] part = new byte[to - from];
        System.arraycopy(data, from, part, 0, part.length);
        return part;
    }

    @Test
    void shouldReadAppendsBackAcrossCacheEntries() throws Exception {
        start(32L << 20, CachePolicy.INFINITE);
        final UpdateableSegmentMetadata segment = segment(1, "scope/stream/segment");
        final Random random = new Random(1);
        final ByteArrayOutputStream contents = new ByteArrayOutputStream();
        for (int i = 0; i < 300; i++) {
            final byte[] data = new byte[1 + random.nextInt(i % 10 == 0 ? 200_000 : 3000)];
            random.nextBytes(data);
            append(segment, data);
            contents.write(data);
        }
        final byte[] expected = contents.toByteArray();
        final Set<ReadResultEntryType> types = EnumSet.noneOf(ReadResultEntryType.class);
        assertArrayEquals(expected, read(1, 0, expected.length, types));
        assertEquals(EnumSet.of(ReadResultEntryType.Cache), types);
        for (int i = 0; i < 50; i++) {
            final int from = random.nextInt(expected.length);
            final int to = from + random.nextInt(expected.length - from) + 1;
            assertArrayEquals(slice(expected, from, to), read(1, from, to - from, types), "range " + from + "-" + to);
            assertArrayEquals(slice(expected, from, to), readIndex.readDirect(1, from, to - from).getCopy());
        }
        assertEquals(expected.length, cacheStorage.getState().getStoredBytes());
    }

    @Test
    void shouldCompleteATailReadWhenTheDataIsAppended() throws Exception {
        start(8L << 20, CachePolicy.INFINITE);
        final UpdateableSegmentMetadata segment = segment(1, "scope/stream/tail");
        append(segment, new byte[100]);
        try (ReadResult result = readIndex.read(1, 100, 5000, TIMEOUT)) {
            final ReadResultEntry entry = result.next();
            assertEquals(ReadResultEntryType.Future, entry.getType());
            entry.requestContent(TIMEOUT);
            final CompletableFuture<BufferView> content = entry.getContent();
            assertFalse(content.isDone());
            final byte[] data = AbstractCacheStorageTest.bytes(7, 3000);
            append(segment, data);
            readIndex.triggerFutureReads(List.of(1L));
            assertArrayEquals(data, content.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).getCopy());
        }
    }

    @Test
    void shouldReadEvictedDataBackFromStorage() throws Exception {
        start(32L << 20, new CachePolicy(1L << 20, Duration.ofMillis(100), Duration.ofMillis(10)));
        final UpdateableSegmentMetadata segment = segment(1, "scope/stream/evicted");
        final byte[] data = AbstractCacheStorageTest.bytes(8, 3 << 20);
        for (int offset = 0; offset < data.length; offset += 100_000) {
            append(segment, slice(data, offset, Math.min(data.length, offset + 100_000)));
        }
        flush(segment, data);
        final long before = cacheStorage.getState().getStoredBytes();
        for (int i = 0; i < 20 && cacheStorage.getState().getStoredBytes() >= before; i++) {
            cacheManager.evict();
        }
        assertTrue(cacheStorage.getState().getStoredBytes() < before, "Pravega's cache manager evicted nothing");
        final Set<ReadResultEntryType> types = EnumSet.noneOf(ReadResultEntryType.class);
        assertArrayEquals(data, read(1, 0, data.length, types));
        assertTrue(types.contains(ReadResultEntryType.Storage), "types=" + types);
    }

    @Test
    void shouldReadMergedTransactionsFromTheParent() throws Exception {
        start(16L << 20, CachePolicy.INFINITE);
        final UpdateableSegmentMetadata parent = segment(1, "scope/stream/parent");
        final byte[] head = AbstractCacheStorageTest.bytes(9, 5000);
        append(parent, head);
        final ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.write(head);
        for (int t = 0; t < 3; t++) {
            final long id = 10 + t;
            final UpdateableSegmentMetadata transaction = segment(id, NameUtils.getTransactionNameFromId(parent.getName(), new UUID(0, t)));
            final byte[] data = AbstractCacheStorageTest.bytes(id, 7000 + t * 3000);
            append(transaction, data);
            transaction.markSealed();
            final long mergeOffset = parent.getLength();
            parent.setLength(mergeOffset + transaction.getLength());
            readIndex.beginMerge(1, mergeOffset, id);
            transaction.markMerged();
            expected.write(data);
            // Readable from the parent between beginMerge and completeMerge too.
            assertArrayEquals(expected.toByteArray(), read(1, 0, (int)parent.getLength(), EnumSet.noneOf(ReadResultEntryType.class)));
            transaction.markDeleted();
            readIndex.completeMerge(1, id);
        }
        assertArrayEquals(expected.toByteArray(), read(1, 0, (int)parent.getLength(), EnumSet.noneOf(ReadResultEntryType.class)));
        assertEquals(expected.size(), cacheStorage.getState().getStoredBytes());
    }

    @Test
    void shouldRefuseTruncatedOffsets() throws Exception {
        start(8L << 20, CachePolicy.INFINITE);
        final UpdateableSegmentMetadata segment = segment(1, "scope/stream/truncated");
        final byte[] data = AbstractCacheStorageTest.bytes(10, 20_000);
        append(segment, data);
        flush(segment, data);
        segment.setStartOffset(12_000);
        try (ReadResult result = readIndex.read(1, 100, 10, TIMEOUT)) {
            final ReadResultEntry entry = result.next();
            assertEquals(ReadResultEntryType.Truncated, entry.getType());
            entry.requestContent(TIMEOUT);
            final ExecutionException e = assertThrows(ExecutionException.class, () -> entry.getContent().get());
            assertTrue(e.getCause() instanceof StreamSegmentTruncatedException, "cause=" + e.getCause());
        }
        assertArrayEquals(slice(data, 12_000, 20_000), read(1, 12_000, 8000, EnumSet.noneOf(ReadResultEntryType.class)));
    }

    @Test
    void shouldFreeTheCacheEntriesOfADeletedSegment() throws Exception {
        start(8L << 20, CachePolicy.INFINITE);
        final UpdateableSegmentMetadata kept = segment(1, "scope/stream/kept");
        final UpdateableSegmentMetadata deleted = segment(2, "scope/stream/deleted");
        append(kept, new byte[3000]);
        append(deleted, new byte[50_000]);
        assertEquals(53_000, cacheStorage.getState().getStoredBytes());
        deleted.markDeleted();
        readIndex.cleanup(List.of(2L));
        // Pravega's read index may free a closed segment's entries on its executor: wait for
        // it (bounded) rather than read the figure the instant cleanup returns.
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (cacheStorage.getState().getStoredBytes() != 3000 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(3000, cacheStorage.getState().getStoredBytes());
    }

    @Test
    void shouldKeepAppendingIntoAFullCacheThroughPravegasEviction() throws Exception {
        final long capacity = 4L << 20;
        start(capacity, new CachePolicy(capacity, 0.5, 0.9, Duration.ofMillis(100), Duration.ofMillis(10)));
        final UpdateableSegmentMetadata segment = segment(1, "scope/stream/full");
        final ByteArrayOutputStream contents = new ByteArrayOutputStream();
        final Random random = new Random(11);
        while (contents.size() < 4 * capacity) {
            final byte[] data = new byte[20_000 + random.nextInt(40_000)];
            random.nextBytes(data);
            append(segment, data);
            contents.write(data);
            flush(segment, contents.toByteArray());
        }
        assertTrue(cacheStorage.getState().getStoredBytes() <= capacity);
        final byte[] expected = contents.toByteArray();
        final int tail = 1 << 20;
        assertArrayEquals(slice(expected, expected.length - tail, expected.length),
            read(1, expected.length - tail, tail, EnumSet.noneOf(ReadResultEntryType.class)));
        final Set<ReadResultEntryType> types = EnumSet.noneOf(ReadResultEntryType.class);
        assertArrayEquals(slice(expected, 0, 2 << 20), read(1, 0, 2 << 20, types));
        assertTrue(types.contains(ReadResultEntryType.Storage), "types=" + types);
    }
}
