package io.streamcache.pulsar;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Where a group of JVMs' CPU and allocation went, from their flight recordings, within a time
 * window: stateless, thread-safe. What {@code jfr view hot-methods} (JDK 21) prints, on JDK 17,
 * plus the share of samples with a frame of each area (streamcache, BookKeeper, Netty, ...)
 * anywhere on the stack and the sampled allocation by the first non-JDK frame.
 */
final class JfrTopFrames {

    private static final int TOP = 25;
    /** Areas by class-name prefix, in the order they are reported. */
    private static final List<String> AREAS = List.of("io.streamcache.", "org.apache.bookkeeper.", "io.netty.", "com.scurrilous.circe.",
        "org.rocksdb.", "org.apache.zookeeper.", "jdk.jfr.", "java.", "sun.", "jdk.");

    private JfrTopFrames() {
    }

    /**
     * @return the report for {@code files}, counting events that started in [{@code from}, {@code to}].
     */
    static String summarize(final List<Path> files, final Instant from, final Instant to) throws IOException {
        final Map<String, Long> self = new HashMap<>();
        final Map<String, Long> inclusive = new HashMap<>();
        final Map<String, Long> areas = new HashMap<>();
        final Map<String, Long> allocation = new HashMap<>();
        final Map<String, Long> monitors = new HashMap<>();
        long samples = 0;
        long allocated = 0;
        long blockedNanos = 0;
        for (final Path file : files) {
            for (final RecordedEvent event : RecordingFile.readAllEvents(file)) {
                final Instant at = event.getStartTime();
                if (at.isBefore(from) || at.isAfter(to)) {
                    continue;
                }
                final String type = event.getEventType().getName();
                final RecordedStackTrace stack = event.getStackTrace();
                if (stack == null || stack.getFrames().isEmpty()) {
                    continue;
                }
                final List<RecordedFrame> frames = stack.getFrames();
                switch (type) {
                    case "jdk.ExecutionSample": {
                        samples++;
                        self.merge(name(frames.get(0).getMethod()), 1L, Long::sum);
                        final Set<String> seen = new HashSet<>();
                        final Set<String> seenAreas = new HashSet<>();
                        for (final RecordedFrame frame : frames) {
                            final String method = name(frame.getMethod());
                            if (seen.add(method)) {
                                inclusive.merge(method, 1L, Long::sum);
                            }
                            final String area = area(frame.getMethod());
                            if (area != null && seenAreas.add(area)) {
                                areas.merge(area, 1L, Long::sum);
                            }
                        }
                        break;
                    }
                    case "jdk.ObjectAllocationSample": {
                        final long weight = event.getLong("weight");
                        allocated += weight;
                        allocation.merge(firstNonJdk(frames) + " <- " + event.getClass("objectClass").getName(), weight, Long::sum);
                        break;
                    }
                    case "jdk.JavaMonitorEnter": {
                        final long nanos = event.getDuration().toNanos();
                        blockedNanos += nanos;
                        monitors.merge(firstNonJdk(frames) + " on " + event.getClass("monitorClass").getName(), nanos, Long::sum);
                        break;
                    }
                    default:
                        break;
                }
            }
        }
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%d execution samples, %.1f MB sampled allocation, %.2f s blocked on monitors, %s .. %s, %s%n",
            samples, allocated / 1e6, blockedNanos / 1e9, from, to, files.stream().map(f -> f.getFileName().toString()).collect(Collectors.toList())));
        out.append("samples with a frame of the area on the stack:\n");
        for (final String area : AREAS) {
            out.append(String.format(Locale.ROOT, "  %6.2f%%  %s%n", share(areas.getOrDefault(area, 0L), samples), area));
        }
        top(out, "top frame (self)", self, samples);
        top(out, "on the stack (inclusive)", inclusive, samples);
        top(out, "sampled allocation by first non-JDK frame <- class", allocation, allocated);
        top(out, "monitor blocking by first non-JDK frame on class", monitors, blockedNanos);
        return out.toString();
    }

    private static void top(final StringBuilder out, final String title, final Map<String, Long> counts, final long total) {
        out.append(title).append(":\n");
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(TOP)
            .forEach(e -> out.append(String.format(Locale.ROOT, "  %6.2f%%  %s%n", share(e.getValue(), total), e.getKey())));
    }

    private static double share(final long count, final long total) {
        return total == 0 ? 0 : 100.0 * count / total;
    }

    private static String name(final RecordedMethod method) {
        return method.getType().getName() + "." + method.getName();
    }

    private static String area(final RecordedMethod method) {
        final String type = method.getType().getName();
        for (final String area : AREAS) {
            if (type.startsWith(area)) {
                return area;
            }
        }
        return null;
    }

    private static String firstNonJdk(final List<RecordedFrame> frames) {
        for (final RecordedFrame frame : frames) {
            final String type = frame.getMethod().getType().getName();
            if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
                return name(frame.getMethod());
            }
        }
        return name(frames.get(0).getMethod());
    }

    /** {@code JfrTopFrames <file.jfr>...}: the report over the whole of each recording. */
    public static void main(final String[] args) throws IOException {
        System.out.print(summarize(java.util.Arrays.stream(args).map(Path::of).collect(Collectors.toList()), Instant.MIN, Instant.MAX));
    }
}
