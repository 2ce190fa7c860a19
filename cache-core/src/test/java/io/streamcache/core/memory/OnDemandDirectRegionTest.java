package io.streamcache.core.memory;

import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The default direct region: no memory at open, each buffer allocated by the JDK as the cache
 * first needs it, so that {@code -XX:MaxDirectMemorySize} bounds the cache and every other
 * direct buffer of the process together.
 */
class OnDemandDirectRegionTest {
    private static final int BUFFER = 64 * 1024;
    private static final long MIB = 1L << 20;

    @Test
    void shouldOpenWithoutMemoryAndAllocateEachBufferInTheJdksCount() {
        final long before = DirectMemoryRegion.usedDirectMemory();
        final OnDemandRegion region = (OnDemandRegion)DirectMemoryRegion.factory().open(1 << 16, BUFFER);
        try {
            // 4 GiB of buffers: nothing taken at open.
            assertEquals(0, region.allocatedCount());
            assertTrue(DirectMemoryRegion.usedDirectMemory() - before < BUFFER, "no memory at open");
            assertThrows(IllegalStateException.class, () -> region.buffer(0));
            assertEquals(0, region.allocate(), "lowest first");
            final ByteBuffer first = region.buffer(0);
            assertEquals(BUFFER, first.capacity());
            assertTrue(first.isDirect());
            assertEquals(0, BufferUtil.address(first) & (Regions.ALIGNMENT - 1), "page-aligned");
            assertEquals(1, region.allocatedCount());
            assertTrue(DirectMemoryRegion.usedDirectMemory() - before >= BUFFER, "the JDK counts the buffer");
            assertEquals(first, region.buffer(0));
            assertEquals(1, region.allocate(), "the next one, never buffer 0 again");
            assertThrows(IllegalStateException.class, () -> region.buffer(2), "buffer 2 has no memory yet");
        } finally {
            region.close();
        }
        assertEquals(0, region.allocatedCount());
        assertTrue(DirectMemoryRegion.usedDirectMemory() - before < BUFFER, "closing frees what was allocated");
        assertEquals(-1, region.allocate(), "a closed region gives no memory");
    }

    /**
     * A child JVM with {@code -XX:MaxDirectMemorySize=64m}: a 48 MiB cache filled, then the
     * JDK's own buffers taken until the JDK refuses; and the other way round. Either way the
     * cache's bytes plus the JDK's buffers stay within 64 MiB, and a cache that finds the limit
     * reached is full (its insert fails with {@link CacheFullException}), with no
     * {@link OutOfMemoryError}.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldKeepTheCacheAndTheJdksBuffersWithinMaxDirectMemorySize() throws Exception {
        final StringBuilder classPath = new StringBuilder();
        for (final Class<?> type : List.of(DirectMemoryRegion.class, BoundProbe.class, BufferUtil.class, org.slf4j.LoggerFactory.class,
            io.netty.buffer.ByteBuf.class, io.netty.util.ReferenceCounted.class, org.jctools.queues.MpmcArrayQueue.class)) {
            final String location = codeSource(type).toString();
            if (classPath.indexOf(location) < 0) {
                classPath.append(classPath.length() == 0 ? "" : java.io.File.pathSeparator).append(location);
            }
        }
        final Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:MaxDirectMemorySize=64m", "-Xmx256m", "-cp", classPath.toString(), BoundProbe.class.getName())
            .redirectErrorStream(true).start();
        final String out;
        try {
            out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(child.waitFor(100, TimeUnit.SECONDS), out);
        } finally {
            child.destroyForcibly();
        }
        assertEquals(0, child.exitValue(), out);
        for (final String phase : List.of("cache-first", "jdk-first")) {
            final Matcher m = Pattern.compile(phase + " cache=(\\d+) jdk=(\\d+) pool=(\\d+) max=(\\d+)").matcher(out);
            assertTrue(m.find(), out);
            final long cache = Long.parseLong(m.group(1));
            final long jdk = Long.parseLong(m.group(2));
            final long pool = Long.parseLong(m.group(3));
            final long max = Long.parseLong(m.group(4));
            assertEquals(64 * MIB, max, out);
            assertTrue(cache + jdk <= max, phase + ": the cache's " + cache + " bytes and the JDK's " + jdk + " exceed " + max + "\n" + out);
            assertTrue(pool <= max, phase + ": the JDK's direct pool holds " + pool + "\n" + out);
            assertTrue(cache > 0 && jdk > 0, phase + ": both got memory\n" + out);
        }
        assertTrue(out.contains("cache-first cache=" + 48 * MIB + " "), "the cache built first holds all of its capacity\n" + out);
        assertTrue(out.contains("jdk-first full=" + CacheFullException.class.getSimpleName()), out);
    }

    private static Path codeSource(final Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs in the child JVM of {@link #shouldKeepTheCacheAndTheJdksBuffersWithinMaxDirectMemorySize}. */
    static final class BoundProbe {
        private BoundProbe() {
        }

        public static void main(final String[] args) {
            final long max = DirectMemoryRegion.maxDirectMemory();
            // The cache first: filled to its capacity, then the JDK's buffers until refused.
            try (BlockCache cache = BlockCache.builder().capacity(48 * MIB).registerMBean(false).build()) {
                fill(cache);
                final List<ByteBuffer> taken = takeUntilRefused();
                System.out.println("cache-first cache=" + cache.allocatedBufferCount() * cache.bufferLength() + " jdk="
                    + taken.size() * MIB + " pool=" + pool() + " max=" + max);
                taken.forEach(BufferUtil::free);
            }
            // The JDK's buffers first (40 MiB), then the cache: it gets what is left and is full there.
            final List<ByteBuffer> taken = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                taken.add(ByteBuffer.allocateDirect((int)MIB));
            }
            try (BlockCache cache = BlockCache.builder().capacity(48 * MIB).registerMBean(false).build()) {
                final String full = fill(cache);
                taken.addAll(takeUntilRefused());
                System.out.println("jdk-first cache=" + cache.allocatedBufferCount() * cache.bufferLength() + " jdk="
                    + taken.size() * MIB + " pool=" + pool() + " max=" + max);
                System.out.println("jdk-first full=" + full);
            }
        }

        /** Inserts 64 KiB entries until the cache refuses one; returns the refusal's class. */
        private static String fill(final BlockCache cache) {
            final byte[] entry = new byte[64 << 10];
            while (true) {
                try {
                    cache.insert(Unpooled.wrappedBuffer(entry));
                } catch (final RuntimeException e) {
                    return e.getClass().getSimpleName();
                }
            }
        }

        private static List<ByteBuffer> takeUntilRefused() {
            final List<ByteBuffer> taken = new ArrayList<>();
            while (true) {
                try {
                    taken.add(ByteBuffer.allocateDirect((int)MIB));
                } catch (final OutOfMemoryError e) {
                    return taken;
                }
            }
        }

        private static long pool() {
            for (final java.lang.management.BufferPoolMXBean pool
                : java.lang.management.ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class)) {
                if (pool.getName().equals("direct")) {
                    return pool.getMemoryUsed();
                }
            }
            return -1;
        }
    }
}
