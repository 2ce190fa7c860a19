package io.streamcache.core.memory;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMX;
import javax.management.ObjectName;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The memory monitor against a fake memory source whose figures the test sets, ticks driven by
 * hand: shrinks below the low watermark, holds between the watermarks, grows back above the
 * high one, in steps and within bounds; both limits (container and direct memory); counters,
 * MBean, bad settings; and the system source's cgroup usage.
 */
class MemoryMonitorTest {
    private static final int BUFFER = 64 << 10;
    private static final long MB = 1 << 20;

    @TempDir
    Path root;

    /** A source whose figures the test sets. */
    private static final class FakeSource implements MemorySource {
        volatile long limit = 100 * MB;
        volatile long used = 50 * MB;
        volatile long directLimit = MemoryReading.UNKNOWN;
        volatile long directUsed = MemoryReading.UNKNOWN;
        volatile boolean fail;

        @Override
        public MemoryReading read() {
            if (fail) {
                throw new IllegalStateException("cannot read");
            }
            return new MemoryReading(limit, used, used, directLimit, directUsed);
        }
    }

    private static BlockCache cache(final int buffers) {
        return BlockCache.builder().bufferLength(BUFFER).blockLength(1024).capacity((long)buffers * BUFFER)
            .maxCapacity((long)buffers * BUFFER).registerMBean(false).build();
    }

    @Test
    void shrinksBelowTheLowWatermarkHoldsBetweenAndGrowsBackAboveTheHigh() {
        final FakeSource source = new FakeSource();
        try (BlockCache cache = cache(64);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ZERO)
                 .registerMBean(false).watermarks(0.10, 0.20).maxStep(1 * MB).build()) {
            assertEquals(64L * BUFFER, monitor.tick(), "50 % headroom: nothing to do at the maximum");
            // 5 MB of headroom under 100 MB: below 10 MB, shrink towards 20 MB, by 1 MB a tick.
            source.used = 95 * MB;
            assertEquals(64L * BUFFER - MB, monitor.tick());
            assertEquals(64L * BUFFER - 2 * MB, monitor.tick());
            assertEquals(2, monitor.stats().shrinks());
            assertEquals(2 * MB, monitor.stats().shrunkBytes());
            assertEquals(5 * MB, monitor.stats().headroom());
            // The process gave memory back: 15 MB headroom, between the watermarks: hold.
            source.used = 85 * MB;
            assertEquals(64L * BUFFER - 2 * MB, monitor.tick());
            assertEquals(64L * BUFFER - 2 * MB, monitor.tick());
            // 30 MB headroom: grow by what is above 20 MB, at most a step, up to the maximum.
            source.used = 70 * MB;
            assertEquals(64L * BUFFER - MB, monitor.tick());
            assertEquals(64L * BUFFER, monitor.tick());
            assertEquals(64L * BUFFER, monitor.tick(), "at the maximum");
            final MemoryMonitorStats stats = monitor.stats();
            assertEquals(2, stats.grows());
            assertEquals(2 * MB, stats.grownBytes());
            assertEquals(8, stats.ticks());
            assertEquals(100 * MB, stats.limit());
            assertEquals(70 * MB, stats.used());
        }
    }

    @Test
    void aShrinkStopsAtTheMinimumAndAGrowAtTheMaximumOfTheBounds() {
        final FakeSource source = new FakeSource();
        try (BlockCache cache = cache(32);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ZERO)
                 .registerMBean(false).bounds(8L * BUFFER, 24L * BUFFER).maxStep(64 * MB).build()) {
            source.used = 99 * MB;
            assertEquals(8L * BUFFER, monitor.tick(), "down to the minimum, not below");
            assertEquals(8L * BUFFER, monitor.tick());
            assertEquals(1, monitor.stats().shrinks(), "at the minimum a tick does not count a shrink");
            source.used = 0;
            assertEquals(24L * BUFFER, monitor.tick(), "up to the maximum of the bounds, not the cache's");
        }
    }

    @Test
    void directMemoryIsWatchedToo() {
        final FakeSource source = new FakeSource();
        source.limit = MemorySource.MemoryReading.UNKNOWN;
        source.used = MemorySource.MemoryReading.UNKNOWN;
        source.directLimit = 10 * MB;
        source.directUsed = 9_800_000;
        try (BlockCache cache = cache(64);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ZERO)
                 .registerMBean(false).build()) {
            // Headroom ~0.2 MB under a 10 MB limit: shrink towards 2 MB of headroom, in whole buffers.
            final long after = monitor.tick();
            final long shrunk = 64L * BUFFER - after;
            assertTrue(shrunk >= 2 * MB - (10 * MB - 9_800_000) && shrunk < 2 * MB - (10 * MB - 9_800_000) + BUFFER, "shrunk " + shrunk);
            assertEquals(0, shrunk % BUFFER);
        }
    }

    @Test
    void aShrinkOfAPlainCacheStopsAtBuffersInUseAndSaysSo() {
        final FakeSource source = new FakeSource();
        try (BlockCache cache = cache(8);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ZERO)
                 .registerMBean(false).build()) {
            for (int i = 0; i < 8 * 63; i++) {
                cache.insert(Unpooled.wrappedBuffer(new byte[1000]));
            }
            source.used = 99 * MB;
            assertEquals(8L * BUFFER, monitor.tick(), "every buffer holds entries the cache cannot move");
            assertEquals(1, monitor.stats().shrinks());
            assertEquals(0, monitor.stats().shrunkBytes());
        }
    }

    @Test
    void aFailedReadingIsCountedAndChangesNothing() {
        final FakeSource source = new FakeSource();
        try (BlockCache cache = cache(8);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ZERO)
                 .registerMBean(false).build()) {
            source.fail = true;
            assertEquals(8L * BUFFER, monitor.tick());
            assertEquals(1, monitor.stats().failures());
        }
    }

    @Test
    @Timeout(60)
    void theThreadTicksAndTheMBeanReads() throws Exception {
        final FakeSource source = new FakeSource();
        source.used = 99 * MB;
        final List<Thread> threads = new ArrayList<>();
        final StreamcacheThreads factory = (role, owner, task) -> {
            assertEquals(StreamcacheThreads.Role.MEMORY_MONITOR, role);
            final Thread thread = StreamcacheThreads.defaults().newThread(role, owner, task);
            threads.add(thread);
            return thread;
        };
        try (BlockCache cache = cache(32);
             MemoryMonitor monitor = MemoryMonitor.builder(source, cache.resizeTarget(0)).period(Duration.ofMillis(5))
                 .threads(factory).name("monitor-test").bounds(16L * BUFFER, 32L * BUFFER).build()) {
            final MemoryMonitorMXBean bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
                new ObjectName("io.streamcache:type=MemoryMonitor,name=\"monitor-test\""), MemoryMonitorMXBean.class);
            assertEquals("monitor-test", monitor.name());
            // The monitor publishes its stats after the resize returns: wait for both, or a loaded
            // machine sees the capacity shrunk before the shrink is counted.
            while (cache.capacity() > 16L * BUFFER || bean.getShrinks() < 1) {
                Thread.sleep(1);
            }
            assertEquals(1, threads.size());
            assertEquals(100 * MB, bean.getLimit());
            assertEquals(16L * BUFFER, bean.tick());
        }
        assertTrue(!threads.get(0).isAlive(), "close stops the thread");
    }

    @Test
    void badSettingsAreRefused() {
        try (BlockCache cache = cache(8)) {
            final ResizeTarget target = cache.resizeTarget(0);
            final FakeSource source = new FakeSource();
            assertThrows(CacheConfigurationException.class, () -> MemoryMonitor.builder(source, target).watermarks(0.3, 0.2).build());
            assertThrows(CacheConfigurationException.class, () -> MemoryMonitor.builder(source, target).watermarks(0, 0.2).build());
            assertThrows(CacheConfigurationException.class, () -> MemoryMonitor.builder(source, target).maxStep(0).build());
            assertThrows(CacheConfigurationException.class, () -> MemoryMonitor.builder(source, target).bounds(4L * BUFFER, BUFFER).build());
            assertThrows(CacheConfigurationException.class, () -> MemoryMonitor.builder(source, target).period(Duration.ofSeconds(-1)).build());
        }
        try (BlockCache fixed = BlockCache.builder().bufferLength(BUFFER).blockLength(1024).capacity(BUFFER).registerMBean(false).build()) {
            assertThrows(UnsupportedOperationException.class, () -> fixed.resizeTarget(0));
        }
    }

    @Test
    void theSystemSourceReadsTheCgroupUsageV2AndV1() throws IOException {
        final Path proc = Files.createDirectories(root.resolve("proc/self")).getParent();
        Files.writeString(proc.resolve("self/cgroup"), "0::/pod/c\n");
        final Path cg = root.resolve("cgroup");
        Files.createDirectories(cg.resolve("pod/c"));
        Files.writeString(cg.resolve("pod/c/memory.max"), "1073741824\n");
        Files.writeString(cg.resolve("pod/c/memory.current"), "536870912\n");
        assertEquals(OptionalLong.of(512 * MB), new ContainerMemory(proc, cg).cgroupUsage());
        Files.writeString(proc.resolve("self/cgroup"), "4:memory:/docker/x\n");
        Files.createDirectories(cg.resolve("memory/docker/x"));
        Files.writeString(cg.resolve("memory/docker/x/memory.usage_in_bytes"), "1048576\n");
        assertEquals(OptionalLong.of(MB), new ContainerMemory(proc, cg).cgroupUsage());
        assertEquals(OptionalLong.empty(), new ContainerMemory(root.resolve("none"), cg).cgroupUsage());
        final String savedProc = System.getProperty("streamcache.memory.proc");
        try {
            System.setProperty("streamcache.memory.proc", proc.toString());
            System.setProperty("streamcache.memory.cgroupRoot", cg.toString());
            Files.writeString(proc.resolve("self/cgroup"), "0::/pod/c\n");
            final MemorySource.MemoryReading reading = MemorySource.system().read();
            assertEquals(1L << 30, reading.limit());
            assertEquals(512 * MB, reading.used());
            assertTrue(reading.directLimit() > 0);
        } finally {
            System.clearProperty("streamcache.memory.proc");
            System.clearProperty("streamcache.memory.cgroupRoot");
            if (savedProc != null) {
                System.setProperty("streamcache.memory.proc", savedProc);
            }
        }
    }
}
