package io.streamcache.log;

import io.streamcache.log.internal.FileChannelLogFile;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Opens {@link LogFile}s: implementations are thread-safe (the log directory opens files from its
 * preparer thread and from the writer thread). The default is
 * {@code FileChannelLogFile#factory(DirectIoMode)}; tests substitute files that model power cuts
 * or a full disk.
 */
@FunctionalInterface
public interface LogFileFactory {
    /**
     * Opens the file at {@code path} for reading and writing, creating it (empty) if absent.
     */
    LogFile open(Path path) throws IOException;
}
