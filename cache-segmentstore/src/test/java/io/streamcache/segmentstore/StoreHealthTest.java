package io.streamcache.segmentstore;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.management.ObjectName;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentStore#health()} on real stores driven into each condition: a failed disk, a file
 * system below the reserve, a cache whose data cannot be evicted, a spent read budget, a closed
 * store; and the MBean that shows it.
 */
@Timeout(60)
class StoreHealthTest {
    @TempDir
    Path directory;

    @RegisterExtension
    final Closer closer = new Closer();

    private BlockCache cache(final long capacity) {
        return closer.add(BlockCache.builder().capacity(capacity).blockLength(TestSegments.BLOCK_LENGTH)
            .bufferLength(TestSegments.BUFFER_LENGTH).fullRetryTimeout(Duration.ofMillis(20)).registerMBean(false).build());
    }

    private LogConfig.Builder log() {
        return LogConfig.builder(directory.resolve("log")).fileLength(1 << 20).batchLength(64 * 1024).spareFiles(0).preWrite(false)
            .maxDelay(Duration.ofMillis(1)).registerMBeans(false);
    }

    @Test
    void shouldBeHealthyAndShowItInTheMBean() throws Exception {
        final BlockCache cache = cache(256 * 1024);
        final SegmentStore store = closer.add(SegmentStore.builder(cache).name("health-ok")
            .cacheManager(TestSegments.manualManager(cache)).log(log().build()).build());
        store.create("s");
        store.append("s", TestSegments.buffer(1, 0, 1000));
        assertEquals(StoreHealth.HEALTHY, store.health());
        assertTrue(store.health().serving());
        final ObjectName name = new ObjectName("io.streamcache:type=Health,name=" + ObjectName.quote("health-ok"));
        assertEquals("HEALTHY", ManagementFactory.getPlatformMBeanServer().getAttribute(name, "State"));
        assertEquals("HEALTHY", ManagementFactory.getPlatformMBeanServer().getAttribute(name, "Summary"));
        assertArrayEquals(new String[0], (String[]) ManagementFactory.getPlatformMBeanServer().getAttribute(name, "Reasons"));
        store.close();
        assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(name), "unregistered at close");
        assertEquals(StoreHealth.State.FAILED, store.health().state());
        assertTrue(store.health().has(StoreHealth.Reason.CLOSED));
    }

    @Test
    void shouldBeDegradedWhenTheDiskIsBelowTheReserve() {
        final SegmentStore store = closer.add(SegmentStore.builder(cache(256 * 1024)).name("health-disk")
            .log(log().build()).diskReserve(Long.MAX_VALUE).build());
        final StoreHealth health = store.health();
        assertEquals(StoreHealth.State.DEGRADED, health.state());
        assertEquals(List.of(StoreHealth.Reason.DISK_BELOW_RESERVE), health.issues().stream().map(StoreHealth.Issue::reason).toList());
        assertTrue(health.summary().startsWith("DEGRADED: DISK_BELOW_RESERVE (usable="), health.summary());
        assertTrue(health.serving());
    }

    @Test
    void shouldBeFailedWhileTheLogIsFailed() throws Exception {
        final FailingForces files = new FailingForces();
        final SegmentStore store = closer.add(SegmentStore.builder(cache(256 * 1024)).name("health-log")
            .log(log().fileFactory(files).retryInterval(Duration.ofHours(1)).build()).build());
        store.create("s");
        files.fail = true;
        assertThrows(ExecutionException.class, () -> store.appendAsync("s", TestSegments.buffer(1, 0, 100)).get(30, TimeUnit.SECONDS));
        final StoreHealth failed = store.health();
        assertEquals(StoreHealth.State.FAILED, failed.state(), failed.summary());
        assertTrue(failed.has(StoreHealth.Reason.LOG_FAILED), failed.summary());
        assertFalse(failed.serving());
        files.fail = false;
        store.log().orElseThrow().recover().get(30, TimeUnit.SECONDS);
        assertEquals(StoreHealth.HEALTHY, store.health(), "healthy again once the log recovered");
    }

    @Test
    void shouldBeDegradedWhenAppendsFindNoRoomAndClearAfterTheWindow() throws Exception {
        // Appends that are not durable yet cannot be evicted: once they fill the cache, the next
        // append finds no room after the full handler's pass.
        final BlockCache cache = cache(4 * TestSegments.BUFFER_LENGTH);
        final SegmentStore store = closer.add(SegmentStore.builder(cache).name("health-full").appendsDurable(false)
            .cacheManager(TestSegments.manualManager(cache)).healthWindow(Duration.ofMillis(50)).build());
        store.create("s");
        long at = 0;
        final CacheFullException full;
        while (true) {
            try {
                store.append("s", TestSegments.buffer(1, at, 200));
                at += 200;
            } catch (final CacheFullException e) {
                full = e;
                break;
            }
        }
        assertTrue(full.getMessage().contains("no room"), full.getMessage());
        final StoreHealth health = store.health();
        assertEquals(StoreHealth.State.DEGRADED, health.state(), health.summary());
        assertTrue(health.has(StoreHealth.Reason.CACHE_FULL), health.summary());
        // Once no append was refused for two windows the issue clears (the window moves on polls).
        store.markDurable("s", at);
        store.cacheManager().evictDownTo(0.0);
        StoreHealth later = store.health();
        for (int i = 0; i < 1000 && later.has(StoreHealth.Reason.CACHE_FULL); i++) {
            Thread.sleep(10);
            later = store.health();
        }
        assertEquals(StoreHealth.HEALTHY, later, later.summary());
    }

    @Test
    void shouldBeDegradedWhenTheReadBudgetIsSpent() throws Exception {
        final BlockCache cache = cache(64 * TestSegments.BUFFER_LENGTH);
        final SegmentStore store = closer.add(SegmentStore.builder(cache).name("health-budget")
            .cacheManager(TestSegments.manualManager(cache)).readBudget(4096).readBudgetFailFast(true).build());
        store.create("s");
        store.append("s", TestSegments.buffer(1, 0, 16 * 1024));
        final List<ReadResult> held = new ArrayList<>();
        long at = 0;
        while (store.readBudget().used() < store.readBudget().limit()) {
            final ReadResult result = store.readAsync("s", at, 1024, Duration.ofSeconds(10)).get(30, TimeUnit.SECONDS);
            held.add(result);
            at = result.nextOffset();
        }
        assertEquals(StoreHealth.HEALTHY, store.health(), "a budget used up but refusing no one is healthy");
        final long from = at;
        assertThrows(ExecutionException.class, () -> store.readAsync("s", from, 1024, Duration.ofSeconds(10)).get(30, TimeUnit.SECONDS));
        final StoreHealth health = store.health();
        assertEquals(List.of(StoreHealth.Reason.BUDGET_EXHAUSTED), health.issues().stream().map(StoreHealth.Issue::reason).toList(),
            health.summary());
        held.forEach(ReadResult::close);
    }

    @Test
    void shouldReportTheDerivedSizesAndTheLimitsAtBuild() {
        final BlockCache cache = cache(256 * 1024);
        final SegmentStore store = closer.add(SegmentStore.builder(cache).name("health-report")
            .cacheManager(TestSegments.manualManager(cache)).log(log().build()).build());
        final String report = store.startupReport();
        for (final String figure : new String[] {"store health-report built: cache ", " capacity=" + cache.capacity() + " bytes",
            "readBudget=" + store.readBudget().limit() + " (0.25 of the cache)", "fileLength=1048576", "batchLength=65536",
            "threads: writer 1", "directMemoryLimit=", "MaxDirectMemorySize=", "log disk usable=", "reserve=2097152"}) {
            assertTrue(report.contains(figure), figure + " in " + report);
        }
    }

    @Test
    void shouldRefuseBadSettingsAndInconsistentValues() {
        final SegmentStore.Builder builder = SegmentStore.builder(cache(64 * 1024));
        assertThrows(CacheConfigurationException.class, () -> builder.diskReserve(-1));
        assertThrows(CacheConfigurationException.class, () -> builder.healthWindow(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new StoreHealth(StoreHealth.State.HEALTHY,
            List.of(new StoreHealth.Issue(StoreHealth.Reason.LOG_FAILED, StoreHealth.State.FAILED, "x"))));
        assertThrows(IllegalArgumentException.class, () -> new StoreHealth.Issue(StoreHealth.Reason.CLOSED, StoreHealth.State.HEALTHY, "x"));
        final StoreHealth recovering = StoreHealth.recovering("scanning 3 ledgers");
        assertEquals(StoreHealth.State.DEGRADED, recovering.state());
        assertEquals("DEGRADED: RECOVERY_IN_PROGRESS (scanning 3 ledgers)", recovering.summary());
    }

    /** Forces fail while it is set, as on a disk error; otherwise a real file. */
    private static final class FailingForces implements LogFileFactory {
        private final LogFileFactory files =
            io.streamcache.log.internal.FileChannelLogFile.factory(io.streamcache.log.DirectIoMode.OFF);
        volatile boolean fail;

        @Override
        public LogFile open(final Path path) throws IOException {
            final LogFile file = files.open(path);
            return new LogFile() {
                @Override
                public void write(final ByteBuffer source, final long position) throws IOException {
                    file.write(source, position);
                }

                @Override
                public int read(final ByteBuffer destination, final long position) throws IOException {
                    return file.read(destination, position);
                }

                @Override
                public void force() throws IOException {
                    if (fail) {
                        throw new IOException("Input/output error");
                    }
                    file.force();
                }

                @Override
                public long length() throws IOException {
                    return file.length();
                }

                @Override
                public void setLength(final long length) throws IOException {
                    file.setLength(length);
                }

                @Override
                public Path path() {
                    return file.path();
                }

                @Override
                public void close() throws IOException {
                    file.close();
                }
            };
        }
    }
}
