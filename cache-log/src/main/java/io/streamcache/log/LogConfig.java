package io.streamcache.log;

import io.streamcache.log.internal.FileChannelLogFile;
import io.streamcache.log.internal.LogRecordDescriptor;
import io.streamcache.core.CacheConfigurationException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

import static io.streamcache.log.internal.LogFileDescriptor.FIRST_RECORD_POSITION;
import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * Settings of a durable log (its directory, files and aggregating writer); an immutable value,
 * safe to share between threads. Build one with {@link #builder(Path)}; every setting has a
 * {@code *_DEFAULT}.
 *
 * <pre>
 *  setting         default        what it does
 *  fileLength      64 MiB         length of every log file; a full file is rolled
 *  preWrite        false          new files are written with zeros once (else only their length set)
 *  spareFiles      1              files kept ready ahead of the current one by a background thread
 *  recycleFiles    false          dead files become spares (renamed, new header) instead of being
 *                                 deleted, up to 2 * spareFiles spares
 *  preparedFiles   0              spares prepared on the starting thread when the writer starts,
 *                                 before it takes appends (a pool its first files come from)
 *  directIo        OFF            O_DIRECT for the log files
 *  batchLength     1 MiB          most bytes one write (one batch) carries, but for one long append
 *  maxAppendLength 16 MiB (*)     longest append: one record, written with its batch in one write
 *  maxDelay        1 ms           longest a batch keeps gathering requests while they keep coming
 *  fillBatches     false          a batch waits up to maxDelay to fill even when no request is queued,
 *                                 unless a request in it is waited for (for NEVER under a broker's journal)
 *  alignment       ADAPTIVE       PAD, CUT or ADAPTIVE (cut batches of cutThreshold bytes or more)
 *  cutThreshold    64 KiB         see alignment
 *  durability      EVERY_BATCH    when the log is forced: every batch, at an interval, never
 *  forcesInFlight  1              EVERY_BATCH: batches whose force may run while the writer writes the next ones
 *  queueCapacity   65536          requests waiting for the writer, and as many again in an overflow; then refused
 *  retryInterval   1 s            after a disk error, how often the writer retries by itself (0: only recover())
 *  allowMissingFiles false        open a log missing a file its writer recorded as live (else the open fails: files lost)
 *  checkpointFiles 0 (off)        write a recovery checkpoint after every this many new files, in the background;
 *                                 an open then scans only the files after it (docs/log-format.md); 8 is a good value
 *
 *  (*) or, if not set, the most a file of fileLength holds ({@link #maxAppendLengthFor(long)}), if less
 * </pre>
 */
public final class LogConfig {
    public static final long FILE_LENGTH_DEFAULT = 64L << 20;
    /**
     * Off: measured on the contest-shaped workload (a log that only grows, ext4), pre-writing
     * the zeros of every new file while the writer appends cost more than it saved: the total
     * time 25.4-26.5 s with it against 20.6-21.6 s without, the writer alone 297-314 MB/s
     * against 506-517 MB/s at less than half the CPU (docs/benchmarks.md,
     * "Writer and durable log"). It pays where files are prepared before they are needed
     * ({@link Builder#preparedFiles(int)}) or on file systems where a first write into unwritten
     * blocks costs more than the zeros.
     */
    public static final boolean PRE_WRITE_DEFAULT = false;
    public static final int SPARE_FILES_DEFAULT = 1;
    public static final boolean RECYCLE_FILES_DEFAULT = false;
    /** None: the background thread makes the spares while the writer runs. */
    public static final int PREPARED_FILES_DEFAULT = 0;
    /** The most files {@link Builder#preparedFiles(int)} may prepare. */
    public static final int PREPARED_FILES_MAX = 4096;
    public static final DirectIoMode DIRECT_IO_DEFAULT = DirectIoMode.OFF;
    public static final int BATCH_LENGTH_DEFAULT = 1 << 20;
    public static final Duration MAX_DELAY_DEFAULT = Duration.ofMillis(1);
    public static final boolean FILL_BATCHES_DEFAULT = false;
    public static final AlignmentPolicy ALIGNMENT_DEFAULT = AlignmentPolicy.ADAPTIVE;
    public static final int CUT_THRESHOLD_DEFAULT = 64 << 10;
    public static final DurabilityPolicy DURABILITY_DEFAULT = DurabilityPolicy.EVERY_BATCH;
    /** One force at a time: the writer forces each batch before it writes the next. */
    public static final int FORCES_IN_FLIGHT_DEFAULT = 1;
    /** The most forces {@link Builder#forcesInFlight(int)} may allow. */
    public static final int FORCES_IN_FLIGHT_MAX = 16;
    public static final int QUEUE_CAPACITY_DEFAULT = 1 << 16;
    /** Default longest append: 16 MiB (less if the files cannot hold it, see {@link #maxAppendLengthFor(long)}). */
    public static final int MAX_APPEND_LENGTH_DEFAULT = 16 << 20;
    public static final Duration RETRY_INTERVAL_DEFAULT = Duration.ofSeconds(1);
    /**
     * No recovery checkpoint by default: measured on the message-queue workload (250,000 queues,
     * 2 cores, idle), a checkpoint every 8 files took an open after a kill from 2.5 s to 2.0 s but
     * made phase 1 20-27% slower (the checkpoint thread reads every file back: +35-45% CPU) and
     * added ~460 B of heap per segment (its copy of the segment table and location indexes):
     * docs/benchmarks.md, "Writer and durable log", the recovery checkpoint. A broker that
     * values restart time over append throughput and heap sets {@link Builder#checkpointFiles(int)}
     * (8 is a good value); 0 keeps the full check of every file at open.
     */
    public static final int CHECKPOINT_FILES_DEFAULT = 0;
    /** Upper bound of {@link Builder#maxAppendLength(int)}: 1 GiB. */
    public static final int MAX_MAX_APPEND_LENGTH = 1 << 30;

    /** Smallest batch: one page. */
    public static final int MIN_BATCH_LENGTH = PAGE_LENGTH;
    /** Largest batch: 256 MiB. */
    public static final int MAX_BATCH_LENGTH = 256 << 20;

    private final Path directory;
    private final long fileLength;
    private final boolean preWrite;
    private final int spareFiles;
    private final int preparedFiles;
    private final boolean recycleFiles;
    private final boolean allowMissingFiles;
    private final DirectIoMode directIo;
    private final int batchLength;
    private final Duration maxDelay;
    private final boolean fillBatches;
    private final AlignmentPolicy alignment;
    private final int cutThreshold;
    private final DurabilityPolicy durability;
    private final int forcesInFlight;
    private final int queueCapacity;
    private final int maxAppendLength;
    /** As given to the builder: 0 if not set. */
    private final int maxAppendLengthSetting;
    private final Duration retryInterval;
    private final LogFileFactory fileFactory;
    private final String name;
    private final boolean registerMBeans;
    private final int checkpointFiles;

    private LogConfig(final Builder builder) {
        this.directory = builder.directory;
        this.fileLength = builder.fileLength;
        this.preWrite = builder.preWrite;
        this.spareFiles = builder.spareFiles;
        this.preparedFiles = builder.preparedFiles;
        this.recycleFiles = builder.recycleFiles;
        this.allowMissingFiles = builder.allowMissingFiles;
        this.directIo = builder.directIo;
        this.batchLength = builder.batchLength;
        this.maxDelay = builder.maxDelay;
        this.fillBatches = builder.fillBatches;
        this.alignment = builder.alignment;
        this.cutThreshold = builder.cutThreshold;
        this.durability = builder.durability;
        this.forcesInFlight = builder.forcesInFlight;
        this.queueCapacity = builder.queueCapacity;
        this.maxAppendLengthSetting = builder.maxAppendLength;
        this.retryInterval = builder.retryInterval;
        this.maxAppendLength = builder.maxAppendLength > 0 ? builder.maxAppendLength
            : (int) Math.min(MAX_APPEND_LENGTH_DEFAULT, maxAppendLengthFor(builder.fileLength));
        this.fileFactory = builder.fileFactory != null ? builder.fileFactory : FileChannelLogFile.factory(builder.directIo);
        this.name = builder.name;
        this.registerMBeans = builder.registerMBeans;
        this.checkpointFiles = builder.checkpointFiles;
    }

    /**
     * @param directory where the log files live; created if absent.
     */
    public static Builder builder(final Path directory) {
        return new Builder(directory);
    }

    /**
     * @return a builder holding this configuration's settings.
     */
    public Builder toBuilder() {
        final Builder builder = new Builder(directory);
        builder.fileLength = fileLength;
        builder.preWrite = preWrite;
        builder.spareFiles = spareFiles;
        builder.preparedFiles = preparedFiles;
        builder.recycleFiles = recycleFiles;
        builder.allowMissingFiles = allowMissingFiles;
        builder.directIo = directIo;
        builder.batchLength = batchLength;
        builder.maxDelay = maxDelay;
        builder.fillBatches = fillBatches;
        builder.alignment = alignment;
        builder.cutThreshold = cutThreshold;
        builder.durability = durability;
        builder.forcesInFlight = forcesInFlight;
        builder.queueCapacity = queueCapacity;
        builder.maxAppendLength = maxAppendLengthSetting;
        builder.retryInterval = retryInterval;
        builder.fileFactory = fileFactory;
        builder.name = name;
        builder.registerMBeans = registerMBeans;
        builder.checkpointFiles = checkpointFiles;
        return builder;
    }

    public Path directory() {
        return directory;
    }

    public long fileLength() {
        return fileLength;
    }

    public boolean preWrite() {
        return preWrite;
    }

    public int spareFiles() {
        return spareFiles;
    }

    /**
     * @return spares the directory prepares (pre-written if {@link #preWrite()}) on the thread
     *         that starts the writer, before the writer takes appends; see {@link Builder#preparedFiles(int)}.
     */
    public int preparedFiles() {
        return preparedFiles;
    }

    public boolean recycleFiles() {
        return recycleFiles;
    }

    /**
     * @return whether an open accepts a directory missing a log file the last writer recorded as
     *         live; see {@link Builder#allowMissingFiles(boolean)}.
     */
    public boolean allowMissingFiles() {
        return allowMissingFiles;
    }

    public DirectIoMode directIo() {
        return directIo;
    }

    public int batchLength() {
        return batchLength;
    }

    public Duration maxDelay() {
        return maxDelay;
    }

    /**
     * @return whether a batch waits up to {@link #maxDelay()} to fill when no request is queued;
     *         see {@link Builder#fillBatches(boolean)}.
     */
    public boolean fillBatches() {
        return fillBatches;
    }

    public AlignmentPolicy alignment() {
        return alignment;
    }

    public int cutThreshold() {
        return cutThreshold;
    }

    public DurabilityPolicy durability() {
        return durability;
    }

    public int queueCapacity() {
        return queueCapacity;
    }

    /**
     * @return the longest append (one DATA record's payload) the log takes; a longer one is
     *         refused before anything is written. At least {@code batchLength - 24}.
     */
    public int maxAppendLength() {
        return maxAppendLength;
    }

    /**
     * @return the longest append a log of files of {@code fileLength} bytes can take: its record
     *         (header and payload, 8-byte aligned) plus a page fits in half of a file's record
     *         space, so that the other half holds the segment table's SNAPSHOT at the head of a file.
     */
    public static long maxAppendLengthFor(final long fileLength) {
        final long half = (fileLength - FIRST_RECORD_POSITION) / 2 - PAGE_LENGTH;
        return Math.min(MAX_MAX_APPEND_LENGTH, (half & -LogRecordDescriptor.RECORD_ALIGNMENT) - LogRecordDescriptor.HEADER_LENGTH);
    }

    /**
     * @return with {@link DurabilityPolicy#EVERY_BATCH}, how many batches may be being forced
     *         while the writer writes the next ones (1: each batch is forced before the next is
     *         written); see {@link Builder#forcesInFlight(int)}.
     */
    public int forcesInFlight() {
        return forcesInFlight;
    }

    /**
     * @return how often a failed writer retries its recovery by itself; zero: never (only
     *         {@link StoreLog#recover()}).
     */
    public Duration retryInterval() {
        return retryInterval;
    }

    public LogFileFactory fileFactory() {
        return fileFactory;
    }

    /**
     * @return the name used in thread names and messages; null if not set (the user names it).
     */
    public String name() {
        return name;
    }

    /**
     * @return whether the log registers its MBeans (writer, directory, historical reads) with the
     *         platform MBean server; true by default.
     */
    public boolean registerMBeans() {
        return registerMBeans;
    }

    /**
     * @return after how many new files the writer's background thread writes a recovery
     *         checkpoint, which recovery then starts from; 0: no checkpoint, every file is scanned.
     */
    public int checkpointFiles() {
        return checkpointFiles;
    }

    /**
     * @return bytes of the writer's batch buffer: a batch plus a carried tail of less than a page.
     */
    public int bufferCapacity() {
        return batchLength + PAGE_LENGTH;
    }

    @Override
    public String toString() {
        return "LogConfig{directory=" + directory + ", fileLength=" + fileLength + ", preWrite=" + preWrite + ", spareFiles="
            + spareFiles + ", preparedFiles=" + preparedFiles + ", recycleFiles=" + recycleFiles + ", directIo=" + directIo
            + ", batchLength=" + batchLength
            + ", maxDelay=" + maxDelay + ", fillBatches=" + fillBatches + ", alignment=" + alignment + ", cutThreshold=" + cutThreshold + ", durability="
            + durability + ", forcesInFlight=" + forcesInFlight + ", queueCapacity=" + queueCapacity + ", maxAppendLength=" + maxAppendLength + ", retryInterval="
            + retryInterval + ", checkpointFiles=" + checkpointFiles + '}';
    }

    /**
     * Builds a {@link LogConfig}. Not thread-safe; use from one thread.
     */
    public static final class Builder {
        private final Path directory;
        private long fileLength = FILE_LENGTH_DEFAULT;
        private boolean preWrite = PRE_WRITE_DEFAULT;
        private int spareFiles = SPARE_FILES_DEFAULT;
        private int preparedFiles = PREPARED_FILES_DEFAULT;
        private boolean recycleFiles = RECYCLE_FILES_DEFAULT;
        private boolean allowMissingFiles;
        private DirectIoMode directIo = DIRECT_IO_DEFAULT;
        private int batchLength = BATCH_LENGTH_DEFAULT;
        private Duration maxDelay = MAX_DELAY_DEFAULT;
        private boolean fillBatches = FILL_BATCHES_DEFAULT;
        private AlignmentPolicy alignment = ALIGNMENT_DEFAULT;
        private int cutThreshold = CUT_THRESHOLD_DEFAULT;
        private DurabilityPolicy durability = DURABILITY_DEFAULT;
        private int forcesInFlight = FORCES_IN_FLIGHT_DEFAULT;
        private int queueCapacity = QUEUE_CAPACITY_DEFAULT;
        /** 0: not set, the default. */
        private int maxAppendLength;
        private Duration retryInterval = RETRY_INTERVAL_DEFAULT;
        private LogFileFactory fileFactory;
        private String name;
        private boolean registerMBeans = true;
        private int checkpointFiles = CHECKPOINT_FILES_DEFAULT;

        private Builder(final Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /**
         * @param fileLength length of every log file: a multiple of 4096, at least
         *                   {@code 4 + 2 * batchLength / 4096} pages.
         */
        public Builder fileLength(final long fileLength) {
            this.fileLength = fileLength;
            return this;
        }

        /**
         * @param preWrite whether new files are written with zeros once when created (so the
         *                 file system allocates their blocks then, not on the first write), or
         *                 only have their length set (the default: {@link #PRE_WRITE_DEFAULT}
         *                 says why). Either way a file's unwritten bytes read as zeros, which
         *                 recovery takes as the end of its records.
         */
        public Builder preWrite(final boolean preWrite) {
            this.preWrite = preWrite;
            return this;
        }

        /**
         * @param spareFiles files kept ready (created, pre-written, header written) ahead of the
         *                   current one, by a background thread; 0 creates each file when needed,
         *                   on the writer thread. In [0, 64].
         */
        public Builder spareFiles(final int spareFiles) {
            this.spareFiles = spareFiles;
            return this;
        }

        /**
         * @param preparedFiles spares made when the writer starts, on the starting thread, before
         *                      it takes appends (a log that grows pre-writes a new file
         *                      every fileLength bytes, and that pre-writing shares the disk with
         *                      the appends). The writer's first files come from this pool; the
         *                      background thread makes new ones only once fewer than
         *                      {@code spareFiles} are left. They take {@code preparedFiles *
         *                      fileLength} of disk from the start (deleted at close if unused) and
         *                      time at start; a pool that cannot be made is logged and the
         *                      background thread makes the files as usual. In [0, {@value LogConfig#PREPARED_FILES_MAX}].
         */
        public Builder preparedFiles(final int preparedFiles) {
            this.preparedFiles = preparedFiles;
            return this;
        }

        /**
         * @param recycleFiles whether a dead file (all its data truncated or deleted) becomes a
         *                     spare, renamed to the next number with a new header, while fewer
         *                     than {@code 2 * spareFiles} (at least 1) spares are ready, instead of
         *                     being deleted: the
         *                     cost of pre-writing is then paid once per file, not once per roll.
         *                     The stale records left in it never validate (the CRC is seeded
         *                     with the file number).
         */
        public Builder recycleFiles(final boolean recycleFiles) {
            this.recycleFiles = recycleFiles;
            return this;
        }

        /**
         * @param allowMissingFiles whether to open a log some of whose files are gone: the writer
         *                          records the log's live files (the file {@code CURRENT}) at
         *                          every roll and before it deletes a file retention or
         *                          compaction retired, and by default an open whose directory
         *                          lacks one of them (in the middle of the sequence or at its
         *                          end) fails with {@link LogCorruptedException} naming the
         *                          first missing file, since the appends acknowledged into it
         *                          are lost. {@code true} opens the log with what its files hold
         *                          (WARN): a segment whose bytes were in a missing file opens
         *                          from where the remaining files hold them, losing the rest
         *                          knowingly. False by default.
         */
        public Builder allowMissingFiles(final boolean allowMissingFiles) {
            this.allowMissingFiles = allowMissingFiles;
            return this;
        }

        public Builder directIo(final DirectIoMode directIo) {
            this.directIo = Objects.requireNonNull(directIo, "directIo");
            return this;
        }

        /**
         * @param batchLength most bytes one write carries: a multiple of 4096 in
         *                    [{@link #MIN_BATCH_LENGTH}, {@link #MAX_BATCH_LENGTH}]. It does not
         *                    bound an append: an append is one record whatever its length (up to
         *                    {@link #maxAppendLength(int) maxAppendLength}), and one longer than
         *                    the batch is written with the records before it in one write of its
         *                    own length (the writer's buffer grows for it and shrinks after).
         */
        public Builder batchLength(final int batchLength) {
            this.batchLength = batchLength;
            return this;
        }

        /**
         * @param maxDelay longest a request waits in a batch being built while requests keep
         *                 coming (so a steady trickle faster than the writer drains cannot hold a
         *                 batch open); positive. The writer never waits for a batch to fill: when
         *                 its queue is empty it writes at once.
         */
        public Builder maxDelay(final Duration maxDelay) {
            this.maxDelay = Objects.requireNonNull(maxDelay, "maxDelay");
            return this;
        }

        /**
         * @param fillBatches whether the writer holds a batch that is neither full nor
         *                    {@link #maxDelay(Duration) maxDelay} old even when its queue is
         *                    empty (default {@link #FILL_BATCHES_DEFAULT}: it writes at once), so
         *                    that each write, and each wake of the completion thread, carries
         *                    every append of up to maxDelay; producers of asynchronous appends then
         *                    do not wake the writer either. Meant for {@link DurabilityPolicy#NEVER}
         *                    under a broker that acknowledges from a journal of its own (a bookie):
         *                    nobody waits for those appends' completion. A batch is written at once
         *                    all the same when a request in it is waited for (a synchronous append,
         *                    a create, seal, truncate or delete, a compaction copy), when a
         *                    {@link StoreLog#force()} waits, and at close.
         */
        public Builder fillBatches(final boolean fillBatches) {
            this.fillBatches = fillBatches;
            return this;
        }

        public Builder alignment(final AlignmentPolicy alignment) {
            this.alignment = Objects.requireNonNull(alignment, "alignment");
            return this;
        }

        /**
         * @param cutThreshold with {@link AlignmentPolicy#ADAPTIVE}, the batch length from which
         *                     the tail is cut rather than padded: in [4096, batchLength].
         */
        public Builder cutThreshold(final int cutThreshold) {
            this.cutThreshold = cutThreshold;
            return this;
        }

        public Builder durability(final DurabilityPolicy durability) {
            this.durability = Objects.requireNonNull(durability, "durability");
            return this;
        }

        /**
         * @param queueCapacity requests that may wait for the writer (rounded up to a power of
         *                      two), and as many again in an overflow behind the queue; a request
         *                      that finds both full is refused with {@link LogQueueFullException}
         *                      by the calls that never wait ({@code appendAsync}), and waited for,
         *                      with no lock held, by the synchronous ones. At least 2.
         */
        public Builder queueCapacity(final int queueCapacity) {
            this.queueCapacity = queueCapacity;
            return this;
        }

        /**
         * @param maxAppendLength the longest append (one DATA record, so it is in the log whole or
         *                        not at all): in [{@code batchLength - 24},
         *                        {@link LogConfig#maxAppendLengthFor(long) maxAppendLengthFor(fileLength)}],
         *                        at most {@link #MAX_MAX_APPEND_LENGTH}. By default
         *                        {@link #MAX_APPEND_LENGTH_DEFAULT} (16 MiB), or less if the files cannot
         *                        hold it. The writer keeps a buffer as long as the longest append it
         *                        wrote, and recovery's torn-write window covers one such write.
         */
        public Builder maxAppendLength(final int maxAppendLength) {
            if (maxAppendLength <= 0) {
                throw new CacheConfigurationException("maxAppendLength=" + maxAppendLength + " must be positive");
            }
            this.maxAppendLength = maxAppendLength;
            return this;
        }

        /**
         * @param forcesInFlight with {@link DurabilityPolicy#EVERY_BATCH}, how many batches may be
         *                       being forced at once. With 1 (the default) the writer thread
         *                       writes a batch, forces it, and only then writes the next. With
         *                       more, forcing threads (one per force in flight) force the file
         *                       while the writer thread writes the next batches: a disk that
         *                       overlaps forces then takes more bytes per second. While a force
         *                       runs, the next batch is written once it is as long as the last
         *                       batch written (or {@link #maxDelay(Duration)} passed), so the waiting
         *                       bytes are split into batches of equal length. The contract is
         *                       unchanged: a request completes only once a force that began after
         *                       its batch was written has returned (and every force that ran at
         *                       the same time returned without error), and requests complete in
         *                       submission order. Ignored with the other policies (their forces
         *                       are rare). In [1, {@link #FORCES_IN_FLIGHT_MAX}].
         *                       A disk error with forces in flight fails every request whose
         *                       batch no trusted force covers, and the writer's repair keeps
         *                       the log one recovery accepts (the gap inside a file that later
         *                       files follow, once found by a randomized test, came from the
         *                       repair with any count, and is fixed: docs/tuning.md). The
         *                       default stays 1: more was slower on the measured workload.
         * @throws CacheConfigurationException if out of range.
         */
        public Builder forcesInFlight(final int forcesInFlight) {
            if (forcesInFlight < 1 || forcesInFlight > FORCES_IN_FLIGHT_MAX) {
                throw new CacheConfigurationException("forcesInFlight=" + forcesInFlight + " must be in [1, " + FORCES_IN_FLIGHT_MAX
                    + "]");
            }
            this.forcesInFlight = forcesInFlight;
            return this;
        }

        /**
         * @param retryInterval after a disk error (a full disk), how often the writer retries, on
         *                      its own thread, what {@link StoreLog#recover()} does: rewrite
         *                      and force the range the failed write may have touched, or the roll
         *                      that failed; once that succeeds it takes appends again. Zero: never,
         *                      the caller calls {@code recover()}. Not negative.
         */
        public Builder retryInterval(final Duration retryInterval) {
            this.retryInterval = Objects.requireNonNull(retryInterval, "retryInterval");
            return this;
        }

        /**
         * @param fileFactory opens the log files; by default {@code FileChannelLogFile} with the
         *                    {@link #directIo(DirectIoMode) direct I/O mode}. For tests.
         */
        public Builder fileFactory(final LogFileFactory fileFactory) {
            this.fileFactory = Objects.requireNonNull(fileFactory, "fileFactory");
            return this;
        }

        /**
         * @param name the log's name in thread names and messages.
         */
        public Builder name(final String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @param registerMBeans whether the log registers its MBeans ({@link LogWriterMXBean},
         *                       {@link LogDirectoryMXBean}, {@link HistoricalReadMXBean}) as
         *                       {@code io.streamcache:type=LogWriter|LogDirectory|HistoricalReads,name=...};
         *                       true by default.
         */
        public Builder registerMBeans(final boolean registerMBeans) {
            this.registerMBeans = registerMBeans;
            return this;
        }

        /**
         * @param checkpointFiles with a positive value, a background thread writes a <em>recovery
         *                        checkpoint</em> (the file {@code CHECKPOINT}) once at least this
         *                        many files were started since the last one: the segment table and
         *                        the location index of every DATA record in the files before the
         *                        current one. An open loads it and replays only the files from the
         *                        current one on, instead of reading and CRC-checking every byte of
         *                        every file; a missing, damaged or mismatching checkpoint is logged
         *                        and the open scans everything as without one. What it gives up:
         *                        bytes in the files before the checkpoint are not checked by the
         *                        open itself, but in the background a few seconds after it (damage
         *                        logged at ERROR with the file and position) and when they are read
         *                        (historical reads check every record). What it costs: the
         *                        checkpoint thread reads back every file once and keeps a second
         *                        copy of the segment table and location indexes on the heap. 0
         *                        writes none and ignores any on disk, so that every open reads
         *                        and checks every byte. In [0, 2^20]; default
         *                        {@link #CHECKPOINT_FILES_DEFAULT}.
         */
        public Builder checkpointFiles(final int checkpointFiles) {
            this.checkpointFiles = checkpointFiles;
            return this;
        }

        /**
         * @throws CacheConfigurationException if a setting is out of range.
         */
        public LogConfig build() {
            if (checkpointFiles < 0 || checkpointFiles > 1 << 20) {
                throw new CacheConfigurationException("checkpointFiles=" + checkpointFiles + " must be in [0, 2^20]");
            }
            if (batchLength < MIN_BATCH_LENGTH || batchLength > MAX_BATCH_LENGTH || batchLength % PAGE_LENGTH != 0) {
                throw new CacheConfigurationException("batchLength=" + batchLength + " must be a multiple of " + PAGE_LENGTH
                    + " in [" + MIN_BATCH_LENGTH + ", " + MAX_BATCH_LENGTH + "]");
            }
            final long minFileLength = FIRST_RECORD_POSITION + 3L * PAGE_LENGTH + 2L * batchLength;
            if (fileLength % PAGE_LENGTH != 0 || fileLength < minFileLength) {
                throw new CacheConfigurationException("fileLength=" + fileLength + " must be a multiple of " + PAGE_LENGTH
                    + " and at least " + minFileLength + " (4 pages + 2 * batchLength=" + batchLength + ")");
            }
            if (spareFiles < 0 || spareFiles > 64) {
                throw new CacheConfigurationException("spareFiles=" + spareFiles + " must be in [0, 64]");
            }
            if (preparedFiles < 0 || preparedFiles > PREPARED_FILES_MAX) {
                throw new CacheConfigurationException("preparedFiles=" + preparedFiles + " must be in [0, " + PREPARED_FILES_MAX + "]");
            }
            if (maxDelay.isNegative() || maxDelay.isZero()) {
                throw new CacheConfigurationException("maxDelay=" + maxDelay + " must be positive");
            }
            if (cutThreshold < PAGE_LENGTH || cutThreshold > batchLength) {
                throw new CacheConfigurationException("cutThreshold=" + cutThreshold + " must be in [" + PAGE_LENGTH
                    + ", batchLength=" + batchLength + "]");
            }
            if (retryInterval.isNegative()) {
                throw new CacheConfigurationException("retryInterval=" + retryInterval + " must not be negative");
            }
            if (queueCapacity < 2 || queueCapacity > 1 << 30) {
                throw new CacheConfigurationException("queueCapacity=" + queueCapacity + " must be in [2, 2^30]");
            }
            if (maxAppendLength > 0 && (maxAppendLength < batchLength - LogRecordDescriptor.HEADER_LENGTH
                || maxAppendLength > maxAppendLengthFor(fileLength))) {
                throw new CacheConfigurationException("maxAppendLength=" + maxAppendLength + " must be in [batchLength - "
                    + LogRecordDescriptor.HEADER_LENGTH + "=" + (batchLength - LogRecordDescriptor.HEADER_LENGTH) + ", "
                    + maxAppendLengthFor(fileLength) + "] (half of fileLength=" + fileLength + " less a page and a header)");
            }
            return new LogConfig(this);
        }
    }
}
