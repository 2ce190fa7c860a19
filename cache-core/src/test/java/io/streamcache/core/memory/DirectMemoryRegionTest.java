package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.cache.BlockCache;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DirectMemoryRegion}: geometry, alignment, the direct-memory limit check and release.
 * Surefire runs with {@code -XX:MaxDirectMemorySize=1g}; the tests derive their sizes from the
 * limit the JVM reports, so they hold under any setting.
 */
class DirectMemoryRegionTest {
    private static final int BUFFER = 64 * 1024;

    @ParameterizedTest
    @EnumSource(value = DirectMemoryRegion.Commit.class, names = "ON_DEMAND", mode = EnumSource.Mode.EXCLUDE)
    void shouldOpenAlignedBuffersOfTheRequestedGeometry(final DirectMemoryRegion.Commit commit) {
        final long before = DirectMemoryRegion.usedDirectMemory();
        final MemoryRegion region = DirectMemoryRegion.factory(commit).open(3, BUFFER);
        try {
            assertEquals(3, region.bufferCount());
            assertEquals(BUFFER, region.bufferLength());
            assertTrue(region.description().contains("direct"), region.description());
            assertTrue(DirectMemoryRegion.usedDirectMemory() - before >= 3L * BUFFER, "the memory is taken when the region opens");
            final long[] addresses = new long[3];
            for (int i = 0; i < 3; i++) {
                final ByteBuffer buffer = region.buffer(i);
                assertTrue(buffer.isDirect());
                assertFalse(buffer.isReadOnly());
                assertEquals(0, buffer.position());
                assertEquals(BUFFER, buffer.limit());
                assertEquals(BUFFER, buffer.capacity());
                assertEquals(ByteOrder.nativeOrder(), buffer.order());
                addresses[i] = BufferUtil.address(buffer);
                assertEquals(0, addresses[i] % 4096, "buffers are page-aligned");
                if (commit == DirectMemoryRegion.Commit.EAGER) {
                    final byte[] contents = new byte[BUFFER];
                    buffer.duplicate().get(contents);
                    assertTrue(Arrays.equals(new byte[BUFFER], contents), "eagerly committed buffers start zeroed");
                }
            }
            Arrays.sort(addresses);
            for (int i = 1; i < 3; i++) {
                assertTrue(addresses[i] - addresses[i - 1] >= BUFFER, "buffers must not overlap");
            }
            region.buffer(1).putLong(BUFFER - 8, 7L);
            region.buffer(2).putLong(BUFFER - 8, -1L);
            assertEquals(7L, region.buffer(1).getLong(BUFFER - 8), "a write to one buffer stays in it");
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(-1));
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(3));
        } finally {
            region.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = DirectMemoryRegion.Commit.class, names = "ON_DEMAND", mode = EnumSource.Mode.EXCLUDE)
    void shouldGiveItsMemoryBackOnClose(final DirectMemoryRegion.Commit commit) {
        final MemoryRegion region = DirectMemoryRegion.factory(commit).open(4, BUFFER);
        final long open = DirectMemoryRegion.usedDirectMemory();
        region.close();
        final long closed = DirectMemoryRegion.usedDirectMemory();
        assertTrue(open - closed >= 4L * BUFFER, "direct memory in use went from " + open + " to " + closed);
        region.close();
        assertEquals(closed, DirectMemoryRegion.usedDirectMemory(), "close is idempotent");
    }

    @Test
    void shouldRefuseMoreThanMaxDirectMemorySizeBeforeAllocating() {
        final int buffer = 2 << 20;
        final long limit = DirectMemoryRegion.maxDirectMemory();
        assertTrue(limit > 0);
        final int count = (int)Math.max(2048, limit / buffer + 2);
        final long before = DirectMemoryRegion.usedDirectMemory();
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY).open(count, buffer));
        assertTrue(e.getMessage().contains("MaxDirectMemorySize"), e.getMessage());
        assertTrue(DirectMemoryRegion.usedDirectMemory() <= before, "nothing is left allocated");
    }

    @Test
    void shouldFailTheCacheBuildWhenOverMaxDirectMemorySize() {
        final long capacity = Math.max(4L << 30, DirectMemoryRegion.maxDirectMemory() + (64L << 20));
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> BlockCache.builder().capacity(capacity).region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY))
                .registerMBean(false).build());
        assertTrue(e.getMessage().contains("MaxDirectMemorySize"), e.getMessage());
    }

    @Test
    void shouldReportTheConfiguredDirectMemoryLimit() {
        final String flag = "-XX:MaxDirectMemorySize=";
        final long limit = DirectMemoryRegion.maxDirectMemory();
        for (final String argument : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith(flag) && argument.endsWith("g")) {
                final long gigabytes = Long.parseLong(argument.substring(flag.length(), argument.length() - 1));
                assertEquals(gigabytes << 30, limit);
                return;
            }
        }
        assertTrue(limit > 0, "without the flag the limit is the maximum heap");
    }

    @Test
    void shouldCountLazilyCommittedRegionsAgainstTheLimitTogether() {
        // Two lazy regions that each fit under the limit but not together: the second is refused,
        // although the JDK's own direct buffer pool never saw the first.
        final long available = DirectMemoryRegion.maxDirectMemory() - DirectMemoryRegion.usedDirectMemory();
        final int buffer = 1 << 20;
        final int count = (int)Math.min(Integer.MAX_VALUE, (available / 2 + (64L << 20)) / buffer);
        final MemoryRegion first = DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY).open(count, buffer);
        try {
            final long used = DirectMemoryRegion.usedDirectMemory();
            final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
                () -> DirectMemoryRegion.factory(DirectMemoryRegion.Commit.LAZY).open(count, buffer));
            assertTrue(e.getMessage().contains("MaxDirectMemorySize"), e.getMessage());
            assertEquals(used, DirectMemoryRegion.usedDirectMemory(), "the refused region reserved nothing");
        } finally {
            first.close();
        }
    }
}
