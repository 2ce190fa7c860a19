package io.streamcache.it.crash;

import io.netty.buffer.Unpooled;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A disk that really fills up: the log lives on a small tmpfs mounted for the test (needs root,
 * as CI has; the test is skipped, saying why, where mounting is not allowed). Appends run until
 * the file system refuses a write; the failure must be a {@link LogFailedException} caused by the
 * operating system's "No space left on device", the store must refuse appends while failed, and
 * once space returns (the tmpfs is remounted larger) and the writer recovers, appends continue at
 * the right offset; a store reopened over the directory reads back every acknowledged byte. The
 * writer recovers either at {@code recover()} (retries off) or by itself, retrying every few
 * milliseconds: then the caller only keeps appending, each refused append changing nothing.
 */
@Timeout(120)
class DiskFullIT {
    private static final String SEGMENT = "full";
    private static final int APPEND_LENGTH = 3000;

    private static int run(final String... command) throws IOException, InterruptedException {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().transferTo(System.err);
        return process.waitFor(30, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    /** The byte at segment offset {@code offset}: a function of the offset alone. */
    private static byte content(final long offset) {
        long x = offset * 0x9E3779B97F4A7C15L;
        x ^= x >>> 29;
        return (byte)x;
    }

    private static byte[] contentOf(final long offset, final int length) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = content(offset + i);
        }
        return bytes;
    }

    private static boolean causedByNoSpace(final Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IOException && String.valueOf(t.getMessage()).contains("No space left on device")) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest(name = "automaticRetry={0}")
    @ValueSource(booleans = {false, true})
    void shouldFailAppendsOnAFullFileSystemRefuseNewOnesAndLoseNothingOnceSpaceReturns(final boolean automaticRetry) throws Exception {
        final Path mount = Files.createTempDirectory("streamcache-full");
        final boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mount.toString()) == 0;
        assumeTrue(mounted, "mounting a small tmpfs needs root: the real disk-full test cannot run here");
        try {
            final LogConfig config = LogConfig.builder(mount.resolve("log"))
                .fileLength(1L << 20).preWrite(false).spareFiles(0).batchLength(64 << 10)
                .retryInterval(automaticRetry ? Duration.ofMillis(10) : Duration.ZERO).build();
            long acknowledged = 0;
            try (BlockCache cache = BlockCache.builder().capacity(32L << 20).registerMBean(false).build();
                 SegmentStore store = SegmentStore.builder(cache).log(config).build()) {
                store.create(SEGMENT);
                RuntimeException failure = null;
                for (int i = 0; i < 100_000 && failure == null; i++) {
                    try {
                        final long offset = store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(acknowledged, APPEND_LENGTH)));
                        assertEquals(acknowledged, offset, "an append landed at the wrong offset");
                        acknowledged += APPEND_LENGTH;
                    } catch (final RuntimeException e) {
                        failure = e;
                    }
                }
                assertNotNull(failure, "a 6 MB file system never filled up");
                final RuntimeException refused = failure;
                assertTrue(refused instanceof LogFailedException && causedByNoSpace(refused),
                    () -> "expected a LogFailedException caused by ENOSPC, got " + refused);
                assertTrue(store.log().orElseThrow().isFailed(), "the writer must stay failed until it recovers");
                final long failedAt = acknowledged;
                assertThrows(RuntimeException.class,
                    () -> store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(failedAt, APPEND_LENGTH))),
                    "a failed log must refuse new appends");

                assertEquals(0, run("mount", "-o", "remount,size=64m", mount.toString()), "remounting larger failed");
                if (automaticRetry) {
                    // Nobody calls recover(): appends are refused (changing nothing) until the writer's own retry succeeds.
                    int refusals = 0;
                    while (true) {
                        try {
                            final long offset = store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(acknowledged, APPEND_LENGTH)));
                            assertEquals(acknowledged, offset, "the first append after the retry lands at the acknowledged length");
                            acknowledged += APPEND_LENGTH;
                            break;
                        } catch (final LogFailedException e) {
                            refusals++;
                            Thread.sleep(5);
                        }
                    }
                    assertTrue(store.log().orElseThrow().automaticRecoveries() >= 1, "recovered by itself, after " + refusals + " refusals");
                } else {
                    store.log().orElseThrow().recover().get(30, TimeUnit.SECONDS);
                }
                for (int i = 0; i < 10; i++) {
                    final long offset = store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(acknowledged, APPEND_LENGTH)));
                    assertEquals(acknowledged, offset, "after recovery appends must continue at the acknowledged length");
                    acknowledged += APPEND_LENGTH;
                }
            }

            try (BlockCache cache = BlockCache.builder().capacity(32L << 20).registerMBean(false).build();
                 SegmentStore store = SegmentStore.builder(cache).log(config).build()) {
                assertEquals(acknowledged, store.info(SEGMENT).length(), "recovered length");
                long offset = 0;
                while (offset < acknowledged) {
                    try (ReadResult result = store.readThrough(SEGMENT, offset, 1 << 20).get(30, TimeUnit.SECONDS)) {
                        assertTrue(result.length() > 0, () -> "no bytes at offset " + result.offset() + ": " + result.status());
                        final byte[] bytes = new byte[result.length()];
                        result.data().getBytes(0, bytes);
                        assertArrayEquals(contentOf(offset, bytes.length), bytes, "bytes differ from offset " + offset);
                        offset += bytes.length;
                    }
                }
            }
        } finally {
            run("umount", "-l", mount.toString());
            Files.deleteIfExists(mount);
        }
    }
}
