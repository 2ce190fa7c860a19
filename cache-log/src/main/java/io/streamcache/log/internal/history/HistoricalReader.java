package io.streamcache.log.internal.history;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;
import io.streamcache.log.internal.LogMBeans;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.internal.LogRecordCodec;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.log.internal.location.LocationIndex;
import io.streamcache.log.internal.location.LocationList;
import io.streamcache.log.HistoricalReadMXBean;
import io.streamcache.log.HistoricalReadStats;
import io.streamcache.log.LogCorruptedException;

import javax.management.ObjectName;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

import static io.streamcache.log.internal.LogRecordDescriptor.HEADER_LENGTH;

/**
 * Reads segment bytes that are no longer cached back from the log files, a large aligned range
 * at a time, reading each range once however many callers miss on it at the same time:
 * thread-safe; any number of threads may call {@link #read}.
 *
 * <h2>Ranges</h2>
 * A miss at offset {@code x} reads the segment's range {@code [r, r + rangeLength)} with
 * {@code r = x - x % rangeLength} ({@link #RANGE_LENGTH_DEFAULT}: 1 MiB), clipped to what the
 * location index holds ({@code [startOffset, endOffset)}). A catch-up reader reading sequentially
 * misses once per range and then finds the range in the cache; alignment makes concurrent misses
 * near each other the same range.
 * <pre>
 *  read(segment 7, locations, x = 1.3 MiB)        rangeLength = 1 MiB
 *    | key = (locations, 1 MiB): already in flight? -&gt; join its future (no read)
 *    | locations.locate(1 MiB, 2 MiB)              records overlapping the range, under its read lock
 *    | group the records in spans: same file, gaps &lt;= maxReadGap, span &lt;= the scratch buffer,
 *    |             and all the gaps of the range together &lt;= what keeps its reads &lt;= 1.5 x its bytes
 *    | per span: one positional read, from the first record's header to the last record's end,
 *    |             into a pooled direct buffer
 *    | per record: LogRecordCodec checks MAGIC, FLAGS, TYPE = DATA, LENGTH, SEGMENT_ID, SEGMENT_OFFSET, CRC; copy the
 *    |             part inside the range into the range's buffer (pooled direct, or heap)
 *    | sink.fill(7, 1 MiB, bytes)                   once: the store puts the bytes back in its cache
 *    v complete every caller's future with the same read-only LogRange
 * </pre>
 *
 * <h2>Threads</h2>
 * Reads run on a small pool the reader owns ({@link #THREADS_DEFAULT} threads, created through
 * the builder's {@link StreamcacheThreads}, role {@code LOG_READER}), on an
 * executor given to the builder, or, with {@code threads(0)}, on the thread of the caller that
 * misses first (its {@link #read} returns a completed future; callers that join it wait on the
 * future without reading). Futures complete on the reading thread: dependent actions that do
 * real work should use the {@code ...Async} variants. Each caller gets its own copy of the shared
 * future, so cancelling one cancels nothing else.
 *
 * <p><b>Design note:</b> the range's bytes are shared read-only by every caller that joined the
 * read. By default they are an unpooled heap buffer: the callers then need no release protocol.
 * That costs a heap allocation of every byte read, and a catch-up storm reading the log at
 * 1 GB/s made 70 young collections in 9 s (274 ms of pauses, every thread stopped) against 2
 * without it; so the store gives the reader {@link Builder#rangeBuffers(RangeBuffers) pooled
 * direct buffers}, and each caller's future then completes with a claim on the range that it
 * {@link LogRange#release() releases} (the reader holds its own reference until every caller
 * registered at completion has its claim). The scratch buffers that the file reads go through
 * are direct and pooled.
 *
 * <p>Only DATA records the location index points at are read, and each is validated; a record
 * that no longer validates completes the future with a {@link LogCorruptedException}.
 */
public final class HistoricalReader implements AutoCloseable {
    /** Default range read per miss: 1 MiB of segment data. */
    public static final int RANGE_LENGTH_DEFAULT = 1 << 20;
    /** Default reading threads. */
    public static final int THREADS_DEFAULT = 2;
    /** Default largest gap between two records read in one positional read: 64 KiB. */
    public static final int MAX_READ_GAP_DEFAULT = 64 << 10;

    private static final int PAGE_LENGTH = LogFileDescriptor.PAGE_LENGTH;
    /**
     * Bytes a range may read from the files per byte it returns, as a fraction (3/2): gaps of other
     * segments' records are read across only within this budget (see {@link #readRange}).
     */
    private static final long MAX_AMPLIFICATION_NUMERATOR = 3;
    private static final long MAX_AMPLIFICATION_DENOMINATOR = 2;
    private static final int MIN_SCRATCH_LENGTH = 64 << 10;
    private static final int READ_ATTEMPTS = 3;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final LogFileSource files;
    private final int rangeLength;
    private final int maxReadGap;
    private final int scratchLength;
    private final Executor executor;
    private final ThreadPoolExecutor ownedExecutor;
    private final RangeSink sink;
    /** Where ranges are read into, or null: a heap buffer each. */
    private final RangeBuffers buffers;
    private final String name;
    private final ConcurrentHashMap<Key, CompletableFuture<LogRange>> inFlight = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<ReadContext> contexts = new ConcurrentLinkedQueue<>();
    private final LongAdder loads = new LongAdder();
    /** Misses found cached after all when their read would have started (see {@link #read(int, LocationIndex, long, BooleanSupplier)}). */
    private final LongAdder cachedMeanwhile = new LongAdder();
    private final LongAdder joins = new LongAdder();
    private final LongAdder fileReads = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder fillFailures = new LongAdder();
    private volatile boolean closed;
    /** The MBean's name, if registered; unregistered at close. */
    private final ObjectName objectName;

    private HistoricalReader(final Builder builder) {
        this.files = builder.files;
        this.rangeLength = builder.rangeLength;
        this.maxReadGap = builder.maxReadGap;
        this.scratchLength = (int) LogRecordDescriptor.align(Math.max((long) rangeLength, MIN_SCRATCH_LENGTH), PAGE_LENGTH)
            + 2 * PAGE_LENGTH;
        this.sink = builder.sink;
        this.buffers = builder.buffers;
        this.name = builder.name != null ? builder.name : "historical-reader-" + INSTANCES.incrementAndGet();
        if (builder.executor != null) {
            this.executor = builder.executor;
            this.ownedExecutor = null;
        } else if (builder.threads > 0) {
            // As Executors.newFixedThreadPool, with the threads of role LOG_READER from the builder's
            // StreamcacheThreads, over a LinkedTransferQueue: its offer is a compare-and-set that
            // hands the task to an idle reader thread directly, where LinkedBlockingQueue's takes
            // its put lock and then its take lock to signal one. A read is submitted on the thread
            // of the caller that missed (a broker's, in readAsync): on a loaded host a holder of
            // either lock preempted meanwhile parked that caller (seen by a flight recording:
            // 0.5 ms in LinkedBlockingQueue.offer inside readAsync's call).
            this.ownedExecutor = new ThreadPoolExecutor(builder.threads, builder.threads, 0L, TimeUnit.MILLISECONDS,
                new LinkedTransferQueue<>(), builder.streamcacheThreads.factory(StreamcacheThreads.Role.LOG_READER, name));
            this.executor = ownedExecutor;
        } else {
            this.executor = null;
            this.ownedExecutor = null;
        }
        this.objectName = builder.registerMBean ? LogMBeans.register("HistoricalReads", name, new MXBeanAdapter(this)) : null;
    }

    /**
     * @param files the log files.
     * @return a builder with the defaults: 1 MiB ranges, 64 KiB read gaps, 2 owned threads, no sink.
     */
    public static Builder builder(final LogFileSource files) {
        return new Builder(files);
    }

    /**
     * Reads the range holding {@code offset} of a segment from the log, or joins the read of it
     * already in flight.
     *
     * @param segmentId the segment's id in the log records (checked in every record read).
     * @param locations the segment's location index.
     * @param offset    the offset that missed the cache.
     * @return a future of the range (clipped to the index's {@code [startOffset, endOffset)}; see
     *         {@link LogRange#contains}), failed with a {@link LogCorruptedException} if a record
     *         does not validate, an {@link UncheckedIOException} if reading fails, an
     *         {@link IllegalStateException} if the index was cleared (the segment deleted), a
     *         {@link CacheClosedException} if the reader is closed.
     * @throws IllegalArgumentException if {@code offset} is negative.
     */
    public CompletableFuture<LogRange> read(final int segmentId, final LocationIndex locations, final long offset) {
        return read(segmentId, locations, offset, null);
    }

    /**
     * As {@link #read(int, LocationIndex, long)}, but before starting a new read of the range
     * asks {@code stillMissing} whether the offset is still missing from the cache. A caller
     * that saw a miss and arrives just after another caller's read of the same range completed
     * (its bytes filled into the cache before the read left the in-flight map) finds them
     * cached instead of reading the range a second time. Without it, "one read per range for
     * concurrent misses" holds only for misses that overlap the read.
     *
     * @param stillMissing called on the calling thread only when no read of the range is in
     *                     flight; {@code false} means the bytes are cached now: the future then
     *                     completes at once with an empty range (holding no offset) and nothing
     *                     is read. A check that throws counts as {@code true}. {@code null}:
     *                     always read.
     */
    public CompletableFuture<LogRange> read(
        final int segmentId, final LocationIndex locations, final long offset, final BooleanSupplier stillMissing) {
        return read(segmentId, locations, offset, rangeLength, stillMissing);
    }

    /**
     * As {@link #read(int, LocationIndex, long, BooleanSupplier)}, reading {@code length} bytes
     * of the segment from the range start ({@code offset} aligned down to {@link #rangeLength()}):
     * the read-ahead of a sequential reader (see {@code SequentialReadAhead} in the store). A miss
     * joins a read in flight only if that read starts at the same range start.
     *
     * @param length segment bytes to read, in [{@link #rangeLength()}, 1 GiB].
     * @throws IllegalArgumentException if {@code offset} is negative or {@code length} out of range.
     */
    public CompletableFuture<LogRange> read(final int segmentId, final LocationIndex locations, final long offset, final int length,
                                           final BooleanSupplier stillMissing) {
        if (length < rangeLength || length > 1 << 30) {
            throw new IllegalArgumentException("length=" + length + " must be in [rangeLength=" + rangeLength + ", " + (1 << 30) + "]");
        }
        Objects.requireNonNull(locations, "locations");
        if (offset < 0) {
            throw new IllegalArgumentException("offset=" + offset + " must be >= 0");
        }
        if (closed) {
            return CompletableFuture.failedFuture(new CacheClosedException("historical reader " + name + " is closed"));
        }
        final Key key = new Key(locations, offset - offset % rangeLength);
        CompletableFuture<LogRange> future = inFlight.get(key);
        if (future == null) {
            final CompletableFuture<LogRange> created = new CompletableFuture<>();
            future = inFlight.putIfAbsent(key, created);
            if (future == null) {
                // Every earlier read of this range has left the map, so its fill is done: ask now.
                if (stillMissing != null && !askStillMissing(stillMissing)) {
                    inFlight.remove(key, created);
                    cachedMeanwhile.increment();
                    return CompletableFuture.completedFuture(
                        new LogRange(segmentId, key.rangeStart, Unpooled.EMPTY_BUFFER, null));
                }
                loads.increment();
                // The caller's claim is registered before the load can complete (on this thread, with no executor).
                final CompletableFuture<LogRange> claimed = created.thenApply(LogRange::claim);
                final Runnable load = () -> load(segmentId, key, length, created);
                if (executor == null) {
                    load.run();
                } else {
                    try {
                        executor.execute(load);
                    } catch (final RejectedExecutionException e) {
                        inFlight.remove(key, created);
                        created.completeExceptionally(new CacheClosedException("historical reader " + name
                            + " cannot run a read: " + e.getMessage()));
                    }
                }
                return claimed;
            }
        }
        joins.increment();
        return future.thenApply(LogRange::claim);
    }

    /** A check that throws counts as "still missing": the read goes ahead and reports what is wrong. */
    private static boolean askStillMissing(final BooleanSupplier stillMissing) {
        try {
            return stillMissing.getAsBoolean();
        } catch (final RuntimeException e) {
            return true;
        }
    }

    private void load(final int segmentId, final Key key, final int length, final CompletableFuture<LogRange> future) {
        LogRange range = null;
        try {
            try {
                range = readRange(segmentId, key.locations, key.rangeStart, length);
            } catch (final IOException | LogCorruptedException e) {
                // Compaction may have retired (deleted or recycled) a file this read located
                // bytes in, after moving them: located again, the range reads from the copies.
                // A real error fails again.
                range = readRange(segmentId, key.locations, key.rangeStart, length);
            }
            if (sink != null && range.length() > 0) {
                try {
                    sink.fill(segmentId, range.offset(), range.data());
                } catch (final RuntimeException e) {
                    fillFailures.increment();
                    range = range.withFillFailure(e);
                }
            }
            // Completed before it leaves the map: a caller arriving meanwhile takes the bytes
            // (or, once the reader let a counted range go, finds them in the cache).
            future.complete(range);
            inFlight.remove(key, future);
        } catch (final IOException e) {
            fail(key, future, new UncheckedIOException("reading segmentId=" + Integer.toUnsignedString(segmentId)
                + " range from offset=" + key.rangeStart + " failed: " + e, e));
        } catch (final RuntimeException | Error e) {
            fail(key, future, e);
        } finally {
            if (range != null) {
                // The reader's own reference: every caller registered by now holds its claim.
                range.release();
            }
        }
    }

    /**
     * Fails a read after taking it out of the map: a caller arriving meanwhile reads afresh
     * rather than inherit a failure that may have passed.
     */
    private void fail(final Key key, final CompletableFuture<LogRange> future, final Throwable failure) {
        failures.increment();
        inFlight.remove(key, future);
        future.completeExceptionally(failure);
    }

    private LogRange readRange(final int segmentId, final LocationIndex locations, final long rangeStart, final int length)
        throws IOException {
        ReadContext context = contexts.poll();
        if (context == null) {
            context = new ReadContext(scratchLength);
        }
        ByteBuf pooled = null;
        try {
            final LocationList list = context.locations;
            if (!locations.locate(rangeStart, rangeStart + length, list)) {
                throw new IllegalStateException("the location index of segmentId=" + Integer.toUnsignedString(segmentId)
                    + " was cleared: the segment was deleted");
            }
            final long from = list.from();
            final long to = list.to();
            final int rangeBytes = (int) (to - from);
            pooled = buffers != null && rangeBytes > 0 ? buffers.allocate(rangeBytes) : null;
            final ByteBuf out = pooled != null ? pooled : Unpooled.buffer(rangeBytes, rangeBytes);
            // The other segments' bytes a read may span: at most half of what the range returns,
            // less what reading its own records costs beyond their payload in the range (headers,
            // and the parts of the first and last records outside it).
            long recordBytes = 0;
            for (int k = 0; k < list.count(); k++) {
                recordBytes += HEADER_LENGTH + list.length(k);
            }
            long gapBudget = Math.max(0, (to - from) * MAX_AMPLIFICATION_NUMERATOR / MAX_AMPLIFICATION_DENOMINATOR - recordBytes);
            int i = 0;
            while (i < list.count()) {
                final long fileNumber = list.fileNumber(i);
                final long spanStart = list.position(i);
                long spanEnd = list.position(i) + HEADER_LENGTH + list.length(i);
                int j = i + 1;
                while (j < list.count() && list.fileNumber(j) == fileNumber) {
                    final long position = list.position(j);
                    final long end = position + HEADER_LENGTH + list.length(j);
                    final long gap = position - spanEnd;
                    if (gap < 0 || gap > maxReadGap || gap > gapBudget || end - spanStart > context.scratch.capacity()) {
                        break;
                    }
                    gapBudget -= gap;
                    spanEnd = end;
                    j++;
                }
                final int spanLength = (int) (spanEnd - spanStart);
                final ByteBuffer buffer = spanLength <= context.scratch.capacity() ? context.scratch
                    : ByteBuffer.allocateDirect(spanLength).order(ByteOrder.LITTLE_ENDIAN);
                final int n = readFully(fileNumber, buffer, spanStart, spanLength);
                if (n < spanEnd - spanStart) {
                    throw new LogCorruptedException(files.path(fileNumber), fileNumber, spanStart + n, "the file ends before"
                        + " the DATA records of segmentId=" + Integer.toUnsignedString(segmentId) + " that the location index"
                        + " places up to position=" + spanEnd);
                }
                for (int k = i; k < j; k++) {
                    copyRecord(context, buffer, spanStart, list, k, segmentId, from, to, out);
                }
                i = j;
            }
            if (out.writerIndex() != to - from) {
                throw new IllegalStateException("read " + out.writerIndex() + " bytes of segmentId="
                    + Integer.toUnsignedString(segmentId) + " range [" + from + ", " + to + ")");
            }
            final LogRange range = new LogRange(segmentId, from, out.asReadOnly(), null, pooled != null);
            pooled = null;
            return range;
        } finally {
            if (pooled != null) {
                // The read failed: its buffer goes back.
                pooled.release();
            }
            contexts.offer(context);
        }
    }

    private void copyRecord(final ReadContext context, final ByteBuffer buffer, final long spanStart, final LocationList list,
                            final int k, final int segmentId, final long from, final long to, final ByteBuf out) {
        final long fileNumber = list.fileNumber(k);
        final long position = list.position(k);
        final long offset = list.offset(k);
        final int length = list.length(k);
        final int index = (int) (position - spanStart);
        if (LogRecordCodec.checkData(buffer, index, segmentId, offset, length) != null) {
            final short magic = buffer.getShort(index + LogRecordDescriptor.MAGIC_OFFSET);
            throw new LogCorruptedException(files.path(fileNumber), fileNumber, position, "expected DATA of segmentId="
                + Integer.toUnsignedString(segmentId) + " offset=" + offset + " length=" + length + ", found magic=0x"
                + Integer.toHexString(magic & 0xFFFF) + " type=" + buffer.get(index + LogRecordDescriptor.TYPE_OFFSET) + " flags="
                + buffer.get(index + LogRecordDescriptor.FLAGS_OFFSET) + " segmentId="
                + Integer.toUnsignedString(buffer.getInt(index + LogRecordDescriptor.SEGMENT_ID_OFFSET)) + " offset="
                + buffer.getLong(index + LogRecordDescriptor.SEGMENT_OFFSET_OFFSET) + " length="
                + Integer.toUnsignedString(buffer.getInt(index + LogRecordDescriptor.LENGTH_OFFSET)));
        }
        final boolean crcMatches = LogRecordCodec.crcMatches(context.crc, fileNumber, buffer, index, length);
        buffer.clear();
        if (!crcMatches) {
            throw new LogCorruptedException(files.path(fileNumber), fileNumber, position, "CRC mismatch in DATA of segmentId="
                + Integer.toUnsignedString(segmentId) + " offset=" + offset + " length=" + length);
        }
        final long copyFrom = Math.max(from, offset);
        final long copyTo = Math.min(to, offset + length);
        if (copyFrom < copyTo) {
            final int source = index + HEADER_LENGTH + (int) (copyFrom - offset);
            buffer.limit(source + (int) (copyTo - copyFrom)).position(source);
            out.writeBytes(buffer);
            buffer.clear();
        }
    }

    /**
     * Reads {@code length} bytes at {@code position} into the start of {@code buffer}, retrying
     * on a fresh channel if another thread's interrupt closed the shared one.
     *
     * @return bytes read: fewer than {@code length} only at the end of the file.
     */
    private int readFully(final long fileNumber, final ByteBuffer buffer, final long position, final int length) throws IOException {
        for (int attempt = 1; ; attempt++) {
            final FileChannel channel = files.channel(fileNumber);
            buffer.clear().limit(length);
            try {
                int n = 0;
                while (n < length) {
                    final int read = channel.read(buffer, position + n);
                    if (read < 0) {
                        break;
                    }
                    n += read;
                }
                fileReads.increment();
                bytesRead.add(n);
                buffer.clear();
                return n;
            } catch (final ClosedByInterruptException e) {
                throw e;
            } catch (final ClosedChannelException e) {
                if (attempt >= READ_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /**
     * @return the counters so far.
     */
    public HistoricalReadStats stats() {
        return new HistoricalReadStats(loads.sum(), joins.sum(), fileReads.sum(), bytesRead.sum(), failures.sum(), fillFailures.sum(),
            cachedMeanwhile.sum(), inFlight.size(), ownedExecutor != null ? ownedExecutor.getQueue().size() : 0);
    }

    /**
     * @return reads in flight now.
     */
    public int inFlightCount() {
        return inFlight.size();
    }

    public int rangeLength() {
        return rangeLength;
    }

    public String name() {
        return name;
    }

    /**
     * Refuses new reads; lets the reads in flight finish; stops the owned threads; unregisters
     * the MBean. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
        }
        LogMBeans.unregister(objectName);
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "HistoricalReader{name=" + name + ", rangeLength=" + rangeLength + ", maxReadGap=" + maxReadGap + ", inFlight="
            + inFlight.size() + ", " + stats() + '}';
    }

    /** A read in flight: the segment's index (by identity) and the range's start. */
    private record Key(LocationIndex locations, long rangeStart) {
    }

    /** Scratch state of one read, pooled. */
    private static final class ReadContext {
        final ByteBuffer scratch;
        final CRC32C crc = new CRC32C();
        final LocationList locations = new LocationList();

        ReadContext(final int scratchLength) {
            this.scratch = ByteBuffer.allocateDirect(scratchLength).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /**
     * Configures a {@link HistoricalReader}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        private final LogFileSource files;
        private int rangeLength = RANGE_LENGTH_DEFAULT;
        private int maxReadGap = MAX_READ_GAP_DEFAULT;
        private int threads = THREADS_DEFAULT;
        private Executor executor;
        private StreamcacheThreads streamcacheThreads = StreamcacheThreads.defaults();
        private boolean registerMBean = true;
        private RangeSink sink;
        private RangeBuffers buffers;
        private String name;

        private Builder(final LogFileSource files) {
            this.files = Objects.requireNonNull(files, "files");
        }

        /**
         * @param rangeLength segment bytes read per miss, in [1, 1 GiB]; ranges start at multiples of it.
         */
        public Builder rangeLength(final int rangeLength) {
            this.rangeLength = rangeLength;
            return this;
        }

        /**
         * @param maxReadGap the largest gap (other segments' records) between two records of a
         *                   range that one positional read spans rather than issuing two, >= 0.
         */
        public Builder maxReadGap(final int maxReadGap) {
            this.maxReadGap = maxReadGap;
            return this;
        }

        /**
         * @param threads reading threads the reader owns; 0 to read on the caller's thread.
         *                Ignored if an {@link #executor} is given.
         */
        public Builder threads(final int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * @param threads creates the reading threads the reader owns (role {@code LOG_READER});
         *                {@link StreamcacheThreads#defaults()} if not set.
         */
        public Builder streamcacheThreads(final StreamcacheThreads threads) {
            this.streamcacheThreads = Objects.requireNonNull(threads, "threads");
            return this;
        }

        /**
         * @param registerMBean whether the reader registers its {@link HistoricalReadMXBean} as
         *                      {@code io.streamcache:type=HistoricalReads,name=<name>}; true by default.
         */
        public Builder registerMBean(final boolean registerMBean) {
            this.registerMBean = registerMBean;
            return this;
        }

        /**
         * @param executor runs the reads; shared, not shut down by the reader.
         */
        public Builder executor(final Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * @param sink takes every range read, once (the store's fill).
         */
        public Builder sink(final RangeSink sink) {
            this.sink = Objects.requireNonNull(sink, "sink");
            return this;
        }

        /**
         * @param buffers gives the buffers ranges are read into (the store's pool of direct
         *                buffers); without it each range is a new heap buffer. With it, each
         *                caller's range is a claim it must {@link LogRange#release()}.
         */
        public Builder rangeBuffers(final RangeBuffers buffers) {
            this.buffers = Objects.requireNonNull(buffers, "buffers");
            return this;
        }

        /**
         * @param name the reader's name in its threads and messages; generated if not set.
         */
        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @throws IllegalArgumentException if a setting is out of range.
         */
        public HistoricalReader build() {
            if (rangeLength < 1 || rangeLength > 1 << 30) {
                throw new IllegalArgumentException("rangeLength=" + rangeLength + " must be in [1, " + (1 << 30) + "]");
            }
            if (maxReadGap < 0) {
                throw new IllegalArgumentException("maxReadGap=" + maxReadGap + " must be >= 0");
            }
            if (threads < 0) {
                throw new IllegalArgumentException("threads=" + threads + " must be >= 0");
            }
            return new HistoricalReader(this);
        }
    }

    /** The reader's MBean: each attribute reads a fresh {@link HistoricalReadStats}. */
    private static final class MXBeanAdapter implements HistoricalReadMXBean {
        private final HistoricalReader reader;

        MXBeanAdapter(final HistoricalReader reader) {
            this.reader = reader;
        }

        @Override
        public String getName() {
            return reader.name;
        }

        @Override
        public long getRangesRead() {
            return reader.stats().loads();
        }

        @Override
        public long getJoins() {
            return reader.stats().joins();
        }

        @Override
        public long getFileReads() {
            return reader.stats().fileReads();
        }

        @Override
        public long getBytesRead() {
            return reader.stats().bytesRead();
        }

        @Override
        public long getFailures() {
            return reader.stats().failures();
        }

        @Override
        public long getFillFailures() {
            return reader.stats().fillFailures();
        }

        @Override
        public int getInFlight() {
            return reader.stats().inFlight();
        }

        @Override
        public int getQueued() {
            return reader.stats().queued();
        }
    }
}
