package io.streamcache.bookkeeper;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time and context switches of every thread of this process: not thread-safe, one benchmark
 * thread takes the snapshots. The process's totals come from Linux's
 * {@code /proc/self/task/<tid>/stat} ({@code utime + stime}, clock ticks) and {@code status}
 * ({@code voluntary_ctxt_switches}, {@code nonvoluntary_ctxt_switches}), which count the JIT
 * compiler and GC threads too; the split by thread comes from the {@link ThreadMXBean} (the
 * kernel keeps only 15 characters of a name, too few to tell {@code streamcache-log-writer-...}
 * from {@code streamcache-log-completer-...}), grouped by name with the digits replaced by
 * {@code #}, and what no Java thread did is the group {@value #VM_GROUP}. A thread that ended
 * between two snapshots is lost; a thread that started counts from zero. Where {@code /proc} is
 * absent, its figures are 0.
 */
final class ThreadCpu {

    /** Linux's {@code USER_HZ}, the unit of {@code utime} and {@code stime}: 100 on every common kernel. */
    private static final long TICKS_PER_SECOND = 100;
    private static final Path TASKS = Path.of("/proc/self/task");
    /** The group of the CPU time no Java thread accounts for. */
    static final String VM_GROUP = "JVM's own threads (JIT, GC)";
    private static final ThreadMXBean JAVA_THREADS = ManagementFactory.getThreadMXBean();

    /** One thread's counters: its name, CPU nanoseconds, voluntary and involuntary context switches. */
    record Counters(String name, long cpuNanos, long voluntary, long involuntary) {
    }

    private final Map<Integer, Counters> threads;
    /** Java thread id to its name and CPU nanoseconds. */
    private final Map<Long, Counters> javaThreads;

    private ThreadCpu(final Map<Integer, Counters> threads) {
        this.threads = threads;
        this.javaThreads = new HashMap<>();
        final long[] ids = JAVA_THREADS.getAllThreadIds();
        final ThreadInfo[] infos = JAVA_THREADS.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            final long cpu = JAVA_THREADS.getThreadCpuTime(ids[i]);
            if (infos[i] != null && cpu >= 0) {
                javaThreads.put(ids[i], new Counters(infos[i].getThreadName(), cpu, 0, 0));
            }
        }
    }

    /** @return the counters of every thread now. */
    static ThreadCpu snapshot() {
        final Map<Integer, Counters> threads = new HashMap<>();
        if (!Files.isDirectory(TASKS)) {
            return new ThreadCpu(threads);
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (final Path task : tasks) {
                final Counters counters = read(task);
                if (counters != null) {
                    threads.put(Integer.parseInt(task.getFileName().toString()), counters);
                }
            }
        } catch (final IOException e) {
            // The process is still there; a directory listing that failed counts as empty.
        }
        return new ThreadCpu(threads);
    }

    /** @return the thread's counters, or null if it ended while being read. */
    private static Counters read(final Path task) {
        try {
            final String stat = Files.readString(task.resolve("stat"));
            // "tid (comm) state ..." where comm may hold spaces and parentheses: the last ')' ends it.
            final int open = stat.indexOf('(');
            final int close = stat.lastIndexOf(')');
            final String name = stat.substring(open + 1, close);
            final String[] fields = stat.substring(close + 2).split(" ");
            // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after "state" (field 3).
            final long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            long voluntary = 0;
            long involuntary = 0;
            for (final String line : Files.readAllLines(task.resolve("status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                    involuntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            return new Counters(name, ticks * (1_000_000_000L / TICKS_PER_SECOND), voluntary, involuntary);
        } catch (final IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * @return the process's CPU nanoseconds, voluntary and involuntary context switches between
     *         {@code before} and this snapshot (from {@code /proc}).
     */
    long[] totalSince(final ThreadCpu before) {
        final long[] sum = new long[3];
        for (final Map.Entry<Integer, Counters> thread : threads.entrySet()) {
            final Counters now = thread.getValue();
            final Counters then = before.threads.get(thread.getKey());
            final boolean same = then != null && then.name().equals(now.name());
            sum[0] += now.cpuNanos() - (same ? then.cpuNanos() : 0);
            sum[1] += now.voluntary() - (same ? then.voluntary() : 0);
            sum[2] += now.involuntary() - (same ? then.involuntary() : 0);
        }
        return sum;
    }

    /**
     * @return per Java thread group (name with digits as {@code #}) its CPU nanoseconds between
     *         {@code before} and this snapshot, and {@link #VM_GROUP} for the rest of the process's.
     */
    Map<String, Long> cpuByGroup(final ThreadCpu before) {
        final Map<String, Long> groups = new TreeMap<>();
        long java = 0;
        for (final Map.Entry<Long, Counters> thread : javaThreads.entrySet()) {
            final Counters now = thread.getValue();
            final Counters then = before.javaThreads.get(thread.getKey());
            final long cpu = now.cpuNanos() - (then != null ? then.cpuNanos() : 0);
            groups.merge(now.name().replaceAll("[0-9]+", "#"), cpu, Long::sum);
            java += cpu;
        }
        final long rest = totalSince(before)[0] - java;
        if (rest > 0) {
            groups.put(VM_GROUP, rest);
        }
        return groups;
    }
}
