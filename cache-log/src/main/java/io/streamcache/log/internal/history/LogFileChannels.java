package io.streamcache.log.internal.history;

import io.streamcache.core.CacheClosedException;
import io.streamcache.log.internal.LogFileDescriptor;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Read-only channels on the log files of a directory, opened on first use and kept open;
 * thread-safe. Lookups are a lock-free map read; opening (and reopening a channel closed by an
 * interrupted reader) takes the instance's monitor.
 */
public final class LogFileChannels implements LogFileSource, AutoCloseable {
    private final Path directory;
    private final ConcurrentHashMap<Long, FileChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param directory the log directory.
     */
    public LogFileChannels(final Path directory) {
        this.directory = Objects.requireNonNull(directory, "directory");
    }

    @Override
    public FileChannel channel(final long fileNumber) throws IOException {
        final FileChannel channel = channels.get(fileNumber);
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        synchronized (this) {
            if (closed) {
                throw new CacheClosedException("log file channels of " + directory + " are closed");
            }
            final FileChannel current = channels.get(fileNumber);
            if (current != null && current.isOpen()) {
                return current;
            }
            final FileChannel opened = FileChannel.open(path(fileNumber), StandardOpenOption.READ);
            channels.put(fileNumber, opened);
            return opened;
        }
    }

    @Override
    public Path path(final long fileNumber) {
        return directory.resolve(LogFileDescriptor.fileName(fileNumber));
    }

    /**
     * Closes the channel on a file, if open: call it before deleting the file.
     *
     * @throws IOException if closing fails.
     */
    public synchronized void close(final long fileNumber) throws IOException {
        final FileChannel channel = channels.remove(fileNumber);
        if (channel != null) {
            channel.close();
        }
    }

    /**
     * @return channels open now.
     */
    public int openCount() {
        return channels.size();
    }

    /**
     * Closes every channel; {@link #channel} throws afterwards. Idempotent.
     */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        IOException failure = null;
        for (final Long fileNumber : channels.keySet()) {
            try {
                close(fileNumber);
            } catch (final IOException e) {
                failure = e;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "LogFileChannels{directory=" + directory + ", open=" + channels.size() + ", closed=" + closed + '}';
    }
}
