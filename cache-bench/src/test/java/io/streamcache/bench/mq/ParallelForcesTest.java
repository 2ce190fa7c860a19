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

@Timeout(60)
class ParallelForcesTest {
    @TempDir
    Path directory;

    @Test
    void shouldPrintOneLinePerCaseAndLeaveNoFileBehind() throws Exception {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int code = ParallelForces.run(new String[] {"--dir", directory.toString(), "--bytes", "256k", "--batch", "16k",
            "--threads", "1,2", "--repeats", "1"}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals(0, code);
        final String out = bytes.toString(StandardCharsets.UTF_8);
        // one thread once (one file either way), two threads in one file and in a file each
        assertEquals(3, out.lines().count(), out);
        assertTrue(out.contains("threads 1, one file, batches of 16 KB"), out);
        assertTrue(out.contains("threads 2, one file"), out);
        assertTrue(out.contains("threads 2, a file each"), out);
        assertEquals(0, Objects.requireNonNull(new File(directory.toString()).list()).length);
    }

    @Test
    void shouldRefuseBadArguments() {
        final PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertThrows(IllegalArgumentException.class, () -> ParallelForces.run(new String[] {"--bytes", "1m"}, out));
        assertThrows(IllegalArgumentException.class,
            () -> ParallelForces.run(new String[] {"--dir", directory.toString(), "--files", "some"}, out));
        assertThrows(IllegalArgumentException.class,
            () -> ParallelForces.run(new String[] {"--dir", directory.toString(), "--batch", "2m", "--bytes", "1m"}, out));
        assertThrows(IllegalArgumentException.class, () -> ParallelForces.run(new String[] {"--dir"}, out));
    }
}
