package io.streamcache.log;

/**
 * JMX view of a store's log directory, registered as
 * {@code io.streamcache:type=LogDirectory,name=<log name>} while its writer runs (unregistered
 * when the directory closes): callable from any thread; each attribute reads a fresh
 * {@link LogDirectoryStats}.
 */
public interface LogDirectoryMXBean {
    String getName();

    String getPath();

    /** @return log files that are not spares. */
    int getFiles();

    /** @return bytes the files and the prepared spares take. */
    long getBytes();

    /** @return spare files ready for the next roll. */
    int getPreparedFiles();

    /** @return the writer epoch the directory was opened with. */
    long getLockEpoch();

    long getFilesCreated();

    long getFilesRecycled();

    long getFilesDeleted();

    long getBytesPreWritten();
}
