package io.streamcache.bench.stress;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.netty.buffer.ByteBuf;
import io.streamcache.segmentstore.ReadResult;
import io.streamcache.segmentstore.ReadStatus;
import io.streamcache.segmentstore.SegmentStore;
import io.streamcache.segmentstore.SegmentTruncatedException;
import io.streamcache.segmentstore.eviction.ReaderAwarePolicy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The shared state of one stress run: the store, the segments, the metrics, the stop flag and
 * the first failure; thread-safe, shared by the producers, the readers and the sampler.
 */
final class StressRun {
    /** Longest a reader waits for a read-through from the log before failing the run. */
    static final long READ_THROUGH_TIMEOUT_SECONDS = 30;

    /**
     * One segment of the run; {@link #nextOffset} is guarded by the object's monitor, the
     * volatile fields are written by one thread each (see each) and read by any.
     */
    static final class SegmentState {
        private static final AtomicLongFieldUpdater<SegmentState> APPENDED_END =
            AtomicLongFieldUpdater.newUpdater(SegmentState.class, "appendedEnd");

        final int index;
        final String name;
        final long seed;
        /** The offset the next append will get. */
        @GuardedBy("this")
        long nextOffset;
        /** End of the appends acknowledged so far (the highest acknowledged offset + length); raised by {@link #acknowledged}. */
        volatile long appendedEnd;
        /** Where the segment's first tail reader will read next ({@code Long.MAX_VALUE}: no tail reader); written by that reader only. */
        volatile long tailPosition = Long.MAX_VALUE;
        /** Where the segment was truncated to; written by the retention thread only. */
        volatile long truncatedTo;

        SegmentState(final int index, final String name, final long seed) {
            this.index = index;
            this.name = name;
            this.seed = seed;
        }

        /** Raises {@link #appendedEnd} to {@code end}; any thread (completions may run out of order across threads). */
        void acknowledged(final long end) {
            long current = appendedEnd;
            while (current < end && !APPENDED_END.compareAndSet(this, current, end)) {
                current = appendedEnd;
            }
        }
    }

    final StressConfig config;
    /** The store; replaced by the sampler thread at a {@code --restart-at}, while no producer or reader runs. */
    volatile SegmentStore store;
    /**
     * Bytes behind each segment's acknowledged end that tail readers built now start at: 0, or
     * after a restart {@code --restart-rewind} (consumers reconnecting re-read the recent tail).
     */
    volatile long resumeRewind;
    final StressMetrics metrics;
    final SegmentState[] segments;
    /** What readers check against; the producers always write {@link SegmentContent#SPLITMIX}. */
    final SegmentContent expected;
    /**
     * The store's policy when it is {@code --policy reader-aware}, which the readers register with;
     * null otherwise. Replaced with the new store's at a {@code --restart-at}, while no reader runs.
     */
    volatile ReaderAwarePolicy readerAware;
    final AtomicBoolean stopping = new AtomicBoolean();
    /**
     * Whether appends started now are measured (recorded and counted against {@code --ops});
     * false during a prefill. Written by the sampler thread, read by the producers.
     */
    volatile boolean measuring = true;
    /** Appends not yet started, for an {@code --ops} run; unused (Long.MAX_VALUE) for a timed run. */
    final AtomicLong remainingOps;
    final AtomicReference<String> firstMismatch = new AtomicReference<>();
    final AtomicReference<Throwable> firstError = new AtomicReference<>();

    StressRun(final StressConfig config, final SegmentStore store, final SegmentContent expected, final ReaderAwarePolicy readerAware) {
        this.config = config;
        this.metrics = new StressMetrics(config.producers, config.tailReaders);
        this.store = store;
        this.expected = expected;
        this.readerAware = readerAware;
        this.remainingOps = new AtomicLong(config.ops > 0 ? config.ops : Long.MAX_VALUE);
        this.segments = new SegmentState[config.segments];
        for (int i = 0; i < segments.length; i++) {
            segments[i] = new SegmentState(i, "stress-" + i, SegmentContent.segmentSeed(config.seed, i));
        }
    }

    /**
     * Registers a reader of {@code segment} whose next byte is {@code position} with the
     * reader-aware policy (not on the data path: it allocates); the caller moves it with
     * {@link ReaderAwarePolicy.Reader#position(long)} as it reads and closes it when it stops
     * reading the segment.
     *
     * @return the registration, or null when the run uses another policy.
     */
    ReaderAwarePolicy.Reader register(final SegmentState segment, final long position) {
        final ReaderAwarePolicy policy = readerAware;
        if (policy == null) {
            return null;
        }
        final ReaderAwarePolicy.Reader reader = policy.register(segment.name, position);
        metrics.readerRegistrations.increment();
        return reader;
    }

    /** @return the readers registered with the reader-aware policy now, over all segments; 0 with another policy. */
    int registeredReaders() {
        if (readerAware == null) {
            return 0;
        }
        int count = 0;
        for (final SegmentState segment : segments) {
            count += readerAware.readerCount(segment.name);
        }
        return count;
    }

    boolean stopping() {
        return stopping.get();
    }

    /** Records a verification failure (the first one wins) and stops the run. */
    void mismatch(final String message) {
        firstMismatch.compareAndSet(null, message);
        stopping.set(true);
    }

    /** Records an unexpected failure (the first one wins) and stops the run. */
    void fail(final String what, final Throwable error) {
        firstError.compareAndSet(null, new IllegalStateException(what + ": " + error, error));
        stopping.set(true);
    }

    /**
     * @return the {@link SegmentTruncatedException} that {@code error} is or was caused by (a
     *     reader's offset was truncated under it by the retention thread), or null.
     */
    static SegmentTruncatedException truncation(final Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof SegmentTruncatedException) {
                return (SegmentTruncatedException) e;
            }
        }
        return null;
    }

    boolean failed() {
        return firstMismatch.get() != null || firstError.get() != null;
    }

    /**
     * Reads from {@code offset} of {@code segment}: from the cache, or through the log if its first
     * byte is not cached; counts hits and misses and records the latency into {@code op}
     * when bytes came back.
     *
     * @return the result (the caller verifies and releases it).
     */
    ReadResult fetch(final SegmentState segment, final long offset, final int maxLength, final StressMetrics.Op op) throws Exception {
        final long start = System.nanoTime();
        ReadResult result = store.read(segment.name, offset, maxLength);
        boolean hit = false;
        if (result.status() == ReadStatus.NOT_CACHED && result.length() == 0) {
            result.release();
            metrics.cacheMisses.increment();
            op.throughLog.increment();
            final long call = System.nanoTime();
            final CompletableFuture<ReadResult> future = store.readThrough(segment.name, offset, maxLength);
            metrics.readCall.record(System.nanoTime() - call, 0);
            result = await(future);
            metrics.logBytes.add(result.length());
        } else if (result.length() > 0) {
            metrics.cacheHits.increment();
            hit = true;
        }
        if (result.length() > 0) {
            op.record(System.nanoTime() - start, result.length());
            op.reads.increment();
            if (hit) {
                op.hits.increment();
            }
        }
        return result;
    }

    /**
     * With {@code --catchup-share F}: holds a catch-up reader until catch-up reads are below
     * {@code F / (1 - F)} times the tail reads, so that catch-up reads make about that share of
     * all reads whatever the speed of the cache (and, with {@code --ops}, the read side is fixed
     * by the appends as the tail side is). Returns at once without the flag, or when stopping.
     */
    void paceCatchUp() throws InterruptedException {
        final double share = config.catchupShare;
        if (share <= 0) {
            return;
        }
        final double ratio = share / (1 - share);
        while (!stopping() && metrics.catchupRead.reads.sum() >= ratio * metrics.tailRead.reads.sum() + 1) {
            Thread.sleep(1);
        }
    }

    /**
     * Waits up to {@link #READ_THROUGH_TIMEOUT_SECONDS} for a read. A result that comes after the
     * wait gave up is closed when it comes: nobody else would, and it would pin its entries for
     * ever (the cache manager's {@code pinnedResults} at the end of a run would say so).
     *
     * @return the result (the caller releases it).
     */
    static ReadResult await(final CompletableFuture<ReadResult> read) throws InterruptedException, ExecutionException,
        TimeoutException {
        try {
            return read.get(READ_THROUGH_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (final TimeoutException | InterruptedException e) {
            read.thenAccept(ReadResult::close);
            throw e;
        }
    }

    /**
     * Checks every byte of {@code result} (the bytes of {@code segment} from {@code result.offset()});
     * records the first mismatch.
     *
     * @return whether every byte matched.
     */
    boolean verify(final SegmentState segment, final ReadResult result, final String reader) {
        long offset = result.offset();
        for (int i = 0; i < result.viewCount(); i++) {
            final ByteBuf view = result.view(i);
            final long bad = ContentChecker.firstMismatch(view, expected, segment.seed, offset);
            if (bad != ContentChecker.MATCH) {
                final byte actual = view.getByte(view.readerIndex() + (int) (bad - offset));
                mismatch(String.format("segment=%s offset=%d expected=0x%02x actual=0x%02x (reader=%s, read offset=%d length=%d status=%s)",
                    segment.name, bad, expected.byteAt(segment.seed, bad) & 0xff, actual & 0xff, reader, result.offset(),
                    result.length(), result.status()));
                return false;
            }
            offset += view.readableBytes();
        }
        metrics.bytesVerified.add(result.length());
        return true;
    }
}
