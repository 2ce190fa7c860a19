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
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A log in the default configuration (64 MiB files, sparse, no pre-writing) reopens on a file
 * system with little space left: the log fills a 24 MiB tmpfs (needs root, as CI has; skipped,
 * saying why, where mounting is not allowed) until a write fails with "No space left on device";
 * then either space returns, the writer recovers and the store closes cleanly, or the store
 * closes with its writer still failed; then a filler file takes all the space but 1 MiB, and the
 * reopen must succeed and read back every acknowledged byte (it once pre-wrote ~16 MiB of zeros
 * past the tail, failed with ENOSPC and removed the clean-close mark).
 */
@Timeout(120)
class DiskFullReopenIT {
    private static final String SEGMENT = "full";
    private static final int APPEND_LENGTH = 3000;

    private static int run(final String... command) throws IOException, InterruptedException {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().transferTo(System.err);
        return process.waitFor(30, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

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

    /** Writes {@code filler} until the file system is full, then gives {@code leave} bytes back. */
    private static void fillLeaving(final Path filler, final long leave) throws IOException {
        final byte[] chunk = new byte[64 << 10];
        try (OutputStream out = Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            while (true) {
                out.write(chunk);
            }
        } catch (final IOException full) {
            assertTrue(String.valueOf(full.getMessage()).contains("No space left"), full.toString());
        }
        try (FileChannel channel = FileChannel.open(filler, StandardOpenOption.WRITE)) {
            channel.truncate(Math.max(0, channel.size() - leave));
        }
    }

    @ParameterizedTest(name = "recoveredBeforeClose={0}")
    @ValueSource(booleans = {true, false})
    void shouldReopenTheDefaultLogWithOneMebibyteFree(final boolean recoveredBeforeClose) throws Exception {
        final Path mount = Files.createTempDirectory("streamcache-reopen");
        final boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", mount.toString()) == 0;
        assumeTrue(mounted, "mounting a small tmpfs needs root: the real disk-full test cannot run here");
        try {
            final Path filler = mount.resolve("filler");
            Files.write(filler, new byte[2 << 20]);
            final LogConfig config = LogConfig.builder(mount.resolve("log")).registerMBeans(false).retryInterval(Duration.ZERO).build();
            long acknowledged = 0;
            try (BlockCache cache = BlockCache.builder().capacity(32L << 20).registerMBean(false).build();
                 SegmentStore store = SegmentStore.builder(cache).log(config).build()) {
                store.create(SEGMENT);
                LogFailedException failure = null;
                while (failure == null) {
                    try {
                        assertEquals(acknowledged, store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(acknowledged, APPEND_LENGTH))));
                        acknowledged += APPEND_LENGTH;
                    } catch (final LogFailedException e) {
                        failure = e;
                    }
                }
                if (recoveredBeforeClose) {
                    Files.delete(filler);
                    store.log().orElseThrow().recover().get(30, TimeUnit.SECONDS);
                    for (int i = 0; i < 10; i++) {
                        assertEquals(acknowledged, store.append(SEGMENT, Unpooled.wrappedBuffer(contentOf(acknowledged, APPEND_LENGTH))));
                        acknowledged += APPEND_LENGTH;
                    }
                }
            }
            assertEquals(recoveredBeforeClose, Files.exists(mount.resolve("log").resolve("CLEAN")),
                "a clean close leaves the mark, a close with the writer failed does not");
            fillLeaving(mount.resolve("filler2"), 1 << 20);

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
