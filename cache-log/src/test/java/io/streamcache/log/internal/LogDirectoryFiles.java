package io.streamcache.log.internal;

import java.nio.file.Path;

/** Paths of log files in a directory, for the tests. */
final class LogDirectoryFiles {
    private LogDirectoryFiles() {
    }

    static Path path(final Path directory, final long fileNumber) {
        return directory.resolve(LogFileDescriptor.fileName(fileNumber));
    }
}
