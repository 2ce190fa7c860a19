package io.streamcache.log;

import java.nio.file.Path;

/**
 * Thrown when a log directory is opened for writing while another writer (a store in this JVM
 * or another process) holds its {@code LOCK} file; an immutable value, safe to pass between
 * threads. Nothing was read or changed: close the other store (or stop the other process) and
 * open again.
 */
public final class LogLockedException extends LogException {
    private static final long serialVersionUID = 1L;

    private final transient Path directory;
    private final String holder;

    /**
     * @param directory the log directory.
     * @param holder    what the lock file says about the writer holding it ({@code pid=.. host=..
     *                  started=.. epoch=..}), or null if unknown.
     */
    public LogLockedException(final Path directory, final String holder) {
        super("log directory=" + directory + " is locked by another writer (" + (holder != null ? holder : "holder unknown")
            + "): close the store that holds it, or stop its process, before opening the log again");
        this.directory = directory;
        this.holder = holder;
    }

    /**
     * @return the locked directory.
     */
    public Path directory() {
        return directory;
    }

    /**
     * @return the holder as the lock file describes it ({@code pid=.. host=.. started=.. epoch=..}), or null.
     */
    public String holder() {
        return holder;
    }
}
