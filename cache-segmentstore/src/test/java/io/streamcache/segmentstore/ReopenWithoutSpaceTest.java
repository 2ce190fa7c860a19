package io.streamcache.segmentstore;

import io.streamcache.log.internal.CleanMark;
import io.streamcache.log.testing.HookedLogFile;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.LogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Opening a log needs no free space: after a clean close the reopen writes nothing before the
 * first append (the span after the tail is read, and written only where it is not zeros
 * already), so a log reopens on a disk with no byte left; and an open that fails leaves the
 * clean-close mark where it was. The disk here is {@link HookedLogFile}'s byte budget;
 * {@code DiskFullIT} does the same on a real, small file system.
 */
@Timeout(60)
class ReopenWithoutSpaceTest {
    private static final int APPENDS = 40;
    private static final int LENGTH = 3000;

    @TempDir
    Path root;

    private static SegmentStore open(final BlockCache cache, final LogConfig config) {
        return SegmentStore.builder(cache).maxIndexEntryLength(4096).cacheManager(TestSegments.manualManager(cache)).log(config).build();
    }

    /** A cleanly closed log of {@link #APPENDS} appends to segment "s", in 1 MiB files. */
    private LogConfig.Builder written(final Path directory) {
        final LogConfig.Builder config = TestLogs.small(directory).fileLength(1L << 20);
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config.build())) {
            store.create("s");
            for (int i = 0; i < APPENDS; i++) {
                store.append("s", TestSegments.buffer(3, (long) i * LENGTH, LENGTH));
            }
        }
        assertTrue(Files.exists(directory.resolve(CleanMark.FILE_NAME)), "the clean close wrote no mark");
        return config;
    }

    private static void assertAllThere(final BlockCache cache, final LogConfig config) {
        try (SegmentStore store = open(cache, config)) {
            assertEquals((long) APPENDS * LENGTH, store.info("s").length());
            long offset = 0;
            while (offset < (long) APPENDS * LENGTH) {
                try (ReadResult result = store.readThrough("s", offset, APPENDS * LENGTH).join()) {
                    assertTrue(result.length() > 0, "no bytes at offset " + offset);
                    assertArrayEquals(TestSegments.pattern(3, offset, result.length()), TestSegments.bytes(result));
                    offset += result.length();
                }
            }
        }
    }

    @Test
    void shouldReopenACleanlyClosedLogWithoutWritingAByte() {
        final Path directory = root.resolve("log");
        final LogConfig.Builder config = written(directory);
        final HookedLogFile.Hooks disk = new HookedLogFile.Hooks();
        disk.space.set(0);
        try (BlockCache cache = TestSegments.cache(8 << 20); SegmentStore store = open(cache, config.fileFactory(disk).build())) {
            assertEquals((long) APPENDS * LENGTH, store.info("s").length());
            assertEquals(0, disk.writes.size(), () -> "the open wrote " + disk.writes.size() + " times with no space left");
            assertFalse(Files.exists(directory.resolve(CleanMark.FILE_NAME)), "an open writer leaves no clean mark");
            disk.space.set(Long.MAX_VALUE);
        }
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            assertAllThere(cache, config.fileFactory(new HookedLogFile.Hooks()).build());
        }
    }

    @Test
    void shouldLeaveTheCleanMarkWhenAnOpenFails() {
        final Path directory = root.resolve("log");
        final LogConfig.Builder config = written(directory);
        final HookedLogFile.Hooks disk = new HookedLogFile.Hooks();
        disk.failOpens = true;
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            assertThrows(RuntimeException.class, () -> open(cache, config.fileFactory(disk).build()).close());
        }
        assertTrue(Files.exists(directory.resolve(CleanMark.FILE_NAME)), "a failed open removed the clean-close mark");
        try (BlockCache cache = TestSegments.cache(8 << 20)) {
            assertAllThere(cache, config.fileFactory(new HookedLogFile.Hooks()).build());
        }
    }
}
