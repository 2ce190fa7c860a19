package io.streamcache.segmentstore;

import io.streamcache.log.testing.TestLogs;

import io.streamcache.segmentstore.ChildClassPath;

import io.streamcache.log.LogLockedException;
import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One writer per log directory across processes: a child JVM ({@link LockHolder}) holds a store
 * open; this JVM's open fails at once naming the directory and the child's pid; once the child
 * is killed with SIGKILL the OS has released the lock, and the child's acknowledged appends are
 * all there.
 */
@Timeout(120)
class TwoProcessLockTest {
    private static final int SIGKILL_EXIT = 128 + 9;

    @TempDir
    Path root;

    private SegmentStore open(final BlockCache cache, final Path directory) {
        return SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build()).build();
    }

    @Test
    void shouldRefuseTheLogHeldByAnotherProcessAndTakeItAfterThatProcessIsKilled() throws Exception {
        final Path directory = root.resolve("log");
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final Process child = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:MaxDirectMemorySize=64m", "-cp",
            ChildClassPath.get(), LockHolder.class.getName(), directory.toString()))
            .redirectErrorStream(true).start();
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final BufferedReader output = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = output.readLine()) != null && !line.equals("locked")) {
                System.out.println("child: " + line);
            }
            assertEquals("locked", line, "the child exited before it held the lock");

            final LogLockedException e = assertThrows(LogLockedException.class, () -> open(cache, directory));
            assertTrue(e.getMessage().contains("directory=" + directory), e.getMessage());
            assertTrue(e.holder().contains("pid=" + child.pid()), e.getMessage());

            child.destroyForcibly();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
            assertEquals(SIGKILL_EXIT, child.exitValue());

            try (SegmentStore store = open(cache, directory)) {
                assertEquals(20 * 700L, store.info("s").length());
                try (ReadResult result = store.readThrough("s", 0, 14_000).join()) {
                    assertArrayEquals(TestSegments.pattern(7, 0, result.length()), TestSegments.bytes(result));
                }
            }
        } finally {
            child.destroyForcibly();
        }
    }
}
