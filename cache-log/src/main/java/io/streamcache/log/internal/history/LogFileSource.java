package io.streamcache.log.internal.history;

import io.streamcache.log.internal.LogFileDescriptor;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Gives a {@link HistoricalReader} the log files to read; must be thread-safe (readers on any
 * thread ask for channels concurrently). The reader only issues positional reads and never
 * closes a channel it is given.
 */
public interface LogFileSource {
    /**
     * @return an open channel on log file {@code fileNumber}, readable with positional reads. If
     *         the channel given before was closed (a thread interrupted during a read closes a
     *         {@link FileChannel} for every user), a fresh one.
     * @throws IOException if the file cannot be opened.
     */
    FileChannel channel(long fileNumber) throws IOException;

    /**
     * @return the path of log file {@code fileNumber}, for error messages.
     */
    default Path path(final long fileNumber) {
        return Path.of(LogFileDescriptor.fileName(fileNumber));
    }
}
