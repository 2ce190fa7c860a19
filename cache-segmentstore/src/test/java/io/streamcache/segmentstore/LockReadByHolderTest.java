package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogLock;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ChildClassPath;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.LogLockedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer lock survives the holder's own process reading the directory's files: POSIX record
 * locks ({@code fcntl(F_SETLK)}, which {@link java.nio.channels.FileChannel#tryLock()} takes on
 * Linux) belong to the process and are dropped when the process closes <em>any</em> descriptor
 * of the locked file, so a {@code Files.readString} of the lock file in the holding JVM once let
 * a second process in. Here the holder reads every file of the directory but the one the lock is
 * held on, {@value LogLock#LOCK_FILE_NAME}, which nothing has a reason to open (the holder details
 * file {@value LogLock#FILE_NAME} among them), and a second open, in the same JVM or in a child
 * JVM, must still fail with {@link LogLockedException}.
 */
@Timeout(120)
class LockReadByHolderTest {
    @TempDir
    Path root;

    private static SegmentStore open(final BlockCache cache, final Path directory) {
        return SegmentStore.builder(cache).maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).build()).build();
    }

    private static void readEveryFile(final Path directory) throws Exception {
        try (var files = Files.list(directory)) {
            for (final Path file : files.toList()) {
                if (Files.isRegularFile(file) && !file.getFileName().toString().equals(LogLock.LOCK_FILE_NAME)) {
                    Files.readAllBytes(file);
                }
            }
        }
        Files.readString(directory.resolve(LogLock.FILE_NAME), StandardCharsets.US_ASCII);
    }

    /** Runs {@link LockHolder} in a child JVM; returns it once it printed "locked", or the exit code it ended with. */
    private static Process startHolder(final Path directory, final String... extra) throws Exception {
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final List<String> command = new java.util.ArrayList<>(List.of(java, "-Xmx128m", "-XX:MaxDirectMemorySize=64m", "-cp",
            ChildClassPath.get(), LockHolder.class.getName(), directory.toString()));
        command.addAll(List.of(extra));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    /** The child's output up to "locked" (true) or its end (false). */
    private static boolean awaitLocked(final Process child, final StringBuilder output) throws Exception {
        final BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.equals("locked")) {
                return true;
            }
            output.append(line).append('\n');
        }
        return false;
    }

    @Test
    void shouldKeepTheLockWhenTheHoldingJvmReadsTheLockFileAgainstAnOpenInTheSameJvm() throws Exception {
        final Path directory = root.resolve("log");
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, directory)) {
            store.create("s");
            readEveryFile(directory);
            try (BlockCache second = TestSegments.cache(8 << 20)) {
                final LogLockedException e = assertThrows(LogLockedException.class, () -> open(second, directory));
                assertTrue(e.getMessage().contains("directory=" + directory), e.getMessage());
            }
        }
    }

    @Test
    void shouldKeepTheLockWhenTheHoldingJvmReadsTheLockFileAgainstAnotherProcess() throws Exception {
        final Path directory = root.resolve("log");
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, directory)) {
            store.create("s");
            readEveryFile(directory);
            final Process child = startHolder(directory);
            try {
                final StringBuilder output = new StringBuilder();
                final boolean locked = awaitLocked(child, output);
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child neither locked nor exited");
                assertTrue(!locked && output.toString().contains(LogLockedException.class.getName()),
                    () -> "a second process opened the log this JVM holds, after this JVM read its lock file: " + output);
            } finally {
                child.destroyForcibly();
            }
        }
    }

    @Test
    void shouldRefuseTheLogToThisJvmWhileAnotherProcessHoldsItAndHasReadItsLockFile() throws Exception {
        final Path directory = root.resolve("log");
        final Process child = startHolder(directory, "read");
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final StringBuilder output = new StringBuilder();
            assertTrue(awaitLocked(child, output), () -> "the child exited before it held the lock: " + output);
            final LogLockedException e = assertThrows(LogLockedException.class, () -> open(cache, directory));
            assertTrue(e.holder().contains("pid=" + child.pid()), e.getMessage());
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        }
    }
}
