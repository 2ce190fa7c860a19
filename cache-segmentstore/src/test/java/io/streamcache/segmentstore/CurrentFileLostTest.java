package io.streamcache.segmentstore;

import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.LogCorruptedException;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogFailedException;
import io.streamcache.log.LogFileLostException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer notices that its current file is no longer the directory's: unlinked under the
 * running store, or replaced by a copy under the same name (another inode). Appends after that
 * must fail, with {@link LogFileLostException}, and none be acknowledged: they once were (20 of
 * 20), and after a kill the reopen silently lacked them.
 */
@Timeout(60)
class CurrentFileLostTest {
    @TempDir
    Path root;

    private static Path currentFile(final Path directory) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> LogFileDescriptor.fileNumber(f.getFileName().toString()) > 0)
                .max((a, b) -> Long.compare(LogFileDescriptor.fileNumber(a.getFileName().toString()),
                    LogFileDescriptor.fileNumber(b.getFileName().toString())))
                .orElseThrow();
        }
    }

    @ParameterizedTest(name = "replaced={0}")
    @ValueSource(booleans = {false, true})
    void shouldFailEveryAppendOnceTheCurrentFileIsGone(final boolean replaced) throws Exception {
        final Path directory = root.resolve("log");
        try (BlockCache cache = TestSegments.cache(8 << 20);
             SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
                 .cacheManager(TestSegments.manualManager(cache)).log(TestLogs.small(directory).fileLength(1L << 20).build()).build()) {
            store.create("s");
            for (int i = 0; i < 5; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
            final Path current = currentFile(directory);
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
            assertThrows(LogFileLostException.class, () -> store.append("s", TestSegments.buffer(1, 5000L, 1000)));
        }
    }

    @Test
    void shouldRefuseToOpenALogWhoseLastFileIsGoneUnlessAllowed() throws Exception {
        final Path directory = root.resolve("log");
        final LogConfig.Builder config = TestLogs.small(directory);
        try (BlockCache cache = TestSegments.cache(8 << 20);
             SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
                 .cacheManager(TestSegments.manualManager(cache)).log(config.build()).build()) {
            store.create("s");
            for (int i = 0; i < 200; i++) {
                store.append("s", TestSegments.buffer(1, i * 1000L, 1000));
            }
        }
        // As after a kill with the current file unlinked: no clean-close mark, the last file gone.
        Files.delete(directory.resolve(CleanMark.FILE_NAME));
        final Path last = currentFile(directory);
        assertTrue(LogFileDescriptor.fileNumber(last.getFileName().toString()) > 1, "the log never rolled");
        Files.delete(last);
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            final LogCorruptedException e = assertThrows(LogCorruptedException.class,
                () -> SegmentStore.builder(cache).maxIndexEntryLength(4096).cacheManager(TestSegments.manualManager(cache))
                    .log(config.build()).build().close());
            assertEquals(last, e.file(), e.getMessage());
            try (SegmentStore store = SegmentStore.builder(cache).maxIndexEntryLength(4096)
                .cacheManager(TestSegments.manualManager(cache)).log(config.allowMissingFiles(true).build()).build()) {
                assertTrue(store.info("s").length() < 200 * 1000L, "the lost file's appends are gone, knowingly");
            }
        }
    }
}
