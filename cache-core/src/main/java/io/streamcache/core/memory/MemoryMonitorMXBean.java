package io.streamcache.core.memory;

/**
 * A thread-safe JMX view of a {@link MemoryMonitor}, registered as
 * {@code io.streamcache:type=MemoryMonitor,name=<name>}; every attribute reads a fresh
 * {@link MemoryMonitorStats}. Callable from any thread.
 */
public interface MemoryMonitorMXBean {
    long getTicks();

    long getShrinks();

    long getGrows();

    long getShrunkBytes();

    long getGrownBytes();

    long getFailures();

    long getCapacity();

    long getLimit();

    long getUsed();

    long getHeadroom();

    /**
     * Takes a reading and resizes now, as the monitor's thread does each period.
     *
     * @return the target's capacity after it.
     */
    long tick();
}
