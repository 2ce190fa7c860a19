package io.streamcache.pravega;

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
import java.time.Duration;
import java.util.Collections;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A whole Pravega segment container in-process, assembled from Pravega's public classes the way
 * its {@code ServiceBuilder} assembles one: the durable log over Pravega's in-memory durable
 * data log, its in-memory tier-2 storage, its storage writer, attribute index, read index and
 * table extension, the last three caching through one Pravega {@link CacheManager} over the
 * given {@link CacheStorage}. Pravega 0.13's {@code ServiceBuilder} builds its cache manager
 * over a {@code DirectMemoryCache} in its private constructor, hence this class (docs/pravega.md
 * gives the small patch that would let the builder take another cache). Used by the container
 * tests and benchmarks; not thread-safe to build or close, the container itself is.
 */
public final class InProcessContainer implements AutoCloseable {
    private static final int CONTAINER_ID = 0;

    private final ScheduledExecutorService executor;
    private final InMemoryDurableDataLogFactory dataLogFactory;
    private final InMemoryStorageFactory storageFactory;
    private final CacheStorage cacheStorage;
    private final CacheManager cacheManager;
    private final SegmentContainer container;

    /**
     * Builds and starts the container; its cache manager owns (and closes) {@code cacheStorage}.
     *
     * @param cachePolicy the cache manager's policy: its size should be the storage's capacity.
     */
    public InProcessContainer(final CacheStorage cacheStorage, final CachePolicy cachePolicy, final int threads) throws Exception {
        this.executor = Executors.newScheduledThreadPool(threads);
        this.cacheStorage = cacheStorage;
        this.dataLogFactory = new InMemoryDurableDataLogFactory(executor);
        this.storageFactory = new InMemoryStorageFactory(executor);
        this.cacheManager = new CacheManager(cachePolicy, cacheStorage, executor);
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
        // Pravega's builder starts its cache manager: its periodic pass is what evicts.
        cacheManager.startAsync().awaitRunning(30, TimeUnit.SECONDS);
        this.container = factory.createStreamSegmentContainer(CONTAINER_ID);
        container.startAsync().awaitRunning(30, TimeUnit.SECONDS);
    }

    /**
     * @return a policy whose size is {@code capacity}, with Pravega's default utilization targets.
     */
    public static CachePolicy policy(final long capacity) {
        return new CachePolicy(capacity, Duration.ofSeconds(60), Duration.ofSeconds(1));
    }

    public SegmentContainer container() {
        return container;
    }

    public CacheStorage cacheStorage() {
        return cacheStorage;
    }

    @Override
    public void close() {
        container.close();
        dataLogFactory.close();
        storageFactory.close();
        cacheManager.close(); // closes the cache storage
        executor.shutdownNow();
    }
}
