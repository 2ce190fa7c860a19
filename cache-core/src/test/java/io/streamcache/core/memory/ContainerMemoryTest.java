package io.streamcache.core.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ContainerMemoryTest {
    @TempDir
    Path root;

    private Path proc() throws IOException {
        return Files.createDirectories(root.resolve("proc/self")).getParent();
    }

    private void write(final Path file, final String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }

    @Test
    void shouldTakeTheLowestCgroupV2LimitAlongThePath() throws IOException {
        final Path proc = proc();
        write(proc.resolve("self/cgroup"), "0::/kubepods/pod1/container\n");
        final Path cg = root.resolve("cgroup");
        write(cg.resolve("kubepods/memory.max"), "max\n");
        write(cg.resolve("kubepods/pod1/memory.max"), "3221225472\n");
        write(cg.resolve("kubepods/pod1/container/memory.max"), "4294967296\n");
        assertEquals(OptionalLong.of(3L << 30), new ContainerMemory(proc, cg).cgroupLimit());
    }

    @Test
    void shouldReadACgroupV1LimitAndIgnoreItsUnlimitedValue() throws IOException {
        final Path proc = proc();
        write(proc.resolve("self/cgroup"), "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n");
        final Path cg = root.resolve("cgroup");
        write(cg.resolve("memory/docker/abc/memory.limit_in_bytes"), "2147483648\n");
        write(cg.resolve("memory/docker/memory.limit_in_bytes"), "9223372036854771712\n");
        assertEquals(OptionalLong.of(2L << 30), new ContainerMemory(proc, cg).cgroupLimit());

        write(cg.resolve("memory/docker/abc/memory.limit_in_bytes"), "9223372036854771712\n");
        assertEquals(OptionalLong.empty(), new ContainerMemory(proc, cg).cgroupLimit(), "unlimited");
    }

    @Test
    void shouldKnowNothingWithoutTheFilesAndRefuseNothing() throws IOException {
        final ContainerMemory memory = new ContainerMemory(root.resolve("no-proc"), root.resolve("no-cgroup"));
        assertEquals(OptionalLong.empty(), memory.cgroupLimit());
        assertEquals(OptionalLong.empty(), memory.residentSet());
        // physical memory still comes from the JVM; a small cache fits in it
        assertNull(memory.check(1 << 20, "cache capacity=1048576"));
    }

    @Test
    void shouldReadTheResidentSet() throws IOException {
        final Path proc = proc();
        write(proc.resolve("self/status"), "Name:\tjava\nVmPeak:\t  999 kB\nVmRSS:\t  123456 kB\n");
        assertEquals(OptionalLong.of(123456L * 1024), new ContainerMemory(proc, root.resolve("cgroup")).residentSet());
        assertTrue(ContainerMemory.system().residentSet().orElse(1) > 0, "this process has a resident set");
    }

    @Test
    void shouldSayWhatToSetWhenHeapPlusCacheExceedTheContainerLimit() throws IOException {
        final Path proc = proc();
        write(proc.resolve("self/cgroup"), "0::/c\n");
        final Path cg = root.resolve("cgroup");
        final long heap = Runtime.getRuntime().maxMemory();
        final long limit = heap + ContainerMemory.JVM_OVERHEAD + (512L << 20);
        write(cg.resolve("c/memory.max"), limit + "\n");
        final ContainerMemory memory = new ContainerMemory(proc, cg);
        assertNull(memory.check(256L << 20, "cache capacity=268435456"), "fits: 256 MB of 512 MB left");
        final String refusal = memory.check(4L << 30, "cache capacity=4294967296");
        assertNotNull(refusal, "4 GB does not fit in 512 MB left");
        assertTrue(refusal.contains("cache capacity=4294967296"), refusal);
        assertTrue(refusal.contains("cgroup (container) limit is " + limit), refusal);
        assertTrue(refusal.contains("at most " + (512L << 20) + " bytes"), refusal);
    }
}
