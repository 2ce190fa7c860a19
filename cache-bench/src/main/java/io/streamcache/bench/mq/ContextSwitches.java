package io.streamcache.bench.mq;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The context switches of this JVM's threads, by group of threads, from
 * {@code /proc/self/task/<tid>/status} (Linux): how often the threads of a run parked or were
 * preempted. A group is the thread's name without its trailing digits and dashes (so the 40
 * producers "contest-0" ... "contest-39" are one group). Empty where {@code /proc} is absent.
 * Not thread-safe; a snapshot costs a few file reads per thread.
 */
final class ContextSwitches {
    private ContextSwitches() {
    }

    /** @return per group: {voluntary, involuntary} switches of its live threads, summed. */
    static Map<String, long[]> byThreadGroup() {
        final Map<String, long[]> groups = new TreeMap<>();
        final Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return groups;
        }
        try (Stream<Path> list = Files.list(tasks)) {
            for (final Path task : (Iterable<Path>) list::iterator) {
                try {
                    final String name = Files.readString(task.resolve("comm")).trim().replaceAll("[-0-9]+$", "");
                    long voluntary = 0;
                    long involuntary = 0;
                    for (final String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            involuntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                    final long[] sum = groups.computeIfAbsent(name, k -> new long[2]);
                    sum[0] += voluntary;
                    sum[1] += involuntary;
                } catch (final IOException | RuntimeException e) {
                    // The thread ended while it was read: left out.
                }
            }
        } catch (final IOException e) {
            return groups;
        }
        return groups;
    }

    /** @return the groups whose switches grew from {@code before} to {@code after}, per message, largest first. */
    static String perMessage(final Map<String, long[]> before, final Map<String, long[]> after, final long messages) {
        final List<Map.Entry<String, long[]>> grown = new ArrayList<>();
        for (final Map.Entry<String, long[]> e : after.entrySet()) {
            final long[] b = before.getOrDefault(e.getKey(), new long[2]);
            final long[] d = {e.getValue()[0] - b[0], e.getValue()[1] - b[1]};
            if (d[0] + d[1] > messages / 100) {
                grown.add(Map.entry(e.getKey(), d));
            }
        }
        grown.sort((x, y) -> Long.compare(y.getValue()[0] + y.getValue()[1], x.getValue()[0] + x.getValue()[1]));
        final StringBuilder s = new StringBuilder();
        for (final Map.Entry<String, long[]> e : grown) {
            if (s.length() > 0) {
                s.append(", ");
            }
            s.append(String.format(Locale.ROOT, "%s %.2f + %.2f", e.getKey(), (double) e.getValue()[0] / Math.max(1, messages),
                (double) e.getValue()[1] / Math.max(1, messages)));
        }
        return s.length() == 0 ? "(none counted)" : s.toString();
    }
}
