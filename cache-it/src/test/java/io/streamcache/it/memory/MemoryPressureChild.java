package io.streamcache.it.memory;

import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.DirectMemoryRegion;
import io.streamcache.core.memory.MemoryMonitor;
import io.streamcache.core.memory.MemorySource;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The child JVM of {@link MemoryMonitorIT}: a 48 MB direct-memory cache (eagerly committed, so
 * in the JDK's direct buffer pool with the broker's buffers) holding 8 MB of
 * entries under {@code -XX:MaxDirectMemorySize=64m}, then the "broker" allocates direct
 * buffers 4 MB at a time (as Netty's pools grow) up to 40 MB, one allocation per two ticks of
 * the monitor. Argument {@code monitor}: a {@link MemoryMonitor} on the system source shrinks
 * the cache as direct memory runs short, and the child prints {@code OK capacity=... } and exits
 * 0; argument {@code none}: no monitor, and an allocation fails with the JDK's
 * {@code OutOfMemoryError: Cannot reserve ... direct buffer memory}.
 */
public final class MemoryPressureChild {
    private static final int BUFFER = 2 << 20;

    private MemoryPressureChild() {
    }

    public static void main(final String[] args) throws Exception {
        final boolean monitored = args[0].equals("monitor");
        // EAGER: the cache's buffers are the JDK's direct buffers, counted under the same limit as the broker's.
        try (BlockCache cache = BlockCache.builder().capacity(24L * BUFFER).maxCapacity(24L * BUFFER)
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.EAGER)).registerMBean(false).build()) {
            final List<Integer> addresses = new ArrayList<>();
            final byte[] entry = new byte[100_000];
            for (int i = 0; i < 80; i++) {
                Arrays.fill(entry, (byte)i);
                addresses.add(cache.insert(Unpooled.wrappedBuffer(entry)));
            }
            final MemoryMonitor monitor = monitored
                ? MemoryMonitor.builder(MemorySource.system(), cache.resizeTarget(0)).period(Duration.ofMillis(5))
                    .bounds(4L * BUFFER, 24L * BUFFER).registerMBean(false).build()
                : null;
            try {
                final List<ByteBuffer> broker = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    if (monitor != null) {
                        final long ticks = monitor.stats().ticks();
                        while (monitor.stats().ticks() < ticks + 2) {
                            Thread.sleep(1);
                        }
                    }
                    broker.add(ByteBuffer.allocateDirect(4 << 20));
                    System.out.println("allocated " + (broker.size() * 4) + " MB; cache capacity=" + cache.capacity()
                        + " direct used=" + DirectMemoryRegion.usedDirectMemory());
                }
                for (int i = 0; i < addresses.size(); i++) {
                    final ByteBuffer read = ByteBuffer.allocate(100_000);
                    cache.copyTo(addresses.get(i), 0, read);
                    for (int k = 0; k < read.capacity(); k++) {
                        if (read.get(k) != (byte)i) {
                            System.out.println("CORRUPT entry " + i + " at " + k);
                            System.exit(3);
                        }
                    }
                }
                System.out.println("OK capacity=" + cache.capacity() + " shrinks=" + (monitor == null ? 0 : monitor.stats().shrinks()));
            } finally {
                if (monitor != null) {
                    monitor.close();
                }
            }
        }
    }
}
