package io.streamcache.segmentstore.internal.eviction;

import io.streamcache.segmentstore.eviction.CacheManager;
import io.netty.util.ReferenceCounted;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakTracker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

/**
 * The read results that pin a {@link CacheManager}'s entries, counted, and tracked for leaks:
 * thread-safe (the counts are {@link LongAdder}s: no lock and nothing allocated when a read
 * counts itself). One per manager ({@link ManagerHooks#readPins()}); the segment store's reads
 * count themselves here, and {@link CacheManager#stats()} reports the counts.
 *
 * <p>A result that holds pins counts in {@link #pinnedResults()} (and its entries in
 * {@link #entryPins()}) from the read until its last release. A result never released stays
 * counted there, and its entries can never be evicted; when the garbage collector finds it,
 * Netty's {@link ResourceLeakDetector} (at Netty's level, {@code -Dio.netty.leakDetection.level})
 * reports it at ERROR through Netty's logger and it is counted in {@link #leakedResults()}. The
 * count drops only by a release, so a collected leak still counts as pinned: that is what its
 * entries are.
 */
public final class ReadPins {
    private static final VarHandle DETECTOR;
    /** Leaks reported by every manager's detector in this JVM. */
    private static final LongAdder JVM_LEAKS = new LongAdder();

    static {
        try {
            DETECTOR = MethodHandles.lookup().findVarHandle(ReadPins.class, "detector", ResourceLeakDetector.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LongAdder results = new LongAdder();
    private final LongAdder entries = new LongAdder();
    private final LongAdder leaks = new LongAdder();
    /** Made on the first {@link #track} (it names the type it tracks); only through {@link #DETECTOR}. */
    @SuppressWarnings("unused")
    private volatile ResourceLeakDetector<ReferenceCounted> detector;

    /**
     * Counts a result that pins {@code entryCount} entries until {@link #unpinned}. Data path:
     * nothing allocated.
     *
     * @param entryCount entries the result pins (one pin each).
     */
    public void pinned(final int entryCount) {
        results.increment();
        entries.add(entryCount);
    }

    /**
     * Uncounts a result at its last release.
     *
     * @param entryCount the entries it pinned (as given to {@link #pinned}).
     */
    public void unpinned(final int entryCount) {
        results.decrement();
        entries.add(-entryCount);
    }

    /**
     * Starts tracking {@code resource} with this manager's leak detector (the first call makes
     * the detector, named after the resource's class).
     *
     * @return the tracker to close at the last release, or null if Netty's level does not sample
     *         this resource.
     */
    public ResourceLeakTracker<ReferenceCounted> track(final ReferenceCounted resource) {
        ResourceLeakDetector<ReferenceCounted> current = detector;
        if (current == null) {
            final ResourceLeakDetector<ReferenceCounted> made = new CountingLeakDetector(resource.getClass(), this);
            current = DETECTOR.compareAndSet(this, null, made) ? made : detector;
        }
        return current.track(resource);
    }

    /**
     * @return results holding pins now: read, not yet released (a leaked one for ever).
     */
    public long pinnedResults() {
        return results.sum();
    }

    /**
     * @return pins those results hold: one per entry per result (two results over one entry: 2).
     */
    public long entryPins() {
        return entries.sum();
    }

    /**
     * @return results collected unreleased, as Netty's leak detector found them: a sample at
     *         Netty's default level (one result in 128 tracked), every one at {@code paranoid}.
     */
    public long leakedResults() {
        return leaks.sum();
    }

    /**
     * @return {@link #leakedResults()} of every manager in this JVM since it started.
     */
    public static long jvmLeakedResults() {
        return JVM_LEAKS.sum();
    }

    /** Netty's detector, counting what it reports (also when Netty's logger would not print it). */
    private static final class CountingLeakDetector extends ResourceLeakDetector<ReferenceCounted> {
        private final ReadPins pins;

        CountingLeakDetector(final Class<?> resourceType, final ReadPins pins) {
            super(resourceType, Integer.getInteger("io.netty.leakDetection.samplingInterval", 128));
            this.pins = pins;
        }

        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(final String resourceType, final String records) {
            counted();
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(final String resourceType) {
            counted();
            super.reportUntracedLeak(resourceType);
        }

        private void counted() {
            pins.leaks.increment();
            JVM_LEAKS.increment();
        }
    }
}
