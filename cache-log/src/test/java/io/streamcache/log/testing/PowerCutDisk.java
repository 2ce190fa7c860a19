package io.streamcache.log.testing;

import io.streamcache.log.LogFile;
import io.streamcache.log.LogFileFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The disk under {@link PowerCutLogFile}s: a {@link LogFileFactory} whose files share one lock
 * (this object) and one power supply; thread-safe. Counts the operations that reach the disk
 * (writes, forces, length changes) and can cut the power just before the n-th, or at once; after
 * a cut every operation fails with an {@link IOException}, as a dead disk's would, and the real
 * files hold the durable image to scan or reopen.
 */
public final class PowerCutDisk implements LogFileFactory {
    private final Random random;
    private final List<PowerCutLogFile> files = new ArrayList<>();
    private long operations;
    private long cutAt = Long.MAX_VALUE;
    private PowerCutLogFile.Mode cutMode = PowerCutLogFile.Mode.DROP;
    private boolean off;

    public PowerCutDisk(final long seed) {
        this.random = new Random(seed);
    }

    @Override
    public synchronized LogFile open(final Path path) throws IOException {
        if (off) {
            throw new IOException("power cut: the disk is off");
        }
        final PowerCutLogFile file = new PowerCutLogFile(this, path);
        files.add(file);
        return file;
    }

    /**
     * Cuts the power just before operation number {@code operation} (counted from 1).
     */
    public synchronized void cutBefore(final long operation, final PowerCutLogFile.Mode mode) {
        this.cutAt = operation;
        this.cutMode = mode;
    }

    /** Called by the files, under this lock, before each operation that reaches the disk. */
    public void beforeOperation(final PowerCutLogFile file) throws IOException {
        if (off) {
            throw new IOException("power cut: the disk is off");
        }
        if (++operations >= cutAt) {
            powerCut(cutMode);
            throw new IOException("power cut: the disk is off");
        }
    }

    /**
     * Cuts the power now: every file drops (or tears) its unforced pages.
     */
    public synchronized void powerCut(final PowerCutLogFile.Mode mode) throws IOException {
        if (off) {
            return;
        }
        off = true;
        for (final PowerCutLogFile file : files) {
            file.cut(mode, random);
        }
    }

    public synchronized long operations() {
        return operations;
    }

    public synchronized boolean isOff() {
        return off;
    }
}
