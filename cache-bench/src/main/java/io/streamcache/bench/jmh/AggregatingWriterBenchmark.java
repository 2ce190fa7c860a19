package io.streamcache.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.streamcache.log.internal.AggregatingWriter;
import io.streamcache.log.AlignmentPolicy;
import io.streamcache.log.DirectIoMode;
import io.streamcache.log.internal.FileChannelLogFile;
import io.streamcache.log.LogConfig;
import io.streamcache.log.internal.LogDirectory;
import io.streamcache.log.LogFile;
import io.streamcache.log.internal.LogFileDescriptor;
import io.streamcache.log.LogFileFactory;
import io.streamcache.log.WriterStats;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.agrona.BufferUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * The aggregating writer against the raw limit of the same disk; JMH drives it from its
 * benchmark threads (one writer per trial, shared by all of them), every append waited for
 * (durable: each batch forced) before the thread's next.
 *
 * <pre>
 *  writer40ProducersUpTo17KB   40 threads   --append(100 B..17 KB, uniform)--&gt;  writer --pwrite+fdatasync--&gt; log files
 *  writer100Producers100B     100 threads   --append(100 B)-----------------&gt;  writer --pwrite+fdatasync--&gt; log files
 *  rawWriteAndForceBatches      1 thread    --pwrite(batch)+fdatasync--&gt; one pre-written file (the disk's limit per batch size)
 *  forceEach100ByteAppendAlone  1 thread    --pwrite(100 B)+fdatasync--&gt; one file (no aggregation at all)
 * </pre>
 *
 * JMH's score is operations per second: appends/s for the writer and the 100-byte baseline,
 * batches/s for the raw loop. The teardown of each writer trial prints, for its measurement
 * iterations: durable payload MB/s, bytes written per second, padding, mean batch length, forces,
 * latency percentiles (an HdrHistogram of every append, microseconds), and the raw limit for
 * <em>the same batches</em>: the writer's batch lengths are recorded as they are written, then
 * replayed by a plain {@link FileChannel} loop (pwrite + force each) on fresh files of the same
 * kind (pre-written or not, like the trial's), so the ratio compares like with like in one run.
 *
 * <p>A consumer thread truncates every producer's segment behind its acknowledged offset every
 * 20 ms, as a broker whose readers keep up would, so log files die soon after they fill and the
 * disk holds a few files at any time, however long the run.
 *
 * <p>Parameters: {@code alignment} (PAD, CUT, ADAPTIVE); {@code preWrite}: true means files
 * pre-written with zeros once ({@code preparedFiles} of them before the trial) and recycled when
 * dead, so the writer always writes into allocated blocks and nothing is pre-written while
 * measuring unless recycling falls behind (the RocketMQ-on-PMEM contest design: pre-write once at start); false means every
 * file new (only its length set, blocks allocated by the first write), deleted when dead;
 * {@code forcesInFlight} (1, 2, 4): how many batches may be being forced while the writer writes
 * the next ones. Files
 * go to a temporary directory under {@code java.io.tmpdir}, deleted after the trial. The
 * machine's noise (shared disks) is large: compare ratios within one run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:MaxDirectMemorySize=1g"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public class AggregatingWriterBenchmark {
    private static final int MAX_MESSAGE = 17 * 1024;
    private static final int MIN_MESSAGE = 100;
    private static final long LOG_FILE_LENGTH = 64L << 20;
    /** The raw replay stops after this many bytes of batches. */
    private static final long REPLAY_LIMIT = 256L << 20;
    private static final double MIB = 1 << 20;
    private static final int MAX_SEGMENTS = 256;

    // ------------------------------------------------------------------------------------------
    // The writer
    // ------------------------------------------------------------------------------------------

    /**
     * One log and its writer per trial, shared by the benchmark threads.
     */
    @State(Scope.Benchmark)
    public static class WriterState {
        @Param({"PAD", "CUT", "ADAPTIVE"})
        public String alignment;

        @Param({"true", "false"})
        public boolean preWrite;

        @Param({"4"})
        public int preparedFiles;

        /** {@link LogConfig.Builder#forcesInFlight}: batches being forced while the writer writes the next ones. */
        @Param({"1", "2", "4"})
        public int forcesInFlight;

        Path directory;
        LogDirectory logDirectory;
        AggregatingWriter writer;
        final RecordingFiles files = new RecordingFiles();
        final AtomicInteger nextSegment = new AtomicInteger();
        /** Per segment id: the end of its acknowledged appends (written by its producer, read by the consumer). */
        final AtomicLongArray acknowledged = new AtomicLongArray(MAX_SEGMENTS + 1);
        private Thread consumer;
        private volatile boolean stopping;
        private long preWrittenAtStart;
        private long createdAtStart;
        private long recycledAtStart;
        final Recorder latency = new Recorder(TimeUnit.SECONDS.toNanos(10), 3);
        final Histogram measuredLatency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final LongAdder payload = new LongAdder();
        final LongAdder appends = new LongAdder();
        private boolean measuring;
        private long iterationStart;
        private long payloadAtStart;
        private long appendsAtStart;
        private WriterStats statsAtStart;
        private long measuredNanos;
        private long measuredPayload;
        private long measuredAppends;
        private long measuredWritten;
        private long measuredBatches;
        private long measuredPadding;
        private long measuredForces;
        private long measuredPreWritten;
        private long measuredCreated;
        private long measuredRecycled;
        private String benchmark;

        @Setup(Level.Trial)
        public void open(final BenchmarkParams params) throws IOException {
            benchmark = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
            directory = Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), "streamcache-writer-bench-");
            final LogConfig config = LogConfig.builder(directory)
                .fileLength(LOG_FILE_LENGTH)
                .alignment(AlignmentPolicy.valueOf(alignment))
                .preWrite(preWrite)
                .recycleFiles(preWrite)
                .spareFiles(1)
                .forcesInFlight(forcesInFlight)
                .fileFactory(files)
                .name("bench")
                .build();
            logDirectory = LogDirectory.open(config);
            logDirectory.prepareSpares(preparedFiles);
            writer = AggregatingWriter.start(logDirectory);
            consumer = new Thread(this::consume, "bench-consumer");
            consumer.setDaemon(true);
            consumer.start();
        }

        /** Truncates every segment behind its acknowledged appends, every 20 ms. */
        private void consume() {
            final long[] truncated = new long[MAX_SEGMENTS + 1];
            while (!stopping) {
                try {
                    Thread.sleep(20);
                    final long epoch = writer.healthyEpoch();
                    final int segments = Math.min(nextSegment.get(), MAX_SEGMENTS);
                    for (int segment = 1; segment <= segments; segment++) {
                        final long end = acknowledged.get(segment);
                        if (end > truncated[segment]) {
                            writer.truncate(epoch, segment, end, null);
                            truncated[segment] = end;
                        }
                    }
                } catch (final InterruptedException e) {
                    return;
                } catch (final RuntimeException e) {
                    if (!stopping) {
                        throw e;
                    }
                }
            }
        }

        @Setup(Level.Iteration)
        public void startIteration(final IterationParams params) {
            measuring = params.getType() == IterationType.MEASUREMENT;
            files.recording = measuring;
            latency.reset();
            statsAtStart = writer.stats();
            preWrittenAtStart = logDirectory.bytesPreWritten();
            createdAtStart = logDirectory.filesCreated();
            recycledAtStart = logDirectory.filesRecycled();
            payloadAtStart = payload.sum();
            appendsAtStart = appends.sum();
            iterationStart = System.nanoTime();
        }

        @TearDown(Level.Iteration)
        public void endIteration() {
            final long end = System.nanoTime();
            files.recording = false;
            final Histogram interval = latency.getIntervalHistogram();
            if (!measuring) {
                return;
            }
            final WriterStats stats = writer.stats();
            measuredLatency.add(interval);
            measuredNanos += end - iterationStart;
            measuredPayload += payload.sum() - payloadAtStart;
            measuredAppends += appends.sum() - appendsAtStart;
            measuredWritten += stats.bytesWritten() - statsAtStart.bytesWritten();
            measuredBatches += stats.batches() - statsAtStart.batches();
            measuredPadding += stats.paddingBytes() - statsAtStart.paddingBytes();
            measuredForces += stats.forces() - statsAtStart.forces();
            measuredPreWritten += logDirectory.bytesPreWritten() - preWrittenAtStart;
            measuredCreated += logDirectory.filesCreated() - createdAtStart;
            measuredRecycled += logDirectory.filesRecycled() - recycledAtStart;
        }

        @TearDown(Level.Trial)
        public void close() throws IOException, InterruptedException {
            stopping = true;
            consumer.interrupt();
            consumer.join();
            writer.close();
            final WriterStats stats = writer.stats();
            logDirectory.close();
            final long[] batches = files.lengths();
            final double rawMiBps = replay(directory, batches, preWrite);
            report(stats, batches.length, rawMiBps);
            deleteRecursively(directory);
        }

        private void report(final WriterStats stats, final int recordedBatches, final double rawMiBps) {
            final double seconds = measuredNanos / 1e9;
            final double payloadMiBps = measuredPayload / MIB / seconds;
            final double writtenMiBps = measuredWritten / MIB / seconds;
            final StringBuilder out = new StringBuilder(512);
            out.append(String.format("%n[%s alignment=%s preWrite=%s] measured %.1f s%n", benchmark, alignment, preWrite, seconds));
            out.append(String.format("  appends/s %,.0f   durable payload %.1f MiB/s   written %.1f MiB/s   padding %.2f%% of written%n",
                measuredAppends / seconds, payloadMiBps, writtenMiBps, measuredWritten == 0 ? 0.0 : 100.0 * measuredPadding / measuredWritten));
            out.append(String.format("  batches/s %,.0f   mean batch %.1f KiB   appends/batch %.1f   forces/s %,.0f   files rolled %d%n",
                measuredBatches / seconds, measuredBatches == 0 ? 0.0 : measuredWritten / 1024.0 / measuredBatches,
                measuredBatches == 0 ? 0.0 : (double)measuredAppends / measuredBatches, measuredForces / seconds, stats.filesRolled()));
            out.append(String.format("  files while measuring: %d created (%.0f MiB pre-written), %d recycled; files retired in the trial %d%n",
                measuredCreated, measuredPreWritten / MIB, measuredRecycled, stats.filesRetired()));
            out.append(String.format("  latency us: p50 %,.0f   p90 %,.0f   p99 %,.0f   p99.9 %,.0f   max %,.0f   (%,d appends)%n",
                measuredLatency.getValueAtPercentile(50) / 1e3, measuredLatency.getValueAtPercentile(90) / 1e3,
                measuredLatency.getValueAtPercentile(99) / 1e3, measuredLatency.getValueAtPercentile(99.9) / 1e3,
                measuredLatency.getMaxValue() / 1e3, measuredLatency.getTotalCount()));
            out.append(String.format("  raw FileChannel limit, the same %,d batches replayed (pwrite+force each, %s files): %.1f MiB/s"
                    + "  -> writer at %.0f%% (bytes written) / %.0f%% (payload) of it%n",
                recordedBatches, preWrite ? "pre-written" : "new", rawMiBps, 100 * writtenMiBps / rawMiBps, 100 * payloadMiBps / rawMiBps));
            System.out.print(out);
        }
    }

    /**
     * One benchmark thread: a producer with its own segment and offsets, and one reusable
     * message buffer (each append is waited for before the buffer changes).
     */
    @State(Scope.Thread)
    public static class Producer {
        private int segment;
        private long offset;
        private int minLength;
        private int maxLength;
        private SplittableRandom random;
        private ByteBuf message;

        private AtomicLongArray acknowledged;

        @Setup(Level.Trial)
        public void open(final WriterState state, final BenchmarkParams params) {
            segment = state.nextSegment.incrementAndGet();
            if (segment > MAX_SEGMENTS) {
                throw new IllegalStateException("more than " + MAX_SEGMENTS + " producers");
            }
            acknowledged = state.acknowledged;
            state.writer.create(state.writer.healthyEpoch(), segment, "producer-" + segment, null).join();
            final boolean small = params.getBenchmark().endsWith("100B");
            minLength = MIN_MESSAGE;
            maxLength = small ? MIN_MESSAGE : MAX_MESSAGE;
            random = new SplittableRandom(segment);
            message = Unpooled.directBuffer(MAX_MESSAGE, MAX_MESSAGE);
            final byte[] bytes = new byte[MAX_MESSAGE];
            random.nextBytes(bytes);
            message.writeBytes(bytes);
        }

        @TearDown(Level.Trial)
        public void close() {
            message.release();
        }

        long append(final WriterState state) {
            final int length = minLength == maxLength ? minLength : minLength + random.nextInt(maxLength - minLength + 1);
            message.setIndex(0, length);
            final long start = System.nanoTime();
            final long at = state.writer.append(segment, offset, message).join();
            state.latency.recordValue(System.nanoTime() - start);
            offset += length;
            acknowledged.lazySet(segment, offset);
            state.payload.add(length);
            state.appends.increment();
            return at;
        }
    }

    /**
     * 40 producers, messages uniform in 100 B .. 17 KB: the RocketMQ-on-PMEM contest design's write load.
     */
    @Benchmark
    @Threads(40)
    public long writer40ProducersUpTo17KB(final WriterState state, final Producer producer) {
        return producer.append(state);
    }

    /**
     * 100 producers of 100-byte appends: the latency load of Pravega's streaming-cache design.
     */
    @Benchmark
    @Threads(100)
    public long writer100Producers100B(final WriterState state, final Producer producer) {
        return producer.append(state);
    }

    // ------------------------------------------------------------------------------------------
    // Baselines
    // ------------------------------------------------------------------------------------------

    /**
     * A pre-written file written from its start in batches of one length, each forced.
     */
    @State(Scope.Benchmark)
    public static class RawState {
        @Param({"65536", "262144", "1048576"})
        public int rawBatchLength;

        Path directory;
        FileChannel channel;
        ByteBuffer batch;
        long position;

        @Setup(Level.Trial)
        public void open() throws IOException {
            directory = Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), "streamcache-raw-bench-");
            channel = FileChannel.open(directory.resolve("raw.dat"), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
            preWrite(channel, 4 * LOG_FILE_LENGTH);
            batch = BufferUtil.allocateDirectAligned(rawBatchLength, LogFileDescriptor.PAGE_LENGTH);
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
            deleteRecursively(directory);
        }
    }

    /**
     * The raw limit per batch length: pwrite one batch, fdatasync, next.
     */
    @Benchmark
    @Threads(1)
    public void rawWriteAndForceBatches(final RawState state) throws IOException {
        if (state.position + state.rawBatchLength > 4 * LOG_FILE_LENGTH) {
            state.position = 0;
        }
        state.batch.clear();
        while (state.batch.hasRemaining()) {
            state.position += state.channel.write(state.batch, state.position);
        }
        state.channel.force(false);
    }

    /**
     * A file appended to 100 bytes at a time, each forced alone.
     */
    @State(Scope.Benchmark)
    public static class AloneState {
        Path directory;
        FileChannel channel;
        final ByteBuffer event = ByteBuffer.allocateDirect(MIN_MESSAGE);
        long position;

        @Setup(Level.Trial)
        public void open() throws IOException {
            directory = Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), "streamcache-alone-bench-");
            channel = FileChannel.open(directory.resolve("alone.dat"), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
            preWrite(channel, LOG_FILE_LENGTH);
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
            deleteRecursively(directory);
        }
    }

    /**
     * The baseline for 100-byte appends: each written and forced alone, no aggregation.
     */
    @Benchmark
    @Threads(1)
    public void forceEach100ByteAppendAlone(final AloneState state) throws IOException {
        if (state.position + MIN_MESSAGE > LOG_FILE_LENGTH) {
            state.position = 0;
        }
        state.event.clear();
        state.position += state.channel.write(state.event, state.position);
        state.channel.force(false);
    }

    // ------------------------------------------------------------------------------------------
    // Machinery
    // ------------------------------------------------------------------------------------------

    /**
     * Log files that record the length of every write the writer makes while {@link #recording}:
     * written by the writer thread only, read after it stopped.
     */
    static final class RecordingFiles implements LogFileFactory {
        private final LogFileFactory delegate = FileChannelLogFile.factory(DirectIoMode.OFF);
        volatile boolean recording;
        private long[] lengths = new long[1 << 16];
        private int count;

        @Override
        public LogFile open(final Path path) throws IOException {
            final LogFile file = delegate.open(path);
            return new LogFile() {
                @Override
                public void write(final ByteBuffer source, final long position) throws IOException {
                    if (recording && position >= LogFileDescriptor.FIRST_RECORD_POSITION) {
                        record(source.remaining());
                    }
                    file.write(source, position);
                }

                @Override
                public int read(final ByteBuffer destination, final long position) throws IOException {
                    return file.read(destination, position);
                }

                @Override
                public void force() throws IOException {
                    file.force();
                }

                @Override
                public long length() throws IOException {
                    return file.length();
                }

                @Override
                public void setLength(final long length) throws IOException {
                    file.setLength(length);
                }

                @Override
                public Path path() {
                    return file.path();
                }

                @Override
                public void close() throws IOException {
                    file.close();
                }
            };
        }

        private void record(final int length) {
            if (count == lengths.length) {
                lengths = Arrays.copyOf(lengths, count * 2);
            }
            lengths[count++] = length;
        }

        long[] lengths() {
            return Arrays.copyOf(lengths, count);
        }
    }

    /**
     * Writes the batch lengths, each forced, with a plain FileChannel on fresh 64 MiB files of the
     * trial's kind, up to {@link #REPLAY_LIMIT} bytes.
     *
     * @return MiB/s.
     */
    static double replay(final Path directory, final long[] lengths, final boolean preWrite) throws IOException {
        long total = 0;
        int count = 0;
        long longest = LogFileDescriptor.PAGE_LENGTH;
        while (count < lengths.length && total < REPLAY_LIMIT) {
            total += lengths[count];
            longest = Math.max(longest, lengths[count]);
            count++;
        }
        if (count == 0) {
            return 0;
        }
        final int fileCount = (int)((total + LOG_FILE_LENGTH - 1) / LOG_FILE_LENGTH) + 1;
        final FileChannel[] channels = new FileChannel[fileCount];
        try {
            for (int i = 0; i < fileCount; i++) {
                final Path file = directory.resolve("replay-" + i + ".dat");
                channels[i] = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
                if (preWrite) {
                    preWrite(channels[i], LOG_FILE_LENGTH);
                } else {
                    try (RandomAccessFile extend = new RandomAccessFile(file.toFile(), "rw")) {
                        extend.setLength(LOG_FILE_LENGTH);
                    }
                }
            }
            final ByteBuffer batch = BufferUtil.allocateDirectAligned((int)longest, LogFileDescriptor.PAGE_LENGTH);
            int file = 0;
            long position = LogFileDescriptor.FIRST_RECORD_POSITION;
            final long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                final int length = (int)lengths[i];
                if (position + length > LOG_FILE_LENGTH) {
                    file++;
                    position = LogFileDescriptor.FIRST_RECORD_POSITION;
                }
                batch.clear().limit(length);
                while (batch.hasRemaining()) {
                    position += channels[file].write(batch, position);
                }
                channels[file].force(false);
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            return total / MIB / seconds;
        } finally {
            for (final FileChannel channel : channels) {
                if (channel != null) {
                    channel.close();
                }
            }
        }
    }

    static void preWrite(final FileChannel channel, final long length) throws IOException {
        final ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long position = 0; position < length; ) {
            zeros.clear().limit((int)Math.min(zeros.capacity(), length - position));
            while (zeros.hasRemaining()) {
                position += channel.write(zeros, position);
            }
        }
        channel.force(true);
    }

    static void deleteRecursively(final Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (final IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
