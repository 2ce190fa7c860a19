package io.streamcache.bench.stress;

import java.io.IOException;
import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;

/**
 * A {@code jstack -l}-like dump of every thread of this JVM, with whole stacks, the monitors and
 * ownable synchronizers each holds and the lock each waits for and its owner: the picture of
 * who waits for whom in the middle of a disturbance ({@code --thread-dump}). Stateless; any
 * thread (the sampler's).
 */
final class ThreadDump {
    private ThreadDump() {
    }

    /** @return the dump as text, threads by name. */
    static String take() {
        final ThreadInfo[] threads = ManagementFactory.getThreadMXBean().dumpAllThreads(true, true);
        Arrays.sort(threads, Comparator.comparing(ThreadInfo::getThreadName));
        final StringBuilder b = new StringBuilder(64 * 1024);
        for (final ThreadInfo t : threads) {
            b.append('"').append(t.getThreadName()).append("\" #").append(t.getThreadId()).append(t.isDaemon() ? " daemon" : "")
                .append("\n   java.lang.Thread.State: ").append(t.getThreadState());
            if (t.getLockName() != null) {
                b.append(" on ").append(t.getLockName());
                if (t.getLockOwnerName() != null) {
                    b.append(" owned by \"").append(t.getLockOwnerName()).append("\" #").append(t.getLockOwnerId());
                }
            }
            b.append('\n');
            final StackTraceElement[] stack = t.getStackTrace();
            for (int i = 0; i < stack.length; i++) {
                b.append("\tat ").append(stack[i]).append('\n');
                for (final MonitorInfo m : t.getLockedMonitors()) {
                    if (m.getLockedStackDepth() == i) {
                        b.append("\t- locked ").append(m).append('\n');
                    }
                }
            }
            final LockInfo[] synchronizers = t.getLockedSynchronizers();
            if (synchronizers.length > 0) {
                b.append("   Locked ownable synchronizers:\n");
                for (final LockInfo l : synchronizers) {
                    b.append("\t- ").append(l).append('\n');
                }
            }
            b.append('\n');
        }
        return b.toString();
    }

    /** Writes {@link #take()} to {@code file}. */
    static Path write(final Path file) throws IOException {
        return Files.writeString(file, take(), StandardCharsets.UTF_8);
    }
}
