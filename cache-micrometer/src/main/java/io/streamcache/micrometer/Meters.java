package io.streamcache.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * Registers the meters of one binder with its tags: counters as {@link FunctionCounter}s and
 * levels as {@link Gauge}s over a stats object's figures, read at each scrape (nothing is counted
 * twice, nothing is added to the data path). Not thread-safe: one binder's {@code bindTo} uses it.
 * Every meter holds its source weakly, as Micrometer's own binders do: a store or cache that the
 * application dropped stops reporting (its gauges read NaN) instead of being kept alive.
 */
final class Meters {
    static final String PREFIX = "streamcache.";
    static final String BYTES = "bytes";

    private final MeterRegistry registry;
    private final Tags tags;

    Meters(final MeterRegistry registry, final Tags tags) {
        this.registry = registry;
        this.tags = tags;
    }

    /** @return these meters' tags plus {@code key=value}. */
    Meters with(final String key, final String value) {
        return new Meters(registry, tags.and(key, value));
    }

    <T> void counter(final String name, final String unit, final String description, final T source, final ToDoubleFunction<T> value) {
        FunctionCounter.builder(PREFIX + name, source, value).baseUnit(unit).description(description).tags(tags).register(registry);
    }

    <T> void gauge(final String name, final String unit, final String description, final T source, final ToDoubleFunction<T> value) {
        Gauge.builder(PREFIX + name, source, value).baseUnit(unit).description(description).tags(tags).register(registry);
    }

    /** A timer over a count and a total time in nanoseconds that the source keeps. */
    <T> void timer(final String name, final String description, final T source, final ToLongFunction<T> count,
                   final ToDoubleFunction<T> totalNanos) {
        FunctionTimer.builder(PREFIX + name, source, count, totalNanos, TimeUnit.NANOSECONDS).description(description).tags(tags)
            .register(registry);
    }
}
