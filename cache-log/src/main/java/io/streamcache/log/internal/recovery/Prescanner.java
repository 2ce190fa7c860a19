package io.streamcache.log.internal.recovery;

import io.streamcache.core.StreamcacheThreads;

import io.streamcache.log.internal.LogFileDescriptor;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads and validates log files on its own thread, ahead of the replay, in file order: recovery's
 * second core. For each file it was given, one {@link LogScanner#scan} into a
 * {@link PrescannedFile} (the records' header fields, CREATE names, the SNAPSHOT's digest), then
 * hands it over through a queue of at most {@link #AHEAD} files; the replay takes them in the
 * same order ({@link #take}). It changes nothing on disk and keeps no file open between files.
 *
 * <p>What the replay does with a file is unchanged: every check a scan makes is made here, by
 * the same scanner code; the replay applies the records in the same order and falls back to
 * scanning the file itself whenever the prescanned form does not fit (see {@link LogRecovery}).
 * A failure to read a file is kept in {@link PrescannedFile#failure}, not thrown: the replay's
 * own scan of the file then meets it (or not) as without a prescan.
 */
final class Prescanner implements AutoCloseable {
    /** Files scanned ahead of the replay, at most. */
    static final int AHEAD = 4;

    private final Path directory;
    private final LogScanner scanner;
    private final List<Long> numbers;
    private final BlockingQueue<PrescannedFile> queue = new ArrayBlockingQueue<>(AHEAD);
    private final Thread thread;
    private volatile boolean closed;

    /**
     * Starts scanning {@code numbers}, in that order.
     *
     * @param chunkLength     bytes per read, as the replay's scanner.
     * @param tornWriteWindow as the replay's scanner.
     */
    Prescanner(final Path directory, final List<Long> numbers, final int chunkLength, final long tornWriteWindow,
               final StreamcacheThreads threads, final String owner) {
        this.directory = directory;
        this.numbers = List.copyOf(numbers);
        this.scanner = new LogScanner(chunkLength, tornWriteWindow);
        this.thread = threads.newThread(StreamcacheThreads.Role.RECOVERY_SCAN, owner, this::run);
        this.thread.start();
    }

    private void run() {
        for (final long number : numbers) {
            final PrescannedFile file = new PrescannedFile(number);
            try (FileChannel channel = FileChannel.open(directory.resolve(LogFileDescriptor.fileName(number)),
                StandardOpenOption.READ)) {
                file.scan = scanner.scan(channel, number, file);
            } catch (final Exception | OutOfMemoryError e) {
                file.failure = e instanceof Exception ex ? ex : new IllegalStateException(e);
            }
            try {
                while (!queue.offer(file, 100, TimeUnit.MILLISECONDS)) {
                    if (closed) {
                        return;
                    }
                }
            } catch (final InterruptedException e) {
                return;
            }
            if (closed) {
                return;
            }
        }
    }

    /**
     * @return the next file's prescan, which must be {@code fileNumber} (the files are taken in
     *         the order given), or null if the prescan is not there (the caller scans the file itself).
     */
    PrescannedFile take(final long fileNumber) {
        while (true) {
            final PrescannedFile file;
            try {
                file = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            if (file != null) {
                if (file.fileNumber != fileNumber) {
                    throw new IllegalStateException("prescanned fileNumber=" + file.fileNumber + " taken for fileNumber="
                        + fileNumber + ": the replay must take the files in the order given");
                }
                return file;
            }
            if (!thread.isAlive() && queue.isEmpty()) {
                return null;
            }
        }
    }

    /** Stops the thread (after the file it is reading) and waits for it. */
    @Override
    public void close() {
        closed = true;
        queue.clear();
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join(100);
            } catch (final InterruptedException e) {
                interrupted = true;
            }
            queue.clear();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
