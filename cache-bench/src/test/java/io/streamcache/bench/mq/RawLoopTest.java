package io.streamcache.bench.mq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(120)
class RawLoopTest {
    @TempDir
    Path directory;

    @Test
    void shouldWriteEveryBatchForcedAcrossFilesAndLeaveNoFileBehind() throws Exception {
        // 10 batches of 16 KiB into files of 64 KiB: 4 to a file, three files.
        final RawLoop.Result r = RawLoop.run(directory.resolve("raw"), 10 * 16384 - 100, 16384, 65536);
        assertEquals(10, r.forces());
        assertEquals(10 * 16384, r.bytes());
        assertEquals(0, Objects.requireNonNull(directory.resolve("raw").toFile().list()).length);
    }

    @Test
    void shouldRoundBatchesUpToPages() {
        assertEquals(4096, RawLoop.pageBatch(0));
        assertEquals(4096, RawLoop.pageBatch(4096));
        assertEquals(8192, RawLoop.pageBatch(4096.5));
        assertEquals(163840, RawLoop.pageBatch(160.2 * 1024 - 300));
    }

    @Test
    void shouldRefuseABatchLongerThanAFile() {
        assertThrows(IllegalArgumentException.class, () -> RawLoop.run(directory, 1 << 20, 1 << 20, 1 << 19));
        assertThrows(IllegalArgumentException.class, () -> RawLoop.run(directory, 1 << 20, 0, 1 << 19));
    }

    @Test
    void contestShouldRunTheRawLoopAfterTheFacadeWithItsMeanBatch() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int code = ContestEval.run(new String[] {"--dir", directory.toString(), "--threads", "4", "--topics", "2",
            "--queues-per-topic", "8", "--phase1", "2m", "--phase2", "256k", "--cache", "64m"},
            new PrintStream(bytes, true, StandardCharsets.UTF_8));
        final String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, out);
        assertTrue(out.contains("before:  raw loop"), out);
        assertTrue(out.contains("after:   raw loop"), out);
        assertTrue(out.contains("x the raw loops"), out);
        assertTrue(out.contains("\"phase1_over_raw\":"), out);
        assertEquals(0, Objects.requireNonNull(new File(directory.resolve("raw").toString()).list()).length);
    }
}
