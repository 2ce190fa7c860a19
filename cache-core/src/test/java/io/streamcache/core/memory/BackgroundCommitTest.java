package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.core.cache.BlockCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link BackgroundCommit} through {@link DirectMemoryRegion.Commit#BACKGROUND}: it commits every
 * page, changes no byte the cache writes meanwhile, stops before the memory is freed, and starts
 * its thread through the embedder's {@link StreamcacheThreads}.
 */
class BackgroundCommitTest {
    private static final int MB = 1 << 20;

    private static DirectMemoryRegion open(final int buffers, final int length) {
        return (DirectMemoryRegion) DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND).open(buffers, length);
    }

    @Test
    @Timeout(60)
    void shouldNotChangeAByteWrittenWhileItCommits() throws Exception {
        // Written from the last buffer backwards while the committer walks forwards: they cross,
        // so both pages it already touched and pages it has not reached yet are written under it.
        // A committer that stored anything (even the zero a fresh page holds) loses these values.
        for (int round = 0; round < 5; round++) {
            final int buffers = 64;
            final DirectMemoryRegion region = open(buffers, MB);
            try {
                for (int b = buffers - 1; b >= 0; b--) {
                    final ByteBuffer buffer = region.buffer(b);
                    for (int i = buffer.capacity() - 8; i >= 0; i -= 8) {
                        buffer.putLong(i, pattern(round, b, i));
                    }
                }
                region.backgroundCommit().awaitDone();
                assertEquals((long)buffers * MB, region.backgroundCommittedBytes(), "every page committed");
                for (int b = 0; b < buffers; b++) {
                    final ByteBuffer buffer = region.buffer(b);
                    for (int i = 0; i < buffer.capacity(); i += 8) {
                        if (buffer.getLong(i) != pattern(round, b, i)) {
                            throw new AssertionError("round " + round + ": buffer " + b + " position " + i + " holds "
                                + buffer.getLong(i) + ", written " + pattern(round, b, i));
                        }
                    }
                }
            } finally {
                region.close();
            }
        }
    }

    private static long pattern(final int round, final int buffer, final int position) {
        return ((long)round << 48) ^ ((long)buffer << 32) ^ position ^ 0x5A5A_0000_0000_0001L;
    }

    @Test
    @Timeout(60)
    void shouldMakeThePagesResident() throws Exception {
        // A touch that only reads maps the shared zero page and leaves the process's resident set
        // as it was; a write access commits each page.
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs /proc (Linux)");
        final int buffers = 192;
        final long before = residentBytes();
        final DirectMemoryRegion region = open(buffers, MB);
        try {
            region.backgroundCommit().awaitDone();
            final long grown = residentBytes() - before;
            assertTrue(grown >= (long)buffers * MB * 9 / 10, "resident set grew by " + grown + " bytes for a region of "
                + (long)buffers * MB);
        } finally {
            region.close();
        }
    }

    private static long residentBytes() throws IOException {
        for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new AssertionError("no VmRSS in /proc/self/status");
    }

    @Test
    @Timeout(120)
    void shouldStopBeforeTheMemoryIsFreed() {
        // Closed at once, again and again: the committer is mid-region. Freeing under it would
        // crash the JVM (the chunks are unmapped); the thread is gone when close returns.
        final int buffers = (int)Math.min(256, DirectMemoryRegion.maxDirectMemory() / 4 / MB);
        for (int i = 0; i < 20; i++) {
            final DirectMemoryRegion region = open(buffers, MB);
            final BackgroundCommit commit = region.backgroundCommit();
            assertNotNull(commit);
            region.close();
            assertTrue(commit.isDone(), "the committer ended before close returned");
            assertTrue(commit.committedBytes() <= commit.totalBytes());
        }
    }

    @Test
    void shouldStartItsThreadThroughTheEmbeddersThreads() throws Exception {
        final List<String> made = new ArrayList<>();
        final StreamcacheThreads threads = (role, owner, task) -> {
            made.add(role + " " + owner);
            return StreamcacheThreads.defaults().newThread(role, owner, task);
        };
        final MemoryRegion region = DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND, threads).open(4, MB);
        try {
            assertEquals(List.of("MEMORY_COMMIT direct-4x" + MB), made);
            ((DirectMemoryRegion) region).backgroundCommit().awaitDone();
            assertTrue(region.description().contains("background"), region.description());
        } finally {
            region.close();
        }
        for (final DirectMemoryRegion.Commit other : new DirectMemoryRegion.Commit[] {DirectMemoryRegion.Commit.LAZY,
            DirectMemoryRegion.Commit.EAGER}) {
            DirectMemoryRegion.factory(other, threads).open(4, MB).close();
        }
        assertEquals(1, made.size(), "LAZY and EAGER start no thread");
    }

    @Test
    void shouldGiveTheMemoryBackIfItsThreadCannotBeMade() {
        final long before = DirectMemoryRegion.usedDirectMemory();
        final StreamcacheThreads refusing = (role, owner, task) -> {
            throw new IllegalStateException("no threads here");
        };
        final IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND, refusing).open(8, MB));
        assertEquals("no threads here", e.getMessage());
        // The JDK's own small direct buffers (file reads) may come and go meanwhile; a region's megabytes may not.
        assertTrue(DirectMemoryRegion.usedDirectMemory() - before < MB, "nothing is left reserved: "
            + (DirectMemoryRegion.usedDirectMemory() - before) + " bytes more than before");
    }

    @Test
    void shouldRefuseAResizableTier() {
        final long before = DirectMemoryRegion.usedDirectMemory();
        final CacheConfigurationException e = assertThrows(CacheConfigurationException.class,
            () -> BlockCache.builder().tier("dram", 4L * MB, 8L * MB, DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND))
                .registerMBean(false).build());
        assertTrue(e.getMessage().contains("BACKGROUND"), e.getMessage());
        // The JDK's own small direct buffers (file reads) may come and go meanwhile; a region's megabytes may not.
        assertTrue(DirectMemoryRegion.usedDirectMemory() - before < MB, "nothing is left reserved: "
            + (DirectMemoryRegion.usedDirectMemory() - before) + " bytes more than before");
    }

    @Test
    @Timeout(60)
    void aCacheOnABackgroundRegionKeepsWhatItIsGiven() throws Exception {
        // The whole cache on such a region, written while the committer runs: every entry reads back.
        final AtomicInteger threadsMade = new AtomicInteger();
        final StreamcacheThreads threads = (role, owner, task) -> {
            threadsMade.incrementAndGet();
            return StreamcacheThreads.defaults().newThread(role, owner, task);
        };
        try (BlockCache cache = BlockCache.builder().capacity(64L * MB)
            .region(DirectMemoryRegion.factory(DirectMemoryRegion.Commit.BACKGROUND, threads)).registerMBean(false).build()) {
            assertEquals(1, threadsMade.get());
            final byte[] data = new byte[10_000];
            final int[] addresses = new int[4_000];
            for (int i = 0; i < addresses.length; i++) {
                java.util.Arrays.fill(data, (byte)i);
                addresses[i] = cache.insert(Unpooled.wrappedBuffer(data));
            }
            for (int i = 0; i < addresses.length; i++) {
                java.util.Arrays.fill(data, (byte)i);
                final ByteBuf read = Unpooled.buffer(data.length);
                assertEquals(data.length, cache.copyTo(addresses[i], read, 0));
                final byte[] got = new byte[data.length];
                read.getBytes(0, got);
                assertArrayEquals(data, got, "entry " + i);
            }
        }
        assertFalse(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().contains("memory-commit")
            && t.isAlive()), "no committer thread outlives its cache");
    }
}
