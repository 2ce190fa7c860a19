package io.streamcache.segmentstore;

import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.internal.CurrentFileRecord;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ChildClassPath;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogFileLostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log file lost from the middle of the sequence is told from one retention or compaction
 * deleted: the writer records the live files ({@link CurrentFileRecord}) at each roll and before
 * each retirement, and an open refuses a directory that lacks one of them unless
 * {@code allowMissingFiles(true)}. And the forces of the force stage check the current file's
 * identity as the writer's own forces do.
 */
@Timeout(60)
class MissingFileTest {
    @TempDir
    Path root;

    private static List<Path> logFiles(final Path directory) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> LogFileDescriptor.fileNumber(f.getFileName().toString()) > 0).sorted().toList();
        }
    }

    private static SegmentStore open(final BlockCache cache, final LogConfig config) {
        return SegmentStore.builder(cache).maxIndexEntryLength(4096).cacheManager(TestSegments.manualManager(cache)).log(config).build();
    }

    /** Writes {@code appends} appends of 1000 bytes to segment "s" and closes the store cleanly. */
    private static void fill(final LogConfig config, final int appends) throws Exception {
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config)) {
            store.create("s");
            for (int i = 0; i < appends; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
        }
    }

    @ParameterizedTest(name = "killed={0}")
    @ValueSource(booleans = {false, true})
    void shouldRefuseToOpenALogMissingAMiddleFileUnlessAllowed(final boolean killed) throws Exception {
        final Path directory = root.resolve("log");
        final LogConfig.Builder config = TestLogs.small(directory);
        fill(config.build(), 500);
        if (killed) {
            // As after a SIGKILL: no clean-close mark.
            Files.delete(directory.resolve(CleanMark.FILE_NAME));
        }
        final List<Path> files = logFiles(directory);
        assertTrue(files.size() >= 4, "the log rolled too little: " + files);
        final Path middle = files.get(files.size() / 2);
        Files.delete(middle);
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(cache, config.build()).close());
            assertEquals(middle, e.file(), e.getMessage());
            assertTrue(e.getMessage().contains("allowMissingFiles"), e.getMessage());
            // The loss accepted: the segment opens from where the files still hold its bytes.
            try (SegmentStore store = open(cache, config.allowMissingFiles(true).build())) {
                assertTrue(store.info("s").startOffset() > 0, "the lost file's bytes are gone, knowingly");
                assertEquals(500_000L, store.info("s").length());
            }
        }
    }

    @ParameterizedTest(name = "killed={0}")
    @ValueSource(booleans = {false, true})
    void shouldOpenALogWhoseFilesRetentionDeleted(final boolean killed) throws Exception {
        final Path directory = root.resolve("log");
        final LogConfig config = TestLogs.small(directory).build();
        Path retiredCopy = null;
        Path retired = null;
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config)) {
            store.create("s");
            for (int i = 0; i < 500; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
            final List<Path> before = logFiles(directory);
            retired = before.get(1);
            retiredCopy = root.resolve("copy");
            Files.copy(retired, retiredCopy);
            store.truncate("s", 400_000L);
            for (int i = 500; i < 600; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
        }
        assertTrue(!Files.exists(retired), "retention deleted no file");
        if (killed) {
            // As after a SIGKILL between the record of a retirement and its unlink: the retired
            // file is still there, the clean-close mark is not.
            Files.delete(directory.resolve(CleanMark.FILE_NAME));
            Files.copy(retiredCopy, retired);
        }
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config)) {
            assertEquals(600_000L, store.info("s").length());
        }
    }

    /** Runs {@link MissingFileWriter} in a child JVM until it printed "written", then SIGKILLs it. */
    private static void writeAndKill(final Path directory, final String... extra) throws Exception {
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final List<String> command = new java.util.ArrayList<>(List.of(java, "-Xmx128m", "-XX:MaxDirectMemorySize=64m", "-cp",
            ChildClassPath.get(), MissingFileWriter.class.getName(), directory.toString()));
        command.addAll(List.of(extra));
        final Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            final BufferedReader reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            final StringBuilder output = new StringBuilder();
            String line;
            boolean written = false;
            while (!written && (line = reader.readLine()) != null) {
                written = line.equals("written");
                output.append(line).append('\n');
            }
            assertTrue(written, () -> "the child ended before it wrote: " + output);
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child did not die");
        }
    }

    @Test
    void shouldRefuseALogMissingAMiddleFileAfterTheWriterWasKilled() throws Exception {
        final Path directory = root.resolve("log");
        writeAndKill(directory);
        assertTrue(!Files.exists(directory.resolve(CleanMark.FILE_NAME)), "the child closed cleanly");
        final List<Path> files = logFiles(directory);
        assertTrue(files.size() >= 4, "the log rolled too little: " + files);
        final Path middle = files.get(files.size() / 2);
        Files.delete(middle);
        final LogConfig.Builder config = TestLogs.small(directory);
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(cache, config.build()).close());
            assertEquals(middle, e.file(), e.getMessage());
            try (SegmentStore store = open(cache, config.allowMissingFiles(true).build())) {
                assertTrue(store.info("s").startOffset() > 0, "the lost file's bytes are gone, knowingly");
                assertEquals(500_000L, store.info("s").length());
            }
        }
    }

    @Test
    void shouldOpenALogWhoseFilesRetentionDeletedAfterTheWriterWasKilled() throws Exception {
        final Path directory = root.resolve("log");
        writeAndKill(directory, "truncate");
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, TestLogs.small(directory).build())) {
            assertEquals(600_000L, store.info("s").length());
            assertEquals(400_000L, store.info("s").startOffset());
        }
    }

    @Test
    void shouldKeepRetiredFilesWhoseRecordCannotBeWrittenAndRetireThemLater() throws Exception {
        final Path directory = root.resolve("log");
        final LogConfig config = TestLogs.small(directory).build();
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config)) {
            store.create("s");
            for (int i = 0; i < 500; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
            final List<Path> before = logFiles(directory);
            // CURRENT cannot be rewritten (as on a full disk): the retirement must not unlink.
            final Path blocker = Files.createDirectory(directory.resolve(CurrentFileRecord.FILE_NAME + ".tmp"));
            store.truncate("s", 400_000L);
            store.append("s", TestSegments.buffer(1, 500_000L, 1000));
            Thread.sleep(200);
            assertEquals(before, logFiles(directory), "files retired without their record");
            Files.delete(blocker);
            for (int i = 501; i < 700; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (Files.exists(before.get(0)) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(!Files.exists(before.get(0)), "the retirement was not tried again at the roll");
        }
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config)) {
            assertEquals(700_000L, store.info("s").length());
        }
    }

    @Test
    void shouldOpenALogWithAVersionOneRecordAsBefore() throws Exception {
        final Path directory = root.resolve("log");
        final LogConfig config = TestLogs.small(directory).build();
        fill(config, 500);
        final List<Path> files = logFiles(directory);
        final long last = LogFileDescriptor.fileNumber(files.get(files.size() - 1).getFileName().toString());
        // Written before the live files were recorded: only the current file, so a gap is not a loss.
        Files.writeString(directory.resolve(CurrentFileRecord.FILE_NAME), "file=" + last + "\n", StandardCharsets.US_ASCII);
        Files.delete(files.get(files.size() / 2));
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            // What recovery found before the live files were recorded: the segment's bytes end
            // short of the next file's SNAPSHOT, reported there, not the missing file.
            final LogCorruptedException e = assertThrows(LogCorruptedException.class, () -> open(cache, config).close());
            assertTrue(!e.getMessage().contains(CurrentFileRecord.FILE_NAME), e.getMessage());
        }
    }

    @Test
    void shouldReadAndWriteTheLiveRanges() throws Exception {
        final Path directory = Files.createDirectories(root.resolve("log"));
        CurrentFileRecord.write(directory, 9, new long[] {2, 3, 4, 6, 8, 9, 10, 11});
        assertEquals("version=2\nfile=9\nlive=2-4,6,8-9\n",
            Files.readString(directory.resolve(CurrentFileRecord.FILE_NAME), StandardCharsets.US_ASCII));
        final CurrentFileRecord.Recorded recorded = CurrentFileRecord.read(directory);
        assertEquals(2, recorded.version());
        assertEquals(9, recorded.current());
        assertEquals(3, recorded.live().size());
        final CurrentFileRecord.Missing missing = CurrentFileRecord.missing(directory);
        assertEquals(2, missing.first());
        assertEquals(6, missing.count());
    }

    @Test
    void shouldForgetTheFilesRecoveryRemovesBeforeItRemovesThem() throws Exception {
        final Path directory = Files.createDirectories(root.resolve("log"));
        CurrentFileRecord.write(directory, 9, new long[] {2, 3, 4, 6, 8, 9});
        // A tail cut back to file 6 (TRUNCATE policy): 8 and 9 go, the current file moves down.
        CurrentFileRecord.forget(directory, List.of(8L, 9L, 10L));
        assertEquals("version=2\nfile=6\nlive=2-4,6\n",
            Files.readString(directory.resolve(CurrentFileRecord.FILE_NAME), StandardCharsets.US_ASCII));
    }

    @ParameterizedTest(name = "replaced={0}")
    @ValueSource(booleans = {false, true})
    void shouldFailAppendsOnceTheCurrentFileIsGoneWithForcesInFlight(final boolean replaced) throws Exception {
        final Path directory = root.resolve("log");
        try (BlockCache cache = TestSegments.cache(8 << 20);
             SegmentStore store = open(cache, TestLogs.small(directory).fileLength(1L << 20).forcesInFlight(3).build())) {
            store.create("s");
            for (int i = 0; i < 5; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
            final List<Path> files = logFiles(directory);
            final Path current = files.get(files.size() - 1);
            if (replaced) {
                final Path copy = root.resolve("copy");
                Files.copy(current, copy);
                Files.move(copy, current, StandardCopyOption.REPLACE_EXISTING);
            } else {
                Files.delete(current);
            }
            int acknowledged = 0;
            LogFailedException first = null;
            for (int i = 0; i < 20; i++) {
                try {
                    store.append("s", TestSegments.buffer(1, 5000L + acknowledged * 1000L, 1000));
                    acknowledged++;
                } catch (final LogFailedException e) {
                    if (first == null) {
                        first = e;
                    }
                }
            }
            assertEquals(0, acknowledged, "appends acknowledged into a file that is no longer the directory's");
            final LogFailedException failure = first;
            assertInstanceOf(LogFileLostException.class, failure, () -> String.valueOf(failure));
            assertTrue(failure.getMessage().contains(current.getFileName().toString()), failure.getMessage());
        }
    }
}
