package io.streamcache.segmentstore.compaction;

import io.streamcache.segmentstore.internal.compaction.Compactor;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;

/**
 * Settings of a store's {@code Compactor}: immutable, thread-safe; built with {@link #builder()}.
 *
 * <ul>
 *   <li>{@link Builder#slackLength(long) slackLength}: compaction starts when the log files
 *       (without spares) take more than the live data plus this many bytes; default
 *       {@link #SLACK_DEFAULT_FILES} file lengths (0 here means that default).</li>
 *   <li>{@link Builder#bytesPerSecond(long) bytesPerSecond}: the most bytes copied per second,
 *       so copies do not starve producers of the writer; default 64 MiB/s.</li>
 *   <li>{@link Builder#interval(Duration) interval}: the time between passes (retention, then
 *       compaction while over the bound); default 200 ms.</li>
 *   <li>{@link Builder#retention(RetentionPolicy) retention}: the policy of every segment that
 *       has none of its own ({@code Compactor.retention(String, RetentionPolicy)}); default keep all.</li>
 *   <li>{@link Builder#threadFactory(ThreadFactory) threadFactory}: makes the one background
 *       thread (the embedder's business: name, priority, group); default a daemon thread named
 *       {@code streamcache-compactor-<store>}. {@link Builder#background(boolean) background(false)}
 *       starts none: the embedder calls {@code Compactor#runOnce()} itself.</li>
 * </ul>
 */
public final class CompactionConfig {
    /** Slack by default, in file lengths. */
    public static final int SLACK_DEFAULT_FILES = 4;
    public static final long BYTES_PER_SECOND_DEFAULT = 64L << 20;
    public static final Duration INTERVAL_DEFAULT = Duration.ofMillis(200);

    private final long slackLength;
    private final long bytesPerSecond;
    private final Duration interval;
    private final RetentionPolicy retention;
    private final ThreadFactory threadFactory;
    private final boolean background;

    private CompactionConfig(final Builder builder) {
        this.slackLength = builder.slackLength;
        this.bytesPerSecond = builder.bytesPerSecond;
        this.interval = builder.interval;
        this.retention = builder.retention;
        this.threadFactory = builder.threadFactory;
        this.background = builder.background;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * @return the slack in bytes, 0 for {@link #SLACK_DEFAULT_FILES} file lengths.
     */
    public long slackLength() {
        return slackLength;
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    public Duration interval() {
        return interval;
    }

    public RetentionPolicy retention() {
        return retention;
    }

    /**
     * @return the thread factory, or null for the default.
     */
    public ThreadFactory threadFactory() {
        return threadFactory;
    }

    public boolean background() {
        return background;
    }

    @Override
    public String toString() {
        return "CompactionConfig{slackLength=" + slackLength + ", bytesPerSecond=" + bytesPerSecond + ", interval=" + interval
            + ", retention=" + retention + ", background=" + background + '}';
    }

    /**
     * Builds a {@link CompactionConfig}. Not thread-safe.
     */
    public static final class Builder {
        private long slackLength;
        private long bytesPerSecond = BYTES_PER_SECOND_DEFAULT;
        private Duration interval = INTERVAL_DEFAULT;
        private RetentionPolicy retention = RetentionPolicy.KEEP_ALL;
        private ThreadFactory threadFactory;
        private boolean background = true;

        private Builder() {
        }

        /**
         * @throws IllegalArgumentException if negative.
         */
        public Builder slackLength(final long slackLength) {
            if (slackLength < 0) {
                throw new IllegalArgumentException("slackLength=" + slackLength + " must be >= 0");
            }
            this.slackLength = slackLength;
            return this;
        }

        /**
         * @throws IllegalArgumentException if not positive.
         */
        public Builder bytesPerSecond(final long bytesPerSecond) {
            if (bytesPerSecond <= 0) {
                throw new IllegalArgumentException("bytesPerSecond=" + bytesPerSecond + " must be > 0");
            }
            this.bytesPerSecond = bytesPerSecond;
            return this;
        }

        /**
         * @throws IllegalArgumentException if not positive.
         */
        public Builder interval(final Duration interval) {
            if (interval == null || interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("interval=" + interval + " must be positive");
            }
            this.interval = interval;
            return this;
        }

        public Builder retention(final RetentionPolicy retention) {
            this.retention = Objects.requireNonNull(retention, "retention");
            return this;
        }

        public Builder threadFactory(final ThreadFactory threadFactory) {
            this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
            return this;
        }

        public Builder background(final boolean background) {
            this.background = background;
            return this;
        }

        public CompactionConfig build() {
            return new CompactionConfig(this);
        }
    }
}
