package io.streamcache.bench.stress;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters and latency recorders of one stress run: recorded into from any thread (producers,
 * the log's completion thread, readers), sampled by the one sampling thread.
 *
 * <p>Latencies are recorded in nanoseconds into HdrHistogram {@link Recorder}s (wait-free for
 * writers); the sampler takes each second's interval histogram with {@link Op#interval()} and
 * adds it to the run's total, so the totals are owned by the sampler thread alone.
 */
final class StressMetrics {
    /** Highest latency tracked: one minute; longer values are clamped. */
    static final long MAX_LATENCY_NANOS = 60_000_000_000L;

    /** One operation kind: its recorder and its running total. */
    static final class Op {
        final String name;
        private final Recorder recorder = new Recorder(MAX_LATENCY_NANOS, 3);
        /** Owned by the sampler thread. */
        final Histogram total = new Histogram(MAX_LATENCY_NANOS, 3);
        final LongAdder bytes = new LongAdder();
        /** Reads of this kind that missed the cache and went through the log (reads only). */
        final LongAdder throughLog = new LongAdder();
        /** Reads of this kind that returned bytes (reads only; tail waits that completed included). */
        final LongAdder reads = new LongAdder();
        /** Of {@link #reads}, those served from the cache (reads only). */
        final LongAdder hits = new LongAdder();
        private Histogram recycled;

        Op(final String name) {
            this.name = name;
        }

        /** Records one operation; any thread. */
        void record(final long nanos, final long length) {
            recorder.recordValue(Math.min(Math.max(nanos, 0), MAX_LATENCY_NANOS));
            bytes.add(length);
        }

        /** Forgets what was recorded (the prefill's appends); sampler thread only, before any interval was taken. */
        void reset() {
            recorder.reset();
            total.reset();
            bytes.reset();
            throughLog.reset();
            reads.reset();
            hits.reset();
        }

        /** @return the share of this kind's reads served from the cache (1 if none). */
        double hitRatio() {
            final long n = reads.sum();
            return n == 0 ? 1.0 : (double) hits.sum() / n;
        }

        /** The histogram of what was recorded since the last call, also added to the total; sampler thread only. */
        Histogram interval() {
            final Histogram h = recorder.getIntervalHistogram(recycled);
            total.add(h);
            recycled = h;
            return h;
        }
    }

    final Op append = new Op("append");
    final Op tailRead = new Op("tail read");
    final Op catchupRead = new Op("catch-up read");
    /** Reads of the catch-up storm ({@code --scenario catchup-storm}), from {@code readAsync}'s call to its result. */
    final Op stormRead = new Op("storm read");
    /**
     * Call times of the store's asynchronous methods: from the call until it returns the future
     * to its caller (not until the future completes). A call named {@code ...Async} should hand
     * off and return; a long call time is the caller's thread (a broker's event loop) blocked.
     */
    final Op appendCall = new Op("appendAsync call");
    /** {@code readThrough} and {@code readAsync} calls (the catch-up, storm and slow-consumer reads). */
    final Op readCall = new Op("readAsync call");
    /** {@code readOrWait} calls (the tail readers waiting at a tail). */
    final Op waitCall = new Op("readOrWait call");

    /** Bytes acknowledged to each producer (measured appends only), by producer id. */
    final LongAdder[] producerBytes;
    /** Bytes each tail reader read and verified, by reader id. */
    final LongAdder[] tailReaderBytes;
    /** Bytes of results the slow consumer holds unreleased now; written by it, read by the sampler. */
    final AtomicLong slowHeldBytes = new AtomicLong();
    /**
     * The most bytes the slow consumer held since the sampler last looked: a hold that fills and
     * is released between two once-a-second samples shows here, not in {@link #slowHeldBytes}.
     */
    final AtomicLong slowHeldPeak = new AtomicLong();
    /** Reads of the slow consumer that failed or timed out while it held results (a budget refusing it, today a stall). */
    final LongAdder slowRefusals = new LongAdder();

    final LongAdder bytesVerified = new LongAdder();
    /** Reads that returned bytes from the cache. */
    final LongAdder cacheHits = new LongAdder();
    /** Reads that found their first byte NOT_CACHED and went to the log. */
    final LongAdder cacheMisses = new LongAdder();
    /** Bytes read through from the log. */
    final LongAdder logBytes = new LongAdder();
    /** Reads that waited at the tail and timed out. */
    final LongAdder tailTimeouts = new LongAdder();
    /** Bytes appended during the prefill (not measured). */
    final LongAdder prefillBytes = new LongAdder();
    /** Truncations made by the retention thread, and the bytes they dropped. */
    final LongAdder truncations = new LongAdder();
    final LongAdder truncatedBytes = new LongAdder();
    /** Times a reader found its position truncated and skipped to the segment's new start. */
    final LongAdder truncatedSkips = new LongAdder();
    /** Readers registered with the reader-aware policy (one per reader and segment it read); 0 with another policy. */
    final LongAdder readerRegistrations = new LongAdder();

    StressMetrics(final int producers, final int tailReaders) {
        producerBytes = adders(producers);
        tailReaderBytes = adders(tailReaders);
    }

    private static LongAdder[] adders(final int n) {
        final LongAdder[] adders = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            adders[i] = new LongAdder();
        }
        return adders;
    }

    /** @return the sums of {@code adders} now, in order. */
    static long[] sums(final LongAdder[] adders) {
        final long[] sums = new long[adders.length];
        for (int i = 0; i < adders.length; i++) {
            sums[i] = adders[i].sum();
        }
        return sums;
    }

    /** Forgets the prefill: latencies, bytes and read counters start again from zero; the sampler thread, before readers start. */
    void resetAfterPrefill() {
        for (final Op op : ops()) {
            op.reset();
        }
        bytesVerified.reset();
        cacheHits.reset();
        cacheMisses.reset();
        logBytes.reset();
        tailTimeouts.reset();
        for (final LongAdder a : producerBytes) {
            a.reset();
        }
        for (final LongAdder a : tailReaderBytes) {
            a.reset();
        }
    }

    Op[] ops() {
        return new Op[] {append, tailRead, catchupRead, stormRead, appendCall, readCall, waitCall};
    }

    double hitRatio() {
        final long hits = cacheHits.sum();
        final long total = hits + cacheMisses.sum();
        return total == 0 ? 1.0 : (double) hits / total;
    }
}
