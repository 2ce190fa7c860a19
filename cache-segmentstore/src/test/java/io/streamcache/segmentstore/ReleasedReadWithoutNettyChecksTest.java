package io.streamcache.segmentstore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Netty lets a user turn its access check off ({@code -Dio.netty.buffer.checkAccessible=false},
 * read once per JVM, hence a child JVM): a released read buffer still throws instead of serving
 * the bytes another segment wrote into the memory it viewed (it served them before).
 */
class ReleasedReadWithoutNettyChecksTest {

    @Test
    @Timeout(120)
    void shouldThrowOnAReleasedBufferEvenWithNettysCheckTurnedOff() throws Exception {
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final Process child = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:MaxDirectMemorySize=64m",
            "-Dio.netty.buffer.checkAccessible=false", "-cp", ChildClassPath.get(),
            ReleasedReadChild.class.getName()))
            .redirectErrorStream(true).start();
        final List<String> lines = new ArrayList<>();
        try (BufferedReader output = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = output.readLine(); line != null; line = output.readLine()) {
                lines.add(line);
            }
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        } finally {
            child.destroyForcibly();
        }
        assertEquals(0, child.exitValue(), () -> "child failed: " + lines);
        assertEquals(List.of("getByte threw", "getBytes threw", "view.getLong threw", "slice.getByte threw", "nioBuffer threw"),
            lines.stream().filter(l -> l.endsWith(" threw") || l.contains(" served ")).toList(), () -> "child output: " + lines);
    }
}
