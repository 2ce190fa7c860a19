package io.streamcache.segmentstore;

import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.testing.Closer;
import io.streamcache.log.testing.TestLogs;

import io.streamcache.core.cache.BlockCache;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.TestSegments;
import io.streamcache.log.internal.recovery.LogScanner;
import io.streamcache.log.CorruptionPolicy;
import io.streamcache.log.LogCorruptedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store whose log writes recovery checkpoints ({@link io.streamcache.log.LogConfig.Builder#checkpointFiles}):
 * it reopens with every acknowledged byte, from the checkpoint; damage in a file the checkpoint
 * covers is not seen at open (the bytes are not read) but reported when its bytes are read, by
 * file and position, never served as wrong bytes; with the checkpoint off the same damage fails
 * the open as before.
 */
@Timeout(120)
class CheckpointStoreTest {
    private static final int APPEND = 700;
    private static final int APPENDS = 600;

    @TempDir
    Path root;

    @RegisterExtension
    final Closer closer = new Closer();

    private SegmentStore open(final Path directory, final int checkpointFiles) {
        final BlockCache cache = TestSegments.cache(8 << 20);
        closer.add(cache);
        final SegmentStore store = SegmentStore.builder(cache)
            .maxIndexEntryLength(4096)
            .cacheManager(TestSegments.manualManager(cache))
            .log(TestLogs.small(directory).checkpointFiles(checkpointFiles).build())
            .logCorruptionPolicy(CorruptionPolicy.FAIL)
            .build();
        closer.add(store);
        return store;
    }

    /** @return F of the directory's checkpoint, 0 if none (its header's FILE_NUMBER). */
    private static long checkpointFile(final Path directory) throws IOException {
        final Path file = directory.resolve("CHECKPOINT");
        if (!Files.exists(file)) {
            return 0;
        }
        final byte[] header = Files.readAllBytes(file);
        return ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
    }

    /** Appends to "s" and "t" in turns until a checkpoint covers at least 4 files, then closes cleanly. */
    private long writeStore(final Path directory) throws Exception {
        final SegmentStore store = open(directory, 2);
        store.create("s");
        store.create("t");
        for (int i = 0; i < APPENDS; i++) {
            store.append("s", TestSegments.buffer(1, (long) i * APPEND, APPEND));
            store.append("t", TestSegments.buffer(2, (long) i * APPEND, APPEND));
        }
        // The checkpoint is written in the background after rolls: wait for one covering files 1..4
        // (appending a little more now and then, so that the writer keeps rolling).
        int extra = 0;
        while (checkpointFile(directory) < 5) {
            store.append("t", TestSegments.buffer(2, (long) (APPENDS + extra) * APPEND, APPEND));
            extra++;
            Thread.sleep(5);
        }
        store.close();
        return checkpointFile(directory);
    }

    private static void assertSegment(final SegmentStore store, final String name, final int seed, final long length) {
        assertEquals(length, store.info(name).length());
        for (long offset = 0; offset < length; offset += 10_000) {
            final int n = (int) Math.min(10_000, length - offset);
            try (ReadResult result = store.readThrough(name, offset, n).join()) {
                assertArrayEquals(TestSegments.pattern(seed, offset, n), TestSegments.bytes(result), name + " offset=" + offset);
            }
        }
    }

    @Test
    void shouldReopenFromTheCheckpointWithEveryAcknowledgedByte() throws Exception {
        final Path directory = root.resolve("log");
        writeStore(directory);
        final SegmentStore store = open(directory, 2);
        assertSegment(store, "s", 1, (long) APPENDS * APPEND);
        final long t = store.info("t").length();
        assertTrue(t >= (long) APPENDS * APPEND);
        assertSegment(store, "t", 2, t);
        store.append("s", TestSegments.buffer(1, (long) APPENDS * APPEND, APPEND));
        store.close();
        // And the same log opens with the checkpoint off: every file scanned, every byte there.
        final SegmentStore full = open(directory, 0);
        assertSegment(full, "s", 1, (long) (APPENDS + 1) * APPEND);
        assertSegment(full, "t", 2, t);
    }

    @Test
    void shouldReportDamageInACheckpointedFileWhenItsBytesAreReadNotAtOpen() throws Exception {
        final Path directory = root.resolve("log");
        final long covered = writeStore(directory);
        assertTrue(covered >= 5, "the checkpoint covers files 1.." + (covered - 1));
        // A DATA record of "s" in file 2, covered by the checkpoint: one bit of its payload flipped.
        final long[] victim = {-1, -1, -1};
        try (FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(2)), StandardOpenOption.READ)) {
            new LogScanner().scan(channel, 2, record -> {
                if (victim[0] < 0 && record.type() == LogRecordDescriptor.TYPE_DATA && record.segmentId() == 1) {
                    victim[0] = record.position();
                    victim[1] = record.segmentOffset();
                    victim[2] = record.length();
                }
                return true;
            });
        }
        assertTrue(victim[0] > 0, "file 2 holds DATA of s");
        final Path file2 = directory.resolve(LogFileDescriptor.fileName(2));
        final byte[] bytes = Files.readAllBytes(file2);
        bytes[(int) victim[0] + LogRecordDescriptor.HEADER_LENGTH + 3] ^= 0x04;
        Files.write(file2, bytes);

        final SegmentStore store = open(directory, 2);
        final CompletionException e = assertThrows(CompletionException.class,
            () -> store.readThrough("s", victim[1], (int) victim[2]).join().close());
        final LogCorruptedException corrupted = assertInstanceOf(LogCorruptedException.class, e.getCause());
        assertEquals(2, corrupted.fileNumber(), corrupted.getMessage());
        assertEquals(victim[0], corrupted.position(), corrupted.getMessage());
        // The other segment's bytes read back (s's read range, 1 MiB aligned, holds the damaged record: it fails whole).
        assertSegment(store, "t", 2, store.info("t").length());
        store.close();

        // Without the checkpoint the open reads every file and fails on the damage, naming it.
        final LogCorruptedException atOpen = assertThrows(LogCorruptedException.class, () -> open(directory, 0));
        assertEquals(2, atOpen.fileNumber(), atOpen.getMessage());
    }
}
