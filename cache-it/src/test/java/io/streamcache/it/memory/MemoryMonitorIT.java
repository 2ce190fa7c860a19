package io.streamcache.it.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The memory monitor in a child JVM with a small limit ({@code -XX:MaxDirectMemorySize=64m}):
 * a 48 MB cache and a broker whose direct buffers grow by 40 MB do not fit together. Without a
 * monitor the broker's allocation fails with an {@code OutOfMemoryError}; with one, the cache
 * shrinks as the headroom falls, every allocation succeeds and every cached entry reads back
 * intact ({@link MemoryPressureChild}).
 */
@Timeout(120)
class MemoryMonitorIT {
    @TempDir
    Path directory;

    private record Outcome(int status, String out, String err) {
    }

    private Outcome run(final String mode) throws Exception {
        final Path out = directory.resolve(mode + ".out");
        final Path err = directory.resolve(mode + ".err");
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final Process process = new ProcessBuilder(List.of(java, "-Xmx64m", "-XX:MaxDirectMemorySize=64m", "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"), MemoryPressureChild.class.getName(), mode))
            .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(process.waitFor(90, TimeUnit.SECONDS), "the child did not end");
        return new Outcome(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void withoutAMonitorTheBrokersAllocationFails() throws Exception {
        final Outcome outcome = run("none");
        assertNotEquals(0, outcome.status(), outcome.out());
        assertTrue(outcome.err().contains("OutOfMemoryError") && outcome.err().contains("direct buffer memory"), outcome.err());
    }

    @Test
    void theMonitorShrinksTheCacheInsteadOfTheProcessFailing() throws Exception {
        final Outcome outcome = run("monitor");
        assertEquals(0, outcome.status(), outcome.out() + outcome.err());
        final String last = outcome.out().lines().filter(line -> line.startsWith("OK ")).findFirst().orElseThrow();
        final long capacity = Long.parseLong(last.replaceAll(".*capacity=(\\d+).*", "$1"));
        final long shrinks = Long.parseLong(last.replaceAll(".*shrinks=(\\d+).*", "$1"));
        assertTrue(capacity < 48L << 20, "the cache shrank: " + last);
        assertTrue(shrinks > 0, last);
    }
}
