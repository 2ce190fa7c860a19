package io.streamcache.log.internal;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The writer's current log file is no longer the one at its path (deleted, or replaced): raised
 * by {@link LogRoller}'s identity check, reported to callers as
 * {@link io.streamcache.log.LogFileLostException}. Immutable.
 */
final class LogFileGoneException extends IOException {
    private static final long serialVersionUID = 1L;

    LogFileGoneException(final Path path, final String what) {
        super("log file " + path + " " + what + " while the writer had it open: appends written into it would be lost");
    }
}
