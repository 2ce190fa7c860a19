package io.streamcache.log.internal;

import io.streamcache.log.LogDirectoryMXBean;
import io.streamcache.log.LogDirectoryStats;

/**
 * The MBean of a {@link LogDirectory}: each attribute reads a fresh {@link LogDirectoryStats};
 * thread-safe. Split out of the directory, which keeps the files themselves.
 */
final class LogDirectoryMXBeanAdapter implements LogDirectoryMXBean {
    private final LogDirectory directory;

    LogDirectoryMXBeanAdapter(final LogDirectory directory) {
        this.directory = directory;
    }

    @Override
    public String getName() {
        return directory.name();
    }

    @Override
    public String getPath() {
        return directory.path().toString();
    }

    @Override
    public int getFiles() {
        return directory.stats().files();
    }

    @Override
    public long getBytes() {
        return directory.stats().bytes();
    }

    @Override
    public int getPreparedFiles() {
        return directory.stats().preparedFiles();
    }

    @Override
    public long getLockEpoch() {
        return directory.epoch();
    }

    @Override
    public long getFilesCreated() {
        return directory.filesCreated();
    }

    @Override
    public long getFilesRecycled() {
        return directory.filesRecycled();
    }

    @Override
    public long getFilesDeleted() {
        return directory.filesDeleted();
    }

    @Override
    public long getBytesPreWritten() {
        return directory.bytesPreWritten();
    }
}
