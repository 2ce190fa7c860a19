package io.streamcache.bench.stress;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The disturbance of a {@code --scenario} run and the phase it puts the run in: before
 * {@code --disturb-at} the run is in {@link Phase#BEFORE}; then the storm readers and the slow
 * consumer start ({@link Phase#DURING}); after {@code --disturb-for} they are told to stop and
 * the slow consumer releases what it held ({@link Phase#AFTER}). A baseline run (the scenario's
 * flags with the disturbance off) goes through the same phases at the same times with nothing
 * started, so its phases line up with the scenario's. Driven by the sampler thread, right after
 * each sample, so that every sampled second belongs to one phase.
 */
final class Disturbance {
    /** A phase changes at the first sample this close to its time (samples are a second apart, give or take). */
    private static final long SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final StressRun run;
    private final long startNanos;
    private final long endNanos;
    private volatile boolean stopped;
    private final List<Thread> threads = new ArrayList<>();
    private SlowConsumer slowConsumer;
    private Phase phase = Phase.BEFORE;
    /** When to take the thread dump ({@code --thread-dump}), Long.MAX_VALUE once taken or if not asked for. */
    private long dumpNanos;

    /** @param runStart the run's clock start ({@link System#nanoTime()}). */
    Disturbance(final StressRun run, final long runStart) {
        this.run = run;
        final StressConfig c = run.config;
        this.startNanos = runStart + c.disturbAt.toNanos();
        this.endNanos = startNanos + c.disturbFor.toNanos();
        this.dumpNanos = c.threadDump && (c.storm || c.slowConsumer) ? startNanos + c.disturbFor.toNanos() / 2 : Long.MAX_VALUE;
    }

    /**
     * @return whether the thread dump is due now (once, halfway through the disturbance, at the
     *     first sample that far in); sampler thread.
     */
    boolean threadDumpDue(final long now) {
        if (phase == Phase.DURING && now >= dumpNanos - SLACK_NANOS) {
            dumpNanos = Long.MAX_VALUE;
            return true;
        }
        return false;
    }

    /** @return the phase the run is in; sampler thread. */
    Phase phase() {
        return phase;
    }

    /** Moves to the next phase if its time has come (starting or stopping the disturbance); sampler thread, after a sample. */
    void afterSample(final long now) {
        if (phase == Phase.BEFORE && now >= startNanos - SLACK_NANOS) {
            start();
            phase = Phase.DURING;
        } else if (phase == Phase.DURING && now >= endNanos - SLACK_NANOS) {
            stopped = true;
            phase = Phase.AFTER;
        }
    }

    private void start() {
        final StressConfig c = run.config;
        if (c.storm) {
            for (int i = 0; i < c.stormReaders; i++) {
                threads.add(start(new StormReader(run, i, c.stormReaders, () -> stopped), "stress-storm-" + i));
            }
        }
        if (c.slowConsumer) {
            slowConsumer = new SlowConsumer(run, () -> stopped);
            threads.add(start(slowConsumer, "stress-slow-consumer"));
        }
    }

    private static Thread start(final Runnable task, final String name) {
        final Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** @return the threads started (to join at the end of the run). */
    List<Thread> threads() {
        return threads;
    }

    /** @return the class of the slow consumer's first refused read, or null. */
    String firstRefusal() {
        return slowConsumer == null ? null : slowConsumer.firstRefusal;
    }
}
