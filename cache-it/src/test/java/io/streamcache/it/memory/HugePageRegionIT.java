package io.streamcache.it.memory;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.CacheFullException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.core.memory.MappedFileRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A cache backed by huge pages: a {@link MappedFileRegion} on a hugetlbfs mounted for the test,
 * with huge pages reserved through {@code vm.nr_hugepages} (needs root, as CI has; skipped,
 * saying why, where either is not allowed). The cache must hold exactly the huge pages its
 * capacity needs while it is open, keep random entries intact against byte arrays, give the pages
 * back on close, and fail when it is built, naming the setting, when the pages are too few or
 * its buffers do not fit the page size.
 */
@Timeout(120)
class HugePageRegionIT {
    private static final Path NR_HUGEPAGES = Path.of("/proc/sys/vm/nr_hugepages");
    private static final long PAGE = 2L << 20;
    /** Pages reserved for the test: 32 MB. */
    private static final int PAGES = 16;

    private String savedPages;
    private Path mount;
    private boolean mounted;

    private static int run(final String... command) throws IOException, InterruptedException {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().transferTo(System.err);
        return process.waitFor(30, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    private static long meminfo(final String field) throws IOException {
        for (final String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException(field + " not in /proc/meminfo");
    }

    @BeforeEach
    void reserveAndMount() throws Exception {
        assumeTrue(Files.isWritable(NR_HUGEPAGES), "reserving huge pages needs root: the huge-page region cannot be tested here");
        assumeTrue(meminfo("Hugepagesize") * 1024 == PAGE, "the default huge page size here is not 2 MB");
        savedPages = Files.readString(NR_HUGEPAGES, StandardCharsets.US_ASCII).trim();
        Files.writeString(NR_HUGEPAGES, Long.toString(Long.parseLong(savedPages) + PAGES), StandardCharsets.US_ASCII);
        assumeTrue(meminfo("HugePages_Free") >= PAGES, "the kernel could not reserve " + PAGES + " huge pages (memory too fragmented?)");
        mount = Files.createTempDirectory("streamcache-huge");
        mounted = run("mount", "-t", "hugetlbfs", "none", mount.toString()) == 0;
        assumeTrue(mounted, "mounting hugetlbfs failed: the huge-page region cannot be tested here");
    }

    @AfterEach
    void unmountAndRelease() throws Exception {
        if (mounted) {
            run("umount", "-l", mount.toString());
        }
        if (mount != null) {
            Files.deleteIfExists(mount);
        }
        if (savedPages != null) {
            Files.writeString(NR_HUGEPAGES, savedPages, StandardCharsets.US_ASCII);
        }
    }

    @Test
    void shouldHoldEntriesInHugePagesAndGiveThemBackOnClose() throws Exception {
        final long availableBefore = availableHugePages();
        final SplittableRandom random = new SplittableRandom(5);
        final Map<Integer, byte[]> model = new HashMap<>();
        try (BlockCache cache = BlockCache.builder().capacity(8 * PAGE).name("huge").registerMBean(false)
            .region(MappedFileRegion.factory(mount.resolve("cache"))).build()) {
            assertEquals(availableBefore - 8, availableHugePages(), "the cache's 8 buffers of 2 MB hold 8 huge pages");
            final ByteBuf out = Unpooled.directBuffer(64 << 10);
            for (int op = 0; op < 5_000; op++) {
                if (model.isEmpty() || random.nextInt(10) < 6) {
                    final byte[] data = new byte[random.nextInt(64 << 10)];
                    random.nextBytes(data);
                    try {
                        model.put(cache.insert(Unpooled.wrappedBuffer(data)), data);
                    } catch (final CacheFullException e) {
                        final int victim = model.keySet().iterator().next();
                        cache.delete(victim);
                        model.remove(victim);
                    }
                } else {
                    final int address = model.keySet().stream().skip(random.nextInt(model.size())).findFirst().orElseThrow();
                    final byte[] expected = model.get(address);
                    cache.copyTo(address, 0, out, 0, expected.length);
                    final byte[] actual = new byte[expected.length];
                    out.getBytes(0, actual);
                    assertArrayEquals(expected, actual, "entry at address " + address);
                    if (random.nextBoolean()) {
                        cache.delete(address);
                        model.remove(address);
                    }
                }
            }
            out.release();
            assertEquals(model.size(), cache.stats().entryCount());
        }
        assertEquals(availableBefore, availableHugePages(), "closing gave the pages back");
    }

    /** Huge pages nobody holds: free ones minus those reserved by a mapping but not yet touched. */
    private static long availableHugePages() throws IOException {
        return meminfo("HugePages_Free") - meminfo("HugePages_Rsvd");
    }

    @Test
    void shouldFailWhenBuiltWithTooFewHugePagesNamingTheSetting() {
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder()
            .capacity(4L * PAGES * PAGE).registerMBean(false).region(MappedFileRegion.factory(mount.resolve("big"))).build());
        assertTrue(e.getMessage().contains("vm.nr_hugepages"), e.getMessage());
        assertTrue(Files.notExists(mount.resolve("big")), "the failed region removed its file");
    }

    @Test
    void shouldRefuseBuffersSmallerThanAHugePage() {
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class, () -> BlockCache.builder()
            .capacity(4 * PAGE).bufferLength(1 << 20).registerMBean(false).region(MappedFileRegion.factory(mount.resolve("small"))).build());
        assertTrue(e.getMessage().contains("multiple of the huge page size"), e.getMessage());
    }
}
