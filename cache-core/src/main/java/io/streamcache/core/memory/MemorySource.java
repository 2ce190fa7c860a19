package io.streamcache.core.memory;

import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * Where a {@link MemoryMonitor} reads the process's memory, from the monitor's thread or any
 * caller of {@link MemoryMonitor#tick()}, so implementations are thread-safe: the limit it must stay under and
 * what it uses against it, and the JVM's direct memory. {@link #system()} reads the running
 * system; a test passes a fake whose figures it sets by hand.
 *
 * <p><b>Threading:</b> implementations must be thread-safe; the monitor calls {@link #read()}
 * from its thread, or from whichever thread calls {@link MemoryMonitor#tick()}.
 */
@FunctionalInterface
public interface MemorySource {
    /**
     * @return the figures now.
     */
    MemoryReading read();

    /**
     * @return the running system: the cgroup (v2 or v1) limit and usage of this process's cgroup
     *         from {@code /proc/self/cgroup} and {@code /sys/fs/cgroup}, else the physical memory
     *         and the resident set ({@code VmRSS}); the direct memory from the JVM. A different
     *         {@code /proc} and cgroup root may be given with the system properties
     *         {@code streamcache.memory.proc} and {@code streamcache.memory.cgroupRoot} (to run a
     *         test against a fake cgroup).
     */
    static MemorySource system() {
        final ContainerMemory container = new ContainerMemory(Path.of(System.getProperty("streamcache.memory.proc", "/proc")),
            Path.of(System.getProperty("streamcache.memory.cgroupRoot", "/sys/fs/cgroup")));
        return () -> {
            final OptionalLong cgroupLimit = container.cgroupLimit();
            final OptionalLong cgroupUsage = container.cgroupUsage();
            final OptionalLong rss = container.residentSet();
            final long limit;
            final long used;
            if (cgroupLimit.isPresent() && cgroupUsage.isPresent()) {
                limit = cgroupLimit.getAsLong();
                used = cgroupUsage.getAsLong();
            } else {
                final OptionalLong usable = container.usableMemory();
                limit = usable.orElse(MemoryReading.UNKNOWN);
                used = rss.orElse(MemoryReading.UNKNOWN);
            }
            return new MemoryReading(limit, used, rss.orElse(MemoryReading.UNKNOWN), DirectMemoryRegion.maxDirectMemory(),
                DirectMemoryRegion.usedDirectMemory());
        };
    }

    /**
     * One reading; {@link #UNKNOWN} for a figure the source cannot give.
     *
     * @param limit          bytes the process may use before the kernel kills it (the cgroup
     *                       limit, else the physical memory).
     * @param used           bytes charged against {@code limit} now (cgroup usage, which counts
     *                       the page cache of the cgroup too, else the resident set).
     * @param residentSet    the process's resident set in bytes.
     * @param directLimit    the JVM's direct-memory limit ({@code -XX:MaxDirectMemorySize}).
     * @param directUsed     direct memory in use (the JDK's pool plus lazily committed regions).
     */
    record MemoryReading(long limit, long used, long residentSet, long directLimit, long directUsed) {
        /** A figure the source cannot give. */
        public static final long UNKNOWN = -1;
    }
}
