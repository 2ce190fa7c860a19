package io.streamcache.core.memory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * What memory this process may use: the memory limit of its cgroup (v2 {@code memory.max}, or
 * v1 {@code memory.limit_in_bytes}, the lowest along the path to the root), the machine's
 * physical memory, and the process's resident set now. A cache larger than what is left of the
 * limit after the heap is not refused by the JVM: the kernel's OOM killer ends the process,
 * with no message, when the cache's pages are first written. {@link #check} says so at build
 * instead, naming what to set.
 *
 * <p>Reads {@code /proc} and {@code /sys/fs/cgroup} each time it is asked (the limit of a
 * container can change while it runs); stateless and thread-safe. On a system without these
 * files every figure is "unknown" and nothing is refused.
 */
final class ContainerMemory {
    /**
     * Memory the JVM uses besides its heap and the cache, assumed when checking a budget:
     * metaspace, code cache, thread stacks, GC structures, Netty's pools, the page tables of the
     * cache (measured at 150-250 MB for a broker-sized JVM; kept on the safe side).
     */
    public static final long JVM_OVERHEAD = 384L << 20;

    private static final long UNLIMITED_V1 = 1L << 60;

    private final Path proc;
    private final Path cgroupRoot;

    /** The running system's memory, read from {@code /proc} and {@code /sys/fs/cgroup}. */
    public static ContainerMemory system() {
        return new ContainerMemory(Path.of("/proc"), Path.of("/sys/fs/cgroup"));
    }

    /**
     * @param proc       where {@code self/cgroup} and {@code self/status} are read.
     * @param cgroupRoot where the cgroup file systems are mounted.
     */
    ContainerMemory(final Path proc, final Path cgroupRoot) {
        this.proc = proc;
        this.cgroupRoot = cgroupRoot;
    }

    /**
     * @return the memory limit of this process's cgroup in bytes (the lowest limit from its
     *         cgroup up to the root), or empty if it has none or it cannot be read.
     */
    public OptionalLong cgroupLimit() {
        final List<String> lines = readLines(proc.resolve("self/cgroup"));
        long limit = Long.MAX_VALUE;
        for (final String line : lines) {
            final String[] parts = line.split(":", 3);
            if (parts.length != 3) {
                continue;
            }
            final String relative = parts[2].startsWith("/") ? parts[2].substring(1) : parts[2];
            if (parts[0].equals("0") && parts[1].isEmpty()) {
                limit = Math.min(limit, lowestAlongPath(cgroupRoot, relative, "memory.max"));
            } else if (List.of(parts[1].split(",")).contains("memory")) {
                limit = Math.min(limit, lowestAlongPath(cgroupRoot.resolve("memory"), relative, "memory.limit_in_bytes"));
            }
        }
        return limit == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(limit);
    }

    /**
     * @return the memory the kernel charges to this process's own cgroup now (v2
     *         {@code memory.current}, v1 {@code memory.usage_in_bytes}): what its limit is
     *         compared with. Empty if it cannot be read.
     */
    public OptionalLong cgroupUsage() {
        for (final String line : readLines(proc.resolve("self/cgroup"))) {
            final String[] parts = line.split(":", 3);
            if (parts.length != 3) {
                continue;
            }
            final String relative = parts[2].startsWith("/") ? parts[2].substring(1) : parts[2];
            final Path file;
            if (parts[0].equals("0") && parts[1].isEmpty()) {
                file = (relative.isEmpty() ? cgroupRoot : cgroupRoot.resolve(relative)).resolve("memory.current");
            } else if (List.of(parts[1].split(",")).contains("memory")) {
                final Path root = cgroupRoot.resolve("memory");
                file = (relative.isEmpty() ? root : root.resolve(relative)).resolve("memory.usage_in_bytes");
            } else {
                continue;
            }
            final List<String> lines = readLines(file);
            if (!lines.isEmpty()) {
                try {
                    return OptionalLong.of(Long.parseLong(lines.get(0).trim()));
                } catch (final NumberFormatException e) {
                    return OptionalLong.empty();
                }
            }
        }
        return OptionalLong.empty();
    }

    /**
     * @return the machine's physical memory in bytes, or empty if the JVM does not say.
     */
    public OptionalLong physicalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            final long total = os.getTotalMemorySize();
            return total > 0 ? OptionalLong.of(total) : OptionalLong.empty();
        }
        return OptionalLong.empty();
    }

    /**
     * @return the process's resident set in bytes now ({@code VmRSS}), or empty if unknown.
     */
    public OptionalLong residentSet() {
        for (final String line : readLines(proc.resolve("self/status"))) {
            if (line.startsWith("VmRSS:")) {
                final String[] parts = line.substring(6).trim().split("\\s+");
                try {
                    return OptionalLong.of(Long.parseLong(parts[0]) * 1024);
                } catch (final NumberFormatException e) {
                    return OptionalLong.empty();
                }
            }
        }
        return OptionalLong.empty();
    }

    /**
     * @return the memory this process may use: the lower of its cgroup limit and the physical
     *         memory, or empty if neither is known.
     */
    public OptionalLong usableMemory() {
        final OptionalLong cgroup = cgroupLimit();
        final OptionalLong physical = physicalMemory();
        if (cgroup.isPresent() && physical.isPresent()) {
            return OptionalLong.of(Math.min(cgroup.getAsLong(), physical.getAsLong()));
        }
        return cgroup.isPresent() ? cgroup : physical;
    }

    /**
     * Checks that the heap's maximum, {@code offHeapBytes} more and {@link #JVM_OVERHEAD} fit in
     * the memory this process may use.
     *
     * @param offHeapBytes what is about to be committed outside the heap (a cache's capacity).
     * @param what         names it in the message, e.g. {@code "cache capacity=4294967296"}.
     * @return null if it fits or the limit is unknown, else a message that says what does not
     *         fit and what to set.
     */
    public String check(final long offHeapBytes, final String what) {
        final OptionalLong usable = usableMemory();
        if (usable.isEmpty()) {
            return null;
        }
        final long heap = Runtime.getRuntime().maxMemory();
        final long needed = heap + offHeapBytes + JVM_OVERHEAD;
        if (needed <= usable.getAsLong()) {
            return null;
        }
        final OptionalLong cgroup = cgroupLimit();
        final boolean byCgroup = cgroup.isPresent() && cgroup.getAsLong() == usable.getAsLong();
        final long room = usable.getAsLong() - heap - JVM_OVERHEAD;
        return what + " does not fit in this process's memory: the " + (byCgroup ? "cgroup (container) limit" : "physical memory")
            + " is " + usable.getAsLong() + " bytes, the heap may grow to " + heap + " (-Xmx) and the JVM needs about "
            + JVM_OVERHEAD + " more; the kernel would kill the process when the cache's pages are written. Set the cache's "
            + "capacity to at most " + Math.max(0, room) + " bytes, lower -Xmx, or raise the "
            + (byCgroup ? "container's memory limit" : "machine's memory") + " to at least " + needed + " bytes";
    }

    private static long lowestAlongPath(final Path root, final String relative, final String file) {
        long lowest = Long.MAX_VALUE;
        Path dir = relative.isEmpty() ? root : root.resolve(relative);
        while (dir != null && dir.startsWith(root)) {
            final List<String> lines = readLines(dir.resolve(file));
            if (!lines.isEmpty()) {
                final String value = lines.get(0).trim();
                if (!value.equals("max")) {
                    try {
                        final long limit = Long.parseLong(value);
                        if (limit > 0 && limit < UNLIMITED_V1) {
                            lowest = Math.min(lowest, limit);
                        }
                    } catch (final NumberFormatException e) {
                        // not a limit: ignore
                    }
                }
            }
            if (dir.equals(root)) {
                break;
            }
            dir = dir.getParent();
        }
        return lowest;
    }

    private static List<String> readLines(final Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (final IOException | SecurityException e) {
            return List.of();
        }
    }
}
