package io.streamcache.segmentstore.internal.compaction;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.streamcache.core.internal.concurrent.Waits;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.segmentstore.compaction.Compaction;
import io.streamcache.segmentstore.compaction.CompactionConfig;
import io.streamcache.segmentstore.compaction.CompactionStats;
import io.streamcache.segmentstore.compaction.RetentionPolicy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.segmentstore.SegmentInfo;
import io.streamcache.segmentstore.SegmentNotFoundException;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.LogRequest;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.LogCorruptedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;

/**
 * Gives disk space back: enforces retention and compacts the log of one store's segments
 * ({@link CompactedSegments}) in the background; thread-safe ({@link #runOnce()} passes are serialized; the settings and stats
 * may be used from any thread).
 *
 * <h2>Why</h2>
 * The writer deletes a log file only once every segment with data in it is deleted or truncated
 * past them, so one idle segment keeps every file it ever wrote to, and with it every other
 * segment's dead bytes there: disk use grows with the whole history. Compaction copies the live
 * records out of such a file into the log's tail and then retires the file, so disk use stays
 * within the live data plus a slack ({@link CompactionPlanner}).
 *
 * <h2>A pass</h2>
 * <ol>
 *   <li><b>Retention</b>: each segment whose {@link RetentionPolicy} it exceeds is truncated
 *       (the store's {@code truncate}, durable like any truncate).</li>
 *   <li><b>Plan</b>: the live bytes per file from the segments' location indexes; while the
 *       files exceed live + slack, the file with the least live bytes before the current one.</li>
 *   <li><b>Copy</b>: each live record of the file (a DATA record an index still places there,
 *       ending after the segment's start), read and checked (header, CRC), is submitted to the
 *       writer as a copy ({@link AggregatingWriter#copy}: a DATA record flagged
 *       {@link LogRecordDescriptor#FLAG_COPY}, with its segment id and offset), at most
 *       {@link CompactionConfig#bytesPerSecond()} bytes per second. The writer skips a copy whose
 *       bytes its durable table says are dead; once a copy is durable the writer moves the
 *       record's location ({@link LocationIndex#relocate}) before its future completes.</li>
 *   <li><b>Retire</b>: once every copy completed, and no index places a live record in the file
 *       any more, {@link AggregatingWriter#retireFile} forces the log and hands the file to the
 *       directory (deleted or recycled).</li>
 * </ol>
 *
 * <h2>Crash safety</h2>
 * The old file is retired only after its copies are durable, so at every moment each live byte
 * is in a file that exists. Recovery reads a copy as "these bytes of the segment are here now"
 * and never as new bytes, so a byte whose original and copy both exist (a crash before the
 * retirement) comes back once, from the newest place; and the SNAPSHOT at the head of every
 * later file carries the segment table past the retired file, so retiring an old file loses no
 * create, seal, truncate or delete (see {@code docs/compaction.md}).
 */
public final class Compactor implements Compaction, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);
    /** Copies in flight before the compactor waits for them. */
    private static final long IN_FLIGHT_BYTES = 4L << 20;
    private static final long WAIT_SLICE_MILLIS = 100;
    private static final long NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);

    private final CompactedSegments store;
    private final AggregatingWriter writer;
    private final LogDirectory directory;
    private final CompactionConfig config;
    private final long slack;
    private final ConcurrentHashMap<String, RetentionPolicy> policies = new ConcurrentHashMap<>();
    private final Object passLock = new Object();
    private final Thread thread;
    private volatile boolean closed;

    @GuardedBy("passLock")
    private final Map<String, ArrayDeque<long[]>> samples = new HashMap<>();
    private final CRC32C crc = new CRC32C();
    private ByteBuffer scratch = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
    private long windowStartNanos;
    private long windowBytes;

    private final LongAdder passes = new LongAdder();
    private final LongAdder filesCompacted = new LongAdder();
    private final LongAdder recordsCopied = new LongAdder();
    private final LongAdder bytesCopied = new LongAdder();
    private final LongAdder retentionTruncations = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private volatile Throwable lastFailure;

    private Compactor(final CompactedSegments store, final AggregatingWriter writer, final LogDirectory directory,
                      final CompactionConfig config, final StreamcacheThreads threads) {
        this.store = Objects.requireNonNull(store, "store");
        this.config = Objects.requireNonNull(config, "config");
        this.writer = Objects.requireNonNull(writer, "writer");
        this.directory = Objects.requireNonNull(directory, "directory");
        this.slack = config.slackLength() > 0 ? config.slackLength() : CompactionConfig.SLACK_DEFAULT_FILES * directory.fileLength();
        if (config.background()) {
            // The config's own factory, if it names one, wins over the store's threads.
            final ThreadFactory factory = config.threadFactory() != null ? config.threadFactory()
                : threads.factory(StreamcacheThreads.Role.COMPACTOR, store.name());
            this.thread = factory.newThread(this::runBackground);
        } else {
            this.thread = null;
        }
    }

    /**
     * Builds the compactor of a store with a log and starts its background thread (unless
     * {@link CompactionConfig#background()} is off, or {@code threads} names a factory of its
     * own: then role {@code COMPACTOR}). The store builds it from
     * {@code SegmentStore.Builder.compaction} and closes it at its own close.
     *
     * @param segments  the store's segments.
     * @param writer    the store's log writer (the copies go through it).
     * @param directory the store's log directory (the files to compact).
     */
    public static Compactor start(final CompactedSegments segments, final AggregatingWriter writer, final LogDirectory directory,
                                  final CompactionConfig config, final StreamcacheThreads threads) {
        final Compactor compactor = new Compactor(segments, writer, directory, config, Objects.requireNonNull(threads, "threads"));
        if (compactor.thread != null) {
            compactor.thread.start();
        }
        return compactor;
    }

    /**
     * Sets the retention of one segment (replacing the default of {@link CompactionConfig#retention()});
     * {@code null} returns it to the default. Applied at the next pass; kept by name (a segment
     * created again under the name has it too) until set to {@code null}.
     */
    @Override
    public void retention(final String segmentName, final RetentionPolicy policy) {
        Objects.requireNonNull(segmentName, "segmentName");
        if (policy == null) {
            policies.remove(segmentName);
        } else {
            policies.put(segmentName, policy);
        }
    }

    /**
     * @return the policy that applies to the segment.
     */
    @Override
    public RetentionPolicy retention(final String segmentName) {
        return policies.getOrDefault(segmentName, config.retention());
    }

    /**
     * Runs one pass on the calling thread (retention, then compaction while the files exceed the
     * live data plus the slack), after any pass in progress. Errors are counted and kept in
     * {@link #lastFailure()}, never thrown: a failed compaction leaves the file in place.
     */
    @Override
    public void runOnce() {
        synchronized (passLock) {
            if (closed) {
                return;
            }
            passes.increment();
            try {
                applyRetention();
                compactWhileOver();
            } catch (final RuntimeException e) {
                failed("pass", e);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Retention
    // ------------------------------------------------------------------------------------------

    @GuardedBy("passLock")
    private void applyRetention() {
        final Set<String> names = store.segmentNames();
        samples.keySet().retainAll(names);
        final long now = System.nanoTime();
        for (final String name : names) {
            final RetentionPolicy policy = retention(name);
            if (!policy.limits() || closed) {
                continue;
            }
            try {
                final SegmentInfo info = store.info(name);
                long target = info.startOffset();
                final long kept = info.length() - info.startOffset();
                if (kept > policy.maxLength()) {
                    target = info.length() - policy.maxLength();
                }
                if (policy.maxAge() != null) {
                    final ArrayDeque<long[]> seen = samples.computeIfAbsent(name, n -> new ArrayDeque<>());
                    if (seen.isEmpty() || seen.peekLast()[1] != info.length()) {
                        seen.addLast(new long[] {now, info.length()});
                    }
                    final long cutoff = now - policy.maxAge().toNanos();
                    while (!seen.isEmpty() && seen.peekFirst()[0] <= cutoff) {
                        target = Math.max(target, seen.pollFirst()[1]);
                    }
                }
                if (target > info.startOffset()) {
                    store.truncate(name, target);
                    retentionTruncations.increment();
                }
            } catch (final SegmentNotFoundException e) {
                samples.remove(name);
            } catch (final RuntimeException e) {
                // One segment's truncate failing (a failed log) must not stop the others nor compaction.
                failed("retention of segment " + name, e);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Compaction
    // ------------------------------------------------------------------------------------------

    /** One live record of the file being compacted. */
    private record Live(long offset, int length, long position) {
    }

    private void compactWhileOver() {
        final long[] numbers = directory.fileNumbers();
        for (int i = 0; i < numbers.length && !closed; i++) {
            final CompactionPlanner.Usage usage = usage(-1, null);
            if (usage == null) {
                return;
            }
            final CompactionPlanner.Plan plan = CompactionPlanner.choose(directory.fileNumbers(), writer.currentFileNumber(),
                directory.fileLength(), slack, usage);
            if (plan == null || !compact(plan.fileNumber())) {
                return;
            }
        }
    }

    /**
     * @return the live bytes per file, collecting into {@code records} the live records of
     *         {@code fileNumber} (if not null); null if a live segment has no location index
     *         (recovered by a custom hook): then nothing can be compacted safely.
     */
    private CompactionPlanner.Usage usage(final long fileNumber, final List<Live> records) {
        final CompactionPlanner.Usage usage = new CompactionPlanner.Usage();
        for (final String name : store.segmentNames()) {
            final LocationIndex index;
            try {
                index = store.locations(name);
            } catch (final SegmentNotFoundException e) {
                continue;
            }
            if (index == null) {
                return null;
            }
            final long start = index.startOffset();
            index.forEach((offset, length, file, position) -> {
                final long live = offset + length - Math.max(offset, start);
                usage.add(file, live);
                if (records != null && file == fileNumber && live > 0) {
                    records.add(new Live(offset, length, position));
                }
            });
        }
        return usage;
    }

    /**
     * Copies the live records of one file to the tail and retires it.
     *
     * @return whether the file was retired.
     */
    private boolean compact(final long fileNumber) {
        final List<Live> records = new ArrayList<>();
        if (usage(fileNumber, records) == null) {
            return false;
        }
        records.sort(Comparator.comparingLong(Live::position));
        final ArrayDeque<LogRequest> inFlight = new ArrayDeque<>();
        long inFlightBytes = 0;
        try {
            for (final Live record : records) {
                if (closed) {
                    return false;
                }
                final ByteBuf data = read(fileNumber, record);
                final int segmentId = scratch.getInt(LogRecordDescriptor.SEGMENT_ID_OFFSET);
                final LogRequest copy;
                try {
                    copy = writer.copy(segmentId, record.offset(), data);
                } catch (final RuntimeException e) {
                    data.release();
                    throw e;
                }
                // Released once the writer is done with it, also when this compaction gives up first.
                copy.whenComplete((offset, error) -> data.release());
                inFlight.add(copy);
                inFlightBytes += record.length();
                throttle(record.length());
                if (inFlightBytes >= IN_FLIGHT_BYTES) {
                    if (!awaitAll(inFlight)) {
                        return false;
                    }
                    inFlightBytes = 0;
                }
            }
            if (!awaitAll(inFlight)) {
                return false;
            }
            final List<Live> left = new ArrayList<>();
            if (usage(fileNumber, left) == null || !left.isEmpty()) {
                failed("compaction of file " + fileNumber, new IllegalStateException(left.size()
                    + " live record(s) are still placed in fileNumber=" + fileNumber + " after copying; the file is kept"));
                return false;
            }
            final LogRequest retire = writer.retireFile(fileNumber);
            if (!await(retire)) {
                return false;
            }
            filesCompacted.increment();
            LOG.debug("log {}: compacted file {} ({} live records)", directory.name(), fileNumber, records.size());
            return true;
        } catch (final IOException | RuntimeException e) {
            failed("compaction of file " + fileNumber, e);
            return false;
        }
    }

    /**
     * Reads and checks one record into {@link #scratch} (header at 0) and returns its payload in a new buffer.
     */
    private ByteBuf read(final long fileNumber, final Live record) throws IOException {
        final int total = HEADER_LENGTH + record.length();
        if (scratch.capacity() < total) {
            scratch = ByteBuffer.allocateDirect(Integer.highestOneBit(total - 1) << 1).order(ByteOrder.LITTLE_ENDIAN);
        }
        scratch.clear().limit(total);
        final int read = directory.read(fileNumber, record.position(), scratch);
        scratch.clear();
        final short magic = scratch.getShort(LogRecordDescriptor.MAGIC_OFFSET);
        final byte type = scratch.get(LogRecordDescriptor.TYPE_OFFSET);
        final int length = scratch.getInt(LogRecordDescriptor.LENGTH_OFFSET);
        final long offset = scratch.getLong(LogRecordDescriptor.SEGMENT_OFFSET_OFFSET);
        final int stored = scratch.getInt(LogRecordDescriptor.CRC_OFFSET);
        if (read < total || magic != LogRecordDescriptor.MAGIC || type != LogRecordDescriptor.TYPE_DATA || length != record.length()
            || offset != record.offset() || LogRecordDescriptor.crc(crc, fileNumber, scratch, 0, length) != stored) {
            throw new LogCorruptedException(directory.filePath(fileNumber), fileNumber, record.position(),
                "compaction expected a DATA record of offset=" + record.offset() + " length=" + record.length() + " here (read="
                    + read + " magic=0x" + Integer.toHexString(magic & 0xFFFF) + " type=" + type + " offset=" + offset + " length="
                    + length + ")");
        }
        scratch.clear();
        final ByteBuf data = Unpooled.directBuffer(length, length);
        scratch.limit(HEADER_LENGTH + length).position(HEADER_LENGTH);
        data.writeBytes(scratch);
        scratch.clear();
        bytesCopied.add(length);
        recordsCopied.increment();
        return data;
    }

    /** Sleeps as long as the copies of the last second ran ahead of the rate. */
    private void throttle(final long bytes) {
        final long now = System.nanoTime();
        if (now - windowStartNanos >= NANOS_PER_SECOND) {
            windowStartNanos = now;
            windowBytes = 0;
        }
        windowBytes += bytes;
        final long due = windowStartNanos + (long) ((double) windowBytes * NANOS_PER_SECOND / config.bytesPerSecond());
        long wait;
        while (!closed && (wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, Math.min(wait, TimeUnit.MILLISECONDS.toNanos(WAIT_SLICE_MILLIS)));
        }
    }

    private boolean awaitAll(final ArrayDeque<LogRequest> inFlight) {
        while (!inFlight.isEmpty()) {
            if (!await(inFlight.pollFirst())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Waits for a request without being interrupted (an interrupt would close the log's shared
     * read channels): gives up when the compactor closes.
     *
     * @return whether it completed normally.
     */
    private boolean await(final LogRequest request) {
        while (true) {
            try {
                request.get(WAIT_SLICE_MILLIS, TimeUnit.MILLISECONDS);
                return true;
            } catch (final TimeoutException e) {
                if (closed) {
                    return false;
                }
            } catch (final ExecutionException e) {
                failed("a copy or retirement", e.getCause());
                return false;
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private void failed(final String what, final Throwable e) {
        failures.increment();
        lastFailure = e;
        if (!closed) {
            LOG.warn("log {}: {} failed, will retry at the next pass: {}", directory.name(), what, e.toString());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Thread, stats, lifecycle
    // ------------------------------------------------------------------------------------------

    private void runBackground() {
        final long intervalNanos = config.interval().toNanos();
        while (!closed) {
            runOnce();
            final long until = System.nanoTime() + intervalNanos;
            long wait;
            while (!closed && (wait = until - System.nanoTime()) > 0) {
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    @Override
    public CompactionStats stats() {
        return new CompactionStats(passes(), filesCompacted(), recordsCopied(), bytesCopied(), retentionTruncations(), failures(),
            slackLength());
    }

    /**
     * @return passes run since start.
     */
    public long passes() {
        return passes.sum();
    }

    /**
     * @return files compacted (copied out and retired) since start.
     */
    public long filesCompacted() {
        return filesCompacted.sum();
    }

    /**
     * @return records and payload bytes read for copying since start (the writer may skip
     *         copies of bytes that died meanwhile: {@link AggregatingWriter#copyCounts()}).
     */
    public long recordsCopied() {
        return recordsCopied.sum();
    }

    public long bytesCopied() {
        return bytesCopied.sum();
    }

    /**
     * @return truncations made by retention since start.
     */
    public long retentionTruncations() {
        return retentionTruncations.sum();
    }

    /**
     * @return failed compactions or passes since start.
     */
    public long failures() {
        return failures.sum();
    }

    /**
     * @return the last failure, or null.
     */
    public Throwable lastFailure() {
        return lastFailure;
    }

    /**
     * @return the slack in bytes the files may exceed the live data by.
     */
    public long slackLength() {
        return slack;
    }

    /**
     * Stops the background thread after the step it is in (an unfinished compaction leaves its
     * file in place; copies already written are harmless), and waits for it. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        if (thread != null) {
            LockSupport.unpark(thread);
            Waits.joinUninterruptibly(thread);
        }
    }

    @Override
    public String toString() {
        return "Compactor{store=" + store.name() + ", slack=" + slack + ", filesCompacted=" + filesCompacted.sum() + '}';
    }
}
