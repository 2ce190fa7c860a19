package io.streamcache.it.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
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
 * intact ({@link MemoryPressureChild}). Then a store in a child JVM whose cgroup is a fake
 * directory this test writes ({@link CgroupPressureChild}): as the cgroup's usage rises the
 * monitor shrinks the store's cache (moving or evicting entries), holds between the watermarks,
 * and grows it back when usage falls; every byte still cached reads back intact.
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

    @Test
    void underAFakeCgroupTheStoresCacheShrinksHoldsAndGrowsBack() throws Exception {
        final Path proc = Files.createDirectories(directory.resolve("proc/self")).getParent();
        Files.writeString(proc.resolve("self/cgroup"), "0::/pod/broker\n");
        final Path cgroup = Files.createDirectories(directory.resolve("cgroup/pod/broker")).getParent().getParent();
        final Path max = cgroup.resolve("pod/broker/memory.max");
        final Path current = cgroup.resolve("pod/broker/memory.current");
        final long mb = 1 << 20;
        Files.writeString(max, (1024 * mb) + "\n");
        Files.writeString(current, (500 * mb) + "\n");
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final Process process = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseSerialGC",
            "-Dstreamcache.memory.proc=" + proc, "-Dstreamcache.memory.cgroupRoot=" + cgroup,
            "-cp", System.getProperty("java.class.path"), CgroupPressureChild.class.getName()))
            .redirectError(directory.resolve("cgroup-child.err").toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
             Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8)) {
            assertTrue(out.readLine().startsWith("ready capacity=" + (64 * mb)));
            // Headroom 524 MB of 1 GB: above the high watermark, at the maximum: nothing.
            assertEquals(64 * mb, command(in, out, "tick"));
            // 960 MB used: 64 MB headroom, under 10 %: shrink towards 20 % (by 141 MB, at most a 32 MB step).
            Files.writeString(current, (960 * mb) + "\n");
            assertEquals(32 * mb, command(in, out, "tick"));
            assertEquals(8 * mb, command(in, out, "tick"), "down to the lower bound of 8 MB");
            assertTrue(checked(in, out) > 0);
            // 870 MB used: 154 MB headroom, between the watermarks: hold.
            Files.writeString(current, (870 * mb) + "\n");
            assertEquals(8 * mb, command(in, out, "tick"));
            // 700 MB used: 324 MB headroom, 119 MB above the high watermark: grow by at most 32 MB a tick.
            Files.writeString(current, (700 * mb) + "\n");
            assertEquals(40 * mb, command(in, out, "tick"));
            assertEquals(64 * mb, command(in, out, "tick"));
            assertTrue(checked(in, out) > 0);
            in.write("end\n");
            in.flush();
            final String stats = out.readLine();
            assertTrue(stats.contains("shrinks=2") && stats.contains("grows=2"), stats);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, process.exitValue(), Files.readString(directory.resolve("cgroup-child.err")));
        } finally {
            process.destroyForcibly();
        }
    }

    private static long command(final Writer in, final BufferedReader out, final String command) throws Exception {
        in.write(command + "\n");
        in.flush();
        final String line = out.readLine();
        assertTrue(line != null && line.startsWith("capacity="), String.valueOf(line));
        return Long.parseLong(line.substring("capacity=".length()));
    }

    private static long checked(final Writer in, final BufferedReader out) throws Exception {
        in.write("check\n");
        in.flush();
        final String line = out.readLine();
        assertTrue(line != null && line.startsWith("checked cached="), String.valueOf(line));
        return Long.parseLong(line.substring("checked cached=".length()));
    }
}
