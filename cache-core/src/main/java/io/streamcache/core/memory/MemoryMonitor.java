package io.streamcache.core.memory;

import io.streamcache.core.CacheConfigurationException;
import io.streamcache.core.StreamcacheThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches the process's memory and resizes a cache so that the process is not killed, thread-safe
 * (ticks serialized on its monitor, on its own thread or the caller's): shrinks
 * the cache when the headroom under a limit falls below a low watermark, grows it back when the
 * headroom is above a high one (hysteresis: between the two nothing changes).
 *
 * <pre>
 *   limit  -+------------------------------------------------------
 *           |  headroom &lt; low x limit  : shrink by (high x limit - headroom), at most maxStep
 *   low    -+- - - - - - - - - - - - - - - - - - - - - - - - - - - -
 *           |  between low and high    : nothing (hysteresis)
 *   high   -+- - - - - - - - - - - - - - - - - - - - - - - - - - - -
 *           |  headroom &gt; high x limit : grow by (headroom - high x limit), at most maxStep,
 *           |                            up to maxCapacity
 *   0      -+------------------------------------------------------    used memory grows upwards
 * </pre>
 *
 * Two limits are watched, each with the same watermarks (as fractions of it): the container's
 * (the cgroup limit and its usage, else physical memory and the resident set) and the JVM's
 * direct memory ({@code -XX:MaxDirectMemorySize} and what is reserved under it); a shrink
 * answers the tighter one, a grow needs room under both. A limit the source cannot read is
 * ignored. Capacities move in whole buffers, within {@code [minCapacity, maxCapacity]}.
 *
 * <p>Each shrink and grow is logged (a shrink as a warning: memory was short) and counted in
 * {@link #stats()} and the {@link MemoryMonitorMXBean}.
 *
 * <p><b>Threading:</b> thread-safe. With a positive period the monitor runs on its own thread
 * (role {@link StreamcacheThreads.Role#MEMORY_MONITOR}) and ticks once per period; with
 * {@link Duration#ZERO} it has none and the embedder (or a test) calls {@link #tick()}. Ticks
 * are serialized on this object's monitor. {@link #close()} stops the thread and waits for it.
 */
public final class MemoryMonitor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MemoryMonitor.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String name;
    private final MemorySource source;
    private final ResizeTarget target;
    private final double low;
    private final double high;
    private final long minCapacity;
    private final long maxCapacity;
    private final long maxStep;
    private final long periodNanos;
    private final Thread thread;
    private final ObjectName objectName;
    private volatile boolean closed;
    private volatile MemoryMonitorStats stats;

    private MemoryMonitor(final Builder builder) {
        this.name = builder.name != null ? builder.name : "monitor-" + INSTANCES.incrementAndGet();
        this.source = builder.source;
        this.target = builder.target;
        this.low = builder.low;
        this.high = builder.high;
        final long unit = target.granularity();
        this.minCapacity = Math.max(unit, builder.minCapacity / unit * unit);
        this.maxCapacity = (builder.maxCapacity < 0 ? target.maxCapacity() : Math.min(builder.maxCapacity, target.maxCapacity()))
            / unit * unit;
        this.maxStep = Math.max(unit, builder.maxStep / unit * unit);
        this.periodNanos = builder.period.toNanos();
        this.stats = new MemoryMonitorStats(0, 0, 0, 0, 0, 0, target.capacity(), -1, -1, -1);
        this.objectName = builder.registerMBean ? register() : null;
        if (periodNanos > 0) {
            thread = builder.threads.newThread(StreamcacheThreads.Role.MEMORY_MONITOR, name, this::run);
            thread.start();
        } else {
            thread = null;
        }
        LOG.info("memory monitor {}: target={} low={} high={} capacity in [{}, {}] maxStep={} period={}", name, target.name(), low,
            high, minCapacity, maxCapacity, maxStep, builder.period);
    }

    /**
     * @param source where the memory figures come from ({@link MemorySource#system()} in production).
     * @param target what to resize.
     * @return a builder with the defaults: low 10 %, high 20 %, steps of at most 256 MB, a tick a second.
     */
    public static Builder builder(final MemorySource source, final ResizeTarget target) {
        return new Builder(source, target);
    }

    /**
     * Takes a reading and shrinks or grows the target if a watermark says so.
     *
     * @return the target's capacity after the tick.
     */
    public synchronized long tick() {
        final MemoryMonitorStats before = stats;
        long shrinks = before.shrinks();
        long grows = before.grows();
        long shrunk = before.shrunkBytes();
        long grown = before.grownBytes();
        long failures = before.failures();
        long capacity = target.capacity();
        MemorySource.MemoryReading reading = null;
        long headroom = -1;
        try {
            reading = source.read();
            long shrinkBy = 0;
            long growRoom = Long.MAX_VALUE;
            boolean known = false;
            final long[][] limits = {{reading.limit(), reading.used()}, {reading.directLimit(), reading.directUsed()}};
            for (final long[] pair : limits) {
                final long limit = pair[0];
                final long used = pair[1];
                if (limit <= 0 || used < 0) {
                    continue;
                }
                known = true;
                final long room = limit - used;
                headroom = headroom < 0 ? room : Math.min(headroom, room);
                if (room < (long)(low * limit)) {
                    shrinkBy = Math.max(shrinkBy, (long)(high * limit) - room);
                }
                growRoom = Math.min(growRoom, room - (long)(high * limit));
            }
            final long unit = target.granularity();
            if (known && shrinkBy > 0 && capacity > minCapacity) {
                final long step = Math.min(maxStep, (shrinkBy + unit - 1) / unit * unit);
                final long wanted = Math.max(minCapacity, capacity - step);
                final long reached = target.resize(wanted);
                shrinks++;
                shrunk += Math.max(0, capacity - reached);
                LOG.warn("memory monitor {}: headroom {} bytes under limit {} (used {}, direct {} of {}): shrank {} from {} to {} "
                    + "bytes (asked {})", name, headroom, reading.limit(), reading.used(), reading.directUsed(), reading.directLimit(),
                    target.name(), capacity, reached, wanted);
                capacity = reached;
            } else if (known && shrinkBy == 0 && growRoom > 0 && capacity < maxCapacity) {
                final long step = Math.min(maxStep, growRoom / unit * unit);
                if (step >= unit) {
                    final long wanted = Math.min(maxCapacity, capacity + step);
                    final long reached = target.resize(wanted);
                    grows++;
                    grown += Math.max(0, reached - capacity);
                    LOG.info("memory monitor {}: headroom {} bytes (used {} of {}, direct {} of {}): grew {} from {} to {} bytes",
                        name, headroom, reading.used(), reading.limit(), reading.directUsed(), reading.directLimit(), target.name(),
                        capacity, reached);
                    capacity = reached;
                }
            }
        } catch (final RuntimeException e) {
            failures++;
            LOG.warn("memory monitor {}: tick failed", name, e);
        }
        stats = new MemoryMonitorStats(before.ticks() + 1, shrinks, grows, shrunk, grown, failures, capacity,
            reading == null ? -1 : reading.limit(), reading == null ? -1 : reading.used(), headroom);
        return capacity;
    }

    /**
     * @return the counters and the last reading; any thread.
     */
    public MemoryMonitorStats stats() {
        return stats;
    }

    public String name() {
        return name;
    }

    private void run() {
        while (!closed) {
            try {
                tick();
            } catch (final RuntimeException | Error e) {
                LOG.error("memory monitor {}: tick failed", name, e);
            }
            LockSupport.parkNanos(this, periodNanos);
        }
        LOG.info("memory monitor {} stopped: {}", name, stats);
    }

    /**
     * Stops the thread (waiting for it) and unregisters the MBean. Idempotent; the target is left
     * at its capacity.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (thread != null) {
            LockSupport.unpark(thread);
            if (thread != Thread.currentThread()) {
                try {
                    thread.join(TimeUnit.SECONDS.toMillis(10));
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (objectName != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(objectName);
            } catch (final JMException e) {
                LOG.warn("could not unregister {}", objectName, e);
            }
        }
    }

    private ObjectName register() {
        try {
            final ObjectName objectName = new ObjectName("io.streamcache:type=MemoryMonitor,name=" + ObjectName.quote(name));
            ManagementFactory.getPlatformMBeanServer().registerMBean(new Jmx(), objectName);
            return objectName;
        } catch (final JMException e) {
            throw new CacheConfigurationException("could not register the memory monitor's MBean (name=" + name
                + "): choose a unique name or disable registerMBean", e);
        }
    }

    /** The MBean: reads {@link #stats()}. */
    private final class Jmx implements MemoryMonitorMXBean {
        @Override
        public long getTicks() {
            return stats.ticks();
        }

        @Override
        public long getShrinks() {
            return stats.shrinks();
        }

        @Override
        public long getGrows() {
            return stats.grows();
        }

        @Override
        public long getShrunkBytes() {
            return stats.shrunkBytes();
        }

        @Override
        public long getGrownBytes() {
            return stats.grownBytes();
        }

        @Override
        public long getFailures() {
            return stats.failures();
        }

        @Override
        public long getCapacity() {
            return stats.capacity();
        }

        @Override
        public long getLimit() {
            return stats.limit();
        }

        @Override
        public long getUsed() {
            return stats.used();
        }

        @Override
        public long getHeadroom() {
            return stats.headroom();
        }

        @Override
        public long tick() {
            return MemoryMonitor.this.tick();
        }
    }

    /**
     * Configures and builds a {@link MemoryMonitor}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        /** Default low watermark: shrink when the headroom falls below 10 % of a limit. */
        public static final double LOW_DEFAULT = 0.10;
        /** Default high watermark: grow when the headroom is above 20 % of every limit. */
        public static final double HIGH_DEFAULT = 0.20;
        /** Default largest change per tick: 256 MB. */
        public static final long MAX_STEP_DEFAULT = 256L << 20;
        /** Default period: a tick a second. */
        public static final Duration PERIOD_DEFAULT = Duration.ofSeconds(1);

        private final MemorySource source;
        private final ResizeTarget target;
        private double low = LOW_DEFAULT;
        private double high = HIGH_DEFAULT;
        private long minCapacity = 0;
        private long maxCapacity = -1;
        private long maxStep = MAX_STEP_DEFAULT;
        private Duration period = PERIOD_DEFAULT;
        private StreamcacheThreads threads = StreamcacheThreads.defaults();
        private String name;
        private boolean registerMBean = true;

        private Builder(final MemorySource source, final ResizeTarget target) {
            this.source = Objects.requireNonNull(source, "source");
            this.target = Objects.requireNonNull(target, "target");
        }

        /**
         * @param low  headroom, as a fraction of a limit, under which the cache shrinks; in (0, high).
         * @param high headroom above which it grows back; in (low, 1).
         */
        public Builder watermarks(final double low, final double high) {
            this.low = low;
            this.high = high;
            return this;
        }

        /**
         * @param minCapacity the least capacity a shrink leaves (rounded down to whole buffers, at least one).
         * @param maxCapacity the most a grow brings back (at most the target's maximum).
         */
        public Builder bounds(final long minCapacity, final long maxCapacity) {
            this.minCapacity = minCapacity;
            this.maxCapacity = maxCapacity;
            return this;
        }

        /**
         * @param maxStep the largest change of one tick, in bytes (at least one buffer).
         */
        public Builder maxStep(final long maxStep) {
            this.maxStep = maxStep;
            return this;
        }

        /**
         * @param period time between ticks; zero runs no thread (call {@link MemoryMonitor#tick()}).
         */
        public Builder period(final Duration period) {
            this.period = Objects.requireNonNull(period, "period");
            return this;
        }

        /**
         * @param threads creates the monitor's thread (role {@link StreamcacheThreads.Role#MEMORY_MONITOR}).
         */
        public Builder threads(final StreamcacheThreads threads) {
            this.threads = Objects.requireNonNull(threads, "threads");
            return this;
        }

        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder registerMBean(final boolean registerMBean) {
            this.registerMBean = registerMBean;
            return this;
        }

        /**
         * @throws CacheConfigurationException if a setting is out of range.
         */
        public MemoryMonitor build() {
            if (!(low > 0.0 && low < high && high < 1.0)) {
                throw new CacheConfigurationException("watermarks low=" + low + " high=" + high + " must satisfy 0 < low < high < 1");
            }
            if (minCapacity < 0 || (maxCapacity >= 0 && maxCapacity < Math.max(minCapacity, target.granularity()))) {
                throw new CacheConfigurationException("bounds minCapacity=" + minCapacity + " maxCapacity=" + maxCapacity
                    + " must satisfy 0 <= minCapacity <= maxCapacity, maxCapacity at least one buffer (" + target.granularity() + ")");
            }
            if (maxStep <= 0) {
                throw new CacheConfigurationException("maxStep=" + maxStep + " must be positive");
            }
            if (period.isNegative()) {
                throw new CacheConfigurationException("period=" + period + " must not be negative");
            }
            return new MemoryMonitor(this);
        }
    }
}
