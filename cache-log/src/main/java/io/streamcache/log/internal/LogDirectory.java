package io.streamcache.log.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.streamcache.core.internal.concurrent.Waits;
import io.streamcache.log.LogConfig;
import io.streamcache.log.LogDirectoryStats;
import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import io.streamcache.log.LogLockedException;
import io.streamcache.core.CacheClosedException;
import io.streamcache.core.StreamcacheThreads;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.ObjectName;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static io.streamcache.log.internal.LogFileDescriptor.PAGE_LENGTH;

/**
 * The log files of one log in one directory: thread-safe. The aggregating writer takes new files
 * from it and retires dead ones; readers (recovery, historical reads) read any file by number.
 *
 * <h2>Files</h2>
 * Files are named by {@link LogFileDescriptor#fileName(long)}, numbered upwards, all
 * {@link LogConfig#fileLength()} long. A new file is created whole before it is used: written
 * with zeros once when {@link LogConfig#preWrite()} is on (the file system allocates its blocks
 * then, not on the first write: the RocketMQ-on-PMEM contest design measured 280 -> 320 MB/s), or only extended to its
 * length when it is off; then its header page is written and forced, and the directory forced
 * so the new name is durable. The writer then writes the SNAPSHOT record at
 * {@link LogFileDescriptor#FIRST_RECORD_POSITION} and the batches after it.
 *
 * <h2>Spares and the background thread</h2>
 * One thread per directory (started by the writer) keeps {@link LogConfig#spareFiles()} files
 * ready ahead of the current one, so a roll costs the writer no pre-writing, and deletes the
 * files the writer retires; with {@link LogConfig#recycleFiles()} it renames a retired file to
 * the next number and rewrites its header instead, while fewer than {@code 2 * spareFiles} (at
 * least 1) spares are ready, so a log whose files die as fast as new ones fill pre-writes no
 * file after the first few.
 * Spares are numbered after every used file and are taken in number order; a spare left by a
 * crash holds a header and no valid record (zeros, or stale records whose CRC, seeded with the
 * old file number, never validates): recovery treats such a file as unused and may
 * {@link #deleteFile(long) delete} it. {@link #close()} deletes the spares.
 *
 * <h2>One writer</h2>
 * A directory is open for one writer at a time: it holds the directory's {@link LogLock} from
 * {@link #open} to {@link #close()}, writes the lock's epoch into every header it writes (new and
 * recycled files), removes the clean-close mark ({@link CleanMark}) when its writer starts
 * ({@link #beginWriting()}, never at a failed open) and, when closed after
 * a writer that finished cleanly ({@link #close(long[])}), writes it again.
 *
 * <h2>Reads</h2>
 * {@link #read(long, long, ByteBuffer)} reads any file through a buffered read-only channel
 * opened on first use and kept until the file is deleted or the directory closed.
 *
 * <p><b>Design note: one class for the files.</b> Creation, spares, recycling, deletion,
 * the lock's epoch in every header and the read channels are all views of one thing, the set of
 * files and the state of each (spare, in use, retired, being recycled), guarded together: a read
 * channel must be closed when its file is recycled under a new number or deleted, and a spare
 * must carry the epoch of the lock held when it was written. Split, each part would need the
 * file table and its monitor from the others. The MBean, which needs neither, lives apart
 * ({@link LogDirectoryMXBeanAdapter}).
 */
public final class LogDirectory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirectory.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final int ZERO_CHUNK_LENGTH = 1 << 20;

    private final LogConfig config;
    private final Path path;
    private final String name;
    private final LogFileFactory factory;
    private final ByteBuffer zeros;
    private final Object lock = new Object();
    private final ConcurrentHashMap<Long, FileChannel> readers = new ConcurrentHashMap<>();
    private final LogLock writerLock;

    /** Every log file in the directory that is not a spare, by number. */
    @GuardedBy("lock")
    private final TreeSet<Long> files = new TreeSet<>();
    /** Ready spares, by number. */
    @GuardedBy("lock")
    private final TreeMap<Long, LogFile> spares = new TreeMap<>();
    /** Numbers of files being created or recycled now. */
    @GuardedBy("lock")
    private final TreeSet<Long> preparing = new TreeSet<>();
    @GuardedBy("lock")
    private final ArrayDeque<Long> retired = new ArrayDeque<>();
    /** Files handed to the background thread for deletion or recycling, and those it handled. */
    @GuardedBy("lock")
    private long retirements;
    @GuardedBy("lock")
    private long retirementsHandled;
    @GuardedBy("lock")
    private long nextNumber;
    private IOException spareError;
    private Thread thread;
    private boolean closed;
    /** The MBean's name once {@link #start} registered it; unregistered at close. */
    private ObjectName objectName;

    private final LongAdder filesCreated = new LongAdder();
    private final LongAdder filesRecycled = new LongAdder();
    private final LongAdder filesDeleted = new LongAdder();
    private final LongAdder bytesPreWritten = new LongAdder();

    private LogDirectory(final LogConfig config, final long maxNumber, final TreeSet<Long> existing, final LogLock writerLock) {
        this.config = config;
        this.writerLock = writerLock;
        this.path = config.directory();
        this.name = config.name() != null ? config.name() : "log-" + INSTANCES.incrementAndGet();
        this.factory = config.fileFactory();
        this.zeros = BufferUtil.allocateDirectAligned((int)Math.min(ZERO_CHUNK_LENGTH, config.fileLength()), PAGE_LENGTH);
        this.files.addAll(existing);
        this.nextNumber = maxNumber + 1;
    }

    /**
     * Opens the directory (creating it if absent), takes its writer lock ({@link LogLock}) and
     * lists its log files; creates no file and starts no thread.
     *
     * @throws LogLockedException if another writer holds the directory.
     * @throws IOException        if the directory cannot be created or listed.
     */
    public static LogDirectory open(final LogConfig config) throws IOException {
        return open(config, LogLock.acquire(config.directory()));
    }

    /**
     * Opens the directory with a writer lock the caller took before (to recover the log under
     * it); the directory owns the lock from now on, also if this fails, and releases it at
     * {@link #close()}. Leaves the clean-close mark ({@link CleanMark}) where it is: the writer
     * removes it ({@link #beginWriting()}) once the open can no longer fail for want of space or
     * of a file, so a failed open leaves the directory as it found it.
     *
     * @throws IOException if the directory cannot be listed or the mark removed.
     */
    public static LogDirectory open(final LogConfig config, final LogLock writerLock) throws IOException {
        try {
            Files.createDirectories(config.directory());
            final TreeSet<Long> existing = new TreeSet<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(config.directory())) {
                for (final Path file : stream) {
                    final long number = LogFileDescriptor.fileNumber(file.getFileName().toString());
                    if (number > 0) {
                        existing.add(number);
                    }
                }
            }
            return new LogDirectory(config, existing.isEmpty() ? 0 : existing.last(), existing, writerLock);
        } catch (final IOException | RuntimeException | Error e) {
            writerLock.close();
            throw e;
        }
    }

    /**
     * Removes the clean-close mark ({@link CleanMark}) durably: from now on the log is being
     * written. Called by the writer before its first write that could change where the log ends.
     *
     * @throws IOException if the mark cannot be removed or the directory forced.
     */
    public void beginWriting() throws IOException {
        CleanMark.remove(path);
    }

    /**
     * @return the writer epoch this directory was opened with ({@link LogLock#epoch()}).
     */
    public long epoch() {
        return writerLock.epoch();
    }

    // ------------------------------------------------------------------------------------------
    // For readers
    // ------------------------------------------------------------------------------------------

    public Path path() {
        return path;
    }

    public LogConfig config() {
        return config;
    }

    public String name() {
        return name;
    }

    public long fileLength() {
        return config.fileLength();
    }

    /**
     * @return the path of log file {@code fileNumber}.
     */
    public Path filePath(final long fileNumber) {
        return path.resolve(LogFileDescriptor.fileName(fileNumber));
    }

    /**
     * @return the numbers of the log files that exist now and are not spares, ascending: the files
     *         found at open, then those the writer has taken.
     */
    public long[] fileNumbers() {
        synchronized (lock) {
            final long[] numbers = new long[files.size()];
            int i = 0;
            for (final long number : files) {
                numbers[i++] = number;
            }
            return numbers;
        }
    }

    /**
     * Reads from log file {@code fileNumber} at {@code position} until {@code destination} is
     * full or the file ends.
     *
     * @return bytes read.
     * @throws NoSuchFileException if the file does not exist (it may have been deleted as dead).
     */
    public int read(final long fileNumber, final long position, final ByteBuffer destination) throws IOException {
        FileChannel channel = readers.get(fileNumber);
        if (channel == null) {
            final FileChannel opened = FileChannel.open(filePath(fileNumber), StandardOpenOption.READ);
            channel = readers.putIfAbsent(fileNumber, opened);
            if (channel == null) {
                channel = opened;
            } else {
                opened.close();
            }
        }
        return FileChannelLogFile.readFully(channel, destination, position);
    }

    /**
     * Deletes log file {@code fileNumber} now (for recovery: an unused spare, a file it found
     * dead). A no-op if it does not exist.
     */
    public void deleteFile(final long fileNumber) throws IOException {
        synchronized (lock) {
            files.remove(fileNumber);
        }
        closeReader(fileNumber);
        if (Files.deleteIfExists(filePath(fileNumber))) {
            filesDeleted.increment();
        }
    }

    // ------------------------------------------------------------------------------------------
    // For the writer
    // ------------------------------------------------------------------------------------------

    /**
     * Prepares {@link LogConfig#preparedFiles()} spares on the calling thread (before the writer
     * takes appends; a failure is logged, the background thread then makes files as usual), then
     * starts the background thread (spares and retirement), created by {@code threads} (role
     * {@code LOG_FILES}). Idempotent.
     */
    void start(final StreamcacheThreads threads) {
        if (config.preparedFiles() > 0) {
            try {
                prepareSpares(config.preparedFiles());
            } catch (final IOException e) {
                LOG.warn("log {}: could not prepare preparedFiles={} files at start: {}", name, config.preparedFiles(), e.toString());
            }
        }
        synchronized (lock) {
            if (thread != null || closed) {
                return;
            }
            thread = threads.newThread(StreamcacheThreads.Role.LOG_FILES, name, this::runBackground);
            thread.start();
            if (config.registerMBeans()) {
                objectName = LogMBeans.register("LogDirectory", name, new LogDirectoryMXBeanAdapter(this));
            }
        }
    }

    /**
     * A log file with its number.
     */
    record NumberedFile(long number, LogFile file) {
    }

    /**
     * @return the next file, numbered after every file taken before: a ready spare, or one
     *         created now on the calling thread (header written, forced, name durable).
     */
    NumberedFile nextFile() throws IOException {
        final long number;
        synchronized (lock) {
            while (true) {
                ensureOpen();
                if (!spares.isEmpty() && (preparing.isEmpty() || spares.firstKey() < preparing.first())) {
                    final Map.Entry<Long, LogFile> spare = spares.pollFirstEntry();
                    files.add(spare.getKey());
                    lock.notifyAll();
                    return new NumberedFile(spare.getKey(), spare.getValue());
                }
                if (preparing.isEmpty()) {
                    number = nextNumber++;
                    preparing.add(number);
                    break;
                }
                waitQuietly();
            }
        }
        try {
            final LogFile file = createFile(number);
            synchronized (lock) {
                files.add(number);
            }
            return new NumberedFile(number, file);
        } finally {
            synchronized (lock) {
                preparing.remove(number);
                lock.notifyAll();
            }
        }
    }

    /**
     * Makes sure at least {@code count} spares are ready, creating the missing ones on the calling
     * thread (pre-written if configured): for a deployment, or a benchmark, that wants the
     * pre-writing of the files it will fill done before the first append, as the RocketMQ-on-PMEM contest design did. The
     * background thread refills only below {@link LogConfig#spareFiles()}, so spares made here
     * beyond that are used up before any new file is made.
     */
    public void prepareSpares(final int count) throws IOException {
        while (true) {
            final long number;
            synchronized (lock) {
                ensureOpen();
                if (spares.size() + preparing.size() >= count) {
                    if (preparing.isEmpty()) {
                        return;
                    }
                    waitQuietly();
                    continue;
                }
                number = nextNumber++;
                preparing.add(number);
            }
            prepareSpare(number);
        }
    }

    /**
     * @return file {@code fileNumber}, which exists, opened for writing (the writer resumes in it).
     */
    LogFile openExisting(final long fileNumber) throws IOException {
        final Path file = filePath(fileNumber);
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file.toString(), null, "log file to resume in does not exist");
        }
        return factory.open(file);
    }

    /**
     * Hands a dead file to the background thread, which deletes or recycles it; the writer must
     * not use it any more.
     */
    void retire(final long fileNumber) {
        synchronized (lock) {
            files.remove(fileNumber);
            if (closed || thread == null) {
                deleteQuietly(fileNumber);
                return;
            }
            retired.add(fileNumber);
            retirements++;
            lock.notifyAll();
        }
    }

    /**
     * Waits until every file retired before this call was deleted or recycled by the background
     * thread (or its deletion failed and was logged). For tests and tools that count the files
     * on disk right after a retirement.
     *
     * @param timeout the longest wait.
     * @return whether they were handled within {@code timeout}.
     * @throws InterruptedException if interrupted while waiting.
     */
    public boolean awaitRetirements(final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            final long target = retirements;
            while (retirementsHandled < target && !closed) {
                final long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Creation
    // ------------------------------------------------------------------------------------------

    private LogFile createFile(final long number) throws IOException {
        final Path file = filePath(number);
        if (Files.exists(file)) {
            throw new IOException("log file " + file + " exists already; numbers must only grow");
        }
        final LogFile logFile = factory.open(file);
        try {
            final long fileLength = config.fileLength();
            if (config.preWrite()) {
                // Through the file's own writes: with buffered files the zeros leave the pages
                // in the page cache that the writer's writes then fill (zeros written
                // around the page cache moved that page allocation onto the writer thread).
                for (long position = 0; position < fileLength; ) {
                    final ByteBuffer chunk = zeros.duplicate();
                    chunk.limit((int)Math.min(chunk.capacity(), fileLength - position));
                    position += chunk.remaining();
                    logFile.write(chunk, position - chunk.limit());
                }
                bytesPreWritten.add(fileLength);
            } else {
                logFile.setLength(fileLength);
            }
            writeHeader(logFile, number);
            syncDirectory();
        } catch (final IOException | RuntimeException e) {
            closeQuietly(logFile);
            try {
                Files.deleteIfExists(file);
            } catch (final IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        filesCreated.increment();
        return logFile;
    }

    private void writeHeader(final LogFile logFile, final long number) throws IOException {
        final ByteBuffer page = BufferUtil.allocateDirectAligned(PAGE_LENGTH, PAGE_LENGTH);
        LogFileDescriptor.putHeader(new UnsafeBuffer(page), 0, number, config.fileLength(), writerLock.epoch());
        logFile.write(page, 0);
        logFile.force();
    }

    private void prepareSpare(final long number) throws IOException {
        try {
            final LogFile file = createFile(number);
            synchronized (lock) {
                if (closed) {
                    closeQuietly(file);
                    deleteQuietly(number);
                } else {
                    spares.put(number, file);
                }
            }
        } finally {
            synchronized (lock) {
                preparing.remove(number);
                lock.notifyAll();
            }
        }
    }

    private void recycle(final long oldNumber, final long number) throws IOException {
        closeReader(oldNumber);
        final Path file = filePath(number);
        Files.move(filePath(oldNumber), file, StandardCopyOption.ATOMIC_MOVE);
        final LogFile logFile;
        try {
            logFile = factory.open(file);
        } catch (final IOException e) {
            Files.deleteIfExists(file);
            throw e;
        }
        try {
            writeHeader(logFile, number);
            syncDirectory();
        } catch (final IOException e) {
            closeQuietly(logFile);
            Files.deleteIfExists(file);
            throw e;
        }
        filesRecycled.increment();
        synchronized (lock) {
            if (closed) {
                closeQuietly(logFile);
                deleteQuietly(number);
            } else {
                spares.put(number, logFile);
            }
        }
    }

    private void syncDirectory() throws IOException {
        try (FileChannel directory = FileChannel.open(path, StandardOpenOption.READ)) {
            directory.force(true);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Background thread
    // ------------------------------------------------------------------------------------------

    private void runBackground() {
        while (true) {
            Long retiredNumber = null;
            long spareNumber = -1;
            boolean recycleIt = false;
            synchronized (lock) {
                if (closed) {
                    return;
                }
                final int ready = spares.size() + preparing.size();
                final boolean wantSpare = ready < config.spareFiles();
                if (!retired.isEmpty()) {
                    retiredNumber = retired.poll();
                    if (config.recycleFiles() && ready < recycledSpares()) {
                        spareNumber = nextNumber++;
                        preparing.add(spareNumber);
                        recycleIt = true;
                    }
                } else if (wantSpare && spareError == null) {
                    spareNumber = nextNumber++;
                    preparing.add(spareNumber);
                } else {
                    waitQuietly();
                    continue;
                }
            }
            try {
                if (retiredNumber != null && !recycleIt) {
                    closeReader(retiredNumber);
                    if (Files.deleteIfExists(filePath(retiredNumber))) {
                        filesDeleted.increment();
                    }
                } else if (recycleIt) {
                    try {
                        recycle(retiredNumber, spareNumber);
                    } finally {
                        synchronized (lock) {
                            preparing.remove(spareNumber);
                            lock.notifyAll();
                        }
                    }
                } else {
                    prepareSpare(spareNumber);
                }
            } catch (final IOException | RuntimeException e) {
                LOG.warn("log {}: background file work failed (retired={}, spare={}): {}", name, retiredNumber, spareNumber, e.toString());
                synchronized (lock) {
                    if (retiredNumber == null || recycleIt) {
                        // A spare could not be made: the writer creates the next file itself
                        // (and sees the error if it persists); retry after the next roll.
                        spareError = e instanceof IOException ? (IOException)e : new IOException(e);
                    }
                }
            } finally {
                if (retiredNumber != null) {
                    synchronized (lock) {
                        retirementsHandled++;
                        lock.notifyAll();
                    }
                }
            }
        }
    }

    /**
     * @return how many spares dead files may fill when recycling: twice the spares kept ready (at
     *         least one), so that a file dying soon after a roll (which the background thread
     *         refilled with a new spare) is still recycled, and new files are created only while
     *         the log grows.
     */
    private int recycledSpares() {
        return Math.max(1, 2 * config.spareFiles());
    }

    // ------------------------------------------------------------------------------------------
    // Lifecycle, stats
    // ------------------------------------------------------------------------------------------

    /**
     * Clears a failure to prepare a spare, so the background thread tries again (the writer calls
     * it after it created a file itself).
     */
    void clearSpareError() {
        synchronized (lock) {
            spareError = null;
            lock.notifyAll();
        }
    }

    /**
     * @return files created (pre-written or extended) since open.
     */
    public long filesCreated() {
        return filesCreated.sum();
    }

    /**
     * @return files recycled into spares since open.
     */
    public long filesRecycled() {
        return filesRecycled.sum();
    }

    /**
     * @return files deleted since open.
     */
    public long filesDeleted() {
        return filesDeleted.sum();
    }

    /**
     * @return zero bytes written to pre-write new files since open.
     */
    public long bytesPreWritten() {
        return bytesPreWritten.sum();
    }

    /**
     * @return spares ready now.
     */
    public int spareCount() {
        synchronized (lock) {
            return spares.size();
        }
    }

    /**
     * @return the files now and the counters since open.
     */
    public LogDirectoryStats stats() {
        final int fileCount;
        final int spareCount;
        synchronized (lock) {
            fileCount = files.size();
            spareCount = spares.size();
        }
        return new LogDirectoryStats(fileCount, (fileCount + (long) spareCount) * config.fileLength(), spareCount, epoch(),
            filesCreated.sum(), filesRecycled.sum(), filesDeleted.sum(), bytesPreWritten.sum());
    }

    /**
     * Stops the background thread (after the file work it is doing), deletes the spares,
     * closes the read channels and unregisters the MBean. Call after the writer is closed.
     * Idempotent.
     */
    @Override
    public void close() {
        closeFilesOnly();
        writerLock.close();
    }

    private void closeFilesOnly() {
        final Thread background;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            background = thread;
            lock.notifyAll();
        }
        if (background != null) {
            Waits.joinUninterruptibly(background);
        }
        synchronized (lock) {
            for (final Map.Entry<Long, LogFile> spare : spares.entrySet()) {
                closeQuietly(spare.getValue());
                deleteQuietly(spare.getKey());
            }
            spares.clear();
            for (final Long number : retired) {
                deleteQuietly(number);
            }
            retired.clear();
        }
        for (final Long number : readers.keySet()) {
            closeReader(number);
        }
        final ObjectName registered;
        synchronized (lock) {
            registered = objectName;
            objectName = null;
        }
        LogMBeans.unregister(registered);
    }

    /**
     * Closes the directory after its writer (closed before): given the end where the writer
     * finished cleanly ({@link AggregatingWriter#cleanEnd()}: file number and position), writes
     * the clean-close mark ({@link CleanMark}) with it and this writer's epoch after the spares
     * are gone and before the lock is released, so that the next recovery treats any damage or
     * shortfall as corruption. A mark that cannot be written is logged at WARN (the next open
     * recovers as after a crash). The directory takes the end, not the writer: the writer is
     * built on the directory, not the other way round.
     *
     * @param end the writer's clean end, or null if it did not finish cleanly (or there was none).
     */
    public void close(final long[] end) {
        if (end == null || isClosed()) {
            close();
            return;
        }
        // Stop the file work (spares deleted) first, keeping the lock until the mark is written.
        closeFilesOnly();
        try {
            new CleanMark(writerLock.epoch(), end[0], end[1]).write(path);
        } catch (final IOException e) {
            LOG.warn("log {}: could not write the clean-close mark in {}: {}", name, path, e.toString());
        } finally {
            writerLock.close();
        }
    }

    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    @Override
    public String toString() {
        return "LogDirectory{name=" + name + ", path=" + path + ", fileLength=" + config.fileLength() + '}';
    }

    private void ensureOpen() {
        if (closed) {
            throw new CacheClosedException("log directory " + name + " is closed");
        }
    }

    private void waitQuietly() {
        try {
            lock.wait();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CacheClosedException("interrupted while waiting for a log file in " + name);
        }
    }

    private void closeReader(final long number) {
        final FileChannel channel = readers.remove(number);
        if (channel != null) {
            try {
                channel.close();
            } catch (final IOException e) {
                LOG.debug("closing a read channel of {} failed", filePath(number), e);
            }
        }
    }

    private void deleteQuietly(final long number) {
        closeReader(number);
        try {
            if (Files.deleteIfExists(filePath(number))) {
                filesDeleted.increment();
            }
        } catch (final IOException e) {
            LOG.warn("log {}: could not delete {}: {}", name, filePath(number), e.toString());
        }
    }

    private static void closeQuietly(final LogFile file) {
        try {
            file.close();
        } catch (final IOException e) {
            LOG.debug("closing {} failed", file.path(), e);
        }
    }
}
