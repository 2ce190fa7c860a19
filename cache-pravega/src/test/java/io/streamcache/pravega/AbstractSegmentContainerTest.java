package io.streamcache.pravega;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pravega.common.util.BufferView;
import io.pravega.common.util.ByteArraySegment;
import io.pravega.segmentstore.contracts.AttributeUpdateCollection;
import io.pravega.segmentstore.contracts.ReadResult;
import io.pravega.segmentstore.contracts.ReadResultEntry;
import io.pravega.segmentstore.contracts.ReadResultEntryType;
import io.pravega.segmentstore.contracts.SegmentType;
import io.pravega.segmentstore.contracts.StreamSegmentNotExistsException;
import io.pravega.segmentstore.contracts.StreamSegmentSealedException;
import io.pravega.segmentstore.contracts.StreamSegmentTruncatedException;
import io.pravega.segmentstore.contracts.tables.TableEntry;
import io.pravega.segmentstore.server.CacheManager;
import io.pravega.segmentstore.server.CachePolicy;
import io.pravega.segmentstore.server.SegmentContainer;
import io.pravega.segmentstore.server.attributes.AttributeIndexConfig;
import io.pravega.segmentstore.server.attributes.ContainerAttributeIndexFactoryImpl;
import io.pravega.segmentstore.server.containers.ContainerConfig;
import io.pravega.segmentstore.server.containers.StreamSegmentContainerFactory;
import io.pravega.segmentstore.server.logs.DurableLogConfig;
import io.pravega.segmentstore.server.logs.DurableLogFactory;
import io.pravega.segmentstore.server.reading.ContainerReadIndexFactory;
import io.pravega.segmentstore.server.reading.ReadIndexConfig;
import io.pravega.segmentstore.server.tables.ContainerTableExtension;
import io.pravega.segmentstore.server.tables.ContainerTableExtensionImpl;
import io.pravega.segmentstore.server.tables.TableExtensionConfig;
import io.pravega.segmentstore.server.writer.StorageWriterFactory;
import io.pravega.segmentstore.server.writer.WriterConfig;
import io.pravega.segmentstore.storage.cache.CacheStorage;
import io.pravega.segmentstore.storage.mocks.InMemoryDurableDataLogFactory;
import io.pravega.segmentstore.storage.mocks.InMemoryStorageFactory;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A whole Pravega segment container in-process, assembled from Pravega's public classes: its
 * durable log over the in-memory durable data log, its in-memory tier-2 storage, its storage
 * writer, attribute index, read index and table extension, the last three caching through one
 * Pravega {@link CacheManager} over the {@link CacheStorage} a subclass gives. Driven through
 * the container's segment API and the table extension's {@code TableStore} API from several
 * threads. Pravega 0.13's {@code ServiceBuilder} builds its cache manager over a
 * {@code DirectMemoryCache} in its private constructor, so the container is assembled here the
 * way its builder does it (docs/pravega.md gives the one-method patch that would let the builder
 * take our cache).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class AbstractSegmentContainerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int CONTAINER_ID = 0;
    private static final int THREADS = 4;

    private ScheduledExecutorService executor;
    private InMemoryDurableDataLogFactory dataLogFactory;
    private InMemoryStorageFactory storageFactory;
    private CacheStorage cacheStorage;
    private CacheManager cacheManager;
    private SegmentContainer container;

    protected abstract CacheStorage newStorage(long capacity);

    @BeforeEach
    void start() throws Exception {
        executor = Executors.newScheduledThreadPool(6);
        dataLogFactory = new InMemoryDurableDataLogFactory(executor);
        storageFactory = new InMemoryStorageFactory(executor);
        cacheStorage = newStorage(256L << 20);
        cacheManager = new CacheManager(new CachePolicy(256L << 20, Duration.ofSeconds(60), Duration.ofSeconds(1)), cacheStorage, executor);
        final DurableLogConfig logConfig = DurableLogConfig.builder()
            .with(DurableLogConfig.CHECKPOINT_MIN_COMMIT_COUNT, 10)
            .with(DurableLogConfig.CHECKPOINT_COMMIT_COUNT, 100)
            .with(DurableLogConfig.CHECKPOINT_TOTAL_COMMIT_LENGTH, 10L << 20)
            .with(DurableLogConfig.START_RETRY_DELAY_MILLIS, 20)
            .build();
        final WriterConfig writerConfig = WriterConfig.builder()
            .with(WriterConfig.FLUSH_THRESHOLD_BYTES, 1)
            .with(WriterConfig.FLUSH_THRESHOLD_MILLIS, 25L)
            .with(WriterConfig.MIN_READ_TIMEOUT_MILLIS, 10L)
            .with(WriterConfig.MAX_READ_TIMEOUT_MILLIS, 250L)
            .build();
        final StreamSegmentContainerFactory factory = new StreamSegmentContainerFactory(
            ContainerConfig.builder()
                .with(ContainerConfig.SEGMENT_METADATA_EXPIRATION_SECONDS, 600)
                .with(ContainerConfig.STORAGE_SNAPSHOT_TIMEOUT_SECONDS, 60)
                .build(),
            new DurableLogFactory(logConfig, dataLogFactory, executor),
            new ContainerReadIndexFactory(ReadIndexConfig.builder().with(ReadIndexConfig.STORAGE_READ_ALIGNMENT, 1024).build(),
                cacheManager, executor),
            new ContainerAttributeIndexFactoryImpl(AttributeIndexConfig.builder().build(), cacheManager, executor),
            new StorageWriterFactory(writerConfig, executor),
            storageFactory,
            (segmentContainer, e) -> Collections.singletonMap(ContainerTableExtension.class,
                new ContainerTableExtensionImpl(TableExtensionConfig.builder().build(), segmentContainer, cacheManager, e)),
            executor);
        container = factory.createStreamSegmentContainer(CONTAINER_ID);
        container.startAsync().awaitRunning(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.close();
        }
        if (dataLogFactory != null) {
            dataLogFactory.close();
        }
        if (storageFactory != null) {
            storageFactory.close();
        }
        if (cacheManager != null) {
            cacheManager.close(); // closes the cache storage
        }
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    private static <T> T join(final CompletableFuture<T> future) throws Exception {
        return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Reads exactly {@code length} bytes from {@code offset}, waiting for tail data if need be. */
    private byte[] read(final String segment, final long offset, final int length) throws Exception {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ReadResult result = join(container.read(segment, offset, length, TIMEOUT))) {
            while (result.hasNext() && out.size() < length) {
                final ReadResultEntry entry = result.next();
                if (entry.getType() == ReadResultEntryType.EndOfStreamSegment) {
                    break;
                }
                entry.requestContent(TIMEOUT);
                join(entry.getContent()).copyTo(out);
            }
        }
        return out.toByteArray();
    }

    private long append(final String segment, final byte[] data) throws Exception {
        return join(container.append(segment, new ByteArraySegment(data), new AttributeUpdateCollection(), TIMEOUT));
    }

    @Test
    void shouldServeStreamSegmentsFromManyThreads() throws Exception {
        final ExecutorService clients = Executors.newFixedThreadPool(THREADS);
        try {
            final List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int client = t;
                results.add(clients.submit(() -> useStreamSegment("scope/stream/segment-" + client, client)));
            }
            long stored = 0;
            for (final Future<Long> result : results) {
                stored += result.get();
            }
            assertTrue(stored > 0);
        } finally {
            clients.shutdownNow();
        }
    }

    /**
     * Create, append (with a tail read waiting), read across the segment, seal, truncate, delete.
     *
     * @return the bytes the segment held before it was deleted.
     */
    private long useStreamSegment(final String segment, final long seed) throws Exception {
        join(container.createStreamSegment(segment, SegmentType.STREAM_SEGMENT, Collections.emptyList(), TIMEOUT));
        final Random random = new Random(seed);
        final ByteArrayOutputStream contents = new ByteArrayOutputStream();
        for (int i = 0; i < 150; i++) {
            final byte[] data = new byte[1 + random.nextInt(i % 25 == 0 ? 300_000 : 5000)];
            random.nextBytes(data);
            if (i % 30 == 0) {
                // A tail read issued before the append it waits for.
                final long tail = contents.size();
                final CompletableFuture<byte[]> waiting = CompletableFuture.supplyAsync(() -> {
                    try {
                        return read(segment, tail, data.length);
                    } catch (final Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                append(segment, data);
                assertArrayEquals(data, join(waiting), segment + " tail read at " + tail);
            } else {
                append(segment, data);
            }
            contents.write(data);
        }
        final byte[] expected = contents.toByteArray();
        assertArrayEquals(expected, read(segment, 0, expected.length), segment);
        for (int i = 0; i < 20; i++) {
            final int from = random.nextInt(expected.length);
            final int length = 1 + random.nextInt(Math.min(200_000, expected.length - from));
            final byte[] part = new byte[length];
            System.arraycopy(expected, from, part, 0, length);
            assertArrayEquals(part, read(segment, from, length), segment + " at " + from);
        }
        assertEquals(expected.length, (long)join(container.sealStreamSegment(segment, TIMEOUT)));
        final ExecutionException sealed = assertThrows(ExecutionException.class, () -> append(segment, new byte[1]));
        assertTrue(sealed.getCause() instanceof StreamSegmentSealedException, "cause=" + sealed.getCause());
        final int truncateAt = expected.length / 2;
        join(container.truncateStreamSegment(segment, truncateAt, TIMEOUT));
        final ExecutionException truncated = assertThrows(ExecutionException.class, () -> read(segment, 0, 10));
        assertTrue(truncated.getCause() instanceof StreamSegmentTruncatedException, "cause=" + truncated.getCause());
        final byte[] rest = new byte[expected.length - truncateAt];
        System.arraycopy(expected, truncateAt, rest, 0, rest.length);
        assertArrayEquals(rest, read(segment, truncateAt, rest.length), segment + " after truncation");
        join(container.deleteStreamSegment(segment, TIMEOUT));
        final ExecutionException deleted = assertThrows(ExecutionException.class,
            () -> join(container.getStreamSegmentInfo(segment, TIMEOUT)));
        assertTrue(deleted.getCause() instanceof StreamSegmentNotExistsException, "cause=" + deleted.getCause());
        return expected.length;
    }

    @Test
    void shouldCacheAppendsInTheGivenCacheStorage() throws Exception {
        final String segment = "scope/stream/cached";
        join(container.createStreamSegment(segment, SegmentType.STREAM_SEGMENT, Collections.emptyList(), TIMEOUT));
        final byte[] data = AbstractCacheStorageTest.bytes(1, 1 << 20);
        append(segment, data);
        // The container acknowledges an append once it is durable; its read index takes it in just after.
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (cacheStorage.getState().getStoredBytes() < data.length && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(cacheStorage.getState().getStoredBytes() >= data.length,
            "the container's read index should hold the append in the cache: " + cacheStorage.getState());
        assertArrayEquals(data, read(segment, 0, data.length));
    }

    @Test
    void shouldServeTableSegmentsFromManyThreads() throws Exception {
        final ContainerTableExtension tables = container.getExtension(ContainerTableExtension.class);
        final ExecutorService clients = Executors.newFixedThreadPool(THREADS);
        try {
            final List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final String table = "scope/_tables/table-" + t;
                results.add(clients.submit(() -> {
                    useTable(tables, table);
                    return null;
                }));
            }
            for (final Future<?> result : results) {
                result.get();
            }
        } finally {
            clients.shutdownNow();
        }
    }

    private static BufferView text(final String value) {
        return new ByteArraySegment(value.getBytes(StandardCharsets.UTF_8));
    }

    private void useTable(final ContainerTableExtension tables, final String table) throws Exception {
        join(tables.createSegment(table, SegmentType.TABLE_SEGMENT_HASH, TIMEOUT));
        final int keys = 300;
        for (int batch = 0; batch < keys; batch += 50) {
            final List<TableEntry> entries = new ArrayList<>();
            for (int k = batch; k < batch + 50; k++) {
                entries.add(TableEntry.unversioned(text("key-" + k), text(table + "-value-" + k)));
            }
            join(tables.put(table, entries, TIMEOUT));
        }
        final List<BufferView> lookup = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            lookup.add(text("key-" + k));
        }
        final List<TableEntry> found = join(tables.get(table, lookup, TIMEOUT));
        for (int k = 0; k < keys; k++) {
            assertEquals(table + "-value-" + k, new String(found.get(k).getValue().getCopy(), StandardCharsets.UTF_8));
        }
        final List<io.pravega.segmentstore.contracts.tables.TableKey> removed = new ArrayList<>();
        for (int k = 0; k < keys; k += 3) {
            removed.add(io.pravega.segmentstore.contracts.tables.TableKey.unversioned(text("key-" + k)));
        }
        join(tables.remove(table, removed, TIMEOUT));
        final List<TableEntry> after = join(tables.get(table, lookup, TIMEOUT));
        for (int k = 0; k < keys; k++) {
            if (k % 3 == 0) {
                assertNull(after.get(k), table + " key-" + k + " was removed");
            } else {
                assertEquals(table + "-value-" + k, new String(after.get(k).getValue().getCopy(), StandardCharsets.UTF_8));
            }
        }
        join(tables.deleteSegment(table, false, TIMEOUT));
    }
}
