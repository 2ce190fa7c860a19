package io.streamcache.log;

/**
 * Whether log files bypass the page cache ({@code O_DIRECT}); an immutable constant.
 *
 * <p>With direct I/O every write goes from the writer's 4 KB-aligned batch buffer straight to
 * the device (no copy into the page cache, no write-back competing with the forces); some file
 * systems (tmpfs, some overlay and network file systems) refuse it.
 */
public enum DirectIoMode {
    /** Buffered I/O (the default). */
    OFF,
    /** Direct I/O where the file system accepts it; otherwise buffered I/O, with a warning logged once. */
    PREFERRED,
    /** Direct I/O, or opening a log file fails with an {@link java.io.IOException} that says why. */
    REQUIRED
}
