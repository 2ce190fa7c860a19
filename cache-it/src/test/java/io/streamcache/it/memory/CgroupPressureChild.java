package io.streamcache.it.memory;

import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MemoryMonitor;
import io.streamcache.core.memory.MemorySource;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.eviction.CacheManager;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The child JVM of {@link MemoryMonitorIT}'s cgroup test: a segment store over a 64 MB cache
 * (max 64 MB) with a memory monitor on {@link MemorySource#system()}, whose {@code /proc} and
 * cgroup root are a fake directory the parent writes ({@code -Dstreamcache.memory.proc},
 * {@code -Dstreamcache.memory.cgroupRoot}). It appends 32 MB, then on each line of stdin
 * ({@code tick}) ticks the monitor once and prints {@code capacity=<bytes>}; on {@code check}
 * reads every byte back and prints {@code checked}; on {@code end} prints the stats and exits.
 */
public final class CgroupPressureChild {
    private static final int BUFFER = 2 << 20;

    private CgroupPressureChild() {
    }

    private static byte at(final long offset) {
        return (byte)(offset * 31 + (offset >>> 12));
    }

    public static void main(final String[] args) throws Exception {
        try (BlockCache cache = BlockCache.builder().capacity(32L * BUFFER).maxCapacity(32L * BUFFER).registerMBean(false).build();
             SegmentStore store = SegmentStore.builder(cache).cacheManager(CacheManager.builder(cache).registerMBean(false)
                 .generationPeriod(Duration.ZERO)).build();
             MemoryMonitor monitor = MemoryMonitor.builder(MemorySource.system(), store.cacheManager().resizeTarget(0))
                 .period(Duration.ZERO).bounds(4L * BUFFER, 32L * BUFFER).maxStep(16L * BUFFER).registerMBean(false).build()) {
            store.create("s");
            final byte[] piece = new byte[64 << 10];
            long length = 0;
            while (length < 32L << 20) {
                for (int i = 0; i < piece.length; i++) {
                    piece[i] = at(length + i);
                }
                store.append("s", Unpooled.wrappedBuffer(piece));
                length += piece.length;
            }
            System.out.println("ready capacity=" + cache.capacity());
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                switch (line) {
                    case "tick" -> System.out.println("capacity=" + monitor.tick());
                    case "check" -> {
                        long cached = 0;
                        for (long offset = 0; offset < length; ) {
                            try (ReadResult result = store.read("s", offset, 1 << 20)) {
                                final int n = result.data().readableBytes();
                                for (int i = 0; i < n; i++) {
                                    if (result.data().getByte(result.data().readerIndex() + i) != at(offset + i)) {
                                        System.out.println("CORRUPT at " + (offset + i));
                                        System.exit(3);
                                    }
                                }
                                cached += n;
                                // NOT_CACHED with nothing: an evicted piece (64 KB appends): skip it.
                                offset += n > 0 ? n : result.status() == ReadStatus.NOT_CACHED ? 64 << 10 : length - offset;
                            }
                        }
                        System.out.println("checked cached=" + cached);
                    }
                    case "end" -> {
                        System.out.println("stats " + monitor.stats() + " " + store.cacheManager().resizeStats());
                        return;
                    }
                    default -> System.out.println("unknown " + line);
                }
            }
        }
    }
}
