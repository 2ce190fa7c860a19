package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Where a storm reader's {@code readAsync} calls spend their time, for the diagnosis of slow
 * calls (off unless {@code -Dstress.callDiagnostics=true}): thread-safe, one record per call,
 * printed to standard error when the JVM exits. Each call's line gives its wall time, the
 * thread's CPU time over it (from {@link ThreadMXBean}; includes this class's own reads, about
 * 20-30 us), the kernel's scheduler statistics of the thread over it
 * ({@code /proc/thread-self/schedstat}: time on a CPU, time runnable waiting for one, times
 * scheduled in) and whether the future was done at return (a hit, or an answer at once). A
 * control follows every call: a 10 us busy loop on the same thread, outside the call, whose wall
 * times go to a histogram printed last. A call's time beyond the control's says what the call
 * does; time the control shows too is the host's (preemption on a loaded machine).
 * Timestamps are {@link System#nanoTime()}, the base of {@code -Xlog}'s {@code timenanos}
 * decorator, to match calls with safepoints.
 */
final class CallDiagnostics {
    static final boolean ENABLED = Boolean.getBoolean("stress.callDiagnostics");
    private static final long CONTROL_NANOS = 10_000;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final ConcurrentLinkedQueue<String> CALLS = new ConcurrentLinkedQueue<>();
    private static final Histogram CONTROL = new Histogram(10_000_000_000L, 3);
    private static final ThreadLocal<RandomAccessFile> SCHEDSTAT = ThreadLocal.withInitial(() -> {
        try {
            return new RandomAccessFile("/proc/thread-self/schedstat", "r");
        } catch (final IOException e) {
            return null;
        }
    });

    static {
        if (ENABLED) {
            Runtime.getRuntime().addShutdownHook(new Thread(CallDiagnostics::print, "call-diagnostics"));
        }
    }

    private CallDiagnostics() {
    }

    /** @return the state before a call: thread CPU time, then the schedstat fields. */
    static long[] begin() {
        final long[] at = new long[4];
        at[0] = THREADS.getCurrentThreadCpuTime();
        schedstat(at);
        return at;
    }

    /** Records a call that began at {@code before} ({@link #begin}) and took {@code wallNanos}; then runs the control. */
    static void end(final String reader, final long[] before, final long startNanos, final long wallNanos, final boolean done) {
        final long cpu = THREADS.getCurrentThreadCpuTime() - before[0];
        final long[] after = new long[4];
        schedstat(after);
        CALLS.add(reader + " t=" + startNanos + " wall=" + wallNanos + " cpu=" + cpu + " done=" + done + " run=" + (after[1] - before[1])
            + " runqueue=" + (after[2] - before[2]) + " slices=" + (after[3] - before[3]));
        final long w0 = System.nanoTime();
        while (System.nanoTime() - w0 < CONTROL_NANOS) {
            Thread.onSpinWait();
        }
        final long window = System.nanoTime() - w0;
        synchronized (CONTROL) {
            CONTROL.recordValue(Math.min(window, CONTROL.getHighestTrackableValue()));
        }
    }

    private static void schedstat(final long[] into) {
        final RandomAccessFile file = SCHEDSTAT.get();
        if (file == null) {
            return;
        }
        try {
            final byte[] bytes = new byte[128];
            file.seek(0);
            final int n = file.read(bytes);
            final String[] fields = new String(bytes, 0, Math.max(n, 0), StandardCharsets.US_ASCII).trim().split(" ");
            for (int i = 0; i < 3 && i < fields.length; i++) {
                into[i + 1] = Long.parseLong(fields[i]);
            }
        } catch (final IOException | NumberFormatException e) {
            // No scheduler statistics here: the fields stay 0.
        }
    }

    private static void print() {
        CALLS.forEach(line -> System.err.println("call " + line));
        synchronized (CONTROL) {
            System.err.println("control " + CONTROL_NANOS / 1000 + "us window: n=" + CONTROL.getTotalCount() + " p50="
                + CONTROL.getValueAtPercentile(50) + " p99=" + CONTROL.getValueAtPercentile(99) + " p99.9="
                + CONTROL.getValueAtPercentile(99.9) + " max=" + CONTROL.getMaxValue() + " over1ms="
                + (CONTROL.getTotalCount() - CONTROL.getCountBetweenValues(0, 1_000_000)));
        }
    }
}
