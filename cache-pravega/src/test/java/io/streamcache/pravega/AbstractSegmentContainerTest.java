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
import io.pravega.segmentstore.server.SegmentContainer;
import io.pravega.segmentstore.server.tables.ContainerTableExtension;
import io.pravega.segmentstore.storage.cache.CacheStorage;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A whole Pravega segment container in-process ({@link InProcessContainer}: durable log,
 * tier-2, writer, attribute index, read index and table extension, caching through one Pravega
 * cache manager over the {@link CacheStorage} a subclass gives), driven through the container's
 * segment API and the table extension's {@code TableStore} API from several threads.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class AbstractSegmentContainerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int THREADS = 4;

    private InProcessContainer process;
    private CacheStorage cacheStorage;
    private SegmentContainer container;

    protected abstract CacheStorage newStorage(long capacity);

    @BeforeEach
    void start() throws Exception {
        cacheStorage = newStorage(256L << 20);
        process = new InProcessContainer(cacheStorage, InProcessContainer.policy(256L << 20), 6);
        container = process.container();
    }

    @AfterEach
    void stop() {
        if (process != null) {
            process.close();
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
